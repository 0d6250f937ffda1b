"""The classifiers' settings, declared once: each one's rule (what values it takes, and how the
error says it), read by the estimators' ``fit`` (:class:`~textnb.classifier.TextClassifier`,
:class:`~textnb.multilabel.MultiLabelClassifier`), the model file's check
(:mod:`textnb.store.schema`) and the command line's options (:mod:`textnb.cli.options`).
Plain Python: the mail filter reads it."""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms
if TYPE_CHECKING:
    from typing import Any, Callable

# name → its values, in the order the messages and the command line's choices list them.
CHOICES: dict[str, tuple] = {
    "model": ("multinomial", "bernoulli", "complement"),   # the event model
    "tf": ("raw", "log", "binary"),                        # term weights
    "norm": (None, "l2"),                                  # document length
    "training": ("full", "on-error", "auto"),
    "stemmer": (None, "porter", "snowball"),
    "scoring": ("posterior", "one-vs-rest", "per-label"),   # a multi-label model's scores
    "unseen": ("auto", "drop", "score"),                   # words outside the vocabulary
}

# Numbers: counts and weights below 2**54 (exact integers to 2**53; a sum over a model file's
# cells of them is finite), scores (thresholds, cutoffs) below 2**40 in size.
COUNT_BITS = 54
SCORE_BITS = 40
# alpha: at most a million times Laplace's pseudo-count (alpha = inf made every probability
# NaN; beyond this the counts no longer move the estimates).
MAX_ALPHA = 1e6
MAX_MARGIN = 1e6
# Rates a cutoff is learned for: 0, or at least this (1/rate sizes the sample: ham_needed).
MIN_RATE = 1e-9
# Beyond these a tokenizer does absurd work (each word gives max_n n-grams of up to max_n
# words) for no benefit; papers stop at 3-5. (1, 1000) ran out of memory after 25 s.
MAX_NGRAM = 10
MAX_TOKEN_LENGTH_LIMIT = 10_000
# Worker processes: -1 is every core; more than the largest machines' cores only costs the
# processes' start-up and memory (10,000 ran out of processes: EOFError).
MAX_JOBS = 256
MAX_FOLDS = 1000
# scikit-learn's HashingVectorizer allows up to 2**31 − 1 columns; a column number must fit a
# CSR's int32 indices.
MAX_HASH_BITS = 31
MAX_TERMS = 1 << 24


def listed(values: tuple, quote: bool = False) -> str:
    """"a, b or c" (quoted: "'a', 'b' or 'c'") of the values but None."""
    names = [repr(v) if quote else str(v) for v in values if v is not None]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# numpy's numbers by what they do, not by the numbers module: importing it would cost the mail
# filter's start-up 0.3 ms.
def is_whole(v: Any) -> bool:
    """An integer (numpy's too), not a bool."""
    if isinstance(v, int):
        return not isinstance(v, bool)
    return hasattr(type(v), "__index__") and getattr(v, "ndim", 0) == 0 and not _is_bool(v)


def _is_real(v: Any) -> bool:
    """A real number (numpy's too), not a bool."""
    if isinstance(v, (int, float)):
        return not isinstance(v, bool)
    return (hasattr(type(v), "__float__") and not hasattr(type(v), "__complex__")
            and getattr(v, "ndim", 0) == 0 and not _is_bool(v) and not isinstance(v, str))


def _is_bool(v: Any) -> bool:
    return type(v).__name__.startswith("bool")   # numpy's bool_


def integer(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: is_whole(v) and low <= v <= high


def number(low: float, high: float, above: bool = False, below: bool = False) -> Callable:
    """A finite real number in [low, high] (``above``: > low; ``below``: < high)."""
    return lambda v: (_is_real(v) and math.isfinite(v)
                      and (v > low if above else v >= low) and (v < high if below else v <= high))


def optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def one_of(name: str) -> Callable[[Any], bool]:
    values = CHOICES[name]
    return lambda v: (v is None or isinstance(v, str)) and v in values


def boolean(v: Any) -> bool:
    return isinstance(v, bool)


def _sequence(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def ngrams(v: Any) -> bool:
    """(min_n, max_n), 1 <= min_n <= max_n <= MAX_NGRAM (a list, as a file holds it, or a tuple)."""
    return (_sequence(v) and len(v) == 2 and all(is_whole(n) and 1 <= n <= MAX_NGRAM for n in v)
            and v[0] <= v[1])


def rate(v: Any) -> bool:
    """A target rate: 0, or from MIN_RATE to below 1."""
    return number(0, 1, below=True)(v) and (v == 0 or v >= MIN_RATE)


def _stop_words(v: Any) -> bool:
    return (v is None or isinstance(v, (str, os.PathLike))
            or (isinstance(v, (list, tuple, set, frozenset)) and all(isinstance(s, str) for s in v)))


def _class_prior(v: Any) -> bool:
    # A numpy array too: not a str, with a length, each a number (the count of classes is
    # checked where they are known). Not 0: a class of prior 0 is never predicted, and its
    # log-prior, -inf, is no score a model file holds.
    return (v is None or (hasattr(v, "__len__") and not isinstance(v, (str, bytes, dict))
                          and getattr(v, "ndim", 1) == 1
                          and all(number(0, 2.0 ** COUNT_BITS, above=True)(x) for x in v)))


def _threshold(v: Any) -> bool:
    return (isinstance(v, str) and v == "auto") or v is None or number(
        -2.0 ** SCORE_BITS, 2.0 ** SCORE_BITS)(v)


# name → (rule, what it must be): one rule a setting, whichever class or file holds it.
RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "model": (one_of("model"), f"one of {', '.join(CHOICES['model'])}"),
    "alpha": (number(0, MAX_ALPHA, above=True), f"a finite number > 0 and at most {MAX_ALPHA:g}"),
    "fit_prior": (boolean, "True or False"),
    "class_prior": (_class_prior, "None or a positive number per class"),
    "stop_words": (_stop_words, "a name, a file path or a collection of words"),
    "stemmer": (one_of("stemmer"), f"None, {listed(CHOICES['stemmer'], quote=True)}"),
    "ngram_range": (optional(ngrams),
                    f"None or (min_n, max_n) with 1 <= min_n <= max_n <= {MAX_NGRAM}"),
    "lowercase": (boolean, "True or False"),
    "max_token_length": (integer(1, MAX_TOKEN_LENGTH_LIMIT),
                         f"a whole number from 1 to {MAX_TOKEN_LENGTH_LIMIT}"),
    "min_token_length": (integer(1, MAX_TOKEN_LENGTH_LIMIT),
                         f"a whole number from 1 to {MAX_TOKEN_LENGTH_LIMIT}"),
    "min_df": (number(0, MAX_TERMS * 2.0 ** 32), "a number >= 0"),
    "max_df": (number(0, MAX_TERMS * 2.0 ** 32), "a number >= 0"),
    "max_features": (optional(integer(1, 2 ** 63 - 1)), "None or a positive whole number"),
    "tf": (one_of("tf"), listed(CHOICES["tf"], quote=True)),
    "norm": (one_of("norm"), f"None or {listed(CHOICES['norm'], quote=True)}"),
    "unseen": (one_of("unseen"), listed(CHOICES["unseen"], quote=True)),
    "n_jobs": (optional(lambda v: integer(-MAX_JOBS, MAX_JOBS)(v) and v != 0),
               f"None or a number of processes, 1 to {MAX_JOBS}, or -1 (every core) to "
               f"-{MAX_JOBS} (all but n - 1)"),
    "spam_class": (optional(lambda v: isinstance(v, str)), "None or a class name"),
    **{name: (rate, f"0 or a rate from {MIN_RATE:g} to below 1")
       for name in ("target_fpr", "target_fnr", "target_unsure")},
    "cutoff_folds": (integer(2, MAX_FOLDS), f"a whole number from 2 to {MAX_FOLDS}"),
    "keep_suspects": (boolean, "True or False"),
    "training": (one_of("training"), listed(CHOICES["training"], quote=True)),
    "margin": (number(0, MAX_MARGIN), f"a number from 0 to {MAX_MARGIN:g}"),
    "max_passes": (integer(1, 1000), "a whole number from 1 to 1000"),
    "hash_bits": (optional(integer(1, MAX_HASH_BITS)),
                  f"None or a whole number from 1 to {MAX_HASH_BITS}"),
    "decision_threshold": (_threshold, f"'auto', None or a number below 2**{SCORE_BITS} in size"),
    # MultiLabelClassifier's: its thresholds' cross-validation.
    "scoring": (one_of("scoring"), f"one of {', '.join(CHOICES['scoring'])}"),
    "folds": (integer(2, MAX_FOLDS), f"a whole number from 2 to {MAX_FOLDS}"),
    "seed": (integer(-2 ** 63, 2 ** 64 - 1), "a whole number"),
}


def setting_problem(name: str, value: Any) -> str | None:
    """What is wrong with one setting's value, as "NAME must be WHAT, not VALUE", or None."""
    check, what = RULES[name]
    if check(value):
        return None
    shown = repr(value)
    return f"{name} must be {what}, not {shown if len(shown) <= 80 else shown[:76] + ' ...'}"


# MultiLabelClassifier counts the n-grams it is given: None, TextClassifier's "chosen by the
# documents", is none of its values (in a file either).
MULTILABEL_NOT_NONE = ("ngram_range",)


def problem(params: dict[str, Any], not_none: tuple[str, ...] = ()) -> str | None:
    """What is wrong with a classifier's settings (``get_params()``): the first that breaks its
    rule (or is None, of those ``not_none``), as ``fit`` says it; or None."""
    for name, value in params.items():
        if name in RULES:
            found = setting_problem(name, value)
            if found is None and value is None and name in not_none:
                found = f"{name} must be {RULES[name][1].removeprefix('None or ')}, not None"
            if found:
                return found
    return None


def choices(name: str) -> list[str]:
    """A setting's values as the command line spells them (None: "none"), for click.Choice;
    --training's sorted ("auto" first)."""
    values = ["none" if v is None else v for v in CHOICES[name]
              if v is not None or name == "norm"]
    return sorted(values) if name == "training" else values
