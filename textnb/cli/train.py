"""textnb train and textnb tune-cutoffs."""

from __future__ import annotations

import click

from .. import defaults, training as plan
from ..classifier import TextClassifier
from ..decision.rules import spam_class_of
from ..documents.corpus import labelled_sources
from ..documents.sources import iter_files
from ..errors import DocumentError
from ..heap import return_large_frees
from ..nb.on_error import MARGIN, MAX_PASSES
from ..settings import choices
from ..store.container import locked
from ..store.text_model import load_model, save_model
from ..training import CUTOFFS_MAX_BYTES, CUTOFFS_MAX_MESSAGES, SAMPLE, THRESHOLD_MAX_BYTES
from .cluster import em_choice, em_setup
from ..progress import phase
from .common import OK, Cuts, Skips, echo_suspects, note_build_once, reading, shows_progress
from .options import (FloatRange, classifier_of, cutoff_learning_options,
                      decision_threshold_setting, model_option, resolve_model, settings_of,
                      training_options)
from .output import cutoffs_line, on_error_line, threshold_line, tuning_table


@click.command()
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Train class NAME on PATH (repeatable).")
@model_option()
@training_options
@cutoff_learning_options
@click.option("--training", type=click.Choice(choices("training")), default="auto",
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
              help="Unlabeled documents to learn from by EM, if cross-validation says it helps "
                   "(repeatable).")
@click.option("--em-weight", type=FloatRange(min=0),
              help="With --unlabeled: λ, the weight of an unlabeled document (default: λ and "
                   "α chosen by cross-validation on the labeled documents, plain training "
                   "unless EM wins).")
@click.option("--em-iterations", type=click.IntRange(min=1), help="With --unlabeled: at most N.")
@click.option("--labels", "label_file", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="Multi-label training: each line a document path (relative "
                                   "to FILE's directory) and its labels (Reuters' cats.txt).")
@click.option("--dask", "dask_address", metavar="ADDRESS",
              help="Read and count on the Dask cluster whose scheduler is ADDRESS "
                   "(tcp://HOST:8786); every worker must see the DIRS under the same paths.")
@click.option("-q", "--quiet", is_flag=True, help="No progress line or summary.")
@shows_progress
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

    Each document is read to its first 1 MiB, cut at a line end (beyond lie
    attachments, which give no words); the summary counts the documents cut.

    With --labels FILE, a multi-label model: one-vs-rest Naive Bayes, a threshold per
    label by cross-validation; DIRS then add their documents under their directory's
    class, and a document found in several places gets all their labels.
    """
    if options.get("hash_bits") is not None and (label_file is not None or tune):
        raise click.UsageError("--hash-bits does not combine with --labels or --tune")
    if label_file is not None:
        if options.get("unseen") is not None:
            raise click.UsageError("--unseen does not apply to a multi-label model (--labels)")
        if dask_address:
            raise click.UsageError("--dask does not train multi-label models (--labels)")
        return _multilabel_train(label_file, dirs, labels, model_path, quiet, tune, unlabeled,
                                 options)
    sources = labelled_sources(dirs, labels)
    if len({label for label, _ in sources}) < 2:
        raise click.UsageError("need at least two classes to train, e.g. textnb train spam/ ham/")
    if not quiet:
        note_build_once()
    skips, cuts = Skips(), Cuts()
    if dask_address and (tune or unlabeled):
        raise click.UsageError("--dask cannot be combined with --tune or --unlabeled")
    classes = [label for label, _ in sources]  # every one has documents, or it is an error
    spam_class = spam_class or spam_class_of(classes) or "spam"
    classifier = classifier_of(labels=classes, **options)
    classifier.set_params(spam_class=spam_class, target_fpr=target_fpr, target_fnr=target_fnr,
                          target_unsure=target_unsure, keep_suspects=keep_suspects,
                          training=training, margin=margin, max_passes=passes,
                          decision_threshold=decision_threshold_setting(decision_threshold))
    # Two classes too large to hold: every document counted as it is read, the threshold (and
    # mail's cutoffs) learned on a sample of them, read again; mail counts words only (their
    # pairs could outgrow memory; other texts count pairs only up to PAIRS_DOCUMENTS).
    mail = classifier.learns_cutoffs(classes)
    sampled = (len(set(classes)) == 2 and (mail or classifier.decision_threshold == "auto")
               and training != "on-error" and not (dask_address or tune or unlabeled)
               and plan.streams(classifier, classes, sampled=True)
               and plan.too_large(plan.input_size(sources), mail))
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
        pairs = defaults.may_pair(classifier, classes, files)
        sample = plan.first_documents(sources) if pairs else []
        classifier.set_params(ngram_range=classifier.default_ngram_range(
            classes, sample, documents=files))
    stream = not (dask_address or tune or unlabeled) and plan.streams(classifier, classes, sampled)
    if stream or dask_address:
        return_large_frees()
    # Each document's file, to name the ones left out as mis-sorted (with learned cutoffs only).
    where: list[str] | None = [] if classifier.learns_cutoffs(classes) else None
    texts, y = ((None, classes) if dask_address or stream
                else plan.stream_labelled(sources, skips, reading(quiet), where, cuts))
    em = em_setup(classifier, options, unlabeled, em_weight, em_iterations,
                  training == "on-error", quiet)
    tuned = None
    if tune:
        if em:
            raise click.UsageError("--tune and --unlabeled cannot be combined")
        from ..evaluation.tuning import tune as cross_validate
        texts = list(texts)  # read once for every fold
        plan.check_read(sources, y)
        with phase(f"tuning: {tune_folds}-fold cross-validation of the settings"):
            tuned = cross_validate(classifier, texts, y, folds=tune_folds)
        classifier.set_params(**tuned.settings)
        if not quiet:
            click.echo(tuning_table(tuned))
    # The stop words by the classes, known here (fit sees the labels only as it reads), and
    # for other texts than mail, by how long the first documents are.
    if not sample and defaults.stop_words_by_length(classifier, classes):
        sample = plan.first_documents(sources)
    classifier.set_params(stop_words=classifier.default_stop_words(classes, sample))
    if dask_address:
        from ..distributed import connect, fit_files
        files = [(label, found) for label, path in sources for found in iter_files(path, skips)]
        with connect(dask_address) as client:
            fit_files(classifier, files, client, on_error=skips)
    elif stream:
        learned = plan.train_streaming(classifier, sources, skips, reading(quiet), cuts)
        if sampled:
            where, y = plan.sampled_thresholds(classifier, sources, learned, reading(quiet))
    elif not (tuned and tuned.refit(classifier, y)):
        if tuned:
            tuned.counted = None  # counted otherwise than the choice counts: not held while it reads
        if em and em["em_weight"] is None:
            texts = list(texts)  # read once for every fold
            plan.check_read(sources, y)
            texts, y, em = em_choice(classifier, options, texts, y, em, quiet)
        try:
            classifier.fit(texts, y, **em)
        except ValueError:
            plan.check_read(sources, y)  # "no readable documents for class x" says more
            raise
        plan.check_read(sources, y)
    if tuned is not None:
        classifier.tuning_ = tuned.summary()
    path = resolve_model(model_path)
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
        if cuts.summary():
            click.echo(cuts.summary())
        if report:
            click.echo(on_error_line(report))
        if classifier.cutoffs_:
            click.echo(cutoffs_line(classifier.cutoffs_))
        elif classifier.__dict__.get("decision_threshold_") is not None:
            click.echo(threshold_line(classifier))
    echo_suspects(classifier, where or [], y)
    return OK


def _multilabel_train(label_file, dirs, labels, model_path, quiet, tune, unlabeled,
                      options) -> int:
    """train --labels: a multi-label model (textnb.cli.multilabel)."""
    from . import multilabel as multilabelcli
    if tune or unlabeled:
        raise click.UsageError("--tune and --unlabeled do not apply to a multi-label model")
    sources = labelled_sources(dirs, labels) if dirs or labels else []
    skips = Skips()
    texts, label_sets = multilabelcli.read_documents(label_file, sources, skips)
    prior = options.pop("prior")
    multilabelcli.train(texts, label_sets, resolve_model(model_path),
                        multilabelcli.settings(settings_of(**options), prior), quiet)
    skips.summary()
    return OK


@click.command("tune-cutoffs")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Class NAME is on PATH (repeatable).")
@model_option()
@cutoff_learning_options
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
@shows_progress
def tune_cutoffs(dirs, labels, model_path, spam_class, target_fpr, target_fnr, target_unsure,
                 keep_suspects, quiet) -> int:
    """Choose a model's spam and ham cutoffs again, by cross-validation on labelled
    directories (after many learns, or for other target rates); its counts stay.
    Mail too large to hold is cross-validated as train does it (see train --training)."""
    sources = labelled_sources(dirs, labels)
    skips = Skips()
    classes = sorted({label for label, _ in sources})
    path = resolve_model(model_path)
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
        if training == "full" and plan.too_large(plan.input_size(sources), mail=True):
            probe.set_params(ngram_range=classifier._ngrams())
            where, y = plan.sampled_thresholds(probe, sources,
                                           plan.train_streaming(probe, sources, skips, reading(quiet)),
                                           reading(quiet))
        else:
            where = []
            texts, y = plan.stream_labelled(sources, skips, reading(quiet), where)
            probe.fit(texts, y)  # counted as read, as train counts them
            plan.check_read(sources, y)
        if probe.cutoffs_ is None:
            raise click.UsageError(f"cutoffs need two classes, one named {spam_class!r}, and "
                                   f"at least two documents of each")
        classifier.cutoffs_ = probe.cutoffs_
        classifier.decision_threshold_ = probe.decision_threshold_
        save_model(classifier, path)
    skips.summary()
    click.echo(cutoffs_line(classifier.cutoffs_))
    echo_suspects(probe, where, y)
    return OK
