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
    rng = np.random.default_rng(seed)
    fold = np.empty(labels.size, dtype=np.int64)
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        fold[members] = (np.arange(members.size) + rng.integers(k)) % k
    if groups is not None:
        _, first, group = np.unique(groups, return_index=True, return_inverse=True)
        fold = fold[first[group.ravel()]]
    return fold
