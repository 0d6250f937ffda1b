"""The options the commands share, defined once: -m/--model and its resolution, the training
options, the cutoffs' options; click's FloatRange without NaN; options checked by their
setting's rule (:class:`Setting`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from ..classifier import TextClassifier
from ..decision.cutoffs import TARGET_FNR, TARGET_FPR, TARGET_UNSURE
from ..decision.rules import HAM_CUTOFF, LEARNING_ALL_SPAM_CUTOFF, SPAM_CUTOFF
from ..paths import MODEL_ENV, default_model_path
from ..settings import choices, setting_problem
from ..store.text_model import load_model
from ..text.hashing import MAX_HASH_BITS


class FloatRange(click.FloatRange):
    """click's FloatRange with NaN refused: NaN fails every comparison, so click's bounds let
    it through, and a cutoff of nan called every message unsure, a timeout of nan set none."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


class Setting(click.ParamType):
    """An option that gives a classifier's setting ``name`` (``--ngrams N``: ngram_range (1, N)),
    checked by that setting's rule (:data:`textnb.settings.RULES`), as ``fit`` and the model
    file's check apply it."""

    def __init__(self, name: str, kind: type, build: Callable[[Any], Any] = lambda v: v) -> None:
        self.setting, self.kind, self.build = name, kind, build
        self.name = kind.__name__   # what click's help and errors call it: int, float

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            value = self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not {'an integer' if self.kind is int else 'a number'}",
                      param, ctx)
        problem = setting_problem(self.setting, self.build(value))
        if problem:
            self.fail(problem, param, ctx)
        return value


MODEL_HELP = f"Model file (default: ${MODEL_ENV}, else $XDG_DATA_HOME/textnb/textnb.model)."


def model_option(help: str = MODEL_HELP, metavar: str | None = "FILE") -> Any:
    """-m/--model FILE, the ``model_path`` of every command that reads or writes a model: a
    Path, or None where not given (:func:`resolve_model` says which file that is)."""
    return click.option("-m", "--model", "model_path", default=None, metavar=metavar,
                        type=click.Path(dir_okay=False, path_type=Path), help=help)


def number(text: str) -> int | float:
    """'2' → 2 documents, '0.5' → a proportion: the CLI form of min_df/max_df."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise click.BadParameter(f"{text!r} is not a number") from None


TRAINING_OPTIONS = [
    click.option("--event-model", type=click.Choice(choices("model")),
                 help="Document model (default: the library's)."),
    click.option("--alpha", type=Setting("alpha", float),
                 help="Smoothing α > 0; 1 is Laplace's (n_k+1)/(n+|V|)."),
    click.option("--prior", "prior", multiple=True, metavar="learned|uniform|CLASS=P[,...]",
                 help="Class priors: learned from counts, uniform (ML rule), or given per "
                      "class (spam=0.3,ham=0.7 or --prior spam=0.3 --prior ham=0.7; sum 1)."),
    click.option("--min-df", metavar="N", help="Keep terms in at least N documents (or a proportion)."),
    click.option("--max-df", metavar="N", help="Keep terms in at most N documents (or a proportion)."),
    click.option("--max-features", type=click.IntRange(min=1), help="Keep the N most frequent terms."),
    click.option("--hash-bits", type=click.IntRange(1, MAX_HASH_BITS), metavar="N",
                 help="Hash terms to 2**N columns and keep no terms (for huge vocabularies; "
                      "the --min-df, --max-df and --max-features pruning applies to columns)."),
    click.option("--unseen", type=click.Choice(choices("unseen")),
                 help="Words of a new document outside the vocabulary: dropped, or scored as "
                      "terms no class counted, as --tune's folds score them (default auto: "
                      "scored with more than two classes, dropped with two, whose cutoffs and "
                      "threshold are measured with them dropped)."),
    click.option("--stop-words", metavar="english|english-without-negations|none|FILE",
                 help="Stop words to drop (default: NLTK's English list when --spam-class is "
                      "one of the classes, else that list without no, not, n't words and "
                      "very)."),
    click.option("--stem", type=click.Choice(choices("stemmer")),
                 help="Stem tokens with NLTK (the stem extra: pip install 'textnb[stem]')."),
    click.option("--ngrams", type=Setting("ngram_range", int, lambda n: (1, n)),
                 help="Use word n-grams up to N (default: 2 for texts that are not full mail, "
                      "two classes with a spam class, or 500 to 100,000 documents of two "
                      "classes or of short texts; else 1)."),
    click.option("--tf", type=click.Choice(choices("tf")),
                 help="Term weights: counts, log(1+count) or presence."),
    click.option("--norm", type=click.Choice(choices("norm")), help="Scale documents to unit length."),
    click.option("-j", "--jobs", type=Setting("n_jobs", int),
                 help="Processes that parse and tokenize, threads that train on error "
                      "(default: every core for 2000 documents or more; 1: none; -1: every "
                      "core)."),
]


def cutoff_options(function):
    options = [
        click.option("--spam-cutoff", type=FloatRange(0, 1),
                     help=f"P(spam) at or above which a message is spam (default: the "
                          f"model's learned cutoff, else {SPAM_CUTOFF}, up to "
                          f"{LEARNING_ALL_SPAM_CUTOFF} as its learned messages are right)."),
        click.option("--ham-cutoff", type=FloatRange(0, 1),
                     help=f"P(spam) at or below which a message is ham; between: unsure "
                          f"(default: the model's learned cutoff, else {HAM_CUTOFF})."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


# The spam class a command decides by where --spam-class is not given (decision.spam_cutoffs).
LEARNED_ELSE_NAMED = ("the one the model's cutoffs were learned for, else the class named "
                       "spam, Junk, Junk E-mail or Bulk Mail, in any case")


def cutoff_learning_options(function):
    options = [
        click.option("--spam-class",
                     help="With two classes, the spam one: its cutoffs are learned (default: "
                          "the class named spam, else one named as mail programs name their "
                          "spam folder, in any case: Junk, .Junk, Junk E-mail, Bulk Mail)."),
        click.option("--target-fpr", type=Setting("target_fpr", float),
                     default=TARGET_FPR, show_default=True,
                     help="Share of ham the learned spam cutoff may call spam (with 95 % "
                          "confidence)."),
        click.option("--target-fnr", type=Setting("target_fnr", float),
                     default=TARGET_FNR, show_default=True,
                     help="Share of spam the learned ham cutoff may call ham."),
        click.option("--target-unsure", type=Setting("target_unsure", float),
                     default=TARGET_UNSURE, show_default=True,
                     help="Share of all messages the learned cutoffs may leave unsure "
                          "(the ham cutoff rises to keep it); a young model, of fewer ham "
                          "than the spam cutoff is read off, leaves a share of its ham unsure "
                          "instead, unless this is 0."),
        click.option("--keep-suspects", is_flag=True,
                     help="Keep the training messages that models which never saw them place "
                          "among the other class (left out by default, as mis-sorted)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def training_options(function):
    for option in reversed(TRAINING_OPTIONS):
        function = option(function)
    return function


def settings_of(event_model, alpha, min_df, max_df, max_features, stop_words, stem, ngrams, tf,
              norm, jobs, hash_bits=None, unseen=None) -> dict[str, Any]:
    """The training options given, as model settings (priors aside: they need the classes);
    options not given are left out, so they keep the library's defaults."""
    settings: dict[str, Any] = {"n_jobs": jobs}
    given = {"model": event_model, "alpha": alpha, "max_features": max_features,
             "stop_words": stop_words, "stemmer": stem, "tf": tf, "hash_bits": hash_bits,
             "unseen": unseen}
    settings.update({k: v for k, v in given.items() if v is not None})
    if min_df is not None:
        settings["min_df"] = number(min_df)
    if max_df is not None:
        settings["max_df"] = number(max_df)
    if ngrams is not None:
        settings["ngram_range"] = (1, ngrams)
    if norm is not None:
        settings["norm"] = None if norm == "none" else norm
    return settings


def classifier_of(labels: Sequence[str], prior=None, **options) -> TextClassifier:
    """A TextClassifier from CLI options; options not given keep the library's defaults."""
    settings = settings_of(**options)
    priors = parse_priors(prior or (), sorted(set(labels)))
    if priors is not None:
        settings.update({"fit_prior": priors != "uniform"} if isinstance(priors, str)
                        else {"class_prior": priors})
    return TextClassifier(**settings)


def resolve_model(path: Path | None, default: Callable[[], Path] = default_model_path) -> Path:
    """The model file -m names, else the default one (:func:`textnb.paths.default_model_path`;
    a table model's: :func:`textnb.paths.default_table_model_path`)."""
    return Path(path) if path is not None else default()


def load_classifier(path: Path | None) -> TextClassifier:
    """The text classifier in the model file -m names (else the default one)."""
    return load_model(resolve_model(path))


def decision_threshold_setting(value: str) -> str | float | None:
    """--decision-threshold's value as the setting: "auto", None for "none", or a number."""
    if value in ("auto", "none"):
        return None if value == "none" else value
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise click.BadParameter(f"expected auto, none or a number, got {value!r}",
                                 param_hint="--decision-threshold")
    return number


def parse_priors(specs: Sequence[str], classes: Sequence[Any]) -> str | list[float] | None:
    """``--prior`` values → None (none given), "learned", "uniform", or one prior per class in
    ``classes`` order. The same syntax in ``textnb train`` and ``textnb table train``: learned,
    uniform, or CLASS=P for every class, comma-separated or repeated; the priors must be ≥ 0 and
    sum to 1. BadParameter (exit 2) otherwise."""
    if not specs:
        return None
    if len(specs) == 1 and specs[0] in ("learned", "uniform"):
        return specs[0]
    parts = [part for spec in specs for part in spec.split(",")]
    if any(part.strip() in ("learned", "uniform") for part in parts):
        raise click.BadParameter("give learned, uniform, or CLASS=P for every class; not a mix",
                                 param_hint="'--prior'")
    given: dict[str, float] = {}
    for part in parts:
        label, _, p = part.rpartition("=")
        try:
            value = float(p)
        except ValueError:
            raise click.BadParameter(f"{part!r} is not learned, uniform or CLASS=P",
                                     param_hint="'--prior'") from None
        if not value >= 0:
            raise click.BadParameter(f"{part!r}: a prior must be ≥ 0", param_hint="'--prior'")
        given[label.strip()] = value
    names = [str(c) for c in classes]
    for label in given:
        if label not in names:
            raise click.BadParameter(f"{label!r} is not a class; the classes are "
                                     f"{', '.join(names)}", param_hint="'--prior'")
    missing = [name for name in names if name not in given]
    if missing:
        raise click.BadParameter(f"no prior for class {missing[0]!r}", param_hint="'--prior'")
    total = sum(given.values())
    if abs(total - 1) > PRIOR_SUM_TOLERANCE:
        raise click.BadParameter(f"the priors sum to {total:g}, not 1", param_hint="'--prior'")
    return [given[name] / total for name in names]


# Given priors must sum to 1 within this, so that thirds written as 0.333 are accepted; they
# are then divided by their sum.
PRIOR_SUM_TOLERANCE = 1e-3
