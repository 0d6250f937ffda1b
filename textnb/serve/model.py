"""The daemon's model: one whole version of the model file in memory (reloaded when the file is
replaced), its two-class scores as plain Python (:class:`Weights`), and a message's verdict
and answer."""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_not, mul
from typing import Any

import numpy as np

from ..classifier import TextClassifier
from ..decision.rules import decide, headers, scores_unseen, spam_cutoffs
from ..documents.message import read_bytes
from ..errors import ModelFileError, TextnbError
from ..mail.filter import add_headers
from ..store.container import read_meta
from ..store.journal import path_of
from ..store.learning import forget, learn
from ..store.text_model import load_model
from ..text.hashing import HashedVocabulary
from .fold import Fold
from .protocol import (Code, Request, RequestError, THRESHOLD, bad_request, header_block,
                       printable, shown_score, spam_field_value, spamassassin_fields, spamc_score,
                       symbol)


class Weights:
    """A loaded two-class TextClassifier's scores as plain Python: term → how far one unit of
    it moves the log-odds of the second class over the first, so that scoring one message is
    a dictionary look-up per distinct token and one sum.

    The classifier's decomposition (:meth:`~textnb.nb.discrete.DiscreteNB.decomposition`) is
    jll_c(x) = bias_c + Σ_k x'_k W_ck over the message's terms k, with x' its counts weighted
    as :meth:`TextClassifier.transform` weighs them (presence for Bernoulli; raw, log1p or
    binary, then unit length for ``norm="l2"``). Of two classes only the difference counts:
    d = jll_1 − jll_0 = (bias_1 − bias_0) + Σ_k x'_k (W_1k − W_0k), and
    log P(c_0|x) = −log(1 + e^d), log P(c_1|x) = d + log P(c_0|x). Equal to
    ``predict_log_proba`` to rounding, 1e-12 (tests/test_serve.py); the sums are
    math.fsum's, the same in any order. One look-up a distinct token, where a column, then
    its weight in each class's array took three, mostly cache misses in a 44,000-term
    vocabulary: scored right after its parsing and tokenizing, as in the daemon, the median
    SpamAssassin test message took 0.10–0.11 ms against 0.19–0.22 (the mean 0.16–0.17
    against 0.31; the two interleaved, 2 cores under load); ``predict_log_proba`` (a one-row
    CSR matrix, numpy calls on two numbers) took 0.44 with warm caches.
    """

    def __init__(self, classifier: TextClassifier) -> None:
        if len(classifier.classes_) != 2:
            raise ValueError(f"Weights scores two classes, not {len(classifier.classes_)}")
        bias, weights = classifier.model_.decomposition()
        self.classifier = classifier
        self.bias = float(bias[1]) - float(bias[0])
        weights = np.asarray(weights, dtype=np.float64)
        difference = weights[1] - weights[0]
        # Keyed by the vocabulary's own term strings (terms_ in column order): no copy of them.
        # A hashed vocabulary keeps no terms: keyed by column, a token looked up by its hash.
        self.hashed = (classifier.vocabulary_
                       if isinstance(classifier.vocabulary_, HashedVocabulary) else None)
        self.difference = (dict(enumerate(difference.tolist())) if self.hashed is not None
                           else dict(zip(classifier.vocabulary_.terms_, difference.tolist())))
        self.presence = classifier.model == "bernoulli" or classifier.tf == "binary"
        self.log_tf = classifier.tf == "log" and not self.presence
        self.unit = classifier.norm == "l2" and classifier.model != "bernoulli"
        # Words outside the vocabulary, where the classifier scores them: u_1 − u_0 each.
        unseen = classifier.model_.unseen_weight_
        self.unseen = (float(unseen[1]) - float(unseen[0])
                       if scores_unseen(classifier.unseen, classifier.classes_)
                       and self.hashed is None else None)

    def log_proba(self, tokens: Sequence[str]) -> list[float]:
        """[log P(c_0|x), log P(c_1|x)], in the classifier's class order, of a document's
        tokens (``classifier.tokenize``)."""
        counts = Counter(tokens)
        if self.hashed is not None:  # terms sharing a column are counted in it together
            distinct = list(counts)
            by_column: Counter = Counter()
            for column, n in zip(self.hashed._positions(distinct).tolist(), counts.values()):
                by_column[column] += n
            counts = by_column
        # C loops only: one look-up a distinct token, then the terms found kept (not None).
        found = list(map(self.difference.get, counts))
        if self.unseen is not None:  # each word outside the vocabulary weighs u_1 − u_0
            found = [self.unseen if w is None else w for w in found]
        known = list(map(is_not, found, repeat(None)))
        weights = list(compress(found, known))
        if self.presence:
            d, square = math.fsum(weights), float(len(weights))
        else:
            values = list(compress(counts.values(), known))
            if self.log_tf:
                values = list(map(math.log1p, values))
            d, square = math.fsum(map(mul, values, weights)), math.fsum(map(mul, values, values))
        if self.unit and weights:
            d /= math.sqrt(square)
        d += self.bias
        # −log(1 + e^d), e^±d at most 1: no overflow.
        first = -(d + math.log1p(math.exp(-d))) if d > 0 else -math.log1p(math.exp(d))
        return [first, d + first]


@dataclass(frozen=True)
class Labels:
    """A spam model's classes and which is spam: all a TELL needs of the model."""

    classes: list
    spam_class: str

    @property
    def ham_class(self) -> Any:
        return self.classes[1 - [str(c) for c in self.classes].index(self.spam_class)]


@dataclass(frozen=True)
class Version:
    """One whole version of the model file: what a message is scored and decided with."""

    classifier: TextClassifier
    weights: Weights
    classes: list
    cutoffs: tuple  # (spam class, spam cutoff, ham cutoff) on the log-odds

    @property
    def spam_class(self) -> str:
        return self.cutoffs[0]

    @property
    def ham_class(self) -> Any:
        return self.labels.ham_class

    @property
    def labels(self) -> Labels:
        return Labels(self.classes, self.spam_class)


class Model:
    """The model file's current version in memory, loaded again when the file is replaced.
    A request takes ``model.version`` once and uses it throughout: a reload replaces the
    whole version, never part of one."""

    def __init__(self, path: str | os.PathLike, spam_class: str | None = None,
                 spam_cutoff: float | None = None, ham_cutoff: float | None = None) -> None:
        # The options as given (cutoffs on P(spam), None where not given): each version of the
        # file turns them into its cutoffs on the log-odds, with the ones it learned.
        self.path = os.fspath(path)
        self.options = (spam_class, spam_cutoff, ham_cutoff)
        self.signature: tuple[int, ...] | None = None
        self.fold = Fold(self.path)  # the journal's, after a TELL (server.py)
        self.told: tuple[tuple[int, ...], Labels] | None = None  # for_tell's, of a new file
        self.load()

    def _stat(self) -> tuple[int, ...]:
        """The file's and its journal's (textnb.store.journal): a TELL appends to the journal."""
        st = os.stat(self.path)
        try:
            journal = os.stat(path_of(self.path))
            appended: tuple[int, ...] = (journal.st_ino, journal.st_mtime_ns, journal.st_size)
        except OSError:
            appended = ()
        return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size) + appended

    def load(self) -> None:
        """Read the file now; ModelFileError (the old model kept) if it is not a spam model."""
        try:
            signature = self._stat()
        except OSError:
            signature = None  # load_model says what is wrong
        # Signature first: if the file is replaced while it loads, the next check loads again.
        classifier = load_model(self.path)
        classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
        try:
            cutoffs = spam_cutoffs(classes, classifier.cutoffs_, *self.options,
                                   learned_errors=classifier.learned_errors_)
        except ValueError as error:
            raise ModelFileError(f"model file '{self.path}': {error}") from None
        if cutoffs is None:
            raise ModelFileError(f"model file '{self.path}' has {_classes(classes)}; textnb "
                                 f"serve needs two classes, one of them "
                                 f"'{self.options[0] or 'spam'}'")
        self.version = Version(classifier, Weights(classifier), classes, cutoffs)
        self.signature = signature

    def refresh(self, log: Callable[[str], None] | None = None) -> Version:
        """The current version, loaded again first if the file was replaced since it was read
        (a missing file keeps the model in memory serving; a bad one is reported once per
        version)."""
        try:
            signature = self._stat()
        except OSError:
            return self.version
        if signature != self.signature:
            try:
                self.load()
            except Exception as error:  # a bad file (or a bug loading it): the old one serves
                self.signature = signature
                if log:
                    log(f"{now()} model not reloaded, the old one serves: {error}")
        return self.version


    def for_tell(self, log: Callable[[str], None] | None = None) -> Labels:
        """The classes a TELL learns by: the version in memory's, unless the file itself was
        replaced (compacted, trained anew; not when its journal grew: a TELL appends to it).
        Then the new file's meta.json alone is read for them (under 1 ms), not the whole
        model (0.5 s for 5,746 SpamAssassin messages, in the TELL's answer): the next CHECK
        loads it (:meth:`refresh`). A meta.json that names no spam model: loaded whole, which
        says what is wrong."""
        try:
            signature = self._stat()[:4]
        except OSError:
            return self.version.labels
        if self.signature is not None and signature == self.signature[:4]:
            return self.version.labels
        if self.told is not None and self.told[0] == signature:
            return self.told[1]
        labels = self._labels(read_meta(self.path))
        if labels is None:
            return self.refresh(log).labels
        self.told = (signature, labels)
        return labels

    def _labels(self, meta: dict | None) -> Labels | None:
        """The classes and spam class that ``meta`` (a model file's meta.json) names, by the
        options as :meth:`load` takes them; None if it names no two-class spam model."""
        try:
            classes = list(meta["classes"])
            cutoffs = spam_cutoffs(classes, meta.get("cutoffs"), *self.options)
        except Exception:  # anything amiss (or no meta.json at all): load() tells what
            return None
        return Labels(classes, cutoffs[0]) if cutoffs is not None else None


def _classes(classes: Sequence[Any], shown: int = 5) -> str:
    """A model's classes for one line: at most ``shown`` of them, each cut to 40 characters."""
    names = ", ".join(repr(str(c)[:40]) for c in classes[:shown])
    more = f", ... ({len(classes)} in all)" if len(classes) > shown else ""
    return f"{len(classes)} class{'es' if len(classes) != 1 else ''} [{names}{more}]"


def decide_message(version: Version, raw: bytes) -> dict[str, Any]:
    """The decision on a message, as ``textnb filter`` makes it (textnb.mail.filter), with its
    spamc ``score``: every answer's verdict comes from here."""
    tokens = version.classifier.tokenize([read_bytes(raw)])[0]
    row = version.weights.log_proba(tokens)
    _, spam_cutoff, ham_cutoff = version.cutoffs
    decision = decide(version.classes, row, "-", version.cutoffs)
    decision["score"] = spamc_score(decision["spam_log_odds"], spam_cutoff, ham_cutoff)
    return decision


def _report(version: Version, raw: bytes, decision: dict[str, Any], top: int = 10) -> str:
    """REPORT's text: the verdict, the cutoffs and the terms that weighed most."""
    explanation = version.classifier.explain(read_bytes(raw), top=top, label=version.spam_class)
    lines = [f"textnb: {decision['verdict']} (spam-probability "
             f"{decision['spam_probability']:.6f}, spam-log-odds {decision['spam_log_odds']:+.2f}, "
             f"score {shown_score(decision):.1f} / {THRESHOLD:.1f})",
             f"cutoffs: spam at spam-log-odds >= {version.cutoffs[1]:+.3f}, "
             f"ham at spam-log-odds <= {version.cutoffs[2]:+.3f}",
             f"why {explanation.label} over {explanation.against} (log-odds, natural logs):",
             f"  {explanation.prior_log_odds:+8.3f}  (prior)"]
    if explanation.unseen:
        lines.append(f"  {explanation.unseen_log_odds:+8.3f}  ({explanation.unseen} unseen words)")
    lines += [f"  {term.log_odds:+8.3f}  {term.term}" for term in explanation.terms]
    lines.append(f"  {explanation.rest:+8.3f}  (other terms)")
    return "\n".join(lines) + "\n"


def scored_answer(request: Request, version: Version, settings: Any) -> tuple[bytes, str]:
    """(the answer to a request that scores its message, what the log line says of it)."""
    method = request.method
    decision = decide_message(version, request.body)
    spam = decision["status"] == "spam"
    spam_field = spam_field_value(decision, method)
    verdict = (f"{decision['status']} {shown_score(decision):.1f}/{THRESHOLD:.1f} "
               f"{len(request.body)} bytes")
    if method == "CHECK":
        return f"SPAMD/1.1 0 EX_OK\r\nSpam: {spam_field}\r\n\r\n".encode(), verdict
    if method in ("PROCESS", "HEADERS"):
        body = add_headers(request.body, headers(decision))
        if settings.spamassassin_headers:
            body = spamassassin_fields(body, decision)
        if method == "HEADERS":
            body = header_block(body)
    elif method == "SYMBOLS":
        body = symbol(decision).encode()
    elif method == "REPORT" or (method == "REPORT_IFSPAM" and spam):
        body = _report(version, request.body, decision).encode("utf-8", "replace")
    else:
        body = b""
    head = f"SPAMD/1.1 0 EX_OK\r\nContent-length: {len(body)}\r\nSpam: {spam_field}\r\n\r\n"
    return head.encode() + body, verdict


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def tell_job(request: Request, labels: Labels, path: str,
              settings: Any) -> Callable[[], tuple[bytes, str]]:
    """TELL's work, checked here and done by the function returned (on a thread): (the
    answer, what the log line says of it). A compaction due is the server's, once the answer
    is sent."""
    if not settings.allow_tell:
        raise RequestError(Code.EX_UNAVAILABLE, "Service Unavailable: TELL commands are "
                           "not enabled, set the --allow-tell switch.")
    set_local = "local" in request.fields.get("set", "").lower()
    remove_local = "local" in request.fields.get("remove", "").lower()
    if set_local and remove_local:
        raise bad_request("Unable to set local and remove local in the same operation.")
    kind = request.fields.get("message-class", "").lower()
    if set_local and kind not in ("spam", "ham"):
        raise bad_request(f"Message-class must be spam or ham, not '{printable(kind)}'")

    def job() -> tuple[bytes, str]:
        did = ""
        try:
            if set_local:
                label, other = ((labels.spam_class, labels.ham_class) if kind == "spam"
                                else (labels.ham_class, labels.spam_class))
                if learn(path, request.body, label, other, detach=False):
                    did = "DidSet: local\r\n"
            elif remove_local:
                if forget(path, request.body, labels.classes, detach=False):
                    did = "DidRemove: local\r\n"
        except (TextnbError, OSError) as error:  # a bad model file: the client learns nothing
            raise RequestError(Code.EX_UNAVAILABLE, f"Service Unavailable: {error}") from None
        what = ("learned " + kind if did.startswith("DidSet") else "forgot" if did
                else "nothing to do")
        return f"SPAMD/1.1 0 EX_OK\r\n{did}\r\n".encode(), f"{what} {len(request.body)} bytes"

    return job
