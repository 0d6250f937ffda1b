"""token lists → Vocabulary (sorted terms) → csr_matrix of counts or presence.

Terms are kept in sorted order, so a vocabulary built in pieces equals one built at once, and
two vocabularies can be merged by a sorted union. Tokens outside the vocabulary are ignored
(Mitchell's "positions that contain tokens found in Vocabulary", seed 001).
"""

from __future__ import annotations

from bisect import bisect_left
from array import array
from collections import defaultdict
from itertools import chain, count
from typing import Iterable, Sequence

import numpy as np

from .models import CSR


class Vocabulary:
    """The terms of a corpus, each a column of the count matrix.

    Parameters
    ----------
    min_df : int or float — keep terms in at least this many documents (a float in (0, 1] is a
        proportion of the documents).
    max_df : int or float — keep terms in at most this many documents (float: proportion);
        1.0 keeps all. Very common terms carry little class information (seed 003's stop words).
    max_features : int, optional — keep the most frequent terms only (ties broken by term).
    binary : bool — presence (1) instead of counts, for the Bernoulli model.

    Attributes
    ----------
    terms_ : list of str, sorted; index_ : dict term → column.

    >>> v = Vocabulary().fit([["b", "a", "b"], ["c"]])
    >>> v.terms_, v.count([["b", "b", "x", "a"]]).data.tolist()
    (['a', 'b', 'c'], [1.0, 2.0])
    """

    def __init__(self, *, min_df: int | float = 1, max_df: int | float = 1.0,
                 max_features: int | None = None, binary: bool = False) -> None:
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.binary = binary

    def __len__(self) -> int:
        return len(self.terms_)

    def fit(self, token_lists: Iterable[Sequence[str]]) -> "Vocabulary":
        """Choose the terms of ``token_lists``; returns self."""
        self.fit_count(token_lists)
        return self

    def fit_count(self, token_lists: Iterable[Sequence[str]]) -> CSR:
        """Fit, and return the documents' counts over the chosen terms (one pass over tokens)."""
        # A new token gets the next id from the default factory, all in C; ids are kept as
        # compact arrays of 8-byte ints rather than lists of Python ints (a third of the memory).
        index: defaultdict[str, int] = defaultdict(count().__next__)
        ids = [array("q", map(index.__getitem__, tokens)) for tokens in token_lists]
        if not ids:
            raise ValueError("cannot build a vocabulary from no documents")
        X = _count(ids, len(index), binary=False)
        df = np.bincount(X.indices, minlength=len(index))
        keep = (df >= _as_count(self.min_df, len(ids), "min_df")) & \
               (df <= _as_count(self.max_df, len(ids), "max_df"))
        provisional = np.array(list(index), dtype=object)
        if self.max_features is not None:
            if int(self.max_features) < 1:
                raise ValueError(f"max_features must be a positive number, got {self.max_features}")
            total = np.bincount(X.indices, weights=X.data, minlength=len(index))
            candidates = np.flatnonzero(keep)
            # Most frequent first, ties in term order, so the choice is deterministic.
            ranked = sorted(candidates.tolist(), key=lambda i: (-total[i], provisional[i]))
            keep = np.zeros_like(keep)
            keep[ranked[:int(self.max_features)]] = True
        kept = np.flatnonzero(keep)
        if kept.size == 0:
            raise ValueError("empty vocabulary: every token was a stop word or was pruned by "
                             "min_df/max_df; try fewer stop words or a lower min_df")
        # Python's string order, as grow()'s bisect uses: numpy's str dtype ignores trailing NULs.
        order = kept[sorted(range(kept.size), key=provisional[kept].__getitem__)]
        self.terms_ = provisional[order].tolist()
        self.index_ = {term: i for i, term in enumerate(self.terms_)}
        column = np.full(len(index), -1, dtype=np.int64)
        column[order] = np.arange(order.size)
        return _remap(X, column, order.size, self.binary)

    def count(self, token_lists: Iterable[Sequence[str]]) -> CSR:
        """Counts (or presence) of the vocabulary's terms: CSR of shape (n_documents, n_terms)."""
        get = self.index_.get
        ids = [array("q", [i for i in map(get, tokens) if i is not None]) for tokens in token_lists]
        return _count(ids, len(self.terms_), self.binary)

    def transform(self, token_lists: Iterable[Sequence[str]]):
        """``count`` as a ``scipy.sparse.csr_matrix`` of shape (n_documents, n_terms)."""
        return to_scipy(self.count(token_lists))

    def fit_transform(self, token_lists: Iterable[Sequence[str]]):
        return to_scipy(self.fit_count(token_lists))

    def grow(self, token_lists: Iterable[Sequence[str]]) -> np.ndarray:
        """Add the tokens not yet in the vocabulary as terms, keeping the terms sorted.

        Returns the positions, in the old column order, before which the new columns go
        (``numpy.insert`` semantics), so a model's counts can be widened to match.
        """
        new = sorted({t for tokens in token_lists for t in tokens} - self.index_.keys())
        positions = np.array([bisect_left(self.terms_, t) for t in new], dtype=np.int64)
        if new:
            self.terms_ = list(np.insert(np.array(self.terms_, dtype=object), positions, new))
            self.index_ = {term: i for i, term in enumerate(self.terms_)}
        return positions


def to_scipy(X: CSR):
    """Wrap CSR arrays as a scipy.sparse.csr_matrix (imported here: it costs 0.3 s)."""
    from scipy.sparse import csr_matrix
    return csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)


def _as_count(value: int | float, n_documents: int, name: str) -> float:
    if isinstance(value, float) and 0.0 < value <= 1.0:
        return value * n_documents
    if value >= 1 and float(value).is_integer():
        return float(value)
    raise ValueError(f"{name} must be a whole number of documents or a proportion in (0, 1], "
                     f"got {value!r}")


def _count(ids: list[array], n_terms: int, binary: bool) -> CSR:
    """Per-document term ids → CSR counts, summing repeats with one sort over all entries."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    keys, counts = np.unique(rows * n_terms + flat, return_counts=True)
    indptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // max(n_terms, 1), minlength=len(ids)), out=indptr[1:])
    data = np.ones(keys.size) if binary else counts.astype(float)
    return CSR(data, (keys % max(n_terms, 1)).astype(np.int32), indptr, (len(ids), n_terms))


def _remap(X: CSR, column: np.ndarray, n_terms: int, binary: bool) -> CSR:
    """Renumber X's columns (−1 drops a column), keeping each row's columns sorted."""
    new = column[X.indices]
    rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))
    kept = new >= 0
    rows, new, data = rows[kept], new[kept], X.data[kept]
    order = np.lexsort((new, rows))
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
    data = np.ones(data.size) if binary else data[order]
    return CSR(data, new[order].astype(np.int32), indptr, (X.shape[0], n_terms))
