"""true and predicted labels (and scores) → accuracy, per-class P/R/F1, confusion, ROC AUC, CV folds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class Report:
    """Evaluation of predictions against true labels.

    ``confusion[i, j]`` counts documents of class ``classes[i]`` predicted as ``classes[j]``;
    ``precision``, ``recall`` and ``f1`` are per class, in ``classes`` order.
    """

    classes: list
    confusion: np.ndarray
    accuracy: float
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray


def evaluate(y_true: Sequence, y_pred: Sequence, classes: Sequence | None = None) -> Report:
    """Confusion matrix, accuracy and per-class precision = TP/(TP+FP), recall = TP/(TP+FN),
    F1 = 2PR/(P+R); a ratio with a zero denominator is 0, as scikit-learn reports it."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError(f"need as many predictions as labels, at least one: "
                         f"{y_true.size} vs {y_pred.size}")
    classes = np.unique(np.concatenate([y_true, y_pred])) if classes is None else np.asarray(classes)
    n = len(classes)
    rows, cols = np.searchsorted(classes, y_true), np.searchsorted(classes, y_pred)
    confusion = np.bincount(rows * n + cols, minlength=n * n).reshape(n, n)
    tp = np.diag(confusion).astype(float)
    precision = _ratio(tp, confusion.sum(axis=0))
    recall = _ratio(tp, confusion.sum(axis=1))
    f1 = _ratio(2 * precision * recall, precision + recall)
    return Report(classes.tolist(), confusion, float(tp.sum() / y_true.size), precision, recall, f1)


def roc_auc(positive: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the ROC curve: P(score of a random positive > score of a random negative),
    ties counting one half (the Mann–Whitney U statistic over n_pos · n_neg)."""
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC AUC needs both positive and negative examples")
    ranks = _average_ranks(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0.0)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of their ranks."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], values.size]
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def support(report: Report) -> np.ndarray:
    """Documents of each class (the confusion matrix's row sums), in ``report.classes`` order."""
    return report.confusion.sum(axis=1)


def averages(report: Report) -> dict[str, dict[str, float]]:
    """Macro (the mean over classes) and weighted (weighted by support) precision, recall and
    F1, as scikit-learn's classification_report gives them."""
    weights = support(report)
    return {kind: {name: float(np.average(getattr(report, name), weights=w))
                   for name in ("precision", "recall", "f1")}
            for kind, w in (("macro", None), ("weighted", weights))}


def one_vs_rest_log_odds(log_proba: np.ndarray) -> np.ndarray:
    """ln P(c|x) − ln Σ_{c'≠c} P(c'|x) for each class c: array of shape (n_documents, n_classes),
    the score of each class against the rest, finite where probabilities round to 0 and 1. With
    two classes, column c is the log-odds of c over the other one."""
    from scipy.special import logsumexp

    log_proba = np.asarray(log_proba, dtype=float)
    n_classes = log_proba.shape[1]
    if n_classes < 2:
        raise ValueError("log-odds against the rest need at least two classes")
    rest = np.column_stack([logsumexp(np.delete(log_proba, c, axis=1), axis=1)
                            for c in range(n_classes)])
    return log_proba - rest


def roc_curve(positive: Sequence[bool], scores: Sequence[float]) -> tuple[np.ndarray, ...]:
    """(false positive rate, true positive rate, threshold) of deciding "positive" at score ≥
    threshold, one point per distinct score from the highest down, after (0, 0) at +inf; the
    points scikit-learn's roc_curve gives with drop_intermediate=False."""
    positive, scores = _checked(positive, scores)
    tps, fps, thresholds = _cumulative(positive, scores)
    return (np.r_[0.0, fps / fps[-1]], np.r_[0.0, tps / tps[-1]], np.r_[np.inf, thresholds])


def precision_recall_curve(positive: Sequence[bool], scores: Sequence[float]) -> tuple[np.ndarray, ...]:
    """(precision, recall, threshold) of deciding "positive" at score ≥ threshold, one point
    per distinct score, then (1, 0) with no threshold, thresholds increasing: what
    scikit-learn's precision_recall_curve gives."""
    positive, scores = _checked(positive, scores)
    tps, fps, thresholds = _cumulative(positive, scores)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thresholds[::-1]


def average_precision(positive: Sequence[bool], scores: Sequence[float]) -> float:
    """Σ (R_n − R_{n−1}) P_n over the precision-recall curve: the area under it as a step
    function (scikit-learn's average_precision_score)."""
    precision, recall, _ = precision_recall_curve(positive, scores)
    return float(-np.sum(np.diff(recall) * precision[:-1]))


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the sample standard deviation (n − 1; 0 for one value) of fold results."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


# Cutoffs a --sweep tries on the log-odds: 0 and ±1, 2, 5 × 10^k, the spacing of a log-scale
# axis, since log-odds grow with a document's length (a long spam scores +1000).
_SWEEP_STEPS = (1.0, 2.0, 5.0)


def sweep_cutoffs(scores: Sequence[float], also: Sequence[float] = ()) -> np.ndarray:
    """Round cutoffs from just below the lowest score to just above the highest (0, ±0.5, ±1,
    ±2, ±5, ±10, …), with the cutoffs in ``also``; sorted, distinct."""
    scores = np.asarray(scores, dtype=float)
    low, high = float(scores.min()), float(scores.max())
    largest = max(abs(low), abs(high), 0.5)
    magnitudes = [step * 10.0 ** k for k in range(-1, int(np.ceil(np.log10(largest))) + 1)
                  for step in _SWEEP_STEPS if step * 10.0 ** k >= 0.5]
    grid = np.array([0.0, *magnitudes, *(-m for m in magnitudes)])
    below, above = grid[grid <= low], grid[grid >= high]
    kept = grid[(grid > low) & (grid < high)]
    ends = [below.max()] if below.size else []
    ends += [above.min()] if above.size else []
    return np.unique(np.r_[kept, ends, np.asarray(also, dtype=float)])


def _checked(positive: Sequence[bool], scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    if positive.shape != scores.shape or positive.all() or not positive.any():
        raise ValueError("a curve needs one score per document, positive and negative ones")
    return positive, scores


def _cumulative(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, ...]:
    """True and false positives at each distinct score as the threshold, highest first."""
    order = np.argsort(-scores, kind="mergesort")
    scores, positive = scores[order], positive[order]
    last = np.r_[np.flatnonzero(np.diff(scores)), scores.size - 1]  # last index of each score
    tps = np.cumsum(positive)[last].astype(float)
    return tps, (last + 1) - tps, scores[last]


def summary(y_true: Sequence, log_proba: np.ndarray, classes: Sequence, positive: str | None = None,
            cutoffs: tuple[Any, Any] | None = None, threshold: Any = None) -> dict[str, Any]:
    """What ``textnb evaluate`` reports, as plain numbers and lists (JSON-ready).

    ``log_proba`` (n_documents, n_classes) in ``classes`` order decides each document by its most
    probable class, or of two classes by a decision ``threshold`` on the log-odds of the second
    over the first (a number, or one per document, NaN where the most probable decides, as
    :meth:`TextClassifier.predict` decides): accuracy, per-class precision, recall, F1 and
    support, their macro and weighted averages, the confusion matrix. With a ``positive`` class of two: its false
    positive and false negative rates and the ROC AUC of its log-odds; with ``cutoffs`` (spam,
    ham) on those log-odds (numbers, or one per document), the rates of the spam/ham/unsure
    decision they make (:func:`textnb.decision.cutoffs.rates`) as ``at_cutoffs``.
    """
    from ..decision.cutoffs import rates

    y_true, classes = np.asarray(y_true).astype(str), np.asarray(classes).astype(str)
    predicted = classes[np.argmax(log_proba, axis=1)]
    if threshold is not None and classes.size == 2:
        threshold = np.broadcast_to(np.asarray(threshold, dtype=float), predicted.shape)
        given = ~np.isnan(threshold)
        second = log_proba[:, 1] - log_proba[:, 0] >= np.where(given, threshold, 0.0)
        predicted = np.where(given, classes[second.astype(int)], predicted)
    report = evaluate(y_true, predicted, classes)
    result: dict[str, Any] = {
        "documents": int(y_true.size), "accuracy": report.accuracy, "classes": report.classes,
        "precision": report.precision.tolist(), "recall": report.recall.tolist(),
        "f1": report.f1.tolist(), "support": support(report).tolist(), **averages(report),
        "confusion": report.confusion.tolist()}
    if positive is None:
        return result
    if classes.size != 2 or positive not in classes:
        raise ValueError(f"a positive class is one of two classes, got {positive!r}")
    p = int(np.flatnonzero(classes == positive)[0])
    is_positive = y_true == positive
    wrong = predicted != y_true
    log_odds = log_proba[:, p] - log_proba[:, 1 - p]
    result.update({
        "positive_class": positive,
        "false_positive_rate": float((wrong & ~is_positive).sum() / max((~is_positive).sum(), 1)),
        "false_negative_rate": float((wrong & is_positive).sum() / max(is_positive.sum(), 1)),
        # Ranked by log-odds, which stay finite where probabilities saturate at 0 and 1.
        "roc_auc": roc_auc(is_positive, log_odds) if 0 < is_positive.sum() < y_true.size else None})
    if cutoffs is not None:
        result["at_cutoffs"] = rates(log_odds, is_positive, *cutoffs)
    return result


def sweep(log_odds: Sequence[float], is_positive: Sequence[bool], spam_cutoff: float,
          ham_cutoff: float) -> dict[str, list[dict[str, float]]]:
    """The rates (:func:`textnb.decision.cutoffs.rates`) of the spam cutoffs :func:`sweep_cutoffs` tries,
    the ham cutoff held (moved down to a spam cutoff below it), and of the ham cutoffs, the spam
    cutoff held (moved up): {"spam_cutoff": [{"cutoff", "fpr", "fnr", "unsure", ...}, ...],
    "ham_cutoff": [...]}."""
    from ..decision.cutoffs import rates

    log_odds = np.asarray(log_odds, dtype=float)
    grid = sweep_cutoffs(log_odds, also=(spam_cutoff, ham_cutoff)).tolist()
    return {"spam_cutoff": [{"cutoff": t, **rates(log_odds, is_positive, t, min(ham_cutoff, t))}
                            for t in grid],
            "ham_cutoff": [{"cutoff": t, **rates(log_odds, is_positive, max(spam_cutoff, t), t)}
                           for t in grid]}


# -- clustering against true classes -------------------------------------------------------------

def contingency(y_true: Sequence, y_pred: Sequence) -> np.ndarray:
    """n_ij, the documents of class i put in cluster j: ndarray of shape (n_classes, n_clusters)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1 or y_true.size == 0:
        raise ValueError(f"need one cluster per labeled document, at least one: "
                         f"{y_true.size} vs {y_pred.size}")
    _, rows = np.unique(y_true, return_inverse=True)
    _, cols = np.unique(y_pred, return_inverse=True)
    n_cols = cols.max() + 1
    return np.bincount(rows * n_cols + cols, minlength=(rows.max() + 1) * n_cols
                       ).reshape(-1, n_cols)


def normalized_mutual_info(y_true: Sequence, y_pred: Sequence) -> float:
    """NMI = I(Y; C) / ((H(Y) + H(C)) / 2), in [0, 1] (scikit-learn's default, "arithmetic");
    1 when both labelings have a single group, as scikit-learn defines it."""
    n = contingency(y_true, y_pred).astype(float)
    p = n / n.sum()
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    mutual = float((p[nz] * (np.log(p[nz]) - np.log(np.outer(rows, cols)[nz]))).sum())
    h_rows, h_cols = -float((rows * np.log(rows)).sum()), -float((cols * np.log(cols)).sum())
    if h_rows == 0 and h_cols == 0:
        return 1.0
    return max(mutual, 0.0) / ((h_rows + h_cols) / 2)


def adjusted_rand_index(y_true: Sequence, y_pred: Sequence) -> float:
    """ARI (Hubert & Arabie, 1985): (index − expected) / (max − expected) over the pairs
    Σ C(n_ij, 2), with expected = Σ C(a_i, 2) Σ C(b_j, 2) / C(n, 2); 1 for identical
    partitions, about 0 for random ones."""
    n = contingency(y_true, y_pred).astype(float)

    def pairs(x: np.ndarray) -> float:
        return float((x * (x - 1) / 2).sum())

    index, a, b = pairs(n), pairs(n.sum(axis=1)), pairs(n.sum(axis=0))
    total = pairs(np.array([n.sum()]))
    expected = a * b / total if total else 0.0
    maximum = (a + b) / 2
    if maximum == expected:  # both partitions trivial (one group, or all singletons)
        return 1.0
    return (index - expected) / (maximum - expected)


def purity(y_true: Sequence, y_pred: Sequence) -> float:
    """The share of documents in their cluster's majority class: Σ_j max_i n_ij / n."""
    n = contingency(y_true, y_pred)
    return float(n.max(axis=0).sum() / n.sum())


# -- multi-label -----------------------------------------------------------------------------

def multilabel_summary(y_true: np.ndarray, y_pred: np.ndarray, labels: Sequence) -> dict[str, Any]:
    """What ``textnb evaluate`` reports for a multi-label model, from bool indicator arrays
    (n_documents, n_labels): per label precision, recall, F1 and support; micro averages
    (TP, FP, FN summed over labels, then P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2PR/(P+R)); macro
    averages (the mean of the per-label values, a 0/0 counting 0, as scikit-learn's
    ``f1_score(average="macro")``); Hamming loss (the share of document–label pairs decided
    wrongly); subset accuracy (documents whose label set is exactly right)."""
    y_true, y_pred = np.asarray(y_true, dtype=bool), np.asarray(y_pred, dtype=bool)
    if y_true.shape != y_pred.shape or y_true.ndim != 2 or y_true.size == 0:
        raise ValueError(f"need indicator arrays of one shape, (documents, labels): "
                         f"{y_true.shape} vs {y_pred.shape}")
    if y_true.shape[1] != len(labels):
        raise ValueError(f"{y_true.shape[1]} indicator columns but {len(labels)} labels")
    tp = (y_true & y_pred).sum(axis=0).astype(float)
    predicted, actual = y_pred.sum(axis=0), y_true.sum(axis=0)
    precision, recall = _ratio(tp, predicted), _ratio(tp, actual)
    f1 = _ratio(2 * precision * recall, precision + recall)
    micro_p = _ratio(tp.sum(), predicted.sum())
    micro_r = _ratio(tp.sum(), actual.sum())
    return {
        "documents": int(y_true.shape[0]), "labels": [str(label) for label in labels],
        "precision": precision.tolist(), "recall": recall.tolist(), "f1": f1.tolist(),
        "support": actual.tolist(), "predicted": predicted.tolist(),
        "micro": {"precision": float(micro_p), "recall": float(micro_r),
                  "f1": float(_ratio(2 * micro_p * micro_r, micro_p + micro_r))},
        "macro": {"precision": float(precision.mean()), "recall": float(recall.mean()),
                  "f1": float(f1.mean())},
        "hamming_loss": float((y_true != y_pred).mean()),
        "subset_accuracy": float((y_true == y_pred).all(axis=1).mean()),
        "label_cardinality": float(y_true.sum(axis=1).mean()),
        "predicted_cardinality": float(y_pred.sum(axis=1).mean())}
