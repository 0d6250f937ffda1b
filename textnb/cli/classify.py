"""textnb classify, textnb filter (the full command: its fast path is :mod:`textnb.cli.fast`) and
textnb learn."""

from __future__ import annotations

import sys
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import click
import numpy as np

from ..classifier import TextClassifier
from ..decision.rules import (HAM_CUTOFF, SPAM_CUTOFF, Exit, decide, line, spam_class_of,
                              spam_cutoffs)
from ..documents.sources import read_raw
from ..errors import DocumentError, ModelFileError, describe
from ..heap import return_large_frees
from ..mail.filter import filter_message, read_head
from ..store import journal
from ..store.container import locked
from ..store.learning import Update
from ..store.text_model import load_for_update, save_model
from .common import FAILURE, OK, Skips
from .fast import FILTER_TIMEOUT, budget, write_out
from .options import (FloatRange, LEARNED_ELSE_NAMED, cutoff_options, load_classifier,
                      model_option, resolve_model)
from .output import column_widths, explanation_record, header_line


def is_multilabel(model_path: Path | None) -> bool:
    """Whether the model file declares itself a multi-label one (meta.json's kind)."""
    from ..store.multilabel_model import KIND, model_kind
    return model_kind(resolve_model(model_path)) == KIND


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@model_option()
@click.option("--format", "output", type=click.Choice(["text", "tsv", "json"]), default="text",
              show_default=True, help="Output: aligned text, tab-separated or JSON lines.")
@click.option("--header", is_flag=True, help="First a line naming the columns (text, tsv).")
@click.option("--explain", is_flag=True, help="Show the terms that decided each document.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Terms shown by --explain.")
@click.option("--spam-class",
              help="The positive class of a two-class model (for cutoffs and exit codes; "
                   f"default: {LEARNED_ELSE_NAMED}).")
@click.option("--threshold", type=FloatRange(0, 1),
              help="P(spam) at or above which a message is spam (no unsure band).")
@cutoff_options
@click.option("--exit-code", is_flag=True,
              help="For one document: exit 0 spam, 1 ham, 2 unsure, 3 error (as bogofilter).")
@click.option("--timeout", type=FloatRange(min=0), default=0, metavar="SECONDS",
              help="Give up with an error after this long (default 0: no limit).")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Read and score on the Dask cluster whose scheduler is ADDRESS "
                   "(tcp://HOST:8786); every worker must see the PATHS under the same paths.")
def classify(paths, model_path, output, header, explain, top, spam_class, threshold, spam_cutoff,
             ham_cutoff, exit_code, timeout, dask_address) -> int:
    """Label files (or standard input, '-'): source, verdict, probability, log-odds.

    A mail model (two classes, one of them spam) gives each message's verdict
    (spam, ham or unsure by the cutoffs), its spam-probability P(spam|x) and its
    spam-log-odds ln P(spam|x) - ln P(ham|x), whatever the verdict, so that the
    lines sort by them; any other model the label, its probability and its
    log-odds ln P(label|x) - ln P(runner-up|x). Probabilities saturate at 0 or 1
    on long documents; the log-odds keep ranking them. Each document is read to
    its first 1 MiB, as train reads them.
    """
    paths = paths or ("-",)
    if header and output == "json":
        raise click.UsageError("--header is for --format text or tsv; JSON lines name their keys")
    skips = Skips()
    if is_multilabel(model_path):
        if explain or exit_code or threshold is not None or spam_cutoff is not None \
                or ham_cutoff is not None:
            raise click.UsageError("a multi-label model decides by its own thresholds: "
                                   "--explain, --exit-code and cutoffs do not apply")
        from . import multilabel as multilabelcli
        with budget(timeout):
            read = list(read_raw(paths, on_error=skips))
            multilabelcli.classify(resolve_model(model_path), [raw for _, raw in read],
                                   [source for source, _ in read], output, header)
        skips.summary()
        return FAILURE if skips.count else OK
    with budget(timeout):
        return_large_frees()
        classifier = load_classifier(model_path)
        cutoffs = cutoffs_of(classifier, spam_class, threshold, spam_cutoff, ham_cutoff, exit_code)
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
        decisions = decisions_of(classifier, documents, sources, cutoffs, log_proba)
        if explain:
            explained = list(decisions())
            for document, decision in zip(documents, explained):
                # Mail as spam over ham (whatever the verdict): the spam log-odds explained.
                why = classifier.explain(document, top=top,
                                         label=cutoffs[0] if cutoffs else decision["label"])
                decision["explanation"] = explanation_record(why)
            decisions = lambda: iter(explained)  # noqa: E731
    widths = column_widths(decisions(), header) if output == "text" else (0, 0, 0, 0)
    try:
        if header:
            click.echo(header_line(output, widths, cutoffs is not None))
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


def cutoffs_of(classifier: TextClassifier, spam_class: str | None, threshold, spam_cutoff,
             ham_cutoff, required: bool) -> tuple[str, float, float] | None:
    """(spam class, spam cutoff, ham cutoff) on the log-odds for a two-class model with a spam
    class, else None: the options given, else the model's learned cutoffs, else the defaults."""
    classes = [str(c) for c in classifier.classes_]
    if spam_cutoff is not None and ham_cutoff is not None and ham_cutoff > spam_cutoff:
        raise click.BadParameter(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")
    cutoffs = spam_cutoffs(classes, classifier.cutoffs_, spam_class, spam_cutoff, ham_cutoff,
                           threshold, learned_errors=classifier.learned_errors_)
    if cutoffs:
        return cutoffs
    if required or threshold is not None:
        raise click.UsageError(f"cutoffs and exit codes need a two-class model with a class "
                               f"named {spam_class or 'spam'!r}"
                               + ("" if spam_class else " (or Junk, Junk E-mail, Bulk Mail)")
                               + f" (classes: {', '.join(classes)}); name it with --spam-class")
    return None


def decisions_of(classifier: TextClassifier, documents: Sequence, sources: Sequence[str],
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


@click.command("filter")
@model_option()
@click.option("--spam-class",
              help=f"The class whose probability goes in the headers (default: "
                   f"{LEARNED_ELSE_NAMED}).")
@cutoff_options
@click.option("--timeout", type=FloatRange(min=0), default=FILTER_TIMEOUT,
              show_default=True, metavar="SECONDS",
              help="Pass the message through unchanged after this long (0: no limit).")
def filter_(model_path, spam_class, spam_cutoff, ham_cutoff, timeout) -> int:
    """Read a message on stdin, write it to stdout with X-TextNB-* headers added.

    Nothing else changes; X-TextNB-* fields already in the message (a sender
    may forge them) are replaced. On any failure, or after --timeout seconds,
    the message is written unchanged and the reason goes to stderr: mail is
    never lost. Exits 0 once the message is out; 75 (EX_TEMPFAIL) if it could
    not be written, so that procmail keeps it and an MTA retries. A message is
    classified by its first 1 MiB and the rest copied through as it is read, so
    that memory stays bounded whatever its size.
    """
    # Its first MiB classified and rewritten, its rest copied after it (never held).
    stdin = sys.stdin.buffer
    head, whole = read_head(stdin)
    try:
        if spam_cutoff is not None and ham_cutoff is not None and ham_cutoff > spam_cutoff:
            raise click.BadParameter(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")
        with budget(timeout):
            out = filter_message(head, resolve_model(model_path), spam_class, spam_cutoff,
                                 ham_cutoff, whole=whole)
    except BaseException as error:  # noqa: BLE001 — whatever happened, deliver the message
        click.echo(f"textnb filter: message passed through unchanged: {describe(error, 'message')}",
                   err=True)
        out = head
    return write_out(out, "textnb filter: cannot write the message", rest=stdin)


def pass_through(reason: str) -> int:
    """Copy stdin to stdout untouched and say why on stderr: the filter's last resort."""
    click.echo(reason, err=True)
    return write_out(b"", "textnb filter: cannot write the message", rest=sys.stdin.buffer)


@click.command()
@click.option("--class", "label", required=True,
              help="The class the documents belong to (spam and ham: a mail model's spam class "
                   "and its other class, whatever their names).")
@click.option("--unlearn", is_flag=True, help="Remove documents learned before as --class.")
@click.option("--new-class", is_flag=True,
              help="--class may be a class the model does not have yet, or the model may not "
                   "exist yet (it is started as a mail model when --class is spam or ham).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but warnings and errors.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@model_option()
def learn(label, unlearn, new_class, quiet, paths, model_path) -> int:
    """Add documents to a model in place (train on error), or --unlearn them.

    A document learned as --class already is not counted again (as bogofilter registers a
    message once); one learned as the other class of a spam model stays learned as that
    too (unlearn it first). Each run is one update of the model's journal (MODEL.journal,
    folded into the model when it grows), so a message costs a few kilobytes, not the whole
    model. Safe to run from several deliveries at once: MODEL.lock serialises updates (a
    flock; the file stays, locking nothing once its holder exits).

    --class spam and ham name a mail model's spam class and its other class; any other
    --class must be one of the model's classes (a typo such as Spam for spam would add a
    class, and a model of three classes has no spam status), and the model must exist,
    unless --new-class is given.
    """
    skips = Skips()
    # Read as they are learned, never all held (a folder with attachments: 518 MB): the first
    # before the lock, so that a path with none is an error at once.
    documents = (raw for _, raw in read_raw(paths, on_error=skips))
    first = next(documents, None)
    if first is None:
        raise DocumentError("no readable documents to learn")
    documents = chain([first], documents)
    path = resolve_model(model_path)
    if not new_class and not path.exists():  # before the lock, which would leave a file
        raise ModelFileError(f"model file '{path}' does not exist: train one (textnb train), "
                             f"or start one with learn --new-class")
    done = again = 0
    due = False
    with locked(path):
        if path.exists():
            update = Update(path, *load_for_update(path))
            classifier = update.classifier
            label = _mail_class(classifier, label)
            _check_class(classifier, label, new_class or unlearn)
            classes = len(classifier.classes_)
            for raw in documents:
                if unlearn and not update.forget(raw, [label]):
                    raise DocumentError(f"cannot unlearn a document as {label!r}: it was "
                                        f"never learned as {label!r}")
                changed = unlearn or update.learn(raw, label)
                done, again = done + changed, again + (not changed)
            if len(classifier.classes_) == 2 > classes:
                _became_mail(classifier)
            due = update.write()  # one journal commit, or the whole model: nothing if it failed
        else:  # --new-class: a model started from these documents; of spam or ham, a mail one
            spam = spam_class_of([label]) or ("spam" if label == "ham" else None)
            # Mail's tokens whichever class comes first ("auto" reads ham alone as other text).
            classifier = TextClassifier(spam_class=spam, stop_words="auto" if spam in (None, label)
                                        else "english")
            labels: list = []
            classifier.partial_fit((labels.append(label) or raw for raw in documents), labels)
            save_model(classifier, path)
            done = len(labels)
    if due:  # the journal folded into the model by a process of its own, after the lock
        journal.compact_detached(path)
    skips.summary()
    verb = "unlearned" if unlearn else "learned"
    if len(classifier.classes_) == 1:
        click.echo(f"textnb: the model has one class, {label}: learn another one "
                   f"(--new-class) before classifying", err=True)
    elif (new_class and classifier.spam_class and not classifier.cutoffs_
          and len(classifier.classes_) == 2 and not quiet):
        click.echo(f"textnb: {path} decides at bogofilter's cutoffs (P(spam) {SPAM_CUTOFF} and "
                   f"{HAM_CUTOFF}) until `textnb tune-cutoffs -m {path} SPAM HAM` learns its "
                   f"own from your mail, as train does", err=True)
    if not quiet:
        already = f" ({again} learned as {label} already, not counted again)" if again else ""
        click.echo(f"{verb} {done} document{'s' if done != 1 else ''} "
                   f"as {label} -> {path}{already}")
    return FAILURE if skips.count else OK


def _became_mail(classifier: TextClassifier) -> None:
    """A model that --new-class brought to two classes, one of them a spam class (by its
    name: spam, Junk, ...), is a mail model: its spam_class is set."""
    spam = spam_class_of(classifier.classes_)
    if spam is not None and classifier.spam_class is None:
        classifier.spam_class = spam


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
