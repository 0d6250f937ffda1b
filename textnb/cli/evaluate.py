"""textnb evaluate and textnb info."""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from ..decision.rules import (HAM_CUTOFF, SPAM_CUTOFF, default_spam_cutoff, error_weight, logit,
                             spam_cutoffs)
from ..documents.corpus import labelled_sources
from ..errors import DocumentError
from ..evaluation.crossval import cross_validate, fold_results
from ..progress import phase
from ..store.text_model import load_model
from ..training import check_read, read_labelled, stream_labelled
from .classify import is_multilabel
from .common import OK, Skips, count_noun, reading, shows_progress
from .options import (LEARNED_ELSE_NAMED, classifier_of, load_classifier, model_option,
                      resolve_model, training_options)
from .output import cutoffs_line, report_text, threshold_line


@click.command()
@click.argument("dirs", nargs=-1, type=click.Path(exists=True))
@click.option("--label", "labels", multiple=True, metavar="NAME=PATH",
              help="Class NAME is on PATH (repeatable).")
@model_option()
@click.option("--cv", type=click.IntRange(min=2),
              help="K-fold cross-validation of training with the training options given, "
                   "cutoffs learned per fold as train learns them; no model file (-m).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the --cv folds.")
@click.option("--spam-class",
              help=f"The positive class of a two-class evaluation (default: "
                   f"{LEARNED_ELSE_NAMED}).")
@click.option("--sweep", is_flag=True,
              help="Two classes: FPR, FNR and unsure for a range of spam and ham cutoffs.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="Write plots, PNG and SVG, into DIR: for mail the decisions at "
                                  "the cutoffs, then ROC, precision-recall, confusion and "
                                  "scores; needs pip install 'textnb[plot]'.")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--labels", "label_file", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="A multi-label model's test documents: each line a path "
                                   "and its labels (as train --labels).")
@training_options
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
@shows_progress
def evaluate(dirs, labels, model_path, cv, seed, spam_class, sweep, plot_dir, output, quiet,
             label_file, **options) -> int:
    """How a model decides labelled directories. For a mail model (two classes,
    one of them spam) first the decisions the filter makes at its cutoffs: the
    share of spam and of ham decided spam, unsure and ham, the false positive
    and negative rates, unsure and spam not caught. Then, for every model, the
    most probable class's accuracy, per-class precision/recall/F1/support with
    macro and weighted averages and the confusion matrix; for two classes also
    its false positive/negative rates and the ROC AUC.

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
    if label_file is not None or (not cv and is_multilabel(model_path)):
        return _multilabel_evaluate(label_file, dirs, labels, model_path, cv, spam_class,
                                    sweep, plot_dir, output)
    if plot_dir is not None:
        from ..evaluation.plots import require
        require()  # before reading anything
    sources = labelled_sources(dirs, labels)
    skips = Skips()
    if cv:
        texts, y = read_labelled(sources, skips, reading(quiet))
        y = np.array(y)
        with phase(f"{cv}-fold cross-validation"):
            classes, log_proba, cutoffs, threshold, folds = cross_validate(
                texts, y, cv, seed, spam_class, lambda labels: classifier_of(labels, **options))
    else:
        clf = load_classifier(model_path)
        if options["jobs"] is not None:
            clf.set_params(n_jobs=options["jobs"])
        classes = np.asarray(clf.classes_).astype(str)
        unknown = sorted({label for label, _ in sources} - set(classes.tolist()))
        if unknown:
            raise DocumentError(f"class {unknown[0]!r} is not in the model "
                                f"(classes: {', '.join(classes)})")
        # Scored as they are read, never all held (a Maildir with attachments: 1 GB).
        texts, y = stream_labelled(sources, skips, reading(quiet))
        log_proba = clf.predict_log_proba(texts)
        check_read(sources, y)
        y = np.array(y)
        found = spam_cutoffs(classes, clf.cutoffs_, spam_class, learned_errors=clf.learned_errors_)
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
    if cutoffs:  # the decisions the filter makes first, in JSON as in text
        result = {"documents": result["documents"],
                  "cutoffs": {"spam": float(np.mean(cutoffs[1])),
                              "ham": float(np.mean(cutoffs[2])), "learned": cutoffs[3]},
                  "at_cutoffs": result["at_cutoffs"], **result}
    if folds is not None:
        result["folds"] = fold_results(y, log_proba, classes, positive, cutoffs, threshold,
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
        decisions = None
        if cutoffs:  # a mail model: its spam, its ham decided spam, unsure and ham
            p = int(np.flatnonzero(classes == positive)[0])
            spam_said = log_odds[:, p] >= cutoffs[1]
            ham_said = ~spam_said & (log_odds[:, p] <= cutoffs[2])
            said = np.column_stack([spam_said, ~spam_said & ~ham_said, ham_said])
            decisions = np.array([said[y == positive].sum(axis=0), said[y != positive].sum(axis=0)])
        result["plots"] = [str(path) for path in write_plots(
            plot_dir, classes, y, log_odds, np.array(result["confusion"]), positive,
            (held["spam"], held["ham"]) if held else None, decisions)]
    skips.summary()
    click.echo(json.dumps(result) if output == "json" else report_text(result))
    return OK


def _multilabel_evaluate(label_file, dirs, labels, model_path, cv, spam_class, sweep, plot_dir,
                         output) -> int:
    """evaluate of a multi-label model: micro/macro F1, Hamming loss (textnb.cli.multilabel)."""
    from . import multilabel as multilabelcli
    if cv or spam_class or sweep or plot_dir is not None:
        raise click.UsageError("a multi-label evaluation takes a model (-m) and labelled "
                               "documents; --cv, --spam-class, --sweep and --plot do not apply")
    if not is_multilabel(model_path):
        raise click.UsageError("--labels evaluates a multi-label model (train --labels); "
                               "this model has one label per document")
    sources = labelled_sources(dirs, labels) if dirs or labels else []
    skips = Skips()
    texts, label_sets = multilabelcli.read_documents(label_file, sources, skips)
    skips.summary()
    multilabelcli.evaluate(resolve_model(model_path), texts, label_sets, output)
    return OK


@click.command()
@model_option()
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Informative terms per class.")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def info(model_path, top, output) -> int:
    """Classes, document counts, vocabulary size, parameters, most informative terms."""
    path = resolve_model(model_path)
    if is_multilabel(path):
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
    # Trained on error, or learned by learn, TELL and imap with errors weighed more, the class
    # counts are weights (each learned document's share of the walks that learned it, or its
    # weight as an error), not numbers of documents: say both.
    weights = getattr(classifier, "digest_weights_", None)
    if weights is not None and (weights != 1).any():
        learned = classifier.digest_labels_[weights > 0]
        data["documents"] = {str(c): int((learned == c).sum()) for c in model.classes_}
        classes = [f"{c} ({count_noun(data['documents'][str(c)], 'document')}, weight {n:.4g})"
                   for c, n in zip(model.classes_, model.class_count_)]
    else:
        classes = [f"{c} ({count_noun(n, 'document')})" for c, n in data["classes"].items()]
    counted, errors = data["learned_errors"] = list(classifier.learned_errors_)
    if output == "json":
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
        return OK
    # A model that learned no cutoffs calls spam from P(spam) 0.99 up, to 0.999 as the
    # messages its learners learned were right (decision.rules.default_spam_cutoff).
    spam_at = 1.0 / (1.0 + np.exp(-default_spam_cutoff((counted, errors))))
    lines = [f"model       {data['model']}",
             "classes     " + ", ".join(classes),
             f"terms       {data['terms']}" + (
                 f" hashed columns of 2**{classifier.hash_bits} (the terms are not kept)"
                 if classifier.hash_bits is not None else ""),
             *([cutoffs_line(data["cutoffs"])] if data["cutoffs"] else
               [f"cutoffs     none learned: P(spam) >= {spam_at:.4g} spam, <= {HAM_CUTOFF} ham"]
               if len(data["classes"]) == 2 else []),
             *([f"learned     {count_noun(counted, 'message')} by learn, TELL or imap, "
                f"{errors} of them called wrong or unsure before: the next such weighs "
                f"{error_weight(counted, errors):.2f}"] if counted else []),
             *([threshold_line(classifier)
                + (" (classify decides mail by the cutoffs)" if data["cutoffs"] else "")]
               if data["decision_threshold"] is not None else []),
             *([f"tuned       {data['tuning']['folds']}-fold CV {data['tuning']['metric']} "
                f"{data['tuning']['best']['mean']:.4f} ± {data['tuning']['best']['sd']:.4f}, "
                f"chosen of {data['tuning']['candidates']} settings"
                + (f"; {data['tuning']['note']}" if data["tuning"].get("note") else "")]
               if data["tuning"] else []),
             "parameters  " + ", ".join(f"{k}={v}" for k, v in data["parameters"].items()
                                        if k != "stop_words" or isinstance(v, str))]
    for c, terms in data["informative_terms"].items():
        lines.append(f"\nmost informative for {c} (log-likelihood ratio):")
        lines += [f"  {term[:40]:<40} {ratio:+.3f}" for term, ratio in terms]
    click.echo("\n".join(lines))
    return OK
