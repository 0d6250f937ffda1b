"""raw messages → a model file's journal, reading only what the update needs: what
``textnb learn``, the daemon's TELL and ``textnb imap`` learn with, at the cost of the
message rather than of the model.

Under the update lock the file is read as the mail filter reads it (no numpy: the snapshot's
class counts and score constants, its terms bisected, the learned documents' digests) with
its journal (:mod:`textnb.store.journal`); each message's row is counted and weighed as
:func:`textnb.incremental.rows` does, and the records and the score constants after them are
appended as one commit, the same records :class:`textnb.store.learning.Update` writes.

The score constants follow from the message alone. With N_c the documents (weights) of class
c, n_kc the weighted counts, |V| the terms and α the pseudo-count:

* multinomial: a_c = log S_c, S_c = Σ_k (n_kc + α) = Σ_k n_kc + α|V|;
* complement (Rennie et al. 2003, without weight normalisation, b_c = −1):
  S_c = Σ_k max(Σ_c' n_kc' − n_kc, 0) + α|V|, the counts of every other class;

so a document x of weight w learned as class c adds w·Σ_k x_k to S_c (multinomial) or to
every other class's S (complement), and α to every S for each of its terms new to V (an
unlearned one takes them back, and α for each term no document has any more). S_c is taken
as exp(a_c) of the last commit: a relative error of a few units of 1e-16 a commit, until the
file is written whole again (compacted), which derives every constant afresh. score_bias is
log N_c − log Σ N (``fit_prior``) or stays as it was (uniform or given priors).

A model this writer does not keep so raises :class:`Declined` before anything is written, and
the caller learns through :class:`~textnb.store.learning.Update` (which reads the whole
model): Bernoulli's score_bias sums log(1 − p_kc) over every term, whose p all move with N_c;
log term frequencies (numpy's log1p and math's may differ in the last bit, and the records
would); hashed vocabularies; format 1 and 2 files; a new class; an empty document; a class
left with no documents under ``fit_prior``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from itertools import compress

from ..decision.rules import decide, learned_weight, spam_cutoffs
from ..documents.message import read_bytes
from ..text.tokens import Tokenizer
from . import journal
from .container import locked, read
from .plain import plain_array, term_index
from .schema import LEGACY_SETTINGS, TEXT_CLASSIFIER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Sequence


class Declined(Exception):
    """A model, or a change of it, this writer leaves to :class:`textnb.store.learning.Update`."""


class Appender:
    """Documents learned and unlearned into the model file at ``path`` (read under the
    caller's update lock), kept as the journal records :meth:`write` appends. Declined, when
    made, for a model it does not keep (the module says which)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = path
        model = read(path, TEXT_CLASSIFIER, writable=False, verdicts=True)
        meta, params = model.meta, model.meta["params"]
        if (model.version < 3 or params.get("hash_bits") is not None or params["tf"] == "log"
                or params["model"] not in ("multinomial", "complement")):
            raise Declined(f"a {params['model']} model of format {model.version}")
        self.model, self.classes = model, [str(c) for c in meta["classes"]]
        self.cutoffs = meta.get("cutoffs")
        values = model.plain()
        self.found = journal.read(model)
        # The terms the journal touched, and the class counts and constants after it.
        self.touched = journal.replay_plain(model, values, self.found)
        self.class_count = [float(n) for n in values["class_count"]]
        self.bias = [float(b) for b in values["score_bias"]]
        self.constants = [float(x) for x in values["score_constants"]]
        if any(b != -1.0 for b in self.constants[len(self.classes):]):  # weight normalisation
            raise Declined("a complement model with weight normalisation")
        self.delta = [0.0] * len(self.classes)  # what each S_c gains
        self.alpha, self.complement = float(params["alpha"]), params["model"] == "complement"
        self.fit_prior = params["fit_prior"] and params["class_prior"] is None
        self.binary, self.l2 = params["tf"] == "binary", params["norm"] == "l2"
        self.tokenizer = Tokenizer(
            lowercase=params["lowercase"], stop_words=meta["stop_words"],
            stemmer=params["stemmer"],
            ngram_range=meta.get("ngram_range") or params["ngram_range"],
            max_length=params["max_token_length"],
            min_length=params.get("min_token_length", LEGACY_SETTINGS["min_token_length"]))
        self._terms = values["terms"]
        self._digests = plain_array(model.raw["digests"])
        self._digest_classes = values["digest_classes"]
        self._digest_weights = values.get("digest_weights")
        self.records: list[dict] = []
        # A mail model's learned messages weighed by what it called them, as
        # textnb.online.learning_weight has it, scored with these counts (the scorer made when
        # first asked).
        self.values, self._scorer, self.spam_class = values, None, params.get("spam_class")
        self.learned_errors = tuple(self.found.learned_errors or meta.get("learned_errors")
                                    or (0, 0))

    def learn(self, raw: bytes, label: Any, other: Any = None) -> bool:
        """As :meth:`textnb.store.learning.Update.learn`: ``raw`` learned as ``label`` (one
        learned as ``other`` moved); False, nothing changed, if learned as ``label`` already.
        Declined for a label the model has not (a new class)."""
        c = self._class(label)
        if c is None:
            raise Declined(f"a new class, {label!r}")
        keys, values, found, tokens = self._row(raw)
        learned = self._learned(found)
        if c in (k for k, _ in learned):
            return False
        weight = self._weight(tokens, c)  # as the model stood: an error weighs more
        o = self._class(other) if other is not None else None
        for k, weight_then in learned:
            if k == o:
                self._apply("unlearn", keys, values, found, o, weight_then)
                break
        self._apply("learn", keys, values, found, c, weight)
        return True

    def forget(self, raw: bytes, labels: Sequence[Any]) -> bool:
        """As :meth:`textnb.store.learning.Update.forget`: ``raw`` unlearned from the first of
        ``labels`` it was learned as; False when none."""
        keys, values, found, _ = self._row(raw)
        learned = self._learned(found)
        for label in labels:
            c = self._class(label)
            for k, weight in learned:
                if k == c:
                    self._apply("unlearn", keys, values, found, c, weight)
                    return True
        return False

    def write(self) -> bool:
        """Append the records as one commit with the score constants after them, made
        durable; then, once the journal is larger than :data:`~textnb.store.journal.HARD_BYTES`,
        the whole model written (compacted). Whether the journal is larger than
        :data:`~textnb.store.journal.COMPACT_BYTES` after: a compaction due, the caller's."""
        if not self.records:
            return False
        n = len(self.classes)
        bias, constants = self._constants()
        size = journal.append(self.path, self.model.identity, self.found,
                              journal.lines(self.records, (bias, constants),
                                            self.learned_errors))
        if size > journal.HARD_BYTES:
            from .text_model import load_model, save_model
            save_model(load_model(self.path), self.path)
            return False
        # The journal as written, for the next update in this process (:func:`reopen`).
        self.found.documents += self.records
        self.found.end = self.found.size = size
        self.found.stale, self.found.constants = False, (bias, constants)
        self.found.learned_errors = list(self.learned_errors) if self.learned_errors[0] else None
        self.bias, self.constants, self.delta, self.records = bias, constants, [0.0] * n, []
        _written[os.path.realpath(self.path)] = (journal.signature(self.path), self)
        return size > journal.COMPACT_BYTES

    def _constants(self) -> tuple[list[float], list[float]]:
        """(score_bias, score_constants) with this update's documents: S_c = exp(a_c) + its
        gain; the log prior of the class counts under ``fit_prior``."""
        n = len(self.classes)
        a = [math.log(math.exp(a_c) + d) if d else a_c
             for a_c, d in zip(self.constants[:n], self.delta)]
        bias = self.bias
        if self.fit_prior:
            total = sum(self.class_count)
            bias = [math.log(n_c) - math.log(total) for n_c in self.class_count]
        return bias, a + self.constants[n:]

    def _weight(self, tokens: list[str], c: int) -> float:
        """The weight of a document of ``tokens`` learned as class ``c``, counted, as
        :func:`textnb.online.learning_weight` has it: scored by the model
        as it stands, this update's documents in (:class:`textnb.store.scorer.Scorer`)."""
        cutoffs = spam_cutoffs(self.classes, self.cutoffs, self.spam_class,
                               learned_errors=self.learned_errors)
        if cutoffs is None:
            return 1.0
        if self._scorer is None:
            from .scorer import Declined as Unscored, Scorer
            try:
                self._scorer = Scorer.of(self.model.meta, self.values, self.touched)
            except Unscored as error:
                raise Declined(str(error)) from None
        self._scorer.constants(self.class_count, *self._constants())
        status = decide(self.classes, self._scorer.tokens_log_proba(tokens), "",
                        cutoffs)["status"]
        weight, self.learned_errors = learned_weight(
            self.learned_errors, status, "spam" if self.classes[c] == cutoffs[0] else "ham")
        return weight

    def _class(self, label: Any) -> int | None:
        return self.classes.index(str(label)) if str(label) in self.classes else None

    def _row(self, raw: bytes) -> tuple[list[str], list[float], int, list[str]]:
        """(the sorted terms, their weighted counts, the digest, the tokens) of a document:
        what :func:`textnb.incremental.rows` gives, number for number (a row's sum of squares
        added in its order, as :func:`textnb.nb.sparse.row_sums` adds it)."""
        document = read_bytes(raw)
        tokens = self.tokenizer.document(document.text, document.fields)
        counts = Counter(tokens)
        keys = sorted(counts)
        if not keys:
            raise Declined("a document of no terms")
        values = [1.0] * len(keys) if self.binary else [float(counts[k]) for k in keys]
        if self.l2:
            length = math.sqrt(sum([v * v for v in values]))
            values = [v / length for v in values]
        return keys, values, _digest(tokens), tokens

    def _learned(self, found: int) -> list[tuple[int, float]]:
        """(class, weight) of each learned copy of the document of digest ``found``, in the
        order :func:`textnb.incremental.learned_as` finds them: the snapshot's, then the
        journal's and this update's learned and unlearned in turn."""
        at = compress(range(len(self._digests)), map(found.__eq__, self._digests))
        weights = self._digest_weights
        learned = [(self._digest_classes[i], weights[i] if weights is not None else 1.0)
                   for i in at]
        name = f"{found:016x}"
        for record in self.found.documents + self.records:
            if record["digest"] != name:
                continue
            if record["op"] == "learn":
                learned.append((record["class"], record["weight"]))
            else:  # the first copy learned as its class goes, as incremental.apply has it
                first = next(i for i, (k, _) in enumerate(learned) if k == record["class"])
                del learned[first]
        return learned

    def _in_vocabulary(self, term: str) -> bool:
        """Whether a document learned has ``term``: the journal's and this update's, else
        the snapshot's (a bisection of its terms)."""
        if term in self.touched:
            return bool(self.touched[term][0])
        return term_index(*self._terms, term.encode("utf-8", "surrogatepass")) >= 0

    def _apply(self, op: str, keys: list[str], values: list[float], found: int, c: int,
               weight: float) -> None:
        """A record of the document, its class count and each S_c's gain (the module's)."""
        touched = self.touched
        unlearn = op == "unlearn"
        record = {"op": op, "class": c, "digest": f"{found:016x}", "weight": weight,
                  "keys": keys, "values": values}
        if not unlearn:  # the terms new to V: every one is in it after
            terms = len(keys) - sum(map(self._in_vocabulary, keys))
        touched.add(record)
        if unlearn:  # the terms no document has any more
            terms = sum(map(self._in_vocabulary, keys)) - len(keys)
        amount = weight * sum(values)
        left = self.class_count[c] - weight if unlearn else self.class_count[c] + weight
        self.class_count[c] = 0.0 if unlearn and left < journal.TOLERANCE else left
        if self.fit_prior and not self.class_count[c]:
            raise Declined("a class left with no documents")
        for k in range(len(self.classes)):
            counted = (k != c) if self.complement else (k == c)
            self.delta[k] += self.alpha * terms + (
                (-amount if unlearn else amount) if counted else 0.0)
        self.records.append(record)


# The update this process wrote last to each model file (by its real path), with the file's
# and its journal's signatures after it: a daemon's next TELL, textnb imap's next move, need
# read neither again if no one else has written them since.
_written: dict[str, tuple[tuple, Appender]] = {}


def reopen(path: str | os.PathLike) -> Appender:
    """An Appender of the model file at ``path``, under the update lock: the one this process
    wrote last, if the file and its journal are as it left them (the same inodes, sizes and
    times), else one reading them. Each is used once: a failed update is not reused."""
    key = os.path.realpath(path)
    signature, appender = _written.pop(key, (None, None))
    if appender is not None and signature == journal.signature(path):
        return appender
    return Appender(path)


def prepare(path: str | os.PathLike) -> None:
    """Read the model file at ``path`` for this process's next :func:`reopen`, under the
    update lock: a daemon does it when its fold has replaced the file, so that the next TELL
    does not (reopen checks the signature, so a file written again since is read again)."""
    with locked(path):
        _written[os.path.realpath(path)] = (journal.signature(path), Appender(path))


def _digest(tokens: list[str]) -> int:
    """:func:`textnb.text.counting.digest`: BLAKE2b's C module itself, not hashlib, which
    loads OpenSSL and enum (3 ms of a ``textnb learn`` process)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # a Python built without it
        from hashlib import blake2b
    data = "\0".join(tokens).encode("utf-8", "replace")
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def learn_all(path: str | os.PathLike, paths: Iterable[str], label: str) -> tuple[int, int]:
    """Learn each document at ``paths`` (files, directories, mbox files, "-" for standard
    input: :func:`textnb.documents.sources.read_raw`) as ``label`` into the model file at
    ``path`` under the update lock, in one commit: (how many were learned, how many had been
    already). Declined, nothing written, for a model, a document or a path this writer leaves
    to the full command (one that cannot be read, an empty file), or a label the model has
    not."""
    from ..documents.sources import read_raw
    from .container import locked

    def unreadable(source: str, reason: str) -> None:
        raise Declined(f"{source}: {reason}")

    with locked(path):
        appender = Appender(path)
        if label not in appender.classes or len(appender.classes) < 2:
            raise Declined(f"class {label!r}")
        done = again = 0
        for _, raw in read_raw(paths, on_error=unreadable):
            changed = appender.learn(raw, label)
            done, again = done + changed, again + (not changed)
        if not done + again:
            raise Declined("no documents")
        due = appender.write()
    if due:  # after the lock: the learner answers, the compaction follows
        journal.compact_detached(path)
    return done, again
