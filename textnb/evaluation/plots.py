"""an evaluation's scores → ROC, precision–recall, confusion and score-histogram plots (PNG, SVG).

``textnb evaluate --plot DIR``. matplotlib is an optional extra (``pip install 'textnb[plot]'``)
imported here only, inside the functions, with the Agg backend: no display is needed and the
library does not depend on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import TextnbError
from .metrics import average_precision, precision_recall_curve, roc_auc, roc_curve

FORMATS = ("png", "svg")
# Counts are written in the confusion heat map's cells up to this many classes (20 Newsgroups'
# 20 still read at the figure size below); beyond, the colours alone.
_ANNOTATED_CLASSES = 25
_BINS = 40


def require() -> None:
    """TextnbError unless matplotlib can be imported: called before any work is done."""
    _pyplot()


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise TextnbError("plots need matplotlib: pip install 'textnb[plot]'") from None
    matplotlib.use("Agg")  # files only: works without a display, and before pyplot is imported
    import matplotlib.pyplot as plt
    return plt


def write_plots(directory: str | Path, classes: Sequence[str], y_true: Sequence[str],
                log_odds: np.ndarray, confusion: np.ndarray, positive: str | None = None,
                cutoffs: tuple[float, float] | None = None,
                decisions: np.ndarray | None = None) -> list[Path]:
    """Write roc, precision-recall, confusion and scores, each as PNG and SVG, into directory
    (created if need be), and for a mail model's ``decisions`` (counts of shape (2, 3): its
    spam, then its other class, decided spam, unsure and ham at the cutoffs) decisions too;
    return the paths written.

    ``log_odds`` (n_documents, n_classes) is each class's log-odds against the rest
    (:func:`textnb.evaluation.metrics.one_vs_rest_log_odds`). With a ``positive`` class of two, the curves
    and the histogram are of its log-odds alone, the histogram marking the (spam, ham)
    ``cutoffs``; otherwise one curve and one histogram per class, one against the rest.
    """
    plt = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    classes = [str(c) for c in classes]
    y_true = np.asarray(y_true).astype(str)
    shown = [positive] if positive is not None else classes
    curves = [(c, y_true == c, log_odds[:, classes.index(c)]) for c in shown
              if 0 < (y_true == c).sum() < y_true.size]
    figures = {} if decisions is None or positive is None else {"decisions": _confusion(
        plt, [positive, *(c for c in classes if c != positive)], ["spam", "unsure", "ham"],
        np.asarray(decisions), "decided", "Decisions at the cutoffs")}
    figures |= {"roc": _roc(plt, curves), "precision-recall": _precision_recall(plt, curves),
               "confusion": _confusion(plt, classes, classes, np.asarray(confusion)),
               "scores": _scores(plt, shown, y_true, log_odds, classes,
                                 cutoffs if positive is not None else None)}
    written = []
    for name, figure in figures.items():
        for extension in FORMATS:
            path = directory / f"{name}.{extension}"
            figure.savefig(path, dpi=120, bbox_inches="tight")
            written.append(path)
        plt.close(figure)
    return written


def _roc(plt: Any, curves: list) -> Any:
    figure, axes = plt.subplots(figsize=(6, 5.5))
    _colours(plt, axes, len(curves))
    for name, positive, scores in curves:
        fpr, tpr, _ = roc_curve(positive, scores)
        axes.step(fpr, tpr, where="post", label=f"{name} (AUC {roc_auc(positive, scores):.4f})")
    axes.plot([0, 1], [0, 1], linestyle=":", color="grey", label="chance")
    axes.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC curve",
             xlim=(-0.01, 1.01), ylim=(-0.01, 1.01))
    _legend(axes, len(curves), "lower right")
    return figure


def _precision_recall(plt: Any, curves: list) -> Any:
    figure, axes = plt.subplots(figsize=(6, 5.5))
    _colours(plt, axes, len(curves))
    for name, positive, scores in curves:
        precision, recall, _ = precision_recall_curve(positive, scores)
        axes.step(recall, precision, where="post",
                  label=f"{name} (AP {average_precision(positive, scores):.4f})")
    axes.set(xlabel="recall", ylabel="precision", title="Precision–recall curve",
             xlim=(-0.01, 1.01), ylim=(-0.01, 1.01))
    _legend(axes, len(curves), "lower left")
    return figure


def _confusion(plt: Any, classes: list[str], columns: list[str], confusion: np.ndarray,
               xlabel: str = "predicted", title: str = "Confusion matrix") -> Any:
    """Colour: the share of the true class's documents (rows sum to 1); text: the counts.
    Rows are the true ``classes``, columns what they were called (``columns``)."""
    n = len(classes)
    size = max(4.5, 0.45 * n + 2.5)
    figure, axes = plt.subplots(figsize=(size + 1, size))
    rows = confusion.sum(axis=1, keepdims=True)
    shares = confusion / np.where(rows > 0, rows, 1)
    image = axes.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04, label="share of the true class")
    wide = len(columns) > 2 and n > 2
    axes.set_xticks(range(len(columns)), columns, rotation=45 if wide else 0,
                    ha="right" if wide else "center")
    axes.set_yticks(range(n), classes)
    axes.set(xlabel=xlabel, ylabel="true", title=title)
    if n <= _ANNOTATED_CLASSES:  # one text per cell: matplotlib draws them one by one
        for (i, j), count in np.ndenumerate(confusion):
            axes.text(j, i, str(count), ha="center", va="center", fontsize=9 if n > 10 else 11,
                      color="white" if shares[i, j] > 0.5 else "black")
    return figure


def _scores(plt: Any, shown: list[str], y_true: np.ndarray, log_odds: np.ndarray,
            classes: list[str], cutoffs: tuple[float, float] | None) -> Any:
    """One panel per class shown: its log-odds for its own documents and for the others'."""
    columns = min(len(shown), 4)
    rows = -(-len(shown) // columns)
    figure, grid = plt.subplots(rows, columns, figsize=(4.2 * columns + 1.5, 3.4 * rows),
                                squeeze=False)
    for axes, name in zip(grid.flat, shown):
        scores = log_odds[:, classes.index(name)]
        bins = np.histogram_bin_edges(scores, bins=_BINS)
        mine = y_true == name
        others = "ham" if cutoffs is not None and len(classes) == 2 else "other classes"
        axes.hist(scores[~mine], bins=bins, alpha=0.6, label=others, color="tab:blue")
        axes.hist(scores[mine], bins=bins, alpha=0.6, label=name, color="tab:red")
        if cutoffs is not None:
            spam, ham = cutoffs
            axes.axvline(spam, color="black", linestyle="--", label=f"spam cutoff {spam:+.2f}")
            if ham != spam:
                axes.axvline(ham, color="grey", linestyle=":", label=f"ham cutoff {ham:+.2f}")
        axes.set_yscale("log")  # one class's few errors stay visible next to thousands
        axes.set(xlabel=f"log-odds of {name}", ylabel="documents", title=name)
        axes.legend(fontsize=8)
    for axes in list(grid.flat)[len(shown):]:
        axes.set_visible(False)
    figure.suptitle("Scores by true class")
    figure.tight_layout()
    return figure


def _colours(plt: Any, axes: Any, curves: int) -> None:
    """Ten colours repeat from the eleventh curve on: 20 Newsgroups' 20 need tab20's."""
    if curves > 10:
        axes.set_prop_cycle(color=plt.get_cmap("tab20").colors)


def _legend(axes: Any, curves: int, where: str) -> None:
    if curves > 8:  # many classes: beside the plot, where it hides no curve
        axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    else:
        axes.legend(loc=where)
