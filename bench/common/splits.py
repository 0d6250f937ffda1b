"""Seeded splits, folds and samples: every study that names a seed draws the same parts.

``stratified_split(y, 0.7, seed)`` is the 70/30 split the spam studies share (bench.spam,
bench.tune, bench.filter, ...); ``stratified_folds`` deals each class round robin to the folds.
(textnb.folds.stratified_folds, which textnb's own cross-validation uses, starts each class at
a random fold: bench.ngrams, bench.stopwords and bench.ranking use that one.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def stratified_split(y: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a stratified (train, test) split, ``fraction`` of each class to train."""
    rng = np.random.default_rng(seed)
    train = []
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        train.append(members[:int(round(fraction * members.size))])
    train = np.sort(np.concatenate(train))
    return train, np.setdiff1d(np.arange(y.size), train)


def stratified_folds(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold number (0..k−1) of each document: each class shuffled and dealt round robin."""
    rng = np.random.default_rng(seed)
    fold = np.empty(y.size, dtype=np.int64)
    start = 0
    for label in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == label))
        fold[members] = (start + np.arange(members.size)) % k
        start += members.size  # continue dealing where the last class stopped: equal folds
    return fold


def time_split(paths: list[str], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a SpamAssassin (train, test) split by time: the 2002 parts (spam/, easy_ham/)
    train, the 2003 ones (spam_2/, easy_ham_2/) test, and hard_ham/ (no second part) is halved
    by ``seed``."""
    part = np.array([Path(p).parent.name for p in paths])
    hard = np.random.default_rng(seed).permutation(np.flatnonzero(part == "hard_ham"))
    train = np.isin(part, ["spam", "easy_ham"])
    train[hard[:hard.size // 2]] = True
    return np.flatnonzero(train), np.flatnonzero(~train)


def sample_split(y: np.ndarray, spam: int, ham: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a split that trains on ``spam`` spam and ``ham`` ham drawn at random
    (``seed``) and tests on every other message: a user's first, small folders."""
    rng = np.random.default_rng(seed)
    train = np.sort(np.r_[rng.choice(np.flatnonzero(y == "spam"), spam, replace=False),
                          rng.choice(np.flatnonzero(y != "spam"), ham, replace=False)])
    return train, np.setdiff1d(np.arange(y.size), train)


def stratified_sample(y: np.ndarray, indices: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n of ``indices``, stratified by class as in the population, seeded; in a random order."""
    rng = np.random.default_rng(seed)
    picked = []
    for label in np.unique(y[indices]):
        members = indices[y[indices] == label]
        k = max(1, int(round(n * members.size / indices.size)))
        picked.append(rng.choice(members, size=min(k, members.size), replace=False))
    picked = np.concatenate(picked)[:n]
    return rng.permutation(picked)


def later(groups: np.ndarray, numbers: np.ndarray, share: float = 0.3) -> np.ndarray:
    """Mask of each group's last ``share`` of documents by number (a newsgroup's article
    numbers grow with time)."""
    held = np.zeros(groups.size, dtype=bool)
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        ordered = members[np.argsort(numbers[members], kind="stable")]
        held[ordered[int(round((1 - share) * ordered.size)):]] = True
    return held
