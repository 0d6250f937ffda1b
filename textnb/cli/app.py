"""The textnb command line: train, classify, filter, learn, evaluate, info, table.

The only module that prints, reads argv or chooses exit codes. Every error reaches the user as
one ``Error: …`` line on stderr with a non-zero exit code, never a traceback (set
TEXTNB_DEBUG=1 to see one). ``filter`` is the exception to the rule: it always delivers.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import click
import numpy as np

from .. import __version__
from ..classifier import TextClassifier
from ..store.text_model import load_model, save_model
from .options import FloatRange
from ..decision.cutoffs import TARGET_FNR, TARGET_FPR, TARGET_UNSURE, extrapolated, ham_needed
from ..nb.on_error import MARGIN, MAX_PASSES
from ..decision.rules import (HAM_CUTOFF, SPAM_CUTOFF, Exit, decide, line, logit, spam_class_of,
                              spam_cutoffs, threshold_rule)
from ..documents.sources import first_raw, is_maildir, iter_files, mbox_messages, read_raw
from ..errors import DocumentError, ModelFileError, TextnbError
from ..text.hashing import MAX_HASH_BITS
from ..mail.filter import filter_message
from ..store.container import locked
from ..paths import MODEL_ENV, default_model_path
from .fast import FILTER_TIMEOUT, budget, write_out
from .serve import serve
from .table import parse_priors, table

# Exit codes: Exit (textnb.decision.rules) for classify --exit-code, these everywhere else.
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
                sys.exit(_pass_through(f"textnb filter: message passed through unchanged: "
                                       f"{error.format_message()}"))
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
        except (RecursionError, MemoryError) as error:
            _error(_reason(error, "input"))
            code = Exit.ERROR if strict else FAILURE
        except Exception as error:  # a bug: still one line, unless debugging
            if os.environ.get("TEXTNB_DEBUG"):
                raise
            _error(f"internal error: {type(error).__name__}: {error} (TEXTNB_DEBUG=1 shows more)")
            code = Exit.ERROR if strict else FAILURE
        failed = _stdout_failed()
        if failed and not code:
            # A reader that went away (| head) had what it wanted: quiet, as click is then.
            if strict or not isinstance(failed, BrokenPipeError):
                _error("cannot write to standard output")
            code = Exit.ERROR if strict else FAILURE
        sys.exit(int(code or 0))


def _reason(error: BaseException, what: str) -> str:
    """Why a command failed, in one line: the error's message, or for the few errors whose
    own message says nothing to a user, what happened (``what``: message, input)."""
    if isinstance(error, RecursionError):
        return f"{what} too deeply nested"
    if isinstance(error, MemoryError):
        return "out of memory"
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    if isinstance(error, OSError):
        return _os_message(error)
    return str(error) or type(error).__name__


def _stdout_failed() -> OSError | None:
    """Flush standard output; when it cannot be written (a full disk, a closed pipe), point it
    at /dev/null, so that Python's own flush at exit does not fail again with a traceback, and
    return why."""
    try:
        sys.stdout.flush()
    except OSError as error:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (a test's captured output)
            pass
        return error
    return None


def _count(n: int, noun: str) -> str:
    """'1 document', '2 documents'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _error(message: str) -> None:
    click.echo(f"Error: {message}", err=True)


def _os_message(error: OSError) -> str:
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True)
@click.version_option(__version__, prog_name="textnb")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Naive Bayes text classification and spam filtering.

    \b
    textnb train spam/ ham/              train on directories of labelled files
    textnb classify message.eml          label new files
    textnb filter < msg > msg.tagged     add X-TextNB-* headers (for procmail)
    """
    if ctx.invoked_subcommand is None:  # a bare `textnb` asks what there is: the help, exit 0
        click.echo(ctx.get_help())


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
    click.option("--alpha", type=FloatRange(min=0, min_open=True),
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
    click.option("--stop-words", metavar="english|english-without-negations|none|FILE",
                 help="Stop words to drop (default: NLTK's English list when --spam-class is "
                      "one of the classes, else that list without no, not, n't words and "
                      "very)."),
    click.option("--stem", type=click.Choice(["porter", "snowball"]), help="Stem tokens with NLTK."),
    click.option("--ngrams", type=click.IntRange(min=1),
                 help="Use word n-grams up to N (default: 2 for texts that are not full mail, "
                      "two classes with a spam class, or 500 to 100,000 documents of two "
                      "classes or of short texts; else 1)."),
    click.option("--tf", type=click.Choice(["raw", "log", "binary"]),
                 help="Term weights: counts, log(1+count) or presence."),
    click.option("--norm", type=click.Choice(["none", "l2"]), help="Scale documents to unit length."),
    click.option("-j", "--jobs", type=int,
                 help="Processes that parse and tokenize, threads that train on error "
                      "(default: every core for 2000 documents or more; 1: none; -1: every "
                      "core)."),
]


def _cutoff_options(function):
    options = [
        click.option("--spam-cutoff", type=FloatRange(0, 1),
                     help=f"P(spam) at or above which a message is spam (default: the "
                          f"model's learned cutoff, else {SPAM_CUTOFF})."),
        click.option("--ham-cutoff", type=FloatRange(0, 1),
                     help=f"P(spam) at or below which a message is ham; between: unsure "
                          f"(default: the model's learned cutoff, else {HAM_CUTOFF})."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


# The spam class a command decides by where --spam-class is not given (decision.spam_cutoffs).
_LEARNED_ELSE_NAMED = ("the one the model's cutoffs were learned for, else the class named "
                       "spam, Junk, Junk E-mail or Bulk Mail, in any case")


def _cutoff_learning_options(function):
    options = [
        click.option("--spam-class",
                     help="With two classes, the spam one: its cutoffs are learned (default: "
                          "the class named spam, else one named as mail programs name their "
                          "spam folder, in any case: Junk, .Junk, Junk E-mail, Bulk Mail)."),
        click.option("--target-fpr", type=FloatRange(0, 1, max_open=True),
                     default=TARGET_FPR, show_default=True,
                     help="Share of ham the learned spam cutoff may call spam."),
        click.option("--target-fnr", type=FloatRange(0, 1, max_open=True),
                     default=TARGET_FNR, show_default=True,
                     help="Share of spam the learned ham cutoff may call ham."),
        click.option("--target-unsure", type=FloatRange(0, 1, max_open=True),
                     default=TARGET_UNSURE, show_default=True,
                     help="Share of all messages the learned cutoffs may leave unsure "
                          "(the ham cutoff rises to keep it)."),
        click.option("--keep-suspects", is_flag=True,
                     help="Keep the training messages that models which never saw them place "
                          "among the other class (left out by default, as mis-sorted)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _training_options(function):
    for option in reversed(_TRAINING_OPTIONS):
        function = option(function)
    return function


def _settings(event_model, alpha, min_df, max_df, max_features, stop_words, stem, ngrams, tf,
              norm, jobs, hash_bits=None) -> dict[str, Any]:
    """The training options given, as model settings (priors aside: they need the classes);
    options not given are left out, so they keep the library's defaults."""
    settings: dict[str, Any] = {"n_jobs": jobs}
    given = {"model": event_model, "alpha": alpha, "max_features": max_features,
             "stop_words": stop_words, "stemmer": stem, "tf": tf, "hash_bits": hash_bits}
    settings.update({k: v for k, v in given.items() if v is not None})
    if min_df is not None:
        settings["min_df"] = _number(min_df)
    if max_df is not None:
        settings["max_df"] = _number(max_df)
    if ngrams is not None:
        settings["ngram_range"] = (1, ngrams)
    if norm is not None:
        settings["norm"] = None if norm == "none" else norm
    return settings


def _classifier(labels: Sequence[str], prior=None, **options) -> TextClassifier:
    """A TextClassifier from CLI options; options not given keep the library's defaults."""
    settings = _settings(**options)
    priors = parse_priors(prior or (), sorted(set(labels)))
    if priors is not None:
        settings.update({"fit_prior": priors != "uniform"} if isinstance(priors, str)
                        else {"class_prior": priors})
    return TextClassifier(**settings)


def _resolve_model(path: Path | None) -> Path:
    return path if path is not None else default_model_path()


def _load(path: Path | None) -> TextClassifier:
    return load_model(_resolve_model(path))


# -- reading labelled documents --------------------------------------------------------------

# Mailbox files and folders are named for what they hold plus one of these (Thunderbird and
# mutt: spam.mbox; Eudora and Pegasus: spam.mbx; Apple Mail exports a spam.mbox directory).
_MAILBOX_SUFFIXES = (".mbox", ".mbx")
# Two classes cross-validate their decision threshold (and mail its cutoffs) over every
# document's counts at once, up to this much input (bytes of the files), and for mail these many
# messages or bytes. Beyond, they train as they are read, every document counted, in bounded
# memory, and learn their threshold (and cutoffs) on a sample of SAMPLE documents read again
# (TextClassifier.learn_thresholds). Held at once, mail's counts and cross-validations peaked at
# 1.6 times the files' size for SpamAssassin's (five times over: 30,230 messages, 215 MB, 382 MB
# peak RSS; ten times: 430 MB, 684 MB) and at 4 kB a message for short ones (scripts/
# bench_scale.py --mail: 100,000 messages of 50-100 words drawn from it, 57 MB, 411 MB).
THRESHOLD_MAX_BYTES = 100 << 20
CUTOFFS_MAX_MESSAGES = 100_000
CUTOFFS_MAX_BYTES = 256 << 20
SAMPLE = 20_000


def _class_name(path: str) -> str:
    """The class a directory or mailbox trains: its name, without a mailbox suffix."""
    name = os.path.basename(os.path.normpath(path))
    stem, suffix = os.path.splitext(name)
    return stem if stem and suffix.lower() in _MAILBOX_SUFFIXES else name


def _labelled_sources(dirs: Sequence[str], labels: Sequence[str]) -> list[tuple[str, str]]:
    """(class, path) pairs: each DIR is a class named after it (spam.mbox: spam); --label
    NAME=PATH names one; a single DIR holding only subdirectories gives one class per
    subdirectory (20 Newsgroups)."""
    sources = []
    for spec in labels:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"expected NAME=PATH, got {spec!r}", param_hint="--label")
        if not os.path.exists(path):
            raise DocumentError(f"no such file or directory: {path} (--label {name})")
        sources.append((name, path))
    for directory in dirs:
        if not os.path.exists(directory):
            raise DocumentError(f"no such file or directory: {directory}")
    if len(dirs) == 1 and not labels and os.path.isdir(dirs[0]) and not is_maildir(dirs[0]):
        entries = [e for e in sorted(os.scandir(dirs[0]), key=lambda e: e.name)
                   if not e.name.startswith(".")]
        if entries and all(e.is_dir() for e in entries):
            return [(_class_name(e.path), e.path) for e in entries]
    sources += [(_class_name(d), d) for d in dirs]
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
def _progress(items: Sequence, label: str, quiet: bool, unit: str = "files",
              stream: Any = None) -> Iterator:
    """items, behind a progress bar on a terminal: count, rate and time left."""
    stream = stream or sys.stderr
    if quiet or not stream.isatty():
        yield items
        return
    start, shown = time.monotonic(), []

    def rate(_item: Any) -> str:  # the bar calls it before it is returned: shown holds it
        elapsed, done = time.monotonic() - start, shown[0].pos if shown else 0
        if not (elapsed > 0 and done):
            return ""
        rate = done / elapsed
        return f"{rate:,.0f} {unit}/s" if rate >= 10 else f"{rate:.1f} {unit}/s"

    with click.progressbar(items, length=len(items), label=label, file=stream, show_pos=True,
                           show_eta=True, item_show_func=rate) as bar:
        shown.append(bar)
        yield bar


def _read_labelled(sources: list[tuple[str, str]], skips: _Skips, quiet: bool,
                   where: list[str] | None = None):
    """Documents' bytes and their labels from (class, path) pairs; a class with none is an error.
    The bytes are parsed by the classifier, in its worker processes. ``where``: as
    :func:`_stream_labelled`'s."""
    texts, labels = _stream_labelled(sources, skips, quiet, where)
    texts = list(texts)
    _check_read(sources, labels)
    return texts, labels


def _stream_labelled(sources: list[tuple[str, str]], skips: _Skips, quiet: bool,
                     where: list[str] | None = None):
    """:func:`_read_labelled`'s bytes as an iterator read once, and their labels, a list that
    fills as the bytes are read: for ``fit``, which parses the bytes as they are read, so that
    they are never all held; ``where``, if given, fills with each document's file (one string
    a file, shared). A class without files is an error here; :func:`_check_read` says
    whether each class had a readable document."""
    labels: list[str] = []
    # The files first (a directory listing is cheap next to reading), so that the progress bar
    # knows how many there are; an mbox is one file of many documents.
    files = [(label, found) for label, path in sources for found in iter_files(path, skips)]
    _check_read(sources, [label for label, _ in files])

    def texts():
        with _progress(files, "reading", quiet) as bar:
            for label, found in bar:
                for _, raw in read_raw([found], on_error=skips):
                    labels.append(label)
                    if where is not None:
                        where.append(found)
                    yield raw

    return texts(), labels


def _check_read(sources: list[tuple[str, str]], labels: list[str]) -> None:
    found = set(labels)
    missing = [label for label, _ in sources if label not in found]
    if missing:
        raise DocumentError(f"no readable documents for class {missing[0]!r}")


def _streams(classifier: TextClassifier, classes: Sequence[str], sampled: bool = False) -> bool:
    """Whether training as the documents are read (partial_fit) gives the model fit would:
    every document counted (training full, or auto without a spam class), no pruning by
    document frequency (which needs every document's counts), no cutoffs or two-class decision
    threshold to cross-validate (they need every document's scores), unless they are
    ``sampled``: learned on a sample of the documents, read again (:func:`_sampled_thresholds`)."""
    return (classifier.training in ("full", "auto")
            and (sampled or not (classifier.learns_cutoffs(classes) or (
                len(set(map(str, classes))) == 2 and classifier.decision_threshold == "auto")))
            and type(classifier.min_df) is int and classifier.min_df <= 1
            and classifier.max_df == 1.0 and classifier.max_features is None)


def _input_size(sources: list[tuple[str, str]]) -> tuple[int, int]:
    """(bytes, documents) of the files of (class, path) sources: a file is a document, an mbox
    of a megabyte or more as many as it has lines starting "From " (standard input counts 0)."""
    size = documents = 0
    for _, path in sources:
        for found in (iter_files(path, lambda *_: None) if path != "-" else ()):
            try:
                n = os.path.getsize(found)
                documents += mbox_messages(found) if n >= 1 << 20 else 1
            except OSError:  # reading reports it
                continue
            size += n
    return size, documents


def _too_large(size: tuple[int, int], mail: bool) -> bool:
    """Whether training holds documents of (bytes, documents) at once: THRESHOLD_MAX_BYTES,
    for mail CUTOFFS_MAX_BYTES and CUTOFFS_MAX_MESSAGES."""
    if mail:
        return size[0] > CUTOFFS_MAX_BYTES or size[1] > CUTOFFS_MAX_MESSAGES
    return size[0] > THRESHOLD_MAX_BYTES


def _decision_threshold(value: str) -> str | float | None:
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


def _sample(sources: list[tuple[str, str]], per_source: int = 20) -> list[bytes]:
    """The first documents of each (class, path) source, unparsed; standard input, which can
    be read only once, and unreadable documents left out (training reports them)."""
    return [raw for _, path in sources if path != "-" for raw in first_raw([path], per_source)]


def _train_streaming(classifier: TextClassifier, sources: list[tuple[str, str]], skips: _Skips,
                     quiet: bool) -> list[str]:
    """Train on the documents of (class, path) pairs as they are read: partial_fit counts a
    part of them at a time, so memory holds a part's documents and counts, not every one's.
    Returns their labels, in order."""
    texts, labels = _stream_labelled(sources, skips, quiet)
    try:
        classifier.partial_fit(texts, labels)
    except ValueError:
        _check_read(sources, labels)  # "no readable documents for class x" says more
        raise
    _check_read(sources, labels)
    classifier.on_error_ = None
    return labels


def _sampled_thresholds(classifier: TextClassifier, sources: list[tuple[str, str]],
                        learned: list[str], quiet: bool) -> tuple[list[str], list[str]]:
    """Learn the decision threshold (and a mail model's cutoffs) of a model trained on the
    documents of (class, path) pairs as they were read, with these labels, from a random sample
    of them, read again (TextClassifier.learn_thresholds): SAMPLE in all, each class in its
    share (the threshold makes the fewest mistakes on them, as on all), but for mail at least
    as many of a class (all of a smaller one) as the spam cutoff is read off, not extrapolated
    (textnb.decision.cutoffs.ham_needed: 1,999 for 0.1 %). Returns (their files, their labels)."""
    classes, codes = np.unique(learned, return_inverse=True)
    share, rng = min(1.0, SAMPLE / len(learned)), np.random.default_rng(0)
    target = classifier.target_fpr
    least = ham_needed(target) if target > 0 and classifier.learns_cutoffs(classes.tolist()) else 0
    chosen: set[int] = set()
    for code in range(classes.size):
        members = np.flatnonzero(codes == code)
        take = min(members.size, max(round(share * members.size), least))
        chosen.update(rng.choice(members, take, replace=False).tolist())
    where: list[str] = []
    texts, labels = _stream_labelled(sources, lambda *_: None, quiet, where)
    picked: tuple[list[str], list[str]] = ([], [])

    def sample() -> Iterator[bytes]:
        for i, raw in enumerate(texts):  # reported unreadable the first time
            if i in chosen:
                picked[0].append(where[i])
                picked[1].append(labels[i])
                yield raw

    try:
        classifier.learn_thresholds(sample(), picked[1])
    except ValueError as error:
        if labels != learned:  # files came or went between the two readings
            raise DocumentError("the training files changed while training read them: "
                                "train again") from error
        raise
    return picked


# -- commands ----------------------------------------------------------------------------------

@main.command()
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Train class NAME on PATH (repeatable).")
@_model_path_option()
@_training_options
@_cutoff_learning_options
@click.option("--training", type=click.Choice(["auto", "full", "on-error"]), default="auto",
              show_default=True,
              help="Learn every document (full), only those the model gets wrong or is unsure "
                   "of, pass after pass (on-error, as bogominitrain), or for two-class mail "
                   "whichever misplaces fewer messages in cross-validation (auto: on-error "
                   "with ham too few to read the spam cutoff off, under 1,999 for 0.1 %; beyond "
                   f"{CUTOFFS_MAX_MESSAGES:,} messages or {CUTOFFS_MAX_BYTES >> 20} MB of mail, "
                   "full, counted as it is read, the cutoffs learned on a sample of "
                   f"{SAMPLE:,} messages).")
@click.option("--margin", type=FloatRange(min=0), default=MARGIN, show_default=True,
              help="On error: the log-odds by which the right class must lead.")
@click.option("--passes", type=click.IntRange(min=1), default=MAX_PASSES, show_default=True,
              help="On error: at most this many passes.")
@click.option("--decision-threshold", "decision_threshold", default="auto", show_default=True,
              metavar="auto|none|LOG-ODDS",
              help="Two classes without a spam class: classify labels the second class where "
                   "its log-odds over the first reach this threshold; auto learns it by 5-fold "
                   "cross-validation (the fewest mistakes; beyond "
                   f"{THRESHOLD_MAX_BYTES >> 20} MB of files, on a sample of {SAMPLE:,}), none "
                   "takes the most probable class (and trains as the documents are read).")
@click.option("--tune", is_flag=True,
              help="Choose the event model, alpha, word pairs, term weights, length "
                   "normalisation and whether to remove the stop words by cross-validation on "
                   "the training documents (the best setting, at the largest alpha within one "
                   "standard error of its score).")
@click.option("--tune-folds", type=click.IntRange(min=2), default=5, show_default=True,
              help="Folds of --tune's cross-validation.")
@click.option("--unlabeled", multiple=True, type=click.Path(exists=True), metavar="PATH",
              help="Unlabeled documents to learn from by EM (repeatable; multinomial default).")
@click.option("--em-weight", type=FloatRange(min=0), default=1.0, show_default=True,
              help="With --unlabeled: λ, the weight of an unlabeled document.")
@click.option("--em-iterations", type=click.IntRange(min=1), help="With --unlabeled: at most N.")
@click.option("--labels", "label_file", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="Multi-label training: each line a document path (relative "
                                   "to FILE's directory) and its labels (Reuters' cats.txt).")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Read and count on the Dask cluster whose scheduler is ADDRESS "
                   "(tcp://HOST:8786); every worker must see the DIRS under the same paths.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or summary.")
def train(dirs, labels, model_path, quiet, spam_class, target_fpr, target_fnr, target_unsure,
          keep_suspects, training, margin, passes, decision_threshold, tune, tune_folds,
          unlabeled, em_weight, em_iterations, label_file, dask_address, **options) -> int:
    """Train on directories of labelled files: textnb train spam/ ham/.

    Each DIR is a class named after the directory; a single DIR holding only
    subdirectories trains one class per subdirectory (the 20 Newsgroups layout).
    Files may be plain text, RFC 822 mail, news articles, mbox files or Maildirs.

    With two classes, one of them --spam-class, cross-validation on the training
    documents also chooses the spam and ham cutoffs on the log-odds (see --target-fpr).
    Mail too large to hold is counted as it is read, in bounded memory, and its
    cutoffs learned on a sample of it, read again (see --training).

    With --labels FILE, a multi-label model: one-vs-rest Naive Bayes, a threshold per
    label by cross-validation; DIRS then add their documents under their directory's
    class, and a document found in several places gets all their labels.
    """
    if options.get("hash_bits") is not None and (label_file is not None or tune):
        raise click.UsageError("--hash-bits does not combine with --labels or --tune")
    if label_file is not None:
        if dask_address:
            raise click.UsageError("--dask does not train multi-label models (--labels)")
        return _multilabel_train(label_file, dirs, labels, model_path, quiet, tune, unlabeled,
                                 options)
    sources = _labelled_sources(dirs, labels)
    if len({label for label, _ in sources}) < 2:
        raise click.UsageError("need at least two classes to train, e.g. textnb train spam/ ham/")
    skips = _Skips()
    if dask_address and (tune or unlabeled):
        raise click.UsageError("--dask cannot be combined with --tune or --unlabeled")
    classes = [label for label, _ in sources]  # every one has documents, or it is an error
    spam_class = spam_class or spam_class_of(classes) or "spam"
    classifier = _classifier(labels=classes, **options)
    classifier.set_params(spam_class=spam_class, target_fpr=target_fpr, target_fnr=target_fnr,
                          target_unsure=target_unsure, keep_suspects=keep_suspects,
                          training=training, margin=margin, max_passes=passes,
                          decision_threshold=_decision_threshold(decision_threshold))
    # Two classes too large to hold: every document counted as it is read, the threshold (and
    # mail's cutoffs) learned on a sample of them, read again; mail counts words only (their
    # pairs could outgrow memory; other texts count pairs only up to PAIRS_DOCUMENTS).
    mail = classifier.learns_cutoffs(classes)
    sampled = (len(set(classes)) == 2 and (mail or classifier.decision_threshold == "auto")
               and training != "on-error" and not (dask_address or tune or unlabeled)
               and _streams(classifier, classes, sampled=True)
               and _too_large(_input_size(sources), mail))
    if sampled and mail:
        classifier.set_params(training="full", ngram_range=classifier.ngram_range or (1, 1))
    # Word pairs or words, unless --ngrams: chosen here, where the classes and the files are
    # known before the documents are read (TextClassifier.default_ngram_range).
    sample: list[bytes] = []
    if classifier.ngram_range is None:
        # The files counted (without reporting: reading reports what cannot be read, once)
        # unless a spam class decides, and the first of each directory read if they may.
        files = None if classifier.learns_cutoffs(classes) else sum(
            1 for _, path in sources if path != "-" for _ in iter_files(path, lambda *_: None))
        sample = _sample(sources) if classifier._may_pair(classes, files) else []
        classifier.set_params(ngram_range=classifier.default_ngram_range(
            classes, sample, documents=files))
    stream = not (dask_address or tune or unlabeled) and _streams(classifier, classes, sampled)
    if stream or dask_address:
        _return_large_frees()
    # Each document's file, to name the ones left out as mis-sorted (with learned cutoffs only).
    where: list[str] | None = [] if classifier.learns_cutoffs(classes) else None
    texts, y = ((None, classes) if dask_address or stream
                else _stream_labelled(sources, skips, quiet, where))
    em = em_setup(classifier, options, unlabeled, em_weight, em_iterations,
                  training == "on-error", quiet)
    tuned = None
    if tune:
        if em:
            raise click.UsageError("--tune and --unlabeled cannot be combined")
        from ..evaluation.tuning import tune as cross_validate
        texts = list(texts)  # read once for every fold
        _check_read(sources, y)
        tuned = cross_validate(classifier, texts, y, folds=tune_folds)
        classifier.set_params(**tuned.settings)
        if not quiet:
            click.echo(_tuning_table(tuned))
    # The stop words by the classes, known here (fit sees the labels only as it reads), and
    # for other texts than mail, by how long the first documents are.
    if not sample and classifier.stop_words_by_length(classes):
        sample = _sample(sources)
    classifier.set_params(stop_words=classifier.default_stop_words(classes, sample))
    if dask_address:
        from ..distributed import connect, fit_files
        files = [(label, found) for label, path in sources for found in iter_files(path, skips)]
        with connect(dask_address) as client:
            fit_files(classifier, files, client, on_error=skips)
    elif stream:
        learned = _train_streaming(classifier, sources, skips, quiet)
        if sampled:
            where, y = _sampled_thresholds(classifier, sources, learned, quiet)
    elif not (tuned and tuned.refit(classifier, y)):
        if tuned:
            tuned.counted = None  # counted otherwise than the choice counts: not held while it reads
        try:
            classifier.fit(texts, y, **em)
        except ValueError:
            _check_read(sources, y)  # "no readable documents for class x" says more
            raise
        _check_read(sources, y)
    if tuned is not None:
        classifier.tuning_ = tuned.summary()
    path = _resolve_model(model_path)
    save_model(classifier, path)
    skips.summary()
    if not quiet:
        report = classifier.on_error_
        # Trained on error, the model's class counts are weights (each learned document's share
        # of the walks that learned it): say how many documents training read.
        per_class = (report["per_class"] if report else
                     dict(zip(classifier.classes_, classifier.model_.class_count_)))
        counts = ", ".join(f"{c}: {int(per_class[c])}" for c in classifier.classes_)
        click.echo(f"trained {sum(map(int, per_class.values()))} documents ({counts}), "
                   f"{len(classifier.vocabulary_)} "
                   f"{'terms' if classifier.hash_bits is None else 'hashed columns'} -> {path}")
        if report:
            click.echo(f"on error    learned {report['learned']} of {report['documents']} "
                       f"documents in {len(report['passes'])} passes "
                       f"({', '.join(map(str, report['passes']))} per pass)")
        if classifier.cutoffs_:
            click.echo(_cutoffs_line(classifier.cutoffs_))
        elif classifier.__dict__.get("decision_threshold_") is not None:
            click.echo(_threshold_line(classifier))
    _echo_suspects(classifier, where or [], y)
    return OK


def _threshold_line(classifier: TextClassifier) -> str:
    """A two-class model's decision threshold, as train and info say it."""
    rule = threshold_rule(classifier.classes_, classifier.decision_threshold_)
    return f"threshold   {rule}, else {classifier.classes_[0]}"


def _echo_suspects(classifier: TextClassifier, where: list[str], labels: Sequence[str]) -> None:
    """Say on stderr, a line each as for an unreadable file, which training messages were left
    out as likely mis-sorted (a spam in the ham directory), where their files are known, then
    how many."""
    found = getattr(classifier, "suspects_", ())
    if not len(found):
        return
    if len(where) > found[-1]:
        for i in found.tolist():
            click.echo(f"textnb: left out {where[i]}: labelled {labels[i]}, but models that "
                       f"never saw it place it among the other class (mis-sorted?)", err=True)
    click.echo(f"textnb: left out {len(found)} training message{'s' if len(found) != 1 else ''} "
               f"as mis-sorted (--keep-suspects keeps them)", err=True)


def _multilabel_train(label_file, dirs, labels, model_path, quiet, tune, unlabeled,
                      options) -> int:
    """train --labels: a multi-label model (textnb.cli.multilabel)."""
    from . import multilabel as multilabelcli
    if tune or unlabeled:
        raise click.UsageError("--tune and --unlabeled do not apply to a multi-label model")
    sources = _labelled_sources(dirs, labels) if dirs or labels else []
    skips = _Skips()
    texts, label_sets = multilabelcli.read_documents(label_file, sources, skips)
    prior = options.pop("prior")
    multilabelcli.train(texts, label_sets, _resolve_model(model_path),
                        multilabelcli.settings(_settings(**options), prior), quiet)
    skips.summary()
    return OK


def _is_multilabel(model_path: Path | None) -> bool:
    """Whether the model file declares itself a multi-label one (meta.json's kind)."""
    from ..multilabel import KIND, model_kind
    return model_kind(_resolve_model(model_path)) == KIND


def _tuning_table(tuned, top: int = 10) -> str:
    """--tune's cross-validation: the best settings first, mean ± sd over the folds."""
    lines = [f"{tuned.folds}-fold cross-validation of {len(tuned.rows)} settings "
             f"({tuned.metric}; best first; * chosen: the most smoothing within one standard "
             f"error of the best):",
             f"  {'model':<12} {'alpha':>6} {'ngrams':>6} {'stop words':<10} {'tf':<7} "
             f"{'norm':<5} {tuned.metric:>14}"]
    for i, row in enumerate(tuned.rows[:max(top, tuned.chosen + 1)]):
        lines.append(f"{'*' if i == tuned.chosen else ' '} {row['model']:<12} {row['alpha']:>6g} "
                     f"{row['ngram_range'][1]:>6} {row['stop_words']:<10.10} {row['tf']:<7} "
                     f"{str(row['norm'] or 'none'):<5} {row['mean']:>8.4f} ± {row['sd']:.4f}")
    return "\n".join(lines)


def _cutoffs_line(cutoffs: dict[str, Any]) -> str:
    """The learned cutoffs and what they gave on the held-out scores (each message's by a model
    of the rest, the folds' held-out messages scored as new ones, or as the folds scored them),
    in one line, and a note under it where too few ham were held out to read the spam cutoff
    off their scores."""
    how = f", {cutoffs['training']} training" if "training" in cutoffs else ""
    left = f", {cutoffs['suspects']} left out" if cutoffs.get("suspects") else ""
    # The spam class by name where it is not "spam" (a folder named Junk or .Junk, say).
    named = "" if cutoffs.get("spam_class", "spam") == "spam" else f" ({cutoffs['spam_class']})"
    whole = cutoffs.get("sampled_from", cutoffs["messages"])
    sample = f"a sample of {cutoffs['messages']} of " if whole > cutoffs["messages"] else ""
    # The rates' scores: each message's by a model of the others (full training), or the
    # folds' models' of their held-out messages taken as new ones (training on error).
    rated = {"left out": "; each message scored by a model of the rest",
             "as new": "; held-out messages scored as new ones"}.get(cutoffs.get("rated"), "")
    line = (f"cutoffs     spam{named} at log-odds >= {cutoffs['spam']:+.3f}, "
            f"ham <= {cutoffs['ham']:+.3f} "
            f"({cutoffs['folds']}-fold CV of {sample}{whole} messages{how}{left}{rated}: "
            f"FPR {cutoffs['fpr']:.2%}, FNR {cutoffs['fnr']:.2%}, "
            f"unsure {cutoffs['unsure']:.2%}, spam not caught {cutoffs['spam_not_caught']:.2%})")
    ham = cutoffs.get("messages", 0) - cutoffs.get("spam_messages", 0)
    target = cutoffs.get("target_fpr", 0.0)
    if ham > 0 and extrapolated(ham, target):
        line += (f"\nnote        {ham} training ham are too few to read the spam cutoff for "
                 f"{target:.2%} of new ham off their scores: it is extrapolated from their "
                 f"highest scores (`textnb tune-cutoffs` reads it off {ham_needed(target)} ham "
                 f"or more)")
    return line


@main.command("tune-cutoffs")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Class NAME is on PATH (repeatable).")
@_model_path_option()
@_cutoff_learning_options
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def tune_cutoffs(dirs, labels, model_path, spam_class, target_fpr, target_fnr, target_unsure,
                 keep_suspects, quiet) -> int:
    """Choose a model's spam and ham cutoffs again, by cross-validation on labelled
    directories (after many `learn`s, or for other target rates); its counts stay.
    Mail too large to hold is cross-validated as train does it (see train --training)."""
    sources = _labelled_sources(dirs, labels)
    skips = _Skips()
    classes = sorted({label for label, _ in sources})
    path = _resolve_model(model_path)
    with locked(path):
        classifier = load_model(path)
        if classes != sorted(map(str, classifier.classes_)):
            raise DocumentError(f"the documents' classes ({', '.join(classes)}) are not "
                                f"the model's ({', '.join(map(str, classifier.classes_))})")
        probe = TextClassifier(**classifier.get_params())
        # Cutoffs for the model's counts: as trained (full, or on error), whatever auto would say.
        training = (classifier.cutoffs_ or {}).get("training", "full")
        spam_class = (spam_class or (classifier.cutoffs_ or {}).get("spam_class")
                      or spam_class_of(classifier.classes_) or "spam")
        probe.set_params(spam_class=spam_class, target_fpr=target_fpr, target_fnr=target_fnr,
                         target_unsure=target_unsure, keep_suspects=keep_suspects,
                         training=training)
        if training == "full" and _too_large(_input_size(sources), mail=True):
            probe.set_params(ngram_range=classifier._ngrams())
            where, y = _sampled_thresholds(probe, sources,
                                           _train_streaming(probe, sources, skips, quiet), quiet)
        else:
            where = []
            texts, y = _stream_labelled(sources, skips, quiet, where)
            probe.fit(texts, y)  # counted as read, as train counts them
            _check_read(sources, y)
        if probe.cutoffs_ is None:
            raise click.UsageError(f"cutoffs need two classes, one named {spam_class!r}, and "
                                   f"at least two documents of each")
        classifier.cutoffs_ = probe.cutoffs_
        classifier.decision_threshold_ = probe.decision_threshold_
        save_model(classifier, path)
    skips.summary()
    click.echo(_cutoffs_line(classifier.cutoffs_))
    _echo_suspects(probe, where, y)
    return OK


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@_model_path_option()
@click.option("--format", "output", type=click.Choice(["text", "tsv", "json"]), default="text",
              show_default=True, help="Output: aligned text, tab-separated or JSON lines.")
@click.option("--header", is_flag=True, help="First a line naming the columns (text, tsv).")
@click.option("--explain", is_flag=True, help="Show the terms that decided each document.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Terms shown by --explain.")
@click.option("--spam-class",
              help="The positive class of a two-class model (for cutoffs and exit codes; "
                   f"default: {_LEARNED_ELSE_NAMED}).")
@click.option("--threshold", type=FloatRange(0, 1),
              help="P(spam) at or above which a message is spam (no unsure band).")
@_cutoff_options
@click.option("--exit-code", is_flag=True,
              help="For one document: exit 0 spam, 1 ham, 2 unsure, 3 error (as bogofilter).")
@click.option("--timeout", type=FloatRange(min=0), default=0, metavar="SECONDS",
              help="Give up with an error after this long (default 0: no limit).")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Read and score on the Dask cluster whose scheduler is ADDRESS "
                   "(tcp://HOST:8786); every worker must see the PATHS under the same paths.")
def classify(paths, model_path, output, header, explain, top, spam_class, threshold, spam_cutoff,
             ham_cutoff, exit_code, timeout, dask_address) -> int:
    """Label files (or standard input, '-'): path, label, probability, log-odds.

    The probability saturates at 0 or 1 on long documents; the log-odds,
    ln P(label|x) - ln P(runner-up|x), keeps ranking them.
    """
    paths = paths or ("-",)
    if header and output == "json":
        raise click.UsageError("--header is for --format text or tsv; JSON lines name their keys")
    skips = _Skips()
    if _is_multilabel(model_path):
        if explain or exit_code or threshold is not None or spam_cutoff is not None \
                or ham_cutoff is not None:
            raise click.UsageError("a multi-label model decides by its own thresholds: "
                                   "--explain, --exit-code and cutoffs do not apply")
        from . import multilabel as multilabelcli
        with budget(timeout):
            read = list(read_raw(paths, on_error=skips))
            multilabelcli.classify(_resolve_model(model_path), [raw for _, raw in read],
                                   [source for source, _ in read], output, header)
        skips.summary()
        return FAILURE if skips.count else OK
    with budget(timeout):
        _return_large_frees()
        classifier = _load(model_path)
        cutoffs = _cutoffs(classifier, spam_class, threshold, spam_cutoff, ham_cutoff, exit_code)
        log_proba = None
        if dask_address:
            if explain:
                raise click.UsageError("--explain reads the documents here; not with --dask")
            from ..distributed import classify_files, connect
            with connect(dask_address) as client:
                sources, log_proba = classify_files(classifier, paths, client, on_error=skips)
            documents = sources
        elif explain or exit_code:
            read = list(read_raw(paths, on_error=skips))
            sources, documents = [source for source, _ in read], [raw for _, raw in read]
        else:
            # Classified as read, never all held (the classifier reads a few parts ahead).
            sources = []

            def read():
                for source, raw in read_raw(paths, on_error=skips):
                    sources.append(source)
                    yield raw

            log_proba = classifier.predict_log_proba(read())
            documents = sources
        if exit_code and (len(documents) != 1 or skips.count):
            raise click.UsageError("--exit-code needs exactly one readable document")
        decisions = _decide(classifier, documents, sources, cutoffs, log_proba)
        if explain:
            explained = list(decisions())
            for document, decision in zip(documents, explained):
                why = classifier.explain(document, top=top, label=decision["label"])
                decision["explanation"] = _explanation(why)
            decisions = lambda: iter(explained)  # noqa: E731
    widths = _widths(decisions(), header) if output == "text" else (0, 0, 0, 0)
    try:
        if header:
            click.echo(_header_line(output, widths))
        for decision in decisions():
            click.echo(line(decision, output, widths))
    except OSError as error:  # a full disk, a closed pipe
        if isinstance(error, BrokenPipeError) and not exit_code:
            raise  # the reader went away (| head): click stops quietly, exit status 1
        raise click.ClickException(f"cannot write to standard output: {error.strerror or error}")
    skips.summary()
    if exit_code:
        return Exit.of(next(decisions())["status"])
    return FAILURE if skips.count else OK


_COLUMNS = ("source", "verdict", "probability", "log-odds")
# Arrays of this many bytes or more are mapped apart and unmapped when freed (glibc's
# M_MMAP_THRESHOLD, fixed): by default glibc raises the threshold to the largest block freed,
# and from then on keeps the freed temporaries of scoring (a model's per-class rows, 1.4 MB
# each) in its heap. 20 Newsgroups classify: peak RSS 99 → 89 MB, no more system time (1 MiB:
# 85 MB, but +0.2-0.3 s system time for the mappings; 128 KiB: 84 MB, +0.4 s); train: 98-104
# → 96-98 MiB. Only training that streams (or counts on a cluster): the cross-validations of
# a fit map and fault in every fold's temporaries afresh (SpamAssassin, all 6,046 messages:
# 0.37-0.43 s of system time against 0.12-0.17, the whole training 1.44-1.48 s against
# 1.26-1.28, for 130 MiB peak against 136), and --tune's many (word pairs: 10 MB a class
# row; 20 Newsgroups: the complement weights took 6.0 s against 3.6).
_MMAP_THRESHOLD = 2 << 20


def _return_large_frees() -> None:
    """Have glibc return freed large blocks to the system (elsewhere: nothing to do)."""
    import ctypes
    try:
        ctypes.CDLL(None).mallopt(-3, _MMAP_THRESHOLD)  # -3: M_MMAP_THRESHOLD (malloc.h)
    except (OSError, AttributeError):  # not glibc
        pass


def _widths(decisions: Iterable[dict[str, Any]], header: bool) -> tuple[int, int, int, int]:
    """The widest source, verdict, probability and log-odds of a batch (and of the header)."""
    # The header's "log-odds" stands over the whole "log-odds +1.23" cell, not the number.
    widths = [*(len(name) for name in _COLUMNS[:3]), 0] if header else [0, 0, 0, 0]
    for d in decisions:
        cells = (d["source"], str(d["verdict"]), f"{d['probability']:.4f}", f"{d['log_odds']:+.2f}")
        widths = [max(width, len(cell)) for width, cell in zip(widths, cells)]
    source, verdict, probability, log_odds = widths
    return source, verdict, probability, log_odds


def _header_line(output: str, widths: Sequence[int]) -> str:
    """The first line of classify --header: the column names, aligned as the text lines."""
    if output == "tsv":
        return "\t".join(name.replace("-", "_") for name in _COLUMNS)
    source, verdict, probability, _ = widths
    return f"{'source':<{source}}  {'verdict':<{verdict}}  {'probability':>{probability}}  log-odds"


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
                               f"named {spam_class or 'spam'!r}"
                               + ("" if spam_class else " (or Junk, Junk E-mail, Bulk Mail)")
                               + f" (classes: {', '.join(classes)}); name it with --spam-class")
    return None


def _decide(classifier: TextClassifier, documents: Sequence, sources: Sequence[str],
            cutoffs, log_proba: np.ndarray | None = None) -> Callable[[], Iterator[dict[str, Any]]]:
    """Label, probabilities and log-odds of each document (from its log P(c|x) if given);
    with cutoffs, its spam status: made afresh each time they are iterated (once for the text
    columns' widths, once to print), never all held (20 Newsgroups' 7,532 decisions, each with
    20 probabilities: classify's peak RSS 78–79 → 74–75 MiB)."""
    if not documents:
        return lambda: iter(())
    classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
    if log_proba is None:
        log_proba = classifier.predict_log_proba(documents)
    threshold = classifier.__dict__.get("decision_threshold_")
    return lambda: (decide(classes, row.tolist(), source, cutoffs, threshold)
                    for source, row in zip(sources, log_proba))


def _explanation(explanation) -> dict[str, Any]:
    return {"label": str(explanation.label), "against": str(explanation.against),
            "log_odds": explanation.log_odds, "prior_log_odds": explanation.prior_log_odds,
            "absent_words": explanation.baseline, "other_terms": explanation.rest,
            "terms": [{"term": c.term, "count": c.count, "log_odds": c.log_odds}
                      for c in explanation.terms]}


@main.command("filter")
@_model_path_option()
@click.option("--spam-class",
              help=f"The class whose probability goes in the headers (default: "
                   f"{_LEARNED_ELSE_NAMED}).")
@_cutoff_options
@click.option("--timeout", type=FloatRange(min=0), default=FILTER_TIMEOUT,
              show_default=True, metavar="SECONDS",
              help="Pass the message through unchanged after this long (0: no limit).")
def filter_(model_path, spam_class, spam_cutoff, ham_cutoff, timeout) -> int:
    """Read a message on stdin, write it to stdout with X-TextNB-* headers added.

    Nothing else changes; X-TextNB-* fields already in the message (a sender
    may forge them) are replaced. On any failure, or after --timeout seconds,
    the message is written unchanged and the reason goes to stderr: mail is
    never lost. Exits 0 once the message is out; 75 (EX_TEMPFAIL) if it could
    not be written, so that procmail keeps it and an MTA retries.
    """
    raw = sys.stdin.buffer.read()
    try:
        if spam_cutoff is not None and ham_cutoff is not None and ham_cutoff > spam_cutoff:
            raise click.BadParameter(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")
        with budget(timeout):
            out = filter_message(raw, _resolve_model(model_path), spam_class, spam_cutoff,
                                 ham_cutoff)
    except BaseException as error:  # noqa: BLE001 — whatever happened, deliver the message
        click.echo(f"textnb filter: message passed through unchanged: {_reason(error, 'message')}",
                   err=True)
        out = raw
    return write_out(out, "textnb filter: cannot write the message")


def _pass_through(reason: str) -> int:
    """Copy stdin to stdout untouched and say why on stderr: the filter's last resort."""
    click.echo(reason, err=True)
    return write_out(sys.stdin.buffer.read(), "textnb filter: cannot write the message")


@main.command()
@click.option("--class", "label", required=True,
              help="The class the documents belong to (spam and ham: a mail model's spam class "
                   "and its other class, whatever their names).")
@click.option("--unlearn", is_flag=True, help="Remove documents learned before as --class.")
@click.option("--new-class", is_flag=True,
              help="--class may be a class the model does not have yet, or the model may not "
                   "exist yet (it is started with default settings).")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@_model_path_option()
def learn(label, unlearn, new_class, paths, model_path) -> int:
    """Add documents to a model in place (train on error), or --unlearn them.

    Safe to run from several deliveries at once: a lock file serialises updates and the
    model is replaced atomically. --class spam and ham name a mail model's spam class and
    its other class; any other --class must be one of the model's classes (a typo such as
    Spam for spam would add a class, and a model of three classes has no spam status), and
    the model must exist, unless --new-class is given.
    """
    skips = _Skips()
    # Read as they are learned, never all held (a folder with attachments: 518 MB): the first
    # before the lock, so that a path with none is an error at once.
    documents = (raw for _, raw in read_raw(paths, on_error=skips))
    first = next(documents, None)
    if first is None:
        raise DocumentError("no readable documents to learn")
    documents = chain([first], documents)
    path = _resolve_model(model_path)
    if not new_class and not path.exists():  # before the lock, which would leave a file
        raise ModelFileError(f"model file '{path}' does not exist: train one (textnb train), "
                             f"or start one with learn --new-class")
    with locked(path):
        if path.exists() or unlearn or not new_class:
            classifier = load_model(path)
            label = _mail_class(classifier, label)
            _check_class(classifier, label, new_class or unlearn)
        else:
            classifier = TextClassifier()
        if unlearn:  # unlearn holds the documents: each must have been learned
            documents = list(documents)
            labels = [label] * len(documents)
            classifier.unlearn(documents, labels)
        else:  # the labels filled as the documents are read, as partial_fit allows
            labels = []
            classifier.partial_fit((labels.append(label) or raw for raw in documents), labels)
        save_model(classifier, path)
    skips.summary()
    verb = "unlearned" if unlearn else "learned"
    if len(classifier.classes_) == 1:
        click.echo(f"textnb: the model has one class, {label}: learn another one "
                   f"(--new-class) before classifying", err=True)
    click.echo(f"{verb} {len(labels)} document{'s' if len(labels) != 1 else ''} "
               f"as {label} -> {path}")
    return FAILURE if skips.count else OK


def _mail_class(classifier: TextClassifier, label: str) -> str:
    """``label``, or for "spam" and "ham" that a two-class mail model has not, its spam class
    (the one its cutoffs were learned for, or named as a spam folder: Junk, .Junk) and its
    other class, as bogofilter's -s and -n name them whatever the folders are called."""
    classes = [str(c) for c in classifier.classes_]
    if label not in ("spam", "ham") or label in classes or len(classes) != 2:
        return label
    spam = (classifier.cutoffs_ or {}).get("spam_class") or spam_class_of(classes)
    if spam not in classes:
        return label
    return spam if label == "spam" else classes[1 - classes.index(spam)]


def _check_class(classifier: TextClassifier, label: str, allowed: bool) -> None:
    """A class the model does not have is an error unless allowed (learn --new-class); a
    name that differs only in case is named in the message."""
    classes = [str(c) for c in classifier.classes_]
    if label in classes or allowed:
        return
    alike = [c for c in classes if c.casefold() == label.casefold()]
    hint = f"did you mean {alike[0]!r}? " if alike else ""
    raise DocumentError(f"class {label!r} is not in the model (classes: {', '.join(classes)}); "
                        f"{hint}--new-class adds it")


@main.command()
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Class NAME is on PATH (repeatable).")
@_model_path_option()
@click.option("--cv", type=click.IntRange(min=2),
              help="K-fold cross-validation of training with the training options given, "
                   "cutoffs learned per fold as train learns them; no model file (-m).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the --cv folds.")
@click.option("--spam-class",
              help=f"The positive class of a two-class evaluation (default: "
                   f"{_LEARNED_ELSE_NAMED}).")
@click.option("--sweep", is_flag=True,
              help="Two classes: FPR, FNR and unsure for a range of spam and ham cutoffs.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="Write ROC, precision-recall, confusion and score plots "
                                  "(PNG and SVG) into DIR; needs pip install 'textnb[plot]'.")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--labels", "label_file", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="A multi-label model's test documents: each line a path "
                                   "and its labels (as train --labels).")
@_training_options
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def evaluate(dirs, labels, model_path, cv, seed, spam_class, sweep, plot_dir, output, quiet,
             label_file, **options) -> int:
    """Accuracy, per-class precision/recall/F1/support with macro and weighted averages,
    and the confusion matrix, on labelled directories; for two classes also the false
    positive/negative rates, ROC AUC and, with cutoffs, the unsure rate.

    Either a trained model (-m) is evaluated, or --cv trains one per fold with the
    training options given (which mean nothing to a trained model: refused without --cv).
    """
    from ..evaluation.metrics import one_vs_rest_log_odds, summary, sweep as sweep_rates
    given = [name for name, value in options.items() if value not in (None, ()) and name != "jobs"]
    if cv and model_path is not None:
        raise click.UsageError("--cv trains a model per fold, -m names a trained one: "
                               "give one or the other")
    if given and not cv:
        raise click.UsageError(f"--{given[0].replace('_', '-')} is a training option: it takes "
                               f"effect with --cv (a trained model keeps its own)")
    if label_file is not None or (not cv and _is_multilabel(model_path)):
        return _multilabel_evaluate(label_file, dirs, labels, model_path, cv, spam_class,
                                    sweep, plot_dir, output)
    if plot_dir is not None:
        from ..evaluation.plots import require
        require()  # before reading anything
    sources = _labelled_sources(dirs, labels)
    skips = _Skips()
    if cv:
        texts, y = _read_labelled(sources, skips, quiet)
        y = np.array(y)
        classes, log_proba, cutoffs, threshold, folds = _cross_validate(texts, y, cv, seed,
                                                                        spam_class, options)
    else:
        clf = _load(model_path)
        if options["jobs"] is not None:
            clf.set_params(n_jobs=options["jobs"])
        classes = np.asarray(clf.classes_).astype(str)
        unknown = sorted({label for label, _ in sources} - set(classes.tolist()))
        if unknown:
            raise DocumentError(f"class {unknown[0]!r} is not in the model "
                                f"(classes: {', '.join(classes)})")
        # Scored as they are read, never all held (a Maildir with attachments: 1 GB).
        texts, y = _stream_labelled(sources, skips, quiet)
        log_proba = clf.predict_log_proba(texts)
        _check_read(sources, y)
        y = np.array(y)
        found = spam_cutoffs(classes, clf.cutoffs_, spam_class)
        cutoffs = found and (found[0], np.full(len(y), found[1]), np.full(len(y), found[2]),
                             bool(clf.cutoffs_) and found[0] == clf.cutoffs_["spam_class"])
        threshold = clf.__dict__.get("decision_threshold_")
        folds = None
    if len(classes) == 2:
        positive = (cutoffs[0] if cutoffs else spam_class if spam_class in classes
                    else classes[1])
    else:
        positive = None
    result = summary(y, log_proba, classes, positive, cutoffs and cutoffs[1:3], threshold)
    if cutoffs:
        result["cutoffs"] = {"spam": float(np.mean(cutoffs[1])), "ham": float(np.mean(cutoffs[2])),
                             "learned": cutoffs[3]}
    if folds is not None:
        result["folds"] = _fold_results(y, log_proba, classes, positive, cutoffs, threshold,
                                        folds, cv)
    log_odds = one_vs_rest_log_odds(log_proba)
    if sweep:
        if positive is None:
            raise click.UsageError("--sweep needs two classes")
        held = result.get("cutoffs") or {"spam": logit(SPAM_CUTOFF), "ham": logit(HAM_CUTOFF)}
        p = int(np.flatnonzero(classes == positive)[0])
        result["sweep"] = sweep_rates(log_odds[:, p], y == positive, held["spam"], held["ham"])
    if plot_dir is not None:
        from ..evaluation.plots import write_plots
        held = result.get("cutoffs")
        result["plots"] = [str(path) for path in write_plots(
            plot_dir, classes, y, log_odds, np.array(result["confusion"]), positive,
            (held["spam"], held["ham"]) if held else None)]
    skips.summary()
    click.echo(json.dumps(result) if output == "json" else _report_text(result))
    return OK


def _multilabel_evaluate(label_file, dirs, labels, model_path, cv, spam_class, sweep, plot_dir,
                         output) -> int:
    """evaluate of a multi-label model: micro/macro F1, Hamming loss (textnb.cli.multilabel)."""
    from . import multilabel as multilabelcli
    if cv or spam_class or sweep or plot_dir is not None:
        raise click.UsageError("a multi-label evaluation takes a model (-m) and labelled "
                               "documents; --cv, --spam-class, --sweep and --plot do not apply")
    if not _is_multilabel(model_path):
        raise click.UsageError("--labels evaluates a multi-label model (train --labels); "
                               "this model has one label per document")
    sources = _labelled_sources(dirs, labels) if dirs or labels else []
    skips = _Skips()
    texts, label_sets = multilabelcli.read_documents(label_file, sources, skips)
    skips.summary()
    multilabelcli.evaluate(_resolve_model(model_path), texts, label_sets, output)
    return OK


def _cross_validate(texts: list, y: np.ndarray, k: int, seed: int, spam_class: str | None,
                    options: dict[str, Any]):
    """(classes, out-of-fold log P(c|x), cutoffs, decision threshold, fold of each document):
    each fold's model trained on the other folds as `train` would train it, its cutoffs and
    threshold too. cutoffs: None, or (spam class, spam cutoff per document, ham cutoff per
    document, learned by every fold); threshold: each document's fold's (NaN where none).
    Copies of a file (the same bytes) share a fold: no model scores a document it learned."""
    from ..folds import stratified_folds
    if len(set(y.tolist())) < 2:
        raise click.UsageError("cross-validation needs at least two classes")
    folds = stratified_folds(y, k, seed, groups=np.array([hash(text) for text in texts]))
    classes = np.unique(y).astype(str)
    log_proba = np.zeros((len(y), len(classes)))
    high, low, threshold = np.zeros(len(y)), np.zeros(len(y)), np.full(len(y), np.nan)
    found, learned = None, True
    for fold in range(k):
        test = folds == fold
        clf = _classifier(labels=y.tolist(), **options)
        clf.set_params(spam_class=spam_class or spam_class_of(classes) or "spam")
        clf.fit([t for t, held_out in zip(texts, test) if not held_out], y[~test])
        log_proba[test] = clf.predict_log_proba([t for t, held_out in zip(texts, test) if held_out])
        found = spam_cutoffs(classes, clf.cutoffs_, spam_class)
        learned = learned and bool(clf.cutoffs_)
        if found:
            high[test], low[test] = found[1], found[2]
        if clf.decision_threshold_ is not None:
            threshold[test] = clf.decision_threshold_
    return classes, log_proba, found and (found[0], high, low, learned), threshold, folds


def _fold_results(y, log_proba, classes, positive, cutoffs, threshold, folds,
                  k) -> dict[str, list[float]]:
    """Each fold's accuracy, macro F1 and, for two classes, ROC AUC and the rates."""
    from ..evaluation.metrics import summary
    results: dict[str, list[float]] = {}
    for fold in range(k):
        test = folds == fold
        r = summary(y[test], log_proba[test], classes, positive,
                    cutoffs and (cutoffs[1][test], cutoffs[2][test]), threshold[test])
        values = {"accuracy": r["accuracy"], "macro_f1": r["macro"]["f1"]}
        if positive is not None:
            values.update(roc_auc=r["roc_auc"], false_positive_rate=r["false_positive_rate"],
                          false_negative_rate=r["false_negative_rate"])
        if "at_cutoffs" in r:
            values.update({f"{key}_at_cutoffs": r["at_cutoffs"][key]
                           for key in ("fpr", "fnr", "unsure")})
        for key, value in values.items():
            results.setdefault(key, []).append(value)
    return results


# evaluate's confusion matrix is headed by the class names while they fit in this many
# characters, by numbers beyond (20 Newsgroups' names take 447).
_WIDE = 100


def _report_text(r: dict[str, Any]) -> str:
    """evaluate's report: aligned tables, ± the standard deviation over folds with --cv."""
    from ..evaluation.metrics import mean_sd
    folds = r.get("folds", {})

    def spread(key: str, value: float, style: str = ".4f") -> str:
        if key not in folds or any(v is None for v in folds[key]):
            return f"{value:{style}}"
        _, sd = mean_sd(folds[key])
        return f"{value:{style}} ± {sd:{style}}"

    k = len(folds.get("accuracy", ()))
    width = max(len("weighted avg"), *(len(c) for c in r["classes"]))
    lines = [f"documents  {r['documents']}" + (f" ({k}-fold cross-validation; ± is the standard "
                                                f"deviation over folds)" if k else ""),
             f"accuracy   {spread('accuracy', r['accuracy'])}", "",
             f"{'class':<{width}}  precision  recall      f1  support"]
    rows = list(zip(r["classes"], r["precision"], r["recall"], r["f1"], r["support"]))
    rows += [(f"{kind} avg", r[kind]["precision"], r[kind]["recall"], r[kind]["f1"],
              r["documents"]) for kind in ("macro", "weighted")]
    for i, (name, p, rc, f, n) in enumerate(rows):
        if i == len(r["classes"]):
            lines.append("")
        lines.append(f"{name:<{width}}  {p:9.4f}  {rc:6.4f}  {f:6.4f}  {n:7d}")
    if k:
        lines.append(f"{'macro F1 over folds':<{width}}  {spread('macro_f1', r['macro']['f1'])}")
    cells = [[str(n) for n in row] for row in r["confusion"]]
    heads = list(r["classes"])
    title = "confusion (rows: true, columns: predicted)"
    if sum(len(c) + 1 for c in heads) > _WIDE:  # the names would not fit: number the columns
        heads = [str(i) for i in range(1, len(heads) + 1)]
        title = "confusion (rows: true, columns: predicted, numbered as the rows)"
    rows = [f"{i:>{len(heads[-1])}} {c:<{width}}" if heads[0] == "1" else f"{c:<{width}}"
            for i, c in enumerate(r["classes"], 1)]
    widths = [max(len(h), *(len(row[j]) for row in cells)) for j, h in enumerate(heads)]
    lines += ["", title,
              " " * (len(rows[0]) + 2) + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths))]
    for label, row in zip(rows, cells):
        lines.append(f"{label}  " + " ".join(f"{n:>{w}}" for n, w in zip(row, widths)))
    if "positive_class" in r:
        auc = "n/a" if r["roc_auc"] is None else spread("roc_auc", r["roc_auc"], ".6f")
        lines += ["", f"positive class       {r['positive_class']} (rates at the most probable "
                      f"class)",
                  f"false positive rate  {spread('false_positive_rate', r['false_positive_rate'], '.4%')}",
                  f"false negative rate  {spread('false_negative_rate', r['false_negative_rate'], '.4%')}",
                  f"ROC AUC              {auc}"]
    if "at_cutoffs" in r:
        c, a = r["cutoffs"], r["at_cutoffs"]
        how = ("learned per fold, mean" if k else "learned") if c["learned"] else "defaults"
        lines += ["", f"at the cutoffs ({how}: spam at log-odds >= {c['spam']:+.3f}, "
                      f"ham <= {c['ham']:+.3f})",
                  f"false positive rate  {spread('fpr_at_cutoffs', a['fpr'], '.4%')}",
                  f"false negative rate  {spread('fnr_at_cutoffs', a['fnr'], '.4%')}",
                  f"unsure               {spread('unsure_at_cutoffs', a['unsure'], '.4%')} "
                  f"(spam {a['spam_unsure']:.2%}, ham {a['ham_unsure']:.2%})",
                  f"spam not caught      {a['spam_not_caught']:.4%}"]
    if "sweep" in r:
        held = r.get("cutoffs") or {}
        for name, other in (("spam", "ham"), ("ham", "spam")):
            fixed = (f"{held[other]:+.3f}" if other in held else "the default")
            lines += ["", f"{name} cutoff sweep ({other} cutoff held at {fixed}, moved "
                          f"to the {name} cutoff past it)",
                      f"{'log-odds':>10}  {'FPR':>8}  {'FNR':>8}  {'unsure':>8}  {'not caught':>10}"]
            lines += [f"{row['cutoff']:>+10.3f}  {row['fpr']:>8.3%}  {row['fnr']:>8.3%}  "
                      f"{row['unsure']:>8.3%}  {row['spam_not_caught']:>10.3%}"
                      for row in r["sweep"][f"{name}_cutoff"]]
    if "plots" in r:
        directory = os.path.dirname(r["plots"][0])
        names = sorted({Path(p).stem for p in r["plots"]})
        lines += ["", f"plots      {', '.join(names)} (PNG and SVG) -> {directory}"]
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
    if _is_multilabel(path):
        from . import multilabel as multilabelcli
        multilabelcli.info(path, output)
        return OK
    classifier = load_model(path)
    model = classifier.model_
    data = {"model": str(path),
            "classes": {str(c): int(round(n)) for c, n in zip(model.classes_, model.class_count_)},
            "terms": len(classifier.vocabulary_),
            # The n-grams counted, where the setting (None) left them to the documents.
            "parameters": {**classifier.get_params(), "ngram_range": classifier._ngrams()},
            "cutoffs": classifier.cutoffs_, "tuning": getattr(classifier, "tuning_", None),
            "decision_threshold": getattr(classifier, "decision_threshold_", None),
            "informative_terms": ({str(c): terms for c, terms in
                                   classifier.informative_terms(top).items()}
                                  if len(model.classes_) > 1 else {})}
    # Trained on error, the class counts are weights (each learned document's share of the
    # walks that learned it), not numbers of documents: say both.
    weights = getattr(classifier, "digest_weights_", None)
    if weights is not None and (weights != 1).any():
        learned = classifier.digest_labels_[weights > 0]
        data["learned_on_error"] = {str(c): int((learned == c).sum()) for c in model.classes_}
        classes = [f"{c} ({_count(data['learned_on_error'][str(c)], 'document')} learned on "
                   f"error, weight {n:.4g})" for c, n in zip(model.classes_, model.class_count_)]
    else:
        classes = [f"{c} ({_count(n, 'document')})" for c, n in data["classes"].items()]
    if output == "json":
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
        return OK
    lines = [f"model       {data['model']}",
             "classes     " + ", ".join(classes),
             f"terms       {data['terms']}" + (
                 f" hashed columns of 2**{classifier.hash_bits} (the terms are not kept)"
                 if classifier.hash_bits is not None else ""),
             *([_cutoffs_line(data["cutoffs"])] if data["cutoffs"] else
               [f"cutoffs     none learned: P(spam) >= {SPAM_CUTOFF} spam, <= {HAM_CUTOFF} ham"]
               if len(data["classes"]) == 2 else []),
             *([_threshold_line(classifier)
                + (" (classify decides mail by the cutoffs)" if data["cutoffs"] else "")]
               if data["decision_threshold"] is not None else []),
             *([f"tuned       {data['tuning']['folds']}-fold CV {data['tuning']['metric']} "
                f"{data['tuning']['best']['mean']:.4f} ± {data['tuning']['best']['sd']:.4f}, "
                f"chosen of {data['tuning']['candidates']} settings"] if data["tuning"] else []),
             "parameters  " + ", ".join(f"{k}={v}" for k, v in data["parameters"].items()
                                        if k != "stop_words" or isinstance(v, str))]
    for c, terms in data["informative_terms"].items():
        lines.append(f"\nmost informative for {c} (log-likelihood ratio):")
        lines += [f"  {term[:40]:<40} {ratio:+.3f}" for term, ratio in terms]
    click.echo("\n".join(lines))
    return OK


main.add_command(table)
from .dump import dump, explain, load, merge  # noqa: E402 — commands of their own module
for _command in (dump, load, merge, explain):
    main.add_command(_command)
main.add_command(serve)
from .cluster import cluster, em_setup  # noqa: E402 — EM commands of their own module
main.add_command(cluster)
from .imap import imap  # noqa: E402 — textnb imap, commands of their own module
main.add_command(imap)
