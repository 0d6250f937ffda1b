"""labels → stratified folds: each document's fold for cross-validation, copies kept together.

The one home of fold assignment: ``textnb evaluate --cv``, tuning, and the cross-validations
of a classifier's cutoffs and decision threshold all deal their folds here.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def usable_folds(y: np.ndarray, most: int, groups: np.ndarray | None) -> np.ndarray | None:
    """Each document's number among stratified folds of the labels ``y``: ``most``, or fewer
    where a class has fewer distinct documents (copies, one ``groups`` key, are one and share a
    fold); None where that is under two, or where a class ends in one fold (copies of another
    class's documents go where those go), whose model of the other folds would have none of it."""
    sizes = [np.unique(groups[y == c]).size if groups is not None else int((y == c).sum())
             for c in np.unique(y)]
    k = min(most, *sizes)
    if k < 2:
        return None
    folds = stratified_folds(y, k, groups=groups)
    return folds if all(np.unique(folds[y == c]).size >= 2 for c in np.unique(y)) else None


def stratified_folds(labels: Sequence[Any], k: int, seed: int = 0,
                     groups: np.ndarray | None = None) -> np.ndarray:
    """Fold number (0..k−1) of each document: each class is shuffled and dealt round-robin,
    so every fold holds about 1/k of every class. With ``groups`` (a key a document, such as
    its digest), the documents of a group all go where the first of them goes, whatever their
    class: a copy of a held-out document is never in the model that scores it, and every other
    document is dealt as without groups."""
    labels = np.asarray(labels)
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    _, counts = np.unique(labels, return_counts=True)
    if counts.min() < k:
        raise ValueError(f"a class has {counts.min()} documents, fewer than the {k} folds")
    fold = _deal(labels, k, seed)
    if groups is not None:
        _, first, group = np.unique(groups, return_index=True, return_inverse=True)
        fold = fold[first[group.ravel()]]
    return fold


def small_class_folds(labels: Sequence[Any], most: int, seed: int = 0) -> tuple[np.ndarray, int]:
    """(fold of each document, k): folds for classes of any size, as tuning deals them. k is
    ``most``, or the largest class's size where that is smaller (every fold then holds some
    document). Each class is dealt as :func:`stratified_folds` deals it, so a class of fewer
    documents than folds has one in each of as many folds and is in the training part of every
    fold; a class of one document is never held out (fold −1: always in training), since the
    model of the other folds would have none of it. ValueError if no class has two documents."""
    labels = np.asarray(labels)
    names, row_class, counts = np.unique(labels, return_inverse=True, return_counts=True)
    k = int(min(most, counts.max()))
    if k < 2:
        raise ValueError("cross-validation needs a class of at least two documents")
    fold = _deal(labels, k, seed)
    fold[counts[row_class.ravel()] < 2] = -1
    return fold, k


def _deal(labels: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Each class shuffled and dealt round robin to k folds from a random one."""
    rng = np.random.default_rng(seed)
    fold = np.empty(labels.size, dtype=np.int64)
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        fold[members] = (np.arange(members.size) + rng.integers(k)) % k
    return fold
