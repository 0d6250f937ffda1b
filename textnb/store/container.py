"""dict of arrays + JSON metadata ⇄ one versioned model file, written atomically, read safely.

A model file is a zip archive of stored members: ``meta.json`` and one ``.npy`` file per
array. What a file may hold is written once, here, and every reader applies it: the mail
filter's numpy-free scorer (:mod:`textnb.mail.scorer`) through :func:`read` and
:meth:`ModelFile.plain`, :func:`textnb.classifier.load_model` (and so ``classify``, ``info``,
``learn``, ``serve``) and the multi-label loader through :func:`read` and
:meth:`ModelFile.arrays`:

* the zip: one member of each name, each stored (never inflated: no zip bomb), within the file
  and in order, no byte outside them, its CRC-32 right (:func:`read`);
* meta.json: at most MAX_META_BYTES and MAX_META_VALUES values, JSON without a key twice; its
  format, version and kind; the keys, settings and records each kind's table names
  (:data:`TEXT_META`, :data:`TEXT_SETTINGS`, :data:`CUTOFFS`, :data:`TUNING`), every number
  read finite and bounded;
* the arrays (:data:`MEMBERS`): none missing, none unknown, each .npy header a plain type of
  the member's (a pickle is never read) and the shape the file's own sizes give it — classes
  C, terms T, documents learned D, counts stored N (``("C", "T")``);
* the sizes: C, T, C × T, C² × T (what ``info`` compares), D and N within the limits below,
  all checked on the directory, the headers and meta.json before any array is read;
* the values (:data:`RULES`): counts finite, non-negative and below 2**54, class numbers below
  C, terms sorted, and so on, written twice — with numpy (:meth:`ModelFile.arrays`) and in
  plain Python (:meth:`ModelFile.plain`) — as the same exact predicates, so that the two
  readers refuse the same files (tests/test_hostile_models.py: 146 crafted files).

Everything is read from one open regular file (a FIFO would block, ``/dev/zero`` never ends),
so a model replaced meanwhile is never half read. Writing goes to a temporary file in the
target's directory, then ``os.replace``: a reader sees the old model or the new one.
:func:`save` checks a text classifier or multi-label model against the same tables first, so
that textnb never writes a file it would refuse. numpy is imported where arrays are built.
"""

from __future__ import annotations

import json
import math
import operator
import os
import stat
import struct
import time
import zlib
from contextlib import contextmanager
from itertools import islice

from ..errors import ModelFileError

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms, as in textnb.documents.message
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, BinaryIO, Callable, Iterator

try:  # the plain reader's passes over terms and counts in C (textnb/_modelfile.c), if built
    from .. import _modelfile as _fast
except ImportError:  # no C compiler at install time: the same predicates in Python
    _fast = None

FORMAT = "textnb-model"
# 1: the first format; 2: a text classifier's terms are an array of UTF-8 lines, no longer in
# meta.json; 3: its counts are stored by term, non-zero ones only, in the smallest exact type,
# and the weights the mail filter scores with follow from them (20 Newsgroups: 58 MB → 6.4 MB,
# scripts/bench_modelfile.py). Files of every version from 1 to VERSION are read.
VERSION = 3
TEXT_CLASSIFIER = "text-classifier"
MULTILABEL = "multi-label-classifier"

# -- limits on what a file may declare ----------------------------------------------------------
# meta.json: version 1 kept the vocabulary there (500,000 terms of 20 Newsgroups ≈ 10 MB). JSON
# builds up to 60 bytes of objects a value ("[]," is a list), so values are counted too.
MAX_META_BYTES = 16 << 20
MAX_META_VALUES = 1 << 20
MAX_MEMBERS = 32
MAX_NPY_HEADER = 4096  # numpy writes 118 bytes for any array textnb stores
# Classes: the mail filter scores each message term against every class in Python (1,000
# classes, a 5,000-term message: 0.5 s of its 10 s budget). Cells (classes × terms): the dense
# arrays info and the weights build (8 bytes each; 20 Newsgroups' word pairs, tuned: 20 ×
# 1.2 million). Comparisons (classes × cells): info's informative terms compare each class
# with every other, term by term (that model: 4.8e8, 1.5 s; scripts/bench_hostile_models.py).
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
# Event models of :data:`textnb.classifier.MODELS` (tests/test_hostile_models.py checks they agree).
EVENT_MODELS = ("multinomial", "bernoulli", "complement")

# Temporary files of a save: ".<model>.<pid>.<random>.textnb-tmp". One a killed writer left is
# removed by a later save once its process is gone and it is older than STALE_SECONDS.
TMP_SUFFIX = ".textnb-tmp"
STALE_SECONDS = 600


# -- what a file holds: members ------------------------------------------------------------------

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


# -- what a file holds: meta.json ----------------------------------------------------------------

def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _integer(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: _whole(v) and low <= v <= high


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
            and all(_whole(n) and 1 <= n <= MAX_NGRAM for n in v) and v[0] <= v[1])


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
    "stemmer": (lambda v: v in (None, "porter", "snowball"), "stemmer must be porter or snowball"),
    "lowercase": (_boolean, "lowercase must be true or false"),
    "max_token_length": (_integer(1, MAX_TOKEN_LENGTH_LIMIT),
                         f"max_token_length must be 1 to {MAX_TOKEN_LENGTH_LIMIT}"),
    "min_df": (_number(0, MAX_TERMS * 2.0 ** 32), "min_df must be a number >= 0"),
    "max_df": (_number(0, MAX_TERMS * 2.0 ** 32), "max_df must be a number >= 0"),
    "max_features": (_optional(_integer(1, 2 ** 63 - 1)), "max_features must be a positive integer"),
    "tf": (lambda v: v in ("raw", "log", "binary"), "tf must be raw, log or binary"),
    "norm": (lambda v: v in (None, "l2"), "norm must be null or l2"),
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
    "training": (lambda v: v in ("full", "on-error", "auto"),
                 "training must be full, on-error or auto", False),
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
                          for name in ("precision", "recall", "f1")):
            return f"its cross-validation record: {problem or 'not one rate a label'}"
    return None


_META_PROBLEM = {TEXT_CLASSIFIER: _text_meta_problem, MULTILABEL: multilabel_problem}


# -- what a file holds: values -------------------------------------------------------------------

# Rule → what a member's values must be, as the error says it. Each is an exact predicate,
# written for numpy (_NUMPY) and in plain Python (_PLAIN) to the same verdict.
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


# -- reading ---------------------------------------------------------------------------------------

_END = struct.Struct("<4s4H2IH")               # the zip's last record, 22 bytes
_ENTRY = struct.Struct("<4s6H3I5H2I")           # a member in the central directory, 46 bytes
_LOCAL = struct.Struct("<4s5H3I2H")             # before a member's data, 30 bytes
_NPY_MAGIC = b"\x93NUMPY"
_UTF8_NAMES = 0x800                             # the only flag a member may carry


class Array:
    """A .npy member as read: its type (``descr``, e.g. '<f8'), shape, C or Fortran order, and
    the bytes of the whole member (``data``), its values from ``offset`` on."""

    __slots__ = ("descr", "shape", "fortran", "data", "offset", "copy")

    def __init__(self, descr: str, shape: tuple[int, ...], fortran: bool, offset: int) -> None:
        self.descr, self.shape, self.fortran, self.offset = descr, shape, fortran, offset
        self.data: bytes | bytearray = b""
        self.copy: bytes | None = None  # the values as bytes, once a check needs them

    @property
    def values(self) -> memoryview:
        return memoryview(self.data)[self.offset:]


class ModelFile:
    """A model file as :func:`read` checked it: ``meta`` (meta.json), ``version``, ``kind``,
    ``raw`` (member name → :class:`Array`), ``sizes`` (C, T, L, B, D, N) and ``members`` (its
    kind's table for its version)."""

    def __init__(self, name: str, meta: dict, raw: dict[str, Array], sizes: dict[str, int]
                 ) -> None:
        self.name, self.meta, self.raw, self.sizes = name, meta, raw, sizes
        self.version, self.kind = meta["version"], meta["kind"]
        self.members = members(self.kind, self.version) if self.kind in MEMBERS else {}

    def corrupt(self, problem: str) -> ModelFileError:
        return ModelFileError(f"model file '{self.name}' is corrupt ({problem})")

    def arrays(self) -> dict[str, Any]:
        """Every member as a numpy array (a view of the bytes read, copied if unaligned), its
        values checked by its rule; a member of lines ("terms") as the list of them (str)."""
        import numpy as np
        arrays = {name: _numpy_array(array, np) for name, array in self.raw.items()}
        for name, member in self.members.items():
            if member.rule is not None and name in arrays:
                arrays[name] = _NUMPY[member.rule](self, arrays, name, np)
        return arrays

    def plain(self) -> dict[str, Any]:
        """A text classifier's members of format 2 or 3, for a vocabulary of terms, without
        numpy, their values checked by the same rules as :meth:`arrays`: "terms" as (its
        bytes, where each line ends), the others with a rule as numbers (:func:`plain_array`;
        2-d ones flat, in the order ``raw[name].fortran`` says), those without one left out."""
        if self.kind != TEXT_CLASSIFIER or self.version < 2 or "columns" in self.raw:
            raise ValueError("only a text classifier of format 2 or 3 with terms is read so")
        return {name: _PLAIN[member.rule](self, name) for name, member in self.members.items()
                if name in self.raw and member.rule is not None}


def _numpy_array(array: Array, np: Any) -> Any:
    values = np.frombuffer(array.data, dtype=np.dtype(array.descr), offset=array.offset,
                           count=math.prod(array.shape))
    values = values.reshape(array.shape[::-1]).T if array.fortran else values.reshape(array.shape)
    return values if values.flags.aligned else values.copy()


def open_model(path: str | os.PathLike) -> BinaryIO:
    """The model file at ``path`` open for reading; ModelFileError unless it is a regular file.

    Opened without blocking (a FIFO would wait for a writer forever), then checked with fstat
    on the open file itself, so the file checked is the file read.
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelFileError(f"model file '{name}' does not exist") from None
    except IsADirectoryError:
        raise ModelFileError(f"model file '{name}' is a directory") from None
    except PermissionError:
        raise ModelFileError(f"model file '{name}' cannot be read: permission denied") from None
    except OSError as error:
        raise ModelFileError(f"model file '{name}' cannot be read: {error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ModelFileError(f"model file '{name}' is "
                             f"{'a directory' if stat.S_ISDIR(mode) else 'not a regular file'}")
    return os.fdopen(fd, "rb")


def read(path: str | os.PathLike, kind: str | None, name: str | None = None, *,
         writable: bool = True) -> ModelFile:
    """The model file at ``path``, of ``kind`` (a kind of :data:`MEMBERS`; None: any kind's
    meta.json and arrays of plain numbers, unchecked), checked as the module says but for the
    values; ModelFileError naming the file (as ``name``, if given), in one line, if it is not
    one. ``writable``: its arrays' bytes in bytearrays, which numpy arrays of them may change;
    else in bytes, read without zeroing them first (:meth:`ModelFile.plain` reads them)."""
    name = os.fspath(path) if name is None else name
    with open_model(path) as f:
        try:
            return _read(f.fileno(), name, kind, writable)
        except ModelFileError:
            raise
        except (ValueError, UnicodeDecodeError, RecursionError, OSError, struct.error) as error:
            raise ModelFileError(f"model file '{name}' is truncated or corrupt ({error})") from None


def read_meta(path: str | os.PathLike) -> dict | None:
    """meta.json of the model file at ``path`` if it is a zip of textnb's layout whose
    meta.json is JSON (whatever else it holds), else None: which loader to ask."""
    name = os.fspath(path)
    try:
        with open_model(name) as f:
            entries = _directory(f.fileno(), os.fstat(f.fileno()).st_size)
            if "meta.json" not in entries:
                return None
            return _meta(f.fileno(), entries["meta.json"], name, None)
    except (ModelFileError, ValueError, UnicodeDecodeError, RecursionError, OSError,
            struct.error):
        return None


def _read(fd: int, name: str, kind: str | None, writable: bool) -> ModelFile:
    entries = _directory(fd, os.fstat(fd).st_size)
    if "meta.json" not in entries:
        raise ModelFileError(f"'{name}' is not a textnb model file")
    meta = _meta(fd, entries["meta.json"], name, kind)
    table = members(kind, meta["version"]) if kind is not None else None
    arrays: dict[str, Array] = {}
    for entry, (start, size, crc) in entries.items():
        if entry == "meta.json":
            continue
        member = entry[:-4]
        if not entry.endswith(".npy") or (table is not None and member not in table):
            raise ModelFileError(f"model file '{name}' is corrupt (unknown member {entry})")
        arrays[member] = _header(fd, start, size, entry)
    sizes = _sizes(name, meta, table, arrays) if table is not None else {}
    for member, array in arrays.items():  # the values, each member's CRC-32 checked
        start, size, crc = entries[f"{member}.npy"]
        data = bytearray(size) if writable else os.pread(fd, size, start)
        if (_pread_into(fd, data, start) if writable else len(data)) != size:
            raise ValueError(f"{member}.npy is cut short")
        if zlib.crc32(data) != crc:
            raise ValueError(f"{member}.npy is truncated or corrupt")
        if _parse_header(data, f"{member}.npy")[1:] != (array.descr, array.shape, array.fortran):
            raise ValueError(f"{member}.npy changed while it was read")
        array.data = data
    return ModelFile(name, meta, arrays, sizes)


def _pread_into(fd: int, buffer: bytearray, offset: int) -> int:
    """Read into ``buffer`` from ``offset`` of the file; the bytes read."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [buffer], offset)
    data = os.pread(fd, len(buffer), offset)
    buffer[:len(data)] = data
    return len(data)


def _directory(fd: int, size: int) -> dict[str, tuple[int, int, int]]:
    """name → (data offset, size, CRC-32) of the members of a zip as Python's zipfile writes
    it for textnb: stored members one after another from the start, no two of one name, then
    the central directory, then its end record without a comment; nothing else."""
    if size < _END.size:
        raise ValueError("not a zip file")
    (signature, disk, directory_disk, here, count, directory_size, directory_offset,
     comment) = _END.unpack(os.pread(fd, _END.size, size - _END.size))
    if signature != b"PK\x05\x06" or comment or disk or directory_disk or here != count:
        raise ValueError("not a zip file")
    if count > MAX_MEMBERS or directory_offset + directory_size != size - _END.size:
        raise ValueError(f"a zip directory of {count} members in {directory_size} bytes "
                         f"where a model's has at most {MAX_MEMBERS}")
    directory = os.pread(fd, directory_size, directory_offset)
    if len(directory) != directory_size:
        raise ValueError("the zip directory is cut short")
    entries: dict[str, tuple[int, int, int]] = {}
    pos = end = 0
    for _ in range(count):
        (signature, _, _, flags, method, _, _, crc, packed, unpacked, name_length, extra_length,
         comment_length, disk, _, _, local) = _ENTRY.unpack_from(directory, pos)
        raw = directory[pos + _ENTRY.size:pos + _ENTRY.size + name_length]
        name = raw.decode("ascii", "replace")
        if signature != b"PK\x01\x02" or comment_length or disk or not raw.isascii():
            raise ValueError("the zip directory is garbled")
        if flags & ~_UTF8_NAMES or method or packed != unpacked:
            raise ValueError(f"{name} is not stored as textnb stores members "
                             f"(flags {flags:#x}, method {method})")
        if name in entries:
            raise ValueError(f"two members named {name}")
        if local != end:
            raise ValueError(f"{name} is not where the member before it ends")
        header = os.pread(fd, _LOCAL.size + name_length, local)
        if len(header) != _LOCAL.size + name_length:
            raise ValueError(f"{name} runs past the end of the file")
        fields = _LOCAL.unpack_from(header)
        if (fields[0] != b"PK\x03\x04" or fields[2:4] != (flags, method)
                or fields[-2] != name_length or header[_LOCAL.size:] != raw):
            raise ValueError(f"bad local header of {name}")
        start = local + _LOCAL.size + name_length + fields[-1]
        end = start + packed
        if end > directory_offset:
            raise ValueError(f"{name} runs past the end of the members")
        entries[name] = (start, packed, crc)
        pos += _ENTRY.size + name_length + extra_length
    if pos != directory_size or end != directory_offset:
        raise ValueError("bytes outside the zip's members")
    return entries


def _meta(fd: int, entry: tuple[int, int, int], name: str, kind: str | None) -> dict:
    """meta.json, checked: size, values, JSON, format, version, kind and (for a kind with a
    table) keys, settings and records."""
    start, size, crc = entry
    if size > MAX_META_BYTES:
        raise ModelFileError(f"model file '{name}' is too large to read (meta.json of {size} "
                             f"bytes; at most {MAX_META_BYTES})")
    data = os.pread(fd, size, start)
    if len(data) != size or zlib.crc32(data) != crc:
        raise ValueError("meta.json is truncated or corrupt")
    # Each JSON value is a list's or object's first, or follows a comma or a colon.
    values = sum(map(data.count, (b",", b":", b"[", b"{"))) + 1
    if values > MAX_META_VALUES:
        raise ModelFileError(f"model file '{name}' is too large to read (meta.json of up to "
                             f"{values} values; at most {MAX_META_VALUES})")
    meta = json.loads(data.decode("utf-8"), object_pairs_hook=_object)
    check_header(meta, name, kind)
    problem = _META_PROBLEM[kind](meta) if kind in _META_PROBLEM else None
    if problem:
        raise ModelFileError(f"model file '{name}' is corrupt ({problem})")
    return meta


def _object(pairs: list[tuple[str, Any]]) -> dict:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("meta.json names a key twice")
    return found


def check_header(meta: Any, name: str, kind: str | None) -> int:
    """The format version of a file whose meta.json holds ``meta``; ModelFileError unless it is
    a textnb model (of ``kind``, if given) in a version from 1 to VERSION."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"'{name}' is not a textnb model file")
    version = meta.get("version", 0)
    if not _whole(version):
        raise ModelFileError(f"model file '{name}' is corrupt "
                             f"(format version {version!r} is not a number)")
    if version > VERSION:
        raise ModelFileError(f"model file '{name}' has format version {version}; "
                             f"this textnb reads up to {VERSION}: upgrade textnb")
    if version < 1:
        raise ModelFileError(f"model file '{name}' is corrupt (format version {version} "
                             f"does not exist; versions start at 1)")
    if kind is not None and meta.get("kind") != kind:
        raise ModelFileError(
            f"model file '{name}' holds a {meta.get('kind')!r} model, not a {kind!r} one")
    return version


def _header(fd: int, start: int, size: int, entry: str) -> Array:
    """A .npy member's header, read and checked: that the member holds exactly its array."""
    data = os.pread(fd, min(size, MAX_NPY_HEADER), start)
    length, descr, shape, fortran = _parse_header(data, entry)
    if length + math.prod(shape) * int(descr[2:]) != size:
        raise ValueError(f"{entry} holds {size - length} bytes, not an array of {descr} of "
                         f"shape {shape}")
    return Array(descr, shape, fortran, length)


def _parse_header(data: bytes | bytearray, entry: str) -> tuple[int, str, tuple[int, ...], bool]:
    """(header length, descr, shape, Fortran order) of a .npy file's header as numpy writes it
    (``{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }``, spaces, a line break),
    read without eval and without a regular expression (compiling one would cost the mail
    filter's start-up 1 ms): plain numbers only (b1, i, u, f; a pickle's "|O" is refused), of
    at most two dimensions."""
    if len(data) < 10 or data[:6] != _NPY_MAGIC or data[6] not in (1, 2, 3) or data[7]:
        raise ValueError(f"{entry} is not a .npy array")
    width = 2 if data[6] == 1 else 4
    length = 8 + width + int.from_bytes(data[8:8 + width], "little")
    if length > min(len(data), MAX_NPY_HEADER):
        raise ValueError(f"{entry} has a .npy header of {length} bytes")
    text = bytes(data[8 + width:length]).decode("latin-1")
    head = text[:-1].rstrip(" ") if text.endswith("\n") else ""
    descr, _, rest = head.removeprefix("{'descr': '").partition("', 'fortran_order': ")
    fortran, _, shape = rest.partition(", 'shape': (")
    dims = [d.strip() for d in shape.removesuffix("), }").split(",")]
    if dims[-1] == "" and len(dims) > 1:  # (3,)
        dims.pop()
    if dims == [""]:  # ()
        dims = []
    if (not head.startswith("{'descr': '") or not shape.endswith("), }")
            or fortran not in ("False", "True") or len(dims) > 2
            or not all(d.isascii() and d.isdigit() and len(d) <= 12 for d in dims)
            or len(descr) not in (3, 4) or descr[0] not in "<>|" or descr[1] not in "biuf"
            or descr[2:] not in ("1", "2", "4", "8") or (descr[0] == "|") != (descr[2:] == "1")):
        raise ValueError(f"{entry} has a .npy header that is not one of plain numbers "
                         f"of at most two dimensions")
    return length, descr, tuple(map(int, dims)), fortran == "True"


def _sizes(name: str, meta: dict, table: dict[str, Member], arrays: dict[str, Array]
           ) -> dict[str, int]:
    """The file's sizes from meta.json and the .npy headers — C classes (labels), T terms,
    L lines of terms (T, or 0 for a hashed vocabulary), B bytes of terms, D documents learned,
    N counts stored — each within its limit, and each member there as its kind's table says,
    of one of its types and of its shape in these sizes."""
    def corrupt(problem: str) -> ModelFileError:
        return ModelFileError(f"model file '{name}' is corrupt ({problem})")

    text = meta["kind"] == TEXT_CLASSIFIER
    hashed = text and meta["params"].get("hash_bits") is not None
    for member, spec in table.items():
        if member not in arrays:
            if spec.when is None or (spec.when == "hashed" and hashed):
                raise corrupt(f"no {member}.npy")
        elif spec.when == "hashed" and not hashed:
            raise corrupt(f"{member}.npy in a model without a hashed vocabulary")
        elif arrays[member].descr[1:] not in spec.types:
            raise corrupt(f"{member} holds {arrays[member].descr}, not "
                          f"{' or '.join(spec.types)}")

    def first(member: str) -> int:  # a size as the first dimension of a member declares it
        shape = arrays[member].shape if member in arrays else ()
        return shape[0] if shape else 0

    sizes = {"C": len(meta["classes"] if text else meta["labels"]), "B": first("terms"),
             "D": first("digests"), "N": first("count_classes")}
    if not text:
        sizes["T"] = sizes["L"] = first("total_count")
    elif meta["version"] == 1:
        sizes["T"] = len(meta["terms"])
    elif hashed:
        sizes["T"], sizes["L"] = first("columns"), 0
    else:
        sizes["T"] = sizes["L"] = first("term_ends")
    c, t = sizes["C"], sizes["T"]
    for size, limit, what in ((c, MAX_CLASSES, "classes"), (t, MAX_TERMS, "terms"),
                              (sizes["B"], MAX_TERM_BYTES, "bytes of terms"),
                              (c * t, MAX_CELLS, "classes × terms"),
                              (c * c * t, MAX_COMPARISONS, "classes² × terms"),
                              (sizes["D"], MAX_DIGESTS, "documents learned"),
                              (sizes["N"], MAX_CELLS, "counts stored")):
        if size > limit:
            raise ModelFileError(f"model file '{name}' is too large to read ({size} {what}; "
                                 f"at most {limit})")
    for member, array in arrays.items():
        want = tuple(t + 1 if d == "T+1" else sizes[d] if isinstance(d, str) else d
                     for d in table[member].shape)
        if array.shape != want:
            raise corrupt(f"{member} of shape {array.shape}, expected {want}")
        if array.fortran and len(want) < 2:  # numpy writes 1-d arrays in C order
            raise corrupt(f"{member} in Fortran order")
    return sizes


# -- values, with numpy ----------------------------------------------------------------------------

def _np_counts(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    ok = (bool((np.abs(a) < 2.0 ** COUNT_BITS).all() and not (a < 0).any()) if a.dtype.kind == "f"
          else not a.size or int(a.max()) < 2 ** COUNT_BITS)
    if not ok:
        raise model.corrupt(f"{name}: {RULES['counts']}")
    return a


def _np_weights(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not ((np.abs(a) < 2.0 ** COUNT_BITS).all() and (a > 0).all()):
        raise model.corrupt(f"{name}: {RULES['weights']}")
    return a


def _np_scores(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not (np.abs(a) < 2.0 ** SCORE_BITS).all():
        raise model.corrupt(f"{name}: {RULES['scores']}")
    return a


def _np_constants(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not ((np.abs(a[0]) < 2.0 ** LOG_BITS).all()
            and ((a[1] > -2.0 ** SCORE_BITS) & (a[1] <= -0.5)).all()):
        raise model.corrupt(f"{name}: {RULES['constants']}")
    return a


def _np_classes(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if a.size and not 0 <= int(a.min()) <= int(a.max()) < model.sizes["C"]:
        raise model.corrupt(f"{name}: {RULES['classes']}")
    return a


def _np_lines(model: ModelFile, arrays: dict, name: str, np: Any, ordered: bool = True) -> list:
    data = arrays[name].tobytes()
    try:
        lines = data.decode("utf-8").split("\n") if data else []
    except UnicodeDecodeError:
        raise model.corrupt(f"{name}: {RULES['sorted lines']}") from None
    if len(lines) != model.sizes["L"] or (
            any(map(operator.ge, lines, islice(lines, 1, None))) if ordered
            else len(set(lines)) != len(lines)):
        raise model.corrupt(f"{name}: {RULES['sorted lines' if ordered else 'distinct lines']}")
    return lines


def _np_columns(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    bits = model.meta["params"]["hash_bits"]
    if a.size and not (a[0] >= 0 and a[-1] < 2 ** bits and (a[1:] > a[:-1]).all()):
        raise model.corrupt(f"{name}: {RULES['columns']}")
    return a


def _np_indptr(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not (a[0] == 0 and a[-1] == model.sizes["N"] and (a[1:] >= a[:-1]).all()):
        raise model.corrupt(f"{name}: {RULES['indptr']}")
    return a


def _np_rows(model: ModelFile, arrays: dict, name: str, np: Any) -> Any:
    classes, indptr = arrays[name], arrays["count_indptr"]
    _np_indptr(model, arrays, "count_indptr", np)
    if classes.size:
        if int(classes.max()) >= model.sizes["C"]:
            raise model.corrupt(f"{name}: {RULES['rows']}")
        # Within a row (no row start between two entries) each class above the one before.
        starts = np.zeros(classes.size + 1, dtype=bool)
        starts[indptr.astype(np.int64)] = True
        drops = classes[1:] <= classes[:-1]
        if (drops & ~starts[1:-1]).any():
            raise model.corrupt(f"{name}: {RULES['rows']}")
    return classes


_NUMPY: dict[str, Callable] = {
    "counts": _np_counts, "weights": _np_weights, "scores": _np_scores,
    "constants": _np_constants, "classes": _np_classes,
    "sorted lines": _np_lines,
    "distinct lines": lambda model, arrays, name, np: _np_lines(model, arrays, name, np, False),
    "columns": _np_columns, "indptr": _np_indptr, "rows": _np_rows,
}


# -- values, in plain Python -------------------------------------------------------------------------

_TYPECODES = {"u1": "B", "u2": "H", "u4": "I", "u8": "Q", "i1": "b", "i2": "h", "i4": "i",
              "i8": "q", "f8": "d"}
_LITTLE = os.sys.byteorder == "little"


def plain_array(array: Array) -> Any:
    """An :class:`Array`'s values as numbers: a memoryview of its bytes (no copy) where they
    are in this machine's byte order, else an array.array of them turned around."""
    typecode = _TYPECODES[array.descr[1:]]
    if array.descr[0] != (">" if _LITTLE else "<"):
        return array.values.cast(typecode)
    from array import array as make
    numbers = make(typecode)
    numbers.frombytes(array.values)
    numbers.byteswap()
    return numbers


def _byte(array: Array, k: int) -> bytes:
    """Byte ``k`` (0: the least significant) of each of a float64 array's values: slices of
    a copy of them (a bytes object slices ten times as fast as a memoryview)."""
    if array.copy is None:
        array.copy = (array.data[array.offset:] if isinstance(array.data, bytes)
                      else bytes(array.values))
    return array.copy[(7 - k if array.descr[0] == ">" else k)::8]


_SIGN = bytes(b >> 7 for b in range(256))
_MAGNITUDE = bytes(b & 0x7F for b in range(256))
_NONZERO = bytes(int(b != 0) for b in range(256))


def _below(array: Array, bits: int) -> bool:
    """Whether every float64 of ``array`` is below 2**bits in size (so finite): its biased
    exponent, the 11 bits after the sign, below 1023 + bits; big integers and translations of
    bytes, in C."""
    over, at, low_over = _EXPONENT_TABLES[bits]
    top = _byte(array, 7)
    return not (int.from_bytes(top.translate(over), "little")
                or int.from_bytes(top.translate(at), "little")
                & int.from_bytes(_byte(array, 6).translate(low_over), "little"))


def _exponent_tables(bits: int) -> tuple[bytes, bytes, bytes]:
    """For a top byte: is its exponent part above, at, the limit's high 7 bits; for the next
    byte: are its high 4 bits at least the limit's low 4."""
    limit = 1023 + bits
    return (bytes(int((b & 0x7F) > limit >> 4) for b in range(256)),
            bytes(int((b & 0x7F) == limit >> 4) for b in range(256)),
            bytes(int(b >> 4 >= limit & 0xF) for b in range(256)))


_EXPONENT_TABLES = {bits: _exponent_tables(bits) for bits in (COUNT_BITS, SCORE_BITS)}


def _nonzero(array: Array) -> int:
    """A big integer of a byte a float64 of ``array``: 1 where it is neither 0 nor -0.0 (a
    bit set but the sign): its eight bytes OR-ed together."""
    folded = int.from_bytes(_byte(array, 7).translate(_MAGNITUDE), "little")
    for k in range(7):
        folded |= int.from_bytes(_byte(array, k), "little")
    return int.from_bytes(folded.to_bytes(len(array.values) // 8, "little").translate(_NONZERO),
                          "little")


def _signs(array: Array) -> int:
    """A big integer of a byte a float64 of ``array``: 1 where its sign bit is set."""
    return int.from_bytes(_byte(array, 7).translate(_SIGN), "little")


def _plain_counts(model: ModelFile, name: str) -> Any:
    array = model.raw[name]
    if array.descr[1] == "f":  # -0.0 is no negative count
        signs = _signs(array)
        ok = _below(array, COUNT_BITS) and not (signs and signs & _nonzero(array))
    else:  # unsigned integers: only 8-byte ones reach 2**54
        numbers = plain_array(array)
        ok = array.descr[2] != "8" or not numbers or max(numbers) < 2 ** COUNT_BITS
        if ok:
            return numbers
    if not ok:
        raise model.corrupt(f"{name}: {RULES['counts']}")
    return plain_array(array)


def _plain_weights(model: ModelFile, name: str) -> Any:
    array = model.raw[name]
    all_ones = int.from_bytes(b"\1" * (len(array.values) // 8), "little")
    if not _below(array, COUNT_BITS) or _signs(array) or _nonzero(array) != all_ones:
        raise model.corrupt(f"{name}: {RULES['weights']}")
    return plain_array(array)


def _plain_scores(model: ModelFile, name: str) -> Any:
    if not _below(model.raw[name], SCORE_BITS):
        raise model.corrupt(f"{name}: {RULES['scores']}")
    return plain_array(model.raw[name])


def _plain_constants(model: ModelFile, name: str) -> Any:
    numbers = plain_array(model.raw[name])  # (2, C), C order: a then b
    n = len(numbers) // 2
    if not (all(abs(a) < 2.0 ** LOG_BITS for a in numbers[:n])
            and all(-2.0 ** SCORE_BITS < b <= -0.5 for b in numbers[n:])):
        raise model.corrupt(f"{name}: {RULES['constants']}")
    return numbers


def _plain_classes(model: ModelFile, name: str) -> Any:
    numbers = plain_array(model.raw[name])
    if numbers and not 0 <= min(numbers) <= max(numbers) < model.sizes["C"]:
        raise model.corrupt(f"{name}: {RULES['classes']}")
    return numbers


def _plain_lines(model: ModelFile, name: str) -> tuple[bytes, Any]:
    """(the terms' bytes, where each line ends: the offset after its end, plus one), as bytes
    and an array (which a scorer slices and indexes faster than a memoryview of them)."""
    array = model.raw[name]
    data = (array.data[array.offset:] if isinstance(array.data, bytes) else bytes(array.values))
    if _fast is not None:
        found = _fast.sorted_lines(data, model.sizes["L"])
        if found is not None:
            from array import array
            ends = array("Q")
            ends.frombytes(found)
        else:
            ends = None
    else:
        ends = _line_ends(data)
    if ends is None or len(ends) != model.sizes["L"]:
        raise model.corrupt(f"{name}: {RULES['sorted lines']}")
    return data, ends


def _line_ends(data: bytes) -> list[int] | None:
    """:func:`_np_lines`'s verdict in Python: where each line of UTF-8 ``data`` ends, if its
    lines ascend, else None."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = data.split(b"\n") if data else []
    if not all(map(operator.lt, lines, islice(lines, 1, None))):
        return None
    ends, at = [], 1
    for line in lines:
        at += len(line)
        ends.append(at)
        at += 1
    return ends


def _plain_rows(model: ModelFile, name: str) -> Any:
    indptr = plain_array(model.raw["count_indptr"])
    classes = plain_array(model.raw[name])
    if _fast is not None:
        problem = _fast.rows(indptr, classes, model.sizes["C"])
    else:
        problem = _rows_problem(indptr, classes, model.sizes["C"])
    if problem:
        raise model.corrupt(f"{'count_indptr' if problem == 'indptr' else name}: {RULES[problem]}")
    return classes


def _rows_problem(indptr: Any, classes: Any, n_classes: int) -> str | None:
    """"indptr", "rows" or None: what :func:`_np_indptr` and :func:`_np_rows` refuse."""
    if indptr[0] != 0 or indptr[-1] != len(classes) or any(map(operator.gt, indptr,
                                                             islice(indptr, 1, None))):
        return "indptr"
    if classes and max(classes) >= n_classes:
        return "rows"
    for lo, hi in zip(indptr, islice(indptr, 1, None)):
        if hi - lo > 1 and any(map(operator.ge, classes[lo:hi - 1], classes[lo + 1:hi])):
            return "rows"
    return None


_PLAIN: dict[str | None, Callable] = {
    "counts": _plain_counts, "weights": _plain_weights, "scores": _plain_scores,
    "constants": _plain_constants, "classes": _plain_classes,
    "sorted lines": _plain_lines,
    "indptr": lambda model, name: plain_array(model.raw[name]), "rows": _plain_rows,
}


# -- the generic reader and the writer -------------------------------------------------------------

def load(path: str | os.PathLike, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(meta, arrays) of a model file of ``kind`` written by :func:`save`, as numpy arrays; for
    a kind of :data:`MEMBERS` checked as the module says, values too; ModelFileError naming the
    file if it is not one."""
    if kind in MEMBERS:
        model = read(path, kind)
        return model.meta, model.arrays()
    model = read(path, None)
    name = os.fspath(path)
    if model.kind != kind:
        raise ModelFileError(f"model file '{name}' holds a {model.kind!r} model, "
                             f"not a {kind!r} one")
    import numpy as np
    arrays = {}
    for member, array in model.raw.items():
        values = np.frombuffer(array.data, dtype=np.dtype(array.descr), offset=array.offset,
                               count=math.prod(array.shape))
        values = (values.reshape(array.shape[::-1]).T if array.fortran
                  else values.reshape(array.shape))
        arrays[member] = values if values.flags.aligned else values.copy()
    return model.meta, arrays


def save(path: str | os.PathLike, kind: str, meta: dict[str, Any],
         arrays: dict[str, Any]) -> None:
    """Write ``meta`` (JSON-able) and ``arrays`` (numeric, no objects) to ``path`` atomically.

    A symbolic link is written through: its target is replaced and the link stays. An OSError
    of the writing (a full disk) names the model file. A model of a kind of :data:`MEMBERS` is
    read back before it replaces the old one: ValueError if a reader would refuse it.
    """
    import tempfile
    import zipfile
    from pathlib import Path

    import numpy as np

    path = Path(os.path.realpath(path))
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale(directory, path.name)
    header = {"format": FORMAT, "version": VERSION, "kind": kind, **meta}
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TMP_SUFFIX,
                                   dir=directory)
    except OSError as error:  # named as the model, not as the temporary file never made
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            # ZIP_STORED: the mail filter reads every member for each message (its CRC-32
            # checks) and inflating costs more than the whole read: deflated, a SpamAssassin
            # model is 0.62 MB, not 1.47, but takes 12 ms to inflate where opening it and
            # scoring a message take 7 (20 Newsgroups: 3.1 MB, not 6.4; scripts/bench_modelfile.py).
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
                # A fixed member date (zip's epoch): the same model is the same bytes, whenever
                # it is written (a dump loaded back, a backup compared).
                # Compact separators: the settings and cutoffs are most of a small model's file.
                archive.writestr(_member("meta.json"),
                                 json.dumps(header, ensure_ascii=False, separators=(",", ":")))
                for name, array in arrays.items():
                    with archive.open(_member(f"{name}.npy"), "w", force_zip64=True) as out:
                        np.lib.format.write_array(out, np.asarray(array), allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        if kind in MEMBERS:  # read back by the readers' rules: textnb writes no file they refuse
            try:
                read(tmp, kind, str(path)).arrays()
            except ModelFileError as error:
                raise ValueError(f"cannot save this model: {error}") from None
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException as error:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError) and error.filename is None and error.errno:
            raise OSError(error.errno, error.strerror or str(error), str(path)) from None
        raise


def _remove_stale(directory: Path, name: str) -> None:
    """Remove the temporary files of saves of ``name`` that were killed: their process is gone
    (a live one may still be writing) and they are older than STALE_SECONDS (a process on
    another host sharing the directory is not seen here)."""
    prefix = f".{name}."
    now = time.time()
    try:
        entries = [e for e in os.scandir(directory)
                   if e.name.startswith(prefix) and e.name.endswith(TMP_SUFFIX)]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix):].split(".", 1)[0]
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if not pid.isdigit() or age < STALE_SECONDS:
                continue
            if _alive(int(pid)):
                continue
            os.unlink(entry.path)
        except OSError:  # gone already, or not ours to remove
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


@contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``<model>.lock`` (fcntl.flock) while updating the model, so
    that concurrent updates (``textnb learn`` from several deliveries, the daemon's TELL) are
    serialised; readers need no lock, since :func:`save` replaces the file atomically.

    A symbolic link is followed: the lock is beside its target, the file :func:`save` replaces.
    The lock file stays after the update, on purpose: the kernel releases a flock when its
    holder exits, even killed, so a leftover lock file locks nothing, while removing it could
    let a waiting process and a new one each lock a different file.
    """
    import fcntl
    from pathlib import Path
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _member(name: str):
    """A stored zip member of that name, dated 1980-01-01 00:00."""
    import zipfile
    return zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
