"""What a model file may hold, declared once: each kind's members (.npy arrays) by format
version, meta.json's keys, settings and records with the checks of their values, the limits on
sizes and numbers, and the rules of the arrays' values (checked by :mod:`textnb.store.arrays`
with numpy and by :mod:`textnb.store.plain` without). Plain Python: the mail filter reads it."""

from __future__ import annotations

import math

from ..settings import CHOICES, listed

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms
if TYPE_CHECKING:
    from typing import Any, Callable


FORMAT = "textnb-model"


# 1: the first format; 2: a text classifier's terms are an array of UTF-8 lines, no longer in
# meta.json; 3: its counts are stored by term, non-zero ones only, in the smallest exact type,
# and the weights the mail filter scores with follow from them (20 Newsgroups: 58 MB → 6.4 MB,
# python -m bench.modelfile). Files of every version from 1 to VERSION are read.
VERSION = 3


TEXT_CLASSIFIER = "text-classifier"


MULTILABEL = "multi-label-classifier"


# Classes: the mail filter scores each message term against every class in Python (1,000
# classes, a 5,000-term message: 0.5 s of its 10 s budget). Cells (classes × terms): the dense
# arrays info and the weights build (8 bytes each; 20 Newsgroups' word pairs, tuned: 20 ×
# 1.2 million). Comparisons (classes × cells): info's informative terms compare each class
# with every other, term by term (that model: 4.8e8, 1.5 s; python -m bench.hostile_models).
MAX_CLASSES = 1000


MAX_TERMS = 1 << 24


MAX_TERM_BYTES = 1 << 30


MAX_CELLS = 1 << 26


MAX_COMPARISONS = 1 << 30


MAX_DIGESTS = 1 << 26


# Numbers: counts and weights below 2**54 (exact integers to 2**53; a sum over MAX_CELLS of
# them is finite), scores (biases, weights, divisors) below 2**40 in size, the logarithms of
# the score constants below 2**10; alpha at most a million times Laplace's pseudo-count.
COUNT_BITS = 54


SCORE_BITS = 40


LOG_BITS = 10


MAX_ALPHA = 1e6


MAX_MARGIN = 1e6


# Rates a cutoff is learned for: 0, or at least this (1/rate sizes the sample: ham_needed).
MIN_RATE = 1e-9


# Settings a text classifier's file may hold: beyond these a tokenizer does absurd work
# (each word gives max_n n-grams of up to max_n words) for no benefit; papers stop at 3-5.
MAX_NGRAM = 10


MAX_TOKEN_LENGTH_LIMIT = 10_000


MAX_JOBS = 4096


MAX_FOLDS = 1000


# The event models (:data:`textnb.settings.CHOICES`, as :data:`textnb.classifier.MODELS`).
EVENT_MODELS = CHOICES["model"]


UNSIGNED = ("u1", "u2", "u4", "u8")


INTEGER = ("i1", "i2", "i4", "i8", *UNSIGNED)


FLOAT = ("f8",)


# The arrays of each kind's file: (name, format versions, .npy types (either byte order), shape
# in the file's sizes, rule of its values (RULES), when it is there: always (None), "optional",
# or with a "hashed" vocabulary only). Sizes: C classes (labels), T terms, L lines of terms (T,
# or 0 for a hashed vocabulary), B bytes of terms, D documents learned, N counts stored.
# In the order their rules are checked: a rule may read the members above it.
TEXT_MEMBERS = (
    ("class_count", (1, 2, 3), FLOAT, ("C",), "counts", None),
    # Training on error learns a share of a document: its weight (else 1). Files of it written
    # before this member (23-24 Nov 2026) have none: a file without it is read so.
    ("digest_weights", (3,), FLOAT, ("D",), "weights", "optional"),
    ("digests", (1, 2, 3), ("u8",), ("D",), None, None),
    # Format 3 numbers classes in the smallest unsigned type, earlier ones in int64.
    ("digest_classes", (1, 2), ("i8",), ("D",), "classes", None),
    ("digest_classes", (3,), UNSIGNED, ("D",), "classes", None),
    ("feature_count", (1, 2), FLOAT, ("C", "T"), "counts", None),
    ("terms", (2, 3), ("u1",), ("B",), "sorted lines", None),
    # Where each term's line ends. This textnb reads the lines themselves; textnb before it
    # bisected with these, so they are still written, and their shape checked.
    ("term_ends", (2,), ("u8",), ("L",), None, None),
    ("term_ends", (3,), UNSIGNED, ("L",), None, None),
    ("columns", (2, 3), INTEGER, ("T",), "columns", "hashed"),
    ("score_bias", (2, 3), FLOAT, ("C",), "scores", None),
    ("score_weights", (2,), FLOAT, ("T", "C"), "scores", None),
    ("count_indptr", (3,), UNSIGNED, ("T+1",), "indptr", None),
    ("count_classes", (3,), UNSIGNED, ("N",), "rows", None),
    ("count_values", (3,), UNSIGNED + FLOAT, ("N",), "counts", None),
    ("score_constants", (3,), FLOAT, (2, "C"), "constants", None),
)


MULTILABEL_MEMBERS = (
    ("terms", (1, 2, 3), ("u1",), ("B",), "distinct lines", None),
    ("label_count", (1, 2, 3), FLOAT, ("C",), "counts", None),
    ("feature_count", (1, 2, 3), FLOAT, ("C", "T"), "counts", None),
    ("total_count", (1, 2, 3), FLOAT, ("T",), "counts", None),
    ("n_documents", (1, 2, 3), FLOAT, (1,), "counts", None),
    ("thresholds", (1, 2, 3), FLOAT, ("C",), "scores", None),
)


MEMBERS = {TEXT_CLASSIFIER: TEXT_MEMBERS, MULTILABEL: MULTILABEL_MEMBERS}


class Member:
    """A row of a members table for one version: types, shape, rule, when."""

    __slots__ = ("types", "shape", "rule", "when")

    def __init__(self, types: tuple[str, ...], shape: tuple, rule: str | None,
                 when: str | None) -> None:
        self.types, self.shape, self.rule, self.when = types, shape, rule, when


def members(kind: str, version: int) -> dict[str, Member]:
    """name → :class:`Member` of a file of ``kind`` (a kind of :data:`MEMBERS`) and version."""
    return {name: Member(types, shape, rule, when)
            for name, versions, types, shape, rule, when in MEMBERS[kind] if version in versions}


def is_whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _integer(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: is_whole(v) and low <= v <= high


def _number(low: float, high: float, above: bool = False, below: bool = False) -> Callable:
    """A finite number in [low, high] (``above``: > low; ``below``: < high)."""
    return lambda v: (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                      and (v > low if above else v >= low) and (v < high if below else v <= high))


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def _boolean(v: Any) -> bool:
    return isinstance(v, bool)


def _string(v: Any) -> bool:
    return isinstance(v, str)


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(s, str) for s in v)


def _ngrams(v: Any) -> bool:
    return (isinstance(v, list) and len(v) == 2
            and all(is_whole(n) and 1 <= n <= MAX_NGRAM for n in v) and v[0] <= v[1])


def _rate(v: Any) -> bool:
    """A target rate: 0, or from MIN_RATE to below 1."""
    return _number(0, 1, below=True)(v) and (v == 0 or v >= MIN_RATE)


def _label(v: Any) -> bool:
    """A class label as JSON holds it: a string, a boolean or a finite number."""
    return isinstance(v, (str, bool)) or _number(-2.0 ** 63, 2.0 ** 63)(v)


_SHARED_SETTINGS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "alpha": (_number(0, MAX_ALPHA, above=True),
              f"alpha must be a finite number > 0 and at most {MAX_ALPHA:g}"),
    "stop_words": (lambda v: v is None or _string(v) or _strings(v),
                   "stop_words must be a name or a list"),
    "stemmer": (lambda v: v in CHOICES["stemmer"],
                f"stemmer must be {listed(CHOICES['stemmer'])}"),
    "lowercase": (_boolean, "lowercase must be true or false"),
    "max_token_length": (_integer(1, MAX_TOKEN_LENGTH_LIMIT),
                         f"max_token_length must be 1 to {MAX_TOKEN_LENGTH_LIMIT}"),
    "min_df": (_number(0, MAX_TERMS * 2.0 ** 32), "min_df must be a number >= 0"),
    "max_df": (_number(0, MAX_TERMS * 2.0 ** 32), "max_df must be a number >= 0"),
    "max_features": (_optional(_integer(1, 2 ** 63 - 1)), "max_features must be a positive integer"),
    "tf": (lambda v: v in CHOICES["tf"], f"tf must be {listed(CHOICES['tf'])}"),
    "norm": (lambda v: v in CHOICES["norm"], f"norm must be null or {listed(CHOICES['norm'])}"),
    # How many processes training used: a loaded model starts none by it (its caller's n_jobs).
    "n_jobs": (_optional(lambda v: _integer(-MAX_JOBS, MAX_JOBS)(v) and v != 0),
               f"n_jobs must be null or a number of processes from -{MAX_JOBS} to {MAX_JOBS}, not 0"),
}


# A text classifier's settings (TextClassifier.get_params()): name → (check, what it must be,
# required). The first fifteen are in every file textnb wrote; the others came later, and a
# file without one keeps TextClassifier's default.
TEXT_SETTINGS: dict[str, tuple[Callable[[Any], bool], str, bool]] = {
    "model": (lambda v: v in EVENT_MODELS, f"model must be one of {', '.join(EVENT_MODELS)}", True),
    **{name: (*check, True) for name, check in _SHARED_SETTINGS.items()
       if name not in ("n_jobs",)},
    "fit_prior": (_boolean, "fit_prior must be true or false", True),
    "class_prior": (_optional(lambda v: isinstance(v, list) and all(_number(0, 2.0 ** COUNT_BITS)(x)
                                                                 for x in v) and any(v)),
                    "class_prior must be a non-negative number per class, not all zero", True),
    # The setting (null: chosen by the documents); what was counted is meta's "ngram_range".
    "ngram_range": (_optional(_ngrams), f"ngram_range must be [min_n, max_n] with "
                                        f"1 <= min_n <= max_n <= {MAX_NGRAM}", True),
    "n_jobs": (*_SHARED_SETTINGS["n_jobs"], True),
    "spam_class": (_optional(_string), "spam_class must be null or a class name", False),
    **{name: (_rate, f"{name} must be 0 or from {MIN_RATE:g} to below 1", False)
       for name in ("target_fpr", "target_fnr", "target_unsure")},
    "cutoff_folds": (_integer(2, MAX_FOLDS), f"cutoff_folds must be 2 to {MAX_FOLDS}", False),
    "keep_suspects": (_boolean, "keep_suspects must be true or false", False),
    "training": (lambda v: v in CHOICES["training"],
                 f"training must be {listed(CHOICES['training'])}", False),
    "margin": (_number(0, MAX_MARGIN), f"margin must be a number from 0 to {MAX_MARGIN:g}", False),
    "max_passes": (_integer(1, 1000), "max_passes must be 1 to 1000", False),
    "hash_bits": (_optional(_integer(1, 31)), "hash_bits must be null or 1 to 31", False),
    "decision_threshold": (lambda v: v in ("auto", None) or _number(-2.0 ** SCORE_BITS,
                                                                    2.0 ** SCORE_BITS)(v),
                           "decision_threshold must be auto, null or a number", False),
}


# A multi-label classifier's settings (MultiLabelClassifier.get_params()), all required.
MULTILABEL_SETTINGS: dict[str, tuple[Callable[[Any], bool], str, bool]] = {
    **{name: (*check, True) for name, check in _SHARED_SETTINGS.items()},
    "ngram_range": (_ngrams, f"ngram_range must be [min_n, max_n] with "
                             f"1 <= min_n <= max_n <= {MAX_NGRAM}", True),
    "folds": (_integer(2, MAX_FOLDS), f"folds must be 2 to {MAX_FOLDS}", True),
    "seed": (_integer(-2 ** 63, 2 ** 64 - 1), "seed must be a whole number", True),
}


# meta.json's keys, beside format, version and kind: name → required (a text classifier's
# "terms" only in format 1, where its vocabulary was kept there).
TEXT_META = {"params": True, "classes": True, "stop_words": True, "ngram_range": False,
             "cutoffs": False, "tuning": False, "decision_threshold": False, "terms": False}


MULTILABEL_META = {"params": True, "labels": True, "stop_words": True, "cv": False}


# Records of what was learned, read by classify, filter, serve and info: name → (check, what,
# required). Other keys are kept and shown (info --format json) but read by nothing.
_COUNT = _integer(0, 2 ** 53)


_FRACTION = _number(0, 1)


CUTOFFS = {
    "spam_class": (_string, "a class name", True),
    "spam": (_number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS), "a number", True),
    "ham": (_number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS), "a number", True),
    **{name: (_FRACTION, "a rate from 0 to 1", True)
       for name in ("fpr", "fnr", "unsure", "spam_not_caught")},
    **{name: (_FRACTION, "a rate from 0 to 1", False) for name in ("spam_unsure", "ham_unsure")},
    "messages": (_COUNT, "a number of messages", True),
    "folds": (_integer(2, MAX_FOLDS), f"2 to {MAX_FOLDS} folds", True),
    **{name: (_COUNT, "a number of messages", False)
       for name in ("spam_messages", "suspects", "sampled_from")},
    **{name: (_rate, f"0 or a rate from {MIN_RATE:g} to below 1", False)
       for name in ("target_fpr", "target_fnr", "target_unsure")},
    "rated": (lambda v: v in ("left out", "as new"), "left out or as new", False),
    "training": (lambda v: v in ("full", "on-error"), "full or on-error", False),
}


_TUNED_ROW = {"mean": (_number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS), "a number", True),
              "sd": (_number(0, 2.0 ** SCORE_BITS), "a number >= 0", True)}


TUNING = {"metric": (_string, "a name", True),
          "folds": (_integer(2, 2 ** 31), "a number of folds", True),
          "candidates": (_integer(1, 2 ** 31), "a number of settings", True),
          "best": (lambda v: record_problem(v, _TUNED_ROW) is None, "a row of mean and sd", True),
          "top": (lambda v: isinstance(v, list) and all(record_problem(r, _TUNED_ROW) is None
                                                    for r in v), "rows of mean and sd", False)}


CV = {name: (lambda v: isinstance(v, list)
             and all(_number(0, 1)(x) for x in v), "rates from 0 to 1", True)
      for name in ("precision", "recall", "f1")}
CV["documents"] = (_COUNT, "a number of documents", False)
# Why each label's threshold fell back (textnb.multilabel.choose_thresholds), "" where it did
# not; absent from files written before the fallback.
CV["fallback"] = (lambda v: _strings(v) and all(len(s) <= 200 for s in v),
                  "a list of reasons, one a label", False)


def record_problem(record: Any, fields: dict[str, tuple[Callable[[Any], bool], str, bool]]
                   ) -> str | None:
    """What is wrong with a record of meta.json (an object of ``fields``), or None."""
    if not isinstance(record, dict):
        return "not an object"
    for name, (check, what, required) in fields.items():
        if name in record:
            if not check(record[name]):
                return f"{name} must be {what}"
        elif required:
            return f"no {name}"
    return None


def settings_problem(params: Any, table: dict[str, tuple[Callable[[Any], bool], str, bool]]
                     ) -> str | None:
    """What is wrong with a model's settings (meta.json's "params") by its kind's ``table``."""
    if not isinstance(params, dict):
        return "no settings"
    unknown = sorted(set(params) - set(table))
    if unknown:
        return f"unknown setting {unknown[0]!r}"
    for name, (check, what, required) in table.items():
        if name in params:
            if not check(params[name]):
                return what
        elif required:
            return f"no setting {name}"
    return None


def keys_problem(meta: dict, keys: dict[str, bool]) -> str | None:
    """What is wrong with the keys of a meta.json (beside format, version and kind) by its
    kind's ``keys`` (name → required), or None."""
    unknown = sorted(set(meta) - set(keys) - {"format", "version", "kind"})
    if unknown:
        return f"unknown key {unknown[0]!r}"
    missing = [key for key, required in keys.items() if required and key not in meta]
    return f"no {missing[0]}" if missing else None


def text_classifier_problem(meta: dict) -> str | None:
    """What is wrong with a text classifier's classes, stop words, settings, counted n-grams,
    cutoffs, tuning record and decision threshold (meta.json's, or a dump's header), or None.
    Checked on every read and before saving, so that textnb never writes a file it would
    refuse."""
    classes = meta.get("classes")
    if (not isinstance(classes, list) or not 1 <= len(classes) <= MAX_CLASSES
            or not all(map(_label, classes)) or len({str(c) for c in classes}) != len(classes)):
        return f"classes must be 1 to {MAX_CLASSES} distinct names or numbers"
    if not _strings(meta.get("stop_words")):
        return "stop words must be a list of strings"
    problem = settings_problem(meta.get("params"), TEXT_SETTINGS)
    if problem:
        return problem
    params = meta["params"]
    if params["class_prior"] is not None and len(params["class_prior"]) != len(classes):
        return "class_prior must be a non-negative number per class, not all zero"
    # What was counted: absent from files older than the setting's null; then the setting's.
    if not _ngrams(meta.get("ngram_range", params["ngram_range"])):
        return (f"ngram_range must be [min_n, max_n] with 1 <= min_n <= max_n <= {MAX_NGRAM}")
    threshold = meta.get("decision_threshold")
    if threshold is not None and not (_number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS)(threshold)
                                      and len(classes) == 2):
        return "its decision threshold must be a number, for two classes"
    cutoffs = meta.get("cutoffs")
    if cutoffs is not None:
        problem = record_problem(cutoffs, CUTOFFS)
        if problem:
            return f"its cutoffs: {problem}"
        if len(classes) != 2 or cutoffs["spam_class"] not in [str(c) for c in classes]:
            return "its cutoffs do not fit its classes"
        if cutoffs["ham"] > cutoffs["spam"]:
            return "its cutoffs are not two ordered numbers"
        if not cutoffs.get("spam_messages", 0) <= cutoffs["messages"]:
            return "its cutoffs count more spam than messages"
    if meta.get("tuning") is not None:
        problem = record_problem(meta["tuning"], TUNING)
        if problem:
            return f"its tuning record: {problem}"
    return None


def _text_meta_problem(meta: dict) -> str | None:
    """A text classifier's meta.json: its keys (the terms in format 1 only), then its content."""
    problem = keys_problem(meta, TEXT_META)
    if problem:
        return problem
    if (meta["version"] == 1) != ("terms" in meta) or not _strings(meta.get("terms", [])):
        return "terms must be a list of strings in meta.json in format 1, and only there"
    return text_classifier_problem(meta)


def multilabel_problem(meta: dict) -> str | None:
    """What is wrong with a multi-label classifier's meta.json, or None (as
    :func:`text_classifier_problem`)."""
    problem = keys_problem(meta, MULTILABEL_META)
    if problem:
        return problem
    labels = meta["labels"]
    if not _strings(labels) or not 1 <= len(labels) <= MAX_CLASSES or len(set(labels)) != len(labels):
        return f"labels must be 1 to {MAX_CLASSES} distinct names"
    if not _strings(meta["stop_words"]):
        return "stop words must be a list of strings"
    problem = settings_problem(meta["params"], MULTILABEL_SETTINGS)
    if problem:
        return problem
    if meta.get("cv") is not None:
        problem = record_problem(meta["cv"], CV)
        if problem or any(len(meta["cv"][name]) != len(labels)
                          for name in ("precision", "recall", "f1", "fallback")
                          if name in meta["cv"]):
            return f"its cross-validation record: {problem or 'not one rate a label'}"
    return None


META_PROBLEM = {TEXT_CLASSIFIER: _text_meta_problem, MULTILABEL: multilabel_problem}


# Rule → what a member's values must be, as the error says it. Each is an exact predicate,
# written for numpy (NUMPY_RULES) and in plain Python (PLAIN_RULES) to the same verdict.
RULES = {
    "counts": f"counts must be finite, >= 0 and below 2**{COUNT_BITS}",
    "weights": f"weights must be finite, > 0 and below 2**{COUNT_BITS}",
    "scores": f"scores must be finite and below 2**{SCORE_BITS} in size",
    "constants": (f"score constants must be logarithms below 2**{LOG_BITS} and divisors from "
                  f"-2**{SCORE_BITS} to -0.5"),
    "classes": "class numbers must be from 0 to the number of classes - 1",
    "sorted lines": "the terms must be UTF-8 lines in sorted order, each once",
    "distinct lines": "the terms must be UTF-8 lines, each once",
    "columns": "the hashed columns must increase, from 0 to 2**hash_bits - 1",
    "indptr": "count_indptr must run in order from 0 to the number of counts",
    "rows": "count_classes must be class numbers, ascending within each term's row",
}
