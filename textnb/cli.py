"""The textnb command line: train, classify, filter, learn, evaluate, info, table.

The only module that prints, reads argv or chooses exit codes. Every error reaches the user as
one ``Error: …`` line on stderr with a non-zero exit code, never a traceback (set
TEXTNB_DEBUG=1 to see one). ``filter`` is the exception to the rule: it always delivers.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import click
import numpy as np

from . import __version__
from .classifier import TextClassifier, load_model, save_model
from .cutoffs import TARGET_FNR, TARGET_FPR
from .onerror import MARGIN, MAX_PASSES
from .decision import HAM_CUTOFF, SPAM_CUTOFF, Exit, decide, line, spam_cutoffs
from .documents import is_maildir, read_raw
from .errors import DocumentError, TextnbError
from .mailfilter import filter_message
from .modelfile import locked
from .paths import MODEL_ENV, default_model_path
from .tablecli import table

# Exit codes: Exit (textnb.decision) for classify --exit-code, these everywhere else.
OK, FAILURE = 0, 1


class _Cli(click.Group):
    """A click group that maps every error to one line and an exit code (STYLE habit 8)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             **extra: Any) -> None:
        args = list(sys.argv[1:] if args is None else args)
        # Usage errors of `classify --exit-code` must exit 3, not click's 2: procmail would
        # read 2 as "unsure".
        strict = "classify" in args and "--exit-code" in args
        try:
            code = super().main(args, prog_name or "textnb", standalone_mode=False, **extra)
        except click.ClickException as error:
            if args[:1] == ["filter"]:
                # A bad option in a procmail recipe must not lose mail either.
                _pass_through(f"textnb filter: message passed through unchanged: "
                              f"{error.format_message()}")
                sys.exit(OK)
            _error(error.format_message())
            code = Exit.ERROR if strict else error.exit_code
        except click.Abort:
            _error("aborted")
            code = Exit.ERROR if strict else FAILURE
        except (TextnbError, ValueError) as error:
            _error(str(error))
            code = Exit.ERROR if strict else FAILURE
        except OSError as error:
            _error(_os_message(error))
            code = Exit.ERROR if strict else FAILURE
        except KeyboardInterrupt:
            _error("interrupted")
            code = 130
        except Exception as error:  # a bug: still one line, unless debugging
            if os.environ.get("TEXTNB_DEBUG"):
                raise
            _error(f"internal error: {type(error).__name__}: {error} (TEXTNB_DEBUG=1 shows more)")
            code = Exit.ERROR if strict else FAILURE
        sys.exit(int(code or 0))


def _error(message: str) -> None:
    click.echo(f"Error: {message}", err=True)


def _os_message(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="textnb")
def main() -> None:
    """Naive Bayes text classification and spam filtering.

    \b
    textnb train spam/ ham/              train on directories of labelled files
    textnb classify message.eml          label new files
    textnb filter < msg > msg.tagged     add X-TextNB-* headers (for procmail)
    """


# -- shared options --------------------------------------------------------------------------

def _model_path_option():
    return click.option(
        "-m", "--model", "model_path", type=click.Path(dir_okay=False, path_type=Path),
        default=None, show_default=False, metavar="FILE",
        help=f"Model file (default: ${MODEL_ENV}, else $XDG_DATA_HOME/textnb/textnb.model).")


def _number(text: str) -> int | float:
    """'2' → 2 documents, '0.5' → a proportion: the CLI form of min_df/max_df."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise click.BadParameter(f"{text!r} is not a number") from None


_TRAINING_OPTIONS = [
    click.option("--event-model", type=click.Choice(["multinomial", "bernoulli", "complement"]),
                 help="Document model (default: the library's)."),
    click.option("--alpha", type=click.FloatRange(min=0, min_open=True),
                 help="Smoothing α > 0; 1 is Laplace's (n_k+1)/(n+|V|)."),
    click.option("--prior", metavar="learned|uniform|C=P,...",
                 help="Class priors: learned from counts, uniform (ML rule), or given."),
    click.option("--min-df", metavar="N", help="Keep terms in at least N documents (or a proportion)."),
    click.option("--max-df", metavar="N", help="Keep terms in at most N documents (or a proportion)."),
    click.option("--max-features", type=click.IntRange(min=1), help="Keep the N most frequent terms."),
    click.option("--stop-words", metavar="english|none|FILE", help="Stop words to drop."),
    click.option("--stem", type=click.Choice(["porter", "snowball"]), help="Stem tokens with NLTK."),
    click.option("--ngrams", type=click.IntRange(min=1), help="Use word n-grams up to N."),
    click.option("--tf", type=click.Choice(["raw", "log"]), help="Term weights: counts or log(1+count)."),
    click.option("--norm", type=click.Choice(["none", "l2"]), help="Scale documents to unit length."),
    click.option("-j", "--jobs", type=int,
                 help="Processes that parse and tokenize (default: every core for 2000 "
                      "documents or more; 1: none; -1: every core)."),
]


def _cutoff_options(function):
    options = [
        click.option("--spam-cutoff", type=click.FloatRange(0, 1),
                     help=f"P(spam) at or above which a message is spam (default: the "
                          f"model's learned cutoff, else {SPAM_CUTOFF})."),
        click.option("--ham-cutoff", type=click.FloatRange(0, 1),
                     help=f"P(spam) at or below which a message is ham; between: unsure "
                          f"(default: the model's learned cutoff, else {HAM_CUTOFF})."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _cutoff_learning_options(function):
    options = [
        click.option("--spam-class", default="spam", show_default=True,
                     help="With two classes, the spam one: its cutoffs are learned."),
        click.option("--target-fpr", type=click.FloatRange(0, 1, max_open=True),
                     default=TARGET_FPR, show_default=True,
                     help="Share of ham the learned spam cutoff may call spam."),
        click.option("--target-fnr", type=click.FloatRange(0, 1, max_open=True),
                     default=TARGET_FNR, show_default=True,
                     help="Share of spam the learned ham cutoff may call ham."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _training_options(function):
    for option in reversed(_TRAINING_OPTIONS):
        function = option(function)
    return function


def _classifier(event_model, alpha, prior, min_df, max_df, max_features, stop_words, stem,
                ngrams, tf, norm, jobs, labels: Sequence[str]) -> TextClassifier:
    """A TextClassifier from CLI options; options not given keep the library's defaults."""
    settings: dict[str, Any] = {"n_jobs": jobs}
    given = {"model": event_model, "alpha": alpha, "max_features": max_features,
             "stop_words": stop_words, "stemmer": stem, "tf": tf}
    settings.update({k: v for k, v in given.items() if v is not None})
    if min_df is not None:
        settings["min_df"] = _number(min_df)
    if max_df is not None:
        settings["max_df"] = _number(max_df)
    if ngrams is not None:
        settings["ngram_range"] = (1, ngrams)
    if norm is not None:
        settings["norm"] = None if norm == "none" else norm
    if prior is not None:
        settings.update(_priors(prior, sorted(set(labels))))
    return TextClassifier(**settings)


def _priors(spec: str, classes: list[str]) -> dict[str, Any]:
    if spec == "learned":
        return {"fit_prior": True}
    if spec == "uniform":
        return {"fit_prior": False}
    given: dict[str, float] = {}
    for part in spec.split(","):
        name, _, value = part.partition("=")
        try:
            given[name.strip()] = float(value)
        except ValueError:
            raise click.BadParameter(f"expected learned, uniform or CLASS=P,...; got {spec!r}",
                                     param_hint="--prior") from None
    if set(given) != set(classes):
        raise click.BadParameter(f"give a prior for each class ({', '.join(classes)})",
                                 param_hint="--prior")
    return {"class_prior": [given[c] for c in classes]}


def _resolve_model(path: Path | None) -> Path:
    return path if path is not None else default_model_path()


def _load(path: Path | None) -> TextClassifier:
    return load_model(_resolve_model(path))


# -- reading labelled documents --------------------------------------------------------------

def _labelled_sources(dirs: Sequence[str], labels: Sequence[str]) -> list[tuple[str, str]]:
    """(class, path) pairs: each DIR is a class named after it; --label NAME=PATH names one;
    a single DIR holding only subdirectories gives one class per subdirectory (20 Newsgroups)."""
    sources = []
    for spec in labels:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"expected NAME=PATH, got {spec!r}", param_hint="--label")
        sources.append((name, path))
    for directory in dirs:
        if not os.path.exists(directory):
            raise DocumentError(f"no such file or directory: {directory}")
    if len(dirs) == 1 and not labels and os.path.isdir(dirs[0]) and not is_maildir(dirs[0]):
        entries = [e for e in sorted(os.scandir(dirs[0]), key=lambda e: e.name)
                   if not e.name.startswith(".")]
        if entries and all(e.is_dir() for e in entries):
            return [(e.name, e.path) for e in entries]
    sources += [(os.path.basename(os.path.normpath(d)), d) for d in dirs]
    if not sources:
        raise click.UsageError("give the training directories, e.g. textnb train spam/ ham/")
    return sources


class _Skips:
    """Reports unreadable documents on stderr as they happen and counts them."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, source: str, reason: str) -> None:
        self.count += 1
        click.echo(f"textnb: skipped {source}: {reason}", err=True)

    def summary(self) -> None:
        if self.count:
            click.echo(f"textnb: skipped {self.count} unreadable document"
                       f"{'s' if self.count != 1 else ''}", err=True)


@contextmanager
def _progress(items: Iterator, label: str, quiet: bool) -> Iterator:
    if quiet or not sys.stderr.isatty():
        yield items
    else:
        with click.progressbar(items, label=label, file=sys.stderr) as bar:
            yield bar


def _read_labelled(sources: list[tuple[str, str]], skips: _Skips, quiet: bool):
    """Documents' bytes and their labels from (class, path) pairs; a class with none is an error.
    The bytes are parsed by the classifier, in its worker processes."""
    texts, labels = [], []
    documents = ((label, raw) for label, path in sources
                 for _, raw in read_raw([path], on_error=skips))
    with _progress(documents, "reading", quiet) as bar:
        for label, raw in bar:
            texts.append(raw)
            labels.append(label)
    missing = [label for label, _ in sources if label not in set(labels)]
    if missing:
        raise DocumentError(f"no readable documents for class {missing[0]!r}")
    return texts, labels


# -- commands ----------------------------------------------------------------------------------

@main.command()
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Train class NAME on PATH (repeatable).")
@_model_path_option()
@_training_options
@_cutoff_learning_options
@click.option("--on-error", is_flag=True,
              help="Learn only the documents the model gets wrong or is unsure of, pass after "
                   "pass (as bogominitrain).")
@click.option("--margin", type=click.FloatRange(min=0), default=MARGIN, show_default=True,
              help="With --on-error: the log-odds by which the right class must lead.")
@click.option("--passes", type=click.IntRange(min=1), default=MAX_PASSES, show_default=True,
              help="With --on-error: at most this many passes.")
@click.option("--unlabeled", multiple=True, type=click.Path(exists=True), metavar="PATH",
              help="Unlabeled documents to learn from by EM (repeatable; multinomial default).")
@click.option("--em-weight", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="With --unlabeled: λ, the weight of an unlabeled document.")
@click.option("--em-iterations", type=click.IntRange(min=1), help="With --unlabeled: at most N.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or summary.")
def train(dirs, labels, model_path, quiet, spam_class, target_fpr, target_fnr, on_error, margin,
          passes, unlabeled, em_weight, em_iterations, **options) -> int:
    """Train on directories of labelled files: textnb train spam/ ham/.

    Each DIR is a class named after the directory; a single DIR holding only
    subdirectories trains one class per subdirectory (the 20 Newsgroups layout).
    Files may be plain text, RFC 822 mail, news articles, mbox files or Maildirs.

    With two classes, one of them --spam-class, cross-validation on the training
    documents also chooses the spam and ham cutoffs on the log-odds (see --target-fpr).
    """
    sources = _labelled_sources(dirs, labels)
    if len({label for label, _ in sources}) < 2:
        raise click.UsageError("need at least two classes to train, e.g. textnb train spam/ ham/")
    skips = _Skips()
    texts, y = _read_labelled(sources, skips, quiet)
    classifier = _classifier(labels=y, **options)
    classifier.set_params(spam_class=spam_class, target_fpr=target_fpr, target_fnr=target_fnr)
    em = em_setup(classifier, options, unlabeled, em_weight, em_iterations, on_error, quiet)
    if on_error:
        classifier.fit_on_error(texts, y, margin=margin, max_passes=passes)
    else:
        classifier.fit(texts, y, **em)
    path = _resolve_model(model_path)
    save_model(classifier, path)
    skips.summary()
    if not quiet:
        counts = ", ".join(f"{c}: {int(n)}" for c, n in
                           zip(classifier.classes_, classifier.model_.class_count_))
        click.echo(f"trained {int(classifier.model_.class_count_.sum())} documents ({counts}), "
                   f"{len(classifier.vocabulary_)} terms -> {path}")
        if on_error:
            report = classifier.on_error_
            click.echo(f"on error    learned {report['learned']} of {report['documents']} "
                       f"documents in {len(report['passes'])} passes "
                       f"({', '.join(map(str, report['passes']))} per pass)")
        if classifier.cutoffs_:
            click.echo(_cutoffs_line(classifier.cutoffs_))
    return OK


def _cutoffs_line(cutoffs: dict[str, Any]) -> str:
    """The learned cutoffs and what they gave on the out-of-fold scores, in one line."""
    return (f"cutoffs     spam at log-odds >= {cutoffs['spam']:+.3f}, ham <= {cutoffs['ham']:+.3f} "
            f"({cutoffs['folds']}-fold CV of {cutoffs['messages']} messages: "
            f"FPR {cutoffs['fpr']:.2%}, FNR {cutoffs['fnr']:.2%}, "
            f"unsure {cutoffs['unsure']:.2%}, spam not caught {cutoffs['spam_not_caught']:.2%})")


@main.command("tune-cutoffs")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Class NAME is on PATH (repeatable).")
@_model_path_option()
@_cutoff_learning_options
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def tune_cutoffs(dirs, labels, model_path, spam_class, target_fpr, target_fnr, quiet) -> int:
    """Choose a model's spam and ham cutoffs again, by cross-validation on labelled
    directories (after many `learn`s, or for other target rates); its counts stay."""
    sources = _labelled_sources(dirs, labels)
    skips = _Skips()
    texts, y = _read_labelled(sources, skips, quiet)
    path = _resolve_model(model_path)
    with locked(path):
        classifier = load_model(path)
        if sorted(set(y)) != sorted(map(str, classifier.classes_)):
            raise DocumentError(f"the documents' classes ({', '.join(sorted(set(y)))}) are not "
                                f"the model's ({', '.join(map(str, classifier.classes_))})")
        probe = TextClassifier(**classifier.get_params())
        probe.set_params(spam_class=spam_class, target_fpr=target_fpr, target_fnr=target_fnr)
        probe.fit(texts, y)
        if probe.cutoffs_ is None:
            raise click.UsageError(f"cutoffs need two classes, one named {spam_class!r}, and "
                                   f"at least two documents of each")
        classifier.cutoffs_ = probe.cutoffs_
        save_model(classifier, path)
    skips.summary()
    click.echo(_cutoffs_line(classifier.cutoffs_))
    return OK


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@_model_path_option()
@click.option("--format", "output", type=click.Choice(["text", "tsv", "json"]), default="text",
              show_default=True, help="Output: aligned text, tab-separated or JSON lines.")
@click.option("--explain", is_flag=True, help="Show the terms that decided each document.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Terms shown by --explain.")
@click.option("--spam-class",
              help="The positive class of a two-class model (for cutoffs and exit codes; "
                   "default: the one its cutoffs were learned for, else spam).")
@click.option("--threshold", type=click.FloatRange(0, 1),
              help="P(spam) at or above which a message is spam (no unsure band).")
@_cutoff_options
@click.option("--exit-code", is_flag=True,
              help="For one document: exit 0 spam, 1 ham, 2 unsure, 3 error (as bogofilter).")
def classify(paths, model_path, output, explain, top, spam_class, threshold, spam_cutoff,
             ham_cutoff, exit_code) -> int:
    """Label files (or standard input, '-'): path, label, probability, log-odds.

    The probability saturates at 0 or 1 on long documents; the log-odds,
    ln P(label|x) - ln P(runner-up|x), keeps ranking them.
    """
    paths = paths or ("-",)
    classifier = _load(model_path)
    cutoffs = _cutoffs(classifier, spam_class, threshold, spam_cutoff, ham_cutoff, exit_code)
    skips = _Skips()
    read = list(read_raw(paths, on_error=skips))
    sources, documents = [source for source, _ in read], [raw for _, raw in read]
    if exit_code and (len(documents) != 1 or skips.count):
        raise click.UsageError("--exit-code needs exactly one readable document")
    decisions = _decide(classifier, documents, sources, cutoffs)
    for document, decision in zip(documents, decisions):
        if explain:
            decision["explanation"] = _explanation(classifier.explain(document, top=top))
        click.echo(line(decision, output))
    skips.summary()
    if exit_code:
        return Exit.of(decisions[0]["status"])
    return FAILURE if skips.count else OK


def _cutoffs(classifier: TextClassifier, spam_class: str | None, threshold, spam_cutoff,
             ham_cutoff, required: bool) -> tuple[str, float, float] | None:
    """(spam class, spam cutoff, ham cutoff) on the log-odds for a two-class model with a spam
    class, else None: the options given, else the model's learned cutoffs, else the defaults."""
    classes = [str(c) for c in classifier.classes_]
    if spam_cutoff is not None and ham_cutoff is not None and ham_cutoff > spam_cutoff:
        raise click.BadParameter(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")
    cutoffs = spam_cutoffs(classes, classifier.cutoffs_, spam_class, spam_cutoff, ham_cutoff,
                           threshold)
    if cutoffs:
        return cutoffs
    if required or threshold is not None:
        raise click.UsageError(f"cutoffs and exit codes need a two-class model with a class "
                               f"named {spam_class or 'spam'!r} (classes: {', '.join(classes)}); "
                               f"name it with --spam-class")
    return None


def _decide(classifier: TextClassifier, documents: Sequence, sources: Sequence[str],
            cutoffs) -> list[dict[str, Any]]:
    """Label, probabilities and log-odds of each document; with cutoffs, its spam status."""
    if not documents:
        return []
    classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
    return [decide(classes, row.tolist(), source, cutoffs)
            for source, row in zip(sources, classifier.predict_log_proba(documents))]


def _explanation(explanation) -> dict[str, Any]:
    return {"label": str(explanation.label), "against": str(explanation.against),
            "log_odds": explanation.log_odds, "prior_log_odds": explanation.prior_log_odds,
            "absent_words": explanation.baseline, "other_terms": explanation.rest,
            "terms": [{"term": c.term, "count": c.count, "log_odds": c.log_odds}
                      for c in explanation.terms]}


@main.command("filter")
@_model_path_option()
@click.option("--spam-class",
              help="The class whose probability goes in the headers (default: the one the "
                   "model's cutoffs were learned for, else spam).")
@_cutoff_options
def filter_(model_path, spam_class, spam_cutoff, ham_cutoff) -> int:
    """Read a message on stdin, write it to stdout with X-TextNB-* headers added.

    Nothing else changes. On any failure the message is written unchanged and the
    reason goes to stderr: mail is never lost. Always exits 0 once the message is out.
    """
    raw = sys.stdin.buffer.read()
    try:
        if spam_cutoff is not None and ham_cutoff is not None and ham_cutoff > spam_cutoff:
            raise click.BadParameter(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")
        out = filter_message(raw, _resolve_model(model_path), spam_class, spam_cutoff, ham_cutoff)
    except BaseException as error:  # noqa: BLE001 — whatever happened, deliver the message
        reason = _os_message(error) if isinstance(error, OSError) else str(error) or type(error).__name__
        click.echo(f"textnb filter: message passed through unchanged: {reason}", err=True)
        out = raw
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return OK


def _pass_through(reason: str) -> None:
    """Copy stdin to stdout untouched and say why on stderr: the filter's last resort."""
    sys.stdout.buffer.write(sys.stdin.buffer.read())
    sys.stdout.buffer.flush()
    click.echo(reason, err=True)


@main.command()
@click.option("--class", "label", required=True, help="The class the documents belong to.")
@click.option("--unlearn", is_flag=True, help="Remove documents learned before as --class.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@_model_path_option()
def learn(label, unlearn, paths, model_path) -> int:
    """Add documents to a model in place (train on error), or --unlearn them.

    Safe to run from several deliveries at once: a lock file serialises updates and the
    model is replaced atomically. A missing model is created with default settings.
    """
    skips = _Skips()
    documents = [raw for _, raw in read_raw(paths, on_error=skips)]
    if not documents:
        raise DocumentError("no readable documents to learn")
    path = _resolve_model(model_path)
    with locked(path):
        if path.exists() or unlearn:
            classifier = load_model(path)
        else:
            classifier = TextClassifier()
        if unlearn:
            classifier.unlearn(documents, [label] * len(documents))
        else:
            classifier.partial_fit(documents, [label] * len(documents))
        save_model(classifier, path)
    skips.summary()
    verb = "unlearned" if unlearn else "learned"
    click.echo(f"{verb} {len(documents)} document{'s' if len(documents) != 1 else ''} "
               f"as {label} -> {path}")
    return FAILURE if skips.count else OK


@main.command()
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Class NAME is on PATH (repeatable).")
@_model_path_option()
@click.option("--cv", type=click.IntRange(min=2), help="K-fold cross-validation, no model file.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the --cv folds.")
@click.option("--spam-class", default="spam", show_default=True,
              help="The positive class of a two-class evaluation.")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@_training_options
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def evaluate(dirs, labels, model_path, cv, seed, spam_class, output, quiet, **options) -> int:
    """Accuracy, per-class precision/recall/F1 and the confusion matrix on labelled
    directories; for two classes also false-positive/negative rates and ROC AUC."""
    from .metrics import evaluate as score, roc_auc, stratified_folds
    sources = _labelled_sources(dirs, labels)
    skips = _Skips()
    texts, y = _read_labelled(sources, skips, quiet)
    y = np.array(y)
    if cv:
        if len(set(y.tolist())) < 2:
            raise click.UsageError("cross-validation needs at least two classes")
        folds = stratified_folds(y, cv, seed)
        classes = np.unique(y)
        log_proba = np.zeros((len(y), len(classes)))
        for k in range(cv):
            test = folds == k
            train_texts = [t for t, f in zip(texts, folds) if f != k]
            clf = _classifier(labels=y.tolist(), **options).fit(train_texts, y[~test])
            log_proba[test] = clf.predict_log_proba([t for t, f in zip(texts, folds) if f == k])
    else:
        clf = _load(model_path)
        classes = clf.classes_
        unknown = sorted(set(y.tolist()) - set(map(str, classes)))
        if unknown:
            raise DocumentError(f"class {unknown[0]!r} is not in the model "
                                f"(classes: {', '.join(map(str, classes))})")
        log_proba = clf.predict_log_proba(texts)
    classes = np.asarray(classes).astype(str)
    predicted = classes[np.argmax(log_proba, axis=1)]
    report = score(y, predicted, classes)
    result: dict[str, Any] = {
        "documents": int(len(y)), "accuracy": report.accuracy, "classes": report.classes,
        "precision": report.precision.tolist(), "recall": report.recall.tolist(),
        "f1": report.f1.tolist(), "confusion": report.confusion.tolist()}
    if len(classes) == 2:
        positive = spam_class if spam_class in classes else classes[1]
        p = int(np.flatnonzero(classes == positive)[0])
        is_positive = y == positive
        wrong = predicted != y
        result.update({
            "positive_class": positive,
            "false_positive_rate": float((wrong & ~is_positive).sum() / max((~is_positive).sum(), 1)),
            "false_negative_rate": float((wrong & is_positive).sum() / max(is_positive.sum(), 1)),
            # Ranked by log-odds, which stay finite where probabilities saturate at 0 and 1.
            "roc_auc": (roc_auc(is_positive, log_proba[:, p] - log_proba[:, 1 - p])
                        if 0 < is_positive.sum() < len(y) else None)})
    skips.summary()
    click.echo(json.dumps(result) if output == "json" else _report_text(result))
    return OK


def _report_text(r: dict[str, Any]) -> str:
    width = max(12, *(len(c) for c in r["classes"]))
    lines = [f"documents  {r['documents']}", f"accuracy   {r['accuracy']:.4f}", "",
             f"{'class':<{width}}  precision  recall     f1"]
    for c, p, rc, f in zip(r["classes"], r["precision"], r["recall"], r["f1"]):
        lines.append(f"{c:<{width}}  {p:9.4f}  {rc:6.4f}  {f:6.4f}")
    lines += ["", "confusion (rows: true, columns: predicted)",
              " " * (width + 2) + " ".join(f"{c[:8]:>8}" for c in r["classes"])]
    for c, row in zip(r["classes"], r["confusion"]):
        lines.append(f"{c:<{width}}  " + " ".join(f"{n:>8}" for n in row))
    if "positive_class" in r:
        auc = "n/a" if r["roc_auc"] is None else f"{r['roc_auc']:.6f}"
        lines += ["", f"positive class       {r['positive_class']}",
                  f"false positive rate  {r['false_positive_rate']:.4%}",
                  f"false negative rate  {r['false_negative_rate']:.4%}",
                  f"ROC AUC              {auc}"]
    return "\n".join(lines)


@main.command()
@_model_path_option()
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Informative terms per class.")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def info(model_path, top, output) -> int:
    """Classes, document counts, vocabulary size, parameters, most informative terms."""
    path = _resolve_model(model_path)
    classifier = load_model(path)
    model = classifier.model_
    data = {"model": str(path),
            "classes": {str(c): int(round(n)) for c, n in zip(model.classes_, model.class_count_)},
            "terms": len(classifier.vocabulary_), "parameters": classifier.get_params(),
            "cutoffs": classifier.cutoffs_,
            "informative_terms": ({str(c): terms for c, terms in
                                   classifier.informative_terms(top).items()}
                                  if len(model.classes_) > 1 else {})}
    if output == "json":
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
        return OK
    lines = [f"model       {data['model']}",
             "classes     " + ", ".join(f"{c} ({n} documents)" for c, n in data["classes"].items()),
             f"terms       {data['terms']}",
             *([_cutoffs_line(data["cutoffs"])] if data["cutoffs"] else
               [f"cutoffs     none learned: P(spam) >= {SPAM_CUTOFF} spam, <= {HAM_CUTOFF} ham"]
               if len(data["classes"]) == 2 else []),
             "parameters  " + ", ".join(f"{k}={v}" for k, v in data["parameters"].items()
                                        if k != "stop_words" or isinstance(v, str))]
    for c, terms in data["informative_terms"].items():
        lines.append(f"\nmost informative for {c} (log-likelihood ratio):")
        lines += [f"  {term[:40]:<40} {ratio:+.3f}" for term, ratio in terms]
    click.echo("\n".join(lines))
    return OK


main.add_command(table)
from .dumpcli import dump, explain, load, merge  # noqa: E402 — commands of their own module
for _command in (dump, load, merge, explain):
    main.add_command(_command)
from .clustercli import cluster, em_setup  # noqa: E402 — EM commands of their own module
main.add_command(cluster)
