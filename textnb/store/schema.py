"""What a model file may hold, declared once: each kind's members (.npy arrays) by format
version, meta.json's keys, settings and records with the checks of their values, the limits on
sizes and numbers, and the rules of the arrays' values (checked by :mod:`textnb.store.arrays`
with numpy and by :mod:`textnb.store.plain` without). Plain Python: the mail filter reads it."""

from __future__ import annotations

from ..settings import (CHOICES, COUNT_BITS, MAX_ALPHA, MAX_FOLDS, MAX_JOBS, MAX_MARGIN,  # noqa: F401
                        MAX_NGRAM, MAX_TERMS, MAX_TOKEN_LENGTH_LIMIT, MIN_RATE, SCORE_BITS,
                        integer, is_whole, ngrams, number, rate)
from ..settings import MULTILABEL_NOT_NONE, RULES as SETTING_RULES, setting_problem

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


MAX_TERM_BYTES = 1 << 30


MAX_CELLS = 1 << 26


MAX_COMPARISONS = 1 << 30


MAX_DIGESTS = 1 << 26


# The logarithms of the score constants below 2**10.
LOG_BITS = 10


# The settings' limits (alpha, n-grams, token length, processes, folds, rates, the sizes of
# counts and scores) are textnb.settings', the estimators' too.


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


def _string(v: Any) -> bool:
    return isinstance(v, str)


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(s, str) for s in v)


def _label(v: Any) -> bool:
    """A class label as JSON holds it: a string, a boolean or a finite number."""
    return isinstance(v, (str, bool)) or number(-2.0 ** 63, 2.0 ** 63)(v)


# Settings that came after files were written without them, whose default changed with them:
# name → the value such a file keeps (its tokens were made so). Body words of one character
# were kept until min_token_length; words outside the vocabulary were dropped until unseen.
LEGACY_SETTINGS = {"min_token_length": 1, "unseen": "drop"}


def with_legacy(params: dict[str, Any], kind: dict[str, bool] | None = None) -> dict[str, Any]:
    """A model file's settings with :data:`LEGACY_SETTINGS` filled in where it has none (those
    of the ``kind`` of classifier, :data:`TEXT_SETTINGS` by default)."""
    kind = TEXT_SETTINGS if kind is None else kind
    return {**{k: v for k, v in LEGACY_SETTINGS.items() if k in kind}, **params}


# A text classifier's settings (TextClassifier.get_params()): name → required. The first
# fifteen are in every file textnb wrote; the others came later, and a file without one keeps
# TextClassifier's default (or its LEGACY_SETTINGS value). Their values' rules are
# textnb.settings.RULES, the estimator's.
TEXT_SETTINGS: dict[str, bool] = {
    **dict.fromkeys(("model", "alpha", "stop_words", "stemmer", "lowercase", "max_token_length",
                     "min_df", "max_df", "max_features", "tf", "norm", "fit_prior",
                     "class_prior", "ngram_range", "n_jobs"), True),
    **dict.fromkeys(("spam_class", "target_fpr", "target_fnr", "target_unsure", "cutoff_folds",
                     "keep_suspects", "training", "margin", "max_passes", "hash_bits",
                     "decision_threshold", "min_token_length", "unseen"), False),
}


# A multi-label classifier's settings (MultiLabelClassifier.get_params()): name → required.
MULTILABEL_SETTINGS: dict[str, bool] = {
    **dict.fromkeys(("alpha", "stop_words", "stemmer", "lowercase", "max_token_length", "min_df",
                     "max_df", "max_features", "tf", "norm", "n_jobs", "ngram_range", "folds",
                     "seed"), True),
    "min_token_length": False,  # LEGACY_SETTINGS
    "scoring": False,  # a file without it scores one-vs-rest (store.multilabel_model)
}


# meta.json's keys, beside format, version and kind: name → required (a text classifier's
# "terms" only in format 1, where its vocabulary was kept there).
TEXT_META = {"params": True, "classes": True, "stop_words": True, "ngram_range": False,
             "cutoffs": False, "tuning": False, "decision_threshold": False, "terms": False,
             "learned_errors": False}


# "one_vs_rest": the labels scored one-vs-rest and its α, in a model of scoring "per-label".
MULTILABEL_META = {"params": True, "labels": True, "stop_words": True, "cv": False,
                   "one_vs_rest": False}


# Records of what was learned, read by classify, filter, serve and info: name → (check, what,
# required). Other keys are kept and shown (info --format json) but read by nothing.
_COUNT = integer(0, 2 ** 53)


_FRACTION = number(0, 1)


def learned_errors_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as [messages, errors], textnb's learners' count
    (:func:`textnb.online.learning_weight`) in a model's meta or a journal's commit, or None."""
    if (isinstance(value, list) and len(value) == 2 and all(map(_COUNT, value))
            and value[1] <= value[0]):
        return None
    return "learned_errors must be [messages, errors], 0 <= errors <= messages < 2**53"


CUTOFFS = {
    "spam_class": (_string, "a class name", True),
    "spam": (number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS), "a number", True),
    "ham": (number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS), "a number", True),
    **{name: (_FRACTION, "a rate from 0 to 1", True)
       for name in ("fpr", "fnr", "unsure", "spam_not_caught")},
    **{name: (_FRACTION, "a rate from 0 to 1", False) for name in ("spam_unsure", "ham_unsure")},
    "messages": (_COUNT, "a number of messages", True),
    "folds": (integer(2, MAX_FOLDS), f"2 to {MAX_FOLDS} folds", True),
    **{name: (_COUNT, "a number of messages", False)
       for name in ("spam_messages", "suspects", "sampled_from")},
    **{name: (rate, f"0 or a rate from {MIN_RATE:g} to below 1", False)
       for name in ("target_fpr", "target_fnr", "target_unsure")},
    "rated": (lambda v: v in ("left out", "as new"), "left out or as new", False),
    "training": (lambda v: v in ("full", "on-error"), "full or on-error", False),
}


_TUNED_ROW = {"mean": (number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS), "a number", True),
              "sd": (number(0, 2.0 ** SCORE_BITS), "a number >= 0", True)}


TUNING = {"metric": (_string, "a name", True),
          "folds": (integer(2, 2 ** 31), "a number of folds", True),
          "candidates": (integer(1, 2 ** 31), "a number of settings", True),
          "best": (lambda v: record_problem(v, _TUNED_ROW) is None, "a row of mean and sd", True),
          "top": (lambda v: isinstance(v, list) and all(record_problem(r, _TUNED_ROW) is None
                                                    for r in v), "rows of mean and sd", False),
          "note": (_string, "a sentence", False)}


CV = {name: (lambda v: isinstance(v, list)
             and all(number(0, 1)(x) for x in v), "rates from 0 to 1", True)
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


def settings_problem(params: Any, table: dict[str, bool]) -> str | None:
    """What is wrong with a model's settings (meta.json's "params") by its kind's ``table``
    (name → required) and each setting's rule (:data:`textnb.settings.RULES`)."""
    if not isinstance(params, dict):
        return "no settings"
    unknown = sorted(set(params) - set(table))
    if unknown:
        return f"unknown setting {unknown[0]!r}"
    for name, required in table.items():
        if name in params:
            # JSON holds lists: a tuple, a set or a path is no file's value.
            value = params[name]
            if isinstance(value, (tuple, set, frozenset)) or not SETTING_RULES[name][0](value):
                return f"{name} must be {SETTING_RULES[name][1]}"
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
    if not ngrams(meta.get("ngram_range", params["ngram_range"])):
        return (f"ngram_range must be [min_n, max_n] with 1 <= min_n <= max_n <= {MAX_NGRAM}")
    threshold = meta.get("decision_threshold")
    if threshold is not None and not (number(-2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS)(threshold)
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
    problem = learned_errors_problem(meta["learned_errors"]) if "learned_errors" in meta else None
    if problem:
        return problem
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
    for name in MULTILABEL_NOT_NONE:
        if meta["params"][name] is None:
            return f"{name} must be {SETTING_RULES[name][1].removeprefix('None or ')}"
    rest = meta.get("one_vs_rest")
    if (rest is not None) != (meta["params"].get("scoring") == "per-label"):
        return "one_vs_rest must be given for scoring per-label, and only there"
    if rest is not None and (not isinstance(rest, dict) or set(rest) != {"labels", "alpha"}
                             or not _strings(rest["labels"])
                             or not set(rest["labels"]) <= set(labels)
                             or setting_problem("alpha", rest["alpha"]) is not None):
        return "one_vs_rest must be {labels: names of the model's labels, alpha: α > 0}"
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
