"""The ``textnb cluster`` command: documents → mixture of multinomials by EM → clusters, a
model file ``classify`` and ``info`` read, and, with --evaluate, NMI/ARI/purity.

A command module of the CLI (registered in cli.py): it prints, the library computes.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import click
import numpy as np

from ..classifier import TextClassifier
from ..cluster import CLUSTER_ALPHA, CLUSTER_MIN_DF, cluster_texts
from ..decision.rules import decide, line
from ..documents.sources import is_maildir, read_raw
from ..errors import DocumentError
from ..nb.em import MAX_ITER
from ..store.text_model import save_model
from .options import FloatRange, model_option, resolve_model
from .status import echo_above


def _sources(paths: Sequence[str], evaluate: bool) -> list[tuple[str, str]]:
    """(class, path) pairs: with --evaluate a single directory of subdirectories gives one class
    per subdirectory, else each PATH is a class named after it; without, the class is ''."""
    if evaluate and len(paths) == 1 and os.path.isdir(paths[0]) and not is_maildir(paths[0]):
        entries = [e for e in sorted(os.scandir(paths[0]), key=lambda e: e.name)
                   if not e.name.startswith(".")]
        if entries and all(e.is_dir() for e in entries):
            return [(e.name, e.path) for e in entries]
    return [(os.path.basename(os.path.normpath(p)) if evaluate else "", p) for p in paths]


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-k", "--clusters", "k", type=click.IntRange(min=2), required=True,
              help="Number of clusters.")
@model_option("Write the cluster model here (default: the default model path).")
@click.option("--starts", type=click.IntRange(min=1), default=5, show_default=True,
              help="Starts, each spherical k-means on TF-IDF seeded by k-means++ and then EM; "
                   "the one of highest log-likelihood is kept.")
@click.option("--iterations", type=click.IntRange(min=1), default=100, show_default=True,
              help="At most this many EM iterations per start.")
@click.option("--seed", type=int, help="Seed of the starts (the same seed, the same clusters).")
@click.option("--hard", is_flag=True,
              help="Hard assignments: classification EM (the k-means view of EM).")
@click.option("--alpha", type=FloatRange(min=0, min_open=True), default=CLUSTER_ALPHA,
              show_default=True, help="Smoothing α.")
@click.option("--min-df", type=click.IntRange(min=1), default=CLUSTER_MIN_DF, show_default=True,
              help="Keep terms in at least N documents.")
@click.option("--event-model", type=click.Choice(["multinomial", "bernoulli"]),
              default="multinomial", show_default=True)
@click.option("--stop-words", metavar="english|none|FILE", default="english", show_default=True)
@click.option("--format", "output", type=click.Choice(["text", "tsv", "json"]), default="text",
              show_default=True, help="One line per document, as classify prints them.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Top terms shown per cluster.")
@click.option("--evaluate", is_flag=True,
              help="PATHs are class directories: report NMI, adjusted Rand index, purity.")
@click.option("-q", "--quiet", is_flag=True, help="No per-iteration log-likelihood on stderr.")
def cluster(paths, k, model_path, starts, iterations, seed, hard, alpha, min_df, event_model,
            stop_words, output, top, evaluate, quiet) -> int:
    """Cluster unlabeled documents with a Naive Bayes mixture fitted by EM:
    textnb cluster posts/ -k 20 -m clusters.model.

    Prints each document's cluster and probability, then each cluster's top terms.
    The model file works with classify and info; its classes are the clusters.
    """
    skips = []
    texts, sources, truth = [], [], []
    for label, path in _sources(paths, evaluate):
        for source, raw in read_raw([path], on_error=lambda s, r: skips.append((s, r))):
            texts.append(raw)
            sources.append(source)
            truth.append(label)
    for source, reason in skips:
        click.echo(f"textnb: skipped {source}: {reason}", err=True)
    if len(texts) < k:
        raise DocumentError(f"{len(texts)} readable documents cannot make {k} clusters")
    settings = TextClassifier(model=event_model, alpha=alpha, norm=None, fit_prior=True,
                              min_df=min_df, stop_words=stop_words)

    def progress(start: int, iteration: int, value: float) -> None:
        if not quiet:
            click.echo(f"start {start + 1} iteration {iteration}: log-likelihood {value:.6g}",
                       err=True)

    classifier, result = cluster_texts(texts, k, classifier=settings, n_init=starts,
                                       max_iter=iterations, hard=hard, random_state=seed,
                                       callback=progress)
    path = resolve_model(model_path)
    save_model(classifier, path)
    classes = classifier.classes_.tolist()
    with np.errstate(divide="ignore"):
        log_proba = np.log(result.proba_)
    for source, row in zip(sources, log_proba):
        click.echo(line(decide(classes, row.tolist(), source, None), output))
    report: dict[str, Any] = {"documents": len(texts), "clusters": k, "model": str(path),
                              "log_likelihood": result.log_likelihood_,
                              "sizes": dict(zip(classes, np.bincount(result.labels_,
                                                                     minlength=k).tolist()))}
    if top:
        report["top_terms"] = {str(c): [term for term, _ in terms] for c, terms in
                               classifier.informative_terms(top).items()}
    if evaluate:
        from ..evaluation.metrics import adjusted_rand_index, normalized_mutual_info, purity
        report.update(nmi=normalized_mutual_info(truth, result.labels_),
                      ari=adjusted_rand_index(truth, result.labels_),
                      purity=purity(truth, result.labels_))
    if output == "json":
        click.echo(json.dumps({"summary": report}, ensure_ascii=False))
    else:
        lines = [f"# {k} clusters of {len(texts)} documents, log-likelihood "
                 f"{result.log_likelihood_:.6g} -> {path}"]
        for c in classes:
            terms = " ".join(report.get("top_terms", {}).get(c, []))
            lines.append(f"# {c} ({report['sizes'][c]} documents): {terms}".rstrip())
        if evaluate:
            lines.append(f"# NMI {report['nmi']:.4f}  ARI {report['ari']:.4f}  "
                         f"purity {report['purity']:.4f}")
        click.echo("\n".join(lines))
    return 1 if skips else 0


def em_setup(classifier: TextClassifier, options: dict[str, Any], unlabeled: Sequence[str],
             weight: float | None, iterations: int | None, on_error: bool,
             quiet: bool) -> dict[str, Any]:
    """``train --unlabeled``: the keyword arguments of ``TextClassifier.fit`` for EM (none
    without unlabeled paths); ``em_weight`` None when λ is to be chosen (:func:`em_choice`).
    With --em-weight given, the event model and norm, unless given, become the multinomial on
    raw counts: complement NB has no likelihood for EM to maximise."""
    if not unlabeled:
        return {}
    if on_error:
        raise click.UsageError("--unlabeled and --training on-error cannot be combined")
    if weight is not None:
        _em_settings(classifier, options)
    texts = []
    for source, raw in read_raw(list(unlabeled), on_error=lambda s, r: click.echo(
            f"textnb: skipped {s}: {r}", err=True)):
        texts.append(raw)
    if not texts:
        raise DocumentError("no readable unlabeled documents")

    def progress(iteration: int, value: float) -> None:
        if not quiet:
            echo_above(f"EM iteration {iteration}: log-likelihood {value:.10g}")

    return {"unlabeled": texts, "em_weight": weight, "em_iterations": iterations or MAX_ITER,
            "callback": progress}


def _em_settings(classifier: TextClassifier, options: dict[str, Any]) -> None:
    """The multinomial on raw counts for EM, unless --event-model or --norm say otherwise."""
    if options.get("event_model") is None:
        classifier.set_params(model="multinomial")
    if options.get("norm") is None:
        classifier.set_params(norm=None)


def em_choice(classifier: TextClassifier, options: dict[str, Any], texts: list, y: list,
              em: dict[str, Any], quiet: bool) -> tuple[list, list, dict[str, Any]]:
    """``train --unlabeled`` without --em-weight: λ (0: no EM) and α chosen by cross-validation
    on the labeled documents against plain training (:func:`textnb.semisupervised.choose`),
    said in a line; the classifier set to the choice, and what ``fit`` is to learn: (texts,
    labels, keyword arguments) — the labeled documents (with EM's arguments where EM's own
    model was chosen), or every document, the unlabeled ones in the classes EM gave them."""
    from ..semisupervised import ALPHAS, choose
    alpha = options.get("alpha")
    choice = choose(classifier, texts, y, em["unlabeled"],
                    alphas=ALPHAS if alpha is None else (alpha,))
    if not quiet:
        click.echo(em_line(choice))
    classifier.set_params(**choice.settings)
    if choice.unlabeled_classes is not None:
        return texts + em["unlabeled"], list(y) + choice.unlabeled_classes.tolist(), {}
    if choice.weight:
        return texts, y, {**em, "em_weight": choice.weight, "em_start": "complement"}
    return texts, y, {}


def em_line(choice: Any) -> str:
    """The EM choice as train prints it: what was chosen, its CV estimate beside plain
    training's (and their false-positive rates, with a spam class)."""
    def rates(accuracy: float, fpr: float | None) -> str:
        return f"accuracy {accuracy:.4f}" + ("" if fpr is None else f", FPR {fpr:.4f}")

    plain = rates(choice.plain_accuracy, choice.plain_false_positive_rate)
    if not choice.folds:
        return f"EM          not used: {choice.reason}"
    if choice.weight is None:
        best = max(choice.scores, key=lambda key: (choice.scores[key], -key[1], key[0]))
        return (f"EM          not used ({choice.reason}): {choice.folds}-fold CV on the labeled "
                f"documents, plain training {plain}; best EM (α {best[0]:g}, λ {best[1]:g}) "
                f"accuracy {choice.scores[best]:.4f}")
    then = (", then plain training on every document, the unlabeled ones in EM's classes"
            if choice.unlabeled_classes is not None else
            " (EM's multinomial)" if choice.weight else " (multinomial NB, no EM)")
    return (f"EM          λ {choice.weight:g}, α {choice.alpha:g}{then}, by {choice.folds}-fold "
            f"CV on the labeled documents: {rates(choice.accuracy, choice.false_positive_rate)} "
            f"(plain training {plain})")
