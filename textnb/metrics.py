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


def stratified_folds(labels: Sequence[Any], k: int, seed: int = 0) -> np.ndarray:
    """Fold number (0..k−1) of each document: each class is shuffled and dealt round-robin,
    so every fold holds about 1/k of every class."""
    labels = np.asarray(labels)
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    _, counts = np.unique(labels, return_counts=True)
    if counts.min() < k:
        raise ValueError(f"a class has {counts.min()} documents, fewer than the {k} folds")
    rng = np.random.default_rng(seed)
    fold = np.empty(labels.size, dtype=np.int64)
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        fold[members] = (np.arange(members.size) + rng.integers(k)) % k
    return fold


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
