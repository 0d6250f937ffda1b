"""model file → log P(c|x) of one document, without numpy: the mail filter's fast path, and
the learners' (:class:`~textnb.store.appending.Appender`) score of a message before they learn it.

A TextClassifier's scores decompose as jll(x) = bias + Σ_k x'_k W_k, where x' is the
document's weighted counts over the vocabulary (:meth:`~textnb.nb.discrete.DiscreteNB.
decomposition`). Scoring one message needs the settings, the sorted terms, and the weights W_k
of the terms the message holds. A file of format 3 holds the counts by term (CSR: row k of
``count_indptr``, ``count_classes``, ``count_values`` is term k), and W_k follows from term
k's counts and two numbers per class (``score_constants``, see
:func:`textnb.store.text_model.score_constants`); a file of format 2 holds W_k itself, row k of
``score_weights``. The terms are searched as UTF-8 bytes, whose order is the code-point order
they were sorted in, so they are never decoded; the lookup and the sums over the message's
terms run in C where it was built (textnb/_modelfile.c, textnb/_scores.c: the same floats). So
``textnb filter`` costs milliseconds more than Python's start-up, not numpy's import and the
whole model's reading (docs/design/performance.md; ``python -m bench.filter``).

The file is read by :func:`textnb.store.container.read` and its values checked by
:meth:`~textnb.store.container.ModelFile.plain`: the rules of every reader, so a file this scorer
scores is one :func:`~textnb.store.text_model.load_model` loads, and one it refuses is refused there
too, in the same words (tests/test_hostile_models.py). A file of format 3 that passed them, as
its sidecar records (:mod:`textnb.store.verdict`), and without a journal, is read by
:func:`textnb.store.verdict.read` alone: the members scored with, nothing checked again. A file
of format 1 (terms in meta.json) or of a hashed vocabulary is scored through
:func:`~textnb.store.text_model.load_model`.

The arithmetic is that of :meth:`TextClassifier.predict_log_proba`, in the same order, with
the same score constants (load_model scores with those the file holds), so the two agree to
rounding (tests/test_scorer.py).
"""

from __future__ import annotations

import math
import os

from ..decision.rules import scores_unseen
from ..text.tokens import Tokenizer
from . import verdict
from .plain import journal_path, plain_array, term_columns

try:  # the sums over a message's terms in C (textnb/_scores.c), where it was built
    from .. import _scores as _fast
except ImportError:
    _fast = None

# The event models' numbers in textnb/_scores.c's term_sums.
_MODELS = {"complement": 0, "multinomial": 1, "bernoulli": 2}
# The members a file of format 3 is scored with.
_MEMBERS = ("class_count", "terms", "term_ends", "count_indptr", "count_classes", "count_values",
            "score_bias", "score_constants")


def _legacy(name: str) -> object:
    """The setting ``name`` of a file written before it was saved."""
    from .schema import LEGACY_SETTINGS
    return LEGACY_SETTINGS[name]


class Declined(Exception):
    """A sound model file this scorer leaves to load_model: format 1, a hashed vocabulary."""


class Scorer:
    """Scores of single documents from a TextClassifier's model file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        # A file of format 3 its sidecar vouches for, without a journal: only its members to
        # score with, checked by nothing again; any other file by the rules, and its journal.
        found = (None if os.path.lexists(journal_path(self.path))
                 else verdict.read(self.path, _MEMBERS))
        if (found is not None and found[0]["version"] == 3
                and found[0]["params"].get("hash_bits") is None):
            meta, raw = found
            values = {name: plain_array(raw[name]) for name in _MEMBERS}
            values["terms"] = raw["terms"].data, values["term_ends"]
            model, self._touched, counted = None, {}, None
        else:
            model, values, counted = self._read()
            meta = model.meta
        self._setup(meta, values, model, counted)

    @classmethod
    def of(cls, meta: dict, values: dict, touched: object) -> "Scorer":
        """A scorer of a file of format 3 already read: its meta, its plain values with its
        journal replayed (:func:`~textnb.store.journal.replay_plain`) and the terms that
        touched: an appender's (:class:`~textnb.store.appending.Appender`), whose documents
        it so scores with as they are added (:meth:`constants` for their class counts)."""
        scorer = cls.__new__(cls)
        scorer.path, scorer._touched = None, touched
        scorer._setup(meta, values, None)
        return scorer

    def _setup(self, meta: dict, values: dict, model: object,
               counted: list[int] | None = None) -> None:
        params = meta["params"]
        # Words outside the vocabulary scored: not here. A file of before the setting drops
        # them (schema.LEGACY_SETTINGS, not imported for it: a mail filter's start-up).
        if scores_unseen(params.get("unseen", "drop"), meta["classes"]):
            raise Declined("unseen words scored")
        self.classes = list(meta["classes"])
        self.cutoffs = meta.get("cutoffs")
        # The learners' (messages, errors), which the default spam cutoff moves with: the
        # journal's last commit's (``counted``), else the file's.
        self.learned_errors = tuple(counted or meta.get("learned_errors") or (0, 0))
        self.tokenizer = Tokenizer(
            lowercase=params["lowercase"], stop_words=meta["stop_words"],
            stemmer=params["stemmer"],
            ngram_range=meta.get("ngram_range") or params["ngram_range"],
            max_length=params["max_token_length"],
            min_length=params["min_token_length"] if "min_token_length" in params
            else _legacy("min_token_length"))
        self._model, self._alpha = params["model"], float(params["alpha"])
        self._binary = params["model"] == "bernoulli" or params["tf"] == "binary"
        self._log_tf = params["tf"] == "log" and not self._binary
        self._l2 = params["norm"] == "l2" and params["model"] != "bernoulli"
        self._terms, self._ends = values["terms"]
        self._class_count = list(values["class_count"])
        self.bias = list(values["score_bias"])
        if meta["version"] == 2:
            self._weights = values["score_weights"]
            # Term k's weight for class c, at k·C + c (C order) or c·T + k (Fortran order).
            n_terms, n_classes = model.sizes["T"], model.sizes["C"]
            self._step = ((1, n_terms) if model.raw["score_weights"].fortran
                          else (n_classes, 1))
        else:
            self._weights = None
            self._indptr, self._count_classes = values["count_indptr"], values["count_classes"]
            self._count_values = values["count_values"]
            self.constants(self._class_count, self.bias, values["score_constants"])

    def constants(self, class_count: list[float], bias: list[float],
                  constants: list[float]) -> None:
        """Score with these class counts, score_bias and score_constants (format 3)."""
        n_classes = len(self.classes)
        self._class_count, self.bias = list(class_count), list(bias)
        self._a, self._b = list(constants[:n_classes]), list(constants[n_classes:])
        # The multinomial and Bernoulli weights of a term no class has (count 0).
        log_alpha = math.log(0.0 + self._alpha)
        self._absent = [log_alpha - a_c if self._model == "multinomial" else
                        (log_alpha - a_c) - (math.log(max(total, 0.0) + self._alpha) - a_c)
                        for a_c, total in zip(self._a, self._class_count)]

    def _read(self) -> tuple:
        """(the model file read by the rules, :func:`textnb.store.container.read`; its values,
        :meth:`~textnb.store.container.ModelFile.plain`; its journal's count of learned messages
        and errors, or None), its journal replayed: the counts of the terms its documents
        touched in ``_touched``, the class counts and score constants after them in the
        values."""
        from . import journal
        from .container import read
        from .schema import TEXT_CLASSIFIER

        def once() -> tuple:
            model = read(self.path, TEXT_CLASSIFIER, writable=False, verdicts=True)
            if model.version < 2 or model.meta["params"].get("hash_bits") is not None:
                raise Declined("format 1" if model.version < 2 else "a hashed vocabulary")
            values = model.plain()
            found = journal.read(model)
            return (model, values, journal.replay_plain(model, values, found),
                    found.learned_errors)
        model, values, self._touched, counted = journal.steady(self.path, once)
        return model, values, counted

    def _rows(self, terms: list[int]) -> list:
        """The weights of each of ``terms``, one per class
        (:meth:`~textnb.nb.discrete.DiscreteNB.decomposition`): rows of score_weights (format 2),
        or from the term's counts n_c with the expressions of
        :func:`textnb.store.text_model.score_constants`, a class without the term taking the
        weight of a count of 0, computed once."""
        n_classes = len(self.classes)
        if self._weights is not None:
            weights, (by_term, by_class) = self._weights, self._step
            return [[weights[k * by_term + c * by_class] for c in range(n_classes)]
                    for k in terms]
        indptr, classes, values = self._indptr, self._count_classes, self._count_values
        alpha, a, b, absent, log = self._alpha, self._a, self._b, self._absent, math.log
        model, class_count, divisors = self._model, self._class_count, list(zip(a, b))
        rows = []
        # One loop for all terms, locals only, array slices, no max(): 5 µs a term where
        # a method call per term with max() took 8 (2 classes, a loaded machine).
        for k in terms:
            if k.__class__ is str:  # a term the journal touched
                cs, vs = self._touched[k]
            else:
                lo, hi = indptr[k], indptr[k + 1]
                cs, vs = classes[lo:hi], values[lo:hi]
            if model == "complement":
                total = 0.0
                for n in vs:  # in class order, as numpy sums feature_count_ over classes
                    total += n
                zero = log(total + alpha)
                row = [(zero - a_c) / b_c for a_c, b_c in divisors]
                for c, n in zip(cs, vs):
                    x = total - n + alpha
                    row[c] = (log(x if x > alpha else alpha) - a[c]) / b[c]
            elif model == "multinomial":
                row = absent[:]
                for c, n in zip(cs, vs):
                    row[c] = log(n + alpha) - a[c]
            else:
                row = absent[:]
                for c, n in zip(cs, vs):
                    x = class_count[c] - n
                    row[c] = (log(n + alpha) - a[c]) - (
                        log((x if x > 0.0 else 0.0) + alpha) - a[c])
            rows.append(row)
        return rows

    def log_proba(self, text: str, fields: tuple[tuple[str, str], ...] = ()) -> list[float]:
        """log P(c|x) per class, in ``classes`` order, of a text and its header fields."""
        return self.tokens_log_proba(self.tokenizer.document(text, fields))

    def tokens_log_proba(self, tokens: list[str]) -> list[float]:
        """log P(c|x) per class of a document's tokens (:attr:`tokenizer`'s)."""
        counts = self._counts(tokens).items()
        # In the model's column order, its terms': one the journal touched is keyed by itself.
        counts = sorted(counts, key=self._term) if self._touched else sorted(counts)
        values = [1.0 if self._binary else math.log1p(n) if self._log_tf else float(n)
                  for _, n in counts]
        if self._l2 and values:
            length = math.sqrt(sum(v * v for v in values))
            values = [v / length for v in values]
        sums = self._sums([k for k, _ in counts], values)
        # Finite: a file's counts, weights and constants are bounded (textnb.store.container).
        jll = [s + b for s, b in zip(sums, self.bias)]
        top = max(jll)
        norm = top + math.log(sum(math.exp(j - top) for j in jll))
        return [j - norm for j in jll]

    def _sums(self, terms: list, values: list[float]) -> list[float]:
        """Per class, Σ_k values[k] · W_k of ``terms`` (:meth:`_rows`) in their order: in C
        (textnb/_scores.c, the same floats) for the terms of a file of format 3 where the
        journal touched none, 5 µs a term in Python (2 classes)."""
        n_classes = len(self.classes)
        if _fast is not None and self._weights is None and not self._touched:
            return _fast.term_sums(_MODELS[self._model], self._alpha, self._a, self._b,
                                   self._absent, self._class_count, self._indptr,
                                   self._count_classes, self._count_values, terms, values)
        sums = [0.0] * n_classes
        for value, row in zip(values, self._rows(terms)):
            for c in range(n_classes):
                sums[c] += value * row[c]
        return sums

    def _counts(self, tokens: list[str]) -> dict[int, int]:
        """Column → count of the tokens that are vocabulary terms (Mitchell's positions)."""
        # Counted in a dict, not a collections.Counter: importing collections cost a delivery's
        # start 1.9 ms at load 8 (python -X importtime); a message's few hundred tokens, µs.
        counts: dict[str, int] = {}
        for token in tokens:
            counts[token] = counts.get(token, 0) + 1
        found, touched = {}, self._touched
        if touched:
            for token in [token for token in counts if token in touched]:
                if touched[token][0]:  # else no document has it any more
                    found[token] = counts[token]
                del counts[token]
        keys = list(counts)
        for key, column in zip(keys, term_columns(self._terms, self._ends, keys)):
            if column >= 0:
                found[column] = counts[key]
        return found

    def _term(self, item: tuple) -> bytes:
        """The term (UTF-8) of a ``_counts`` item: its key, or the snapshot's k-th term."""
        k = item[0]
        if k.__class__ is str:
            return k.encode("utf-8", "surrogatepass")
        return self._terms[self._ends[k - 1] if k else 0:self._ends[k] - 1]


def score(path: str | os.PathLike, text: str, fields: tuple[tuple[str, str], ...] = ()
          ) -> tuple[list, list[float], dict | None, tuple[int, int]]:
    """(classes, log P(c|x) per class, learned cutoffs or None, the learners' (messages,
    errors)) of one text and its fields by the model file at path: read by a Scorer, or, for a
    file it leaves to load_model (format 1, a hashed vocabulary, words outside the vocabulary
    scored), by :func:`~textnb.store.text_model.load_model`. ModelFileError, from either, for
    a file every reader refuses."""
    try:
        scorer = Scorer(path)
    except Declined:
        from .text_model import load_model
        from ..documents.message import Document
        classifier = load_model(path)
        classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
        return (classes, classifier.predict_log_proba([Document("-", text, fields)])[0].tolist(),
                classifier.cutoffs_, classifier.learned_errors_)
    return scorer.classes, scorer.log_proba(text, fields), scorer.cutoffs, scorer.learned_errors
