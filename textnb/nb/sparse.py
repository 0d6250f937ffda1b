"""CSR arrays without scipy: CSR, the counts a model file stores, row sums and divisions,
log-sum-exp; in C where textnb/_scores.c was built, else numpy's loops (the same sums)."""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple

import numpy as np

try:  # the loops over a CSR matrix's entries in C (textnb/_scores.c), where it was built
    from .. import _scores as _fast
except ImportError:  # no C compiler at install time: numpy's bincount, the same sums
    _fast = None


class Unseen(NamedTuple):
    """Each document's words outside the vocabulary, one entry a distinct word: its count (or,
    once weighed, its weight), row r's in ``data[indptr[r]:indptr[r + 1]]``."""

    data: np.ndarray
    indptr: np.ndarray


class CSR(NamedTuple):
    """The three arrays of a compressed sparse row matrix, and its shape (no scipy needed);
    ``unseen``: the rows' words outside the columns, where vectorising kept them
    (:class:`Unseen`), which a model scores as terms it never counted
    (:attr:`textnb.nb.discrete.DiscreteNB.unseen_weight_`)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]
    unseen: "Unseen | None" = None


class StoredCounts(NamedTuple):
    """``feature_count_`` as a model file holds it: the non-zero counts, term by term (CSR over
    terms: term k's counts are ``values[indptr[k]:indptr[k + 1]]``, of the classes ``classes``
    there, ascending). A model restored from them scores without the dense (n_classes, n_terms)
    array (20 Newsgroups: 27 MB dense, 4 MB stored), which is built when first asked for."""

    indptr: np.ndarray
    classes: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def of(cls, counts: np.ndarray) -> "StoredCounts":
        """The non-zero counts of dense ``counts`` (n_classes, n_terms), by term."""
        term, classes = np.nonzero(counts.T)
        indptr = np.zeros(counts.shape[1] + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=counts.shape[1]), out=indptr[1:])
        return cls(indptr, classes, counts[classes, term], counts.shape)

    def _terms(self) -> np.ndarray:
        return np.repeat(np.arange(self.shape[1]), np.diff(self.indptr).astype(np.int64))

    def dense(self) -> np.ndarray:
        """ndarray of shape (n_classes, n_terms), float64."""
        counts = np.zeros(self.shape)
        counts.ravel()[self.classes.astype(np.int64) * self.shape[1] + self._terms()] = self.values
        return counts

    def columns(self, columns: np.ndarray) -> np.ndarray:
        """The dense counts of the given terms: ndarray of shape (n_classes, len(columns))."""
        starts, lengths = self.indptr[columns].astype(np.int64), np.diff(self.indptr)[columns]
        lengths = lengths.astype(np.int64)
        column = np.repeat(np.arange(len(columns)), lengths)
        ends = np.cumsum(lengths)
        entry = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(starts - ends + lengths,
                                                                          lengths)
        block = np.zeros((self.shape[0], len(columns)))
        block[self.classes[entry].astype(np.int64), column] = self.values[entry]
        return block

    def rows(self) -> Iterator[np.ndarray]:
        """Each class's counts in turn, ndarray of shape (n_terms,)."""
        for c in range(self.shape[0]):
            at = np.flatnonzero(self.classes == c)  # its entries; their terms by the indptr
            row = np.zeros(self.shape[1])
            row[np.searchsorted(self.indptr, at, side="right") - 1] = self.values[at]
            yield row

    def total(self) -> np.ndarray:
        """Σ_c n_kc, ndarray of shape (n_terms,): the classes added in order, as a sum over the
        rows of the dense counts adds them (a zero count adds nothing)."""
        return np.bincount(self._terms(), weights=self.values, minlength=self.shape[1])


def as_csr(X: Any) -> CSR:
    """Return X's CSR arrays: from scipy.sparse, a CSR tuple, or a dense array-like.

    ValueError for complex numbers (a cast to float would drop their imaginary parts silently)
    and for anything but two dimensions.
    """
    if isinstance(X, CSR):
        csr = X
    elif hasattr(X, "tocsr"):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        csr = CSR(X.data, X.indices, X.indptr, X.shape)
    else:
        csr = None
    if csr is not None:
        if np.iscomplexobj(csr.data):
            raise ValueError("Complex data not supported: X holds complex numbers, not counts")
        return csr
    dense = np.asarray(X)
    if np.iscomplexobj(dense):
        raise ValueError("Complex data not supported: X holds complex numbers, not counts")
    dense = np.asarray(dense, dtype=float)
    if dense.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (documents × terms), got shape {dense.shape}. "
                         f"Reshape your data: X.reshape(1, -1) for one document")
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
    return CSR(dense[rows, cols], cols, indptr, dense.shape)


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """log Σ exp(a) along ``axis``, computed as m + log Σ exp(a − m) so nothing overflows."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)), axis)


def row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each CSR row's values (float64), added in the row's order from 0.0, as scipy's
    X.sum(axis=1) adds them: in C where it was built (textnb/_scores.c)."""
    values = np.ascontiguousarray(values, dtype=float)
    if _fast is not None:
        return np.frombuffer(_fast.row_sums(values, np.ascontiguousarray(indptr)))
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    return np.bincount(rows, weights=values, minlength=indptr.size - 1)


def divide_rows(values: np.ndarray, indptr: np.ndarray, by: np.ndarray) -> None:
    """Each CSR row r's values divided by ``by[r]``, in place."""
    if _fast is not None and values.dtype == np.float64 and values.flags.c_contiguous:
        _fast.divide_rows(values, np.ascontiguousarray(indptr),
                          np.ascontiguousarray(by, dtype=float))
    else:
        values /= np.repeat(by, np.diff(indptr))


def used_terms(indices: np.ndarray, n_terms: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(indices, return_inverse=True)`` for term numbers in [0, n_terms): for a
    batch of many entries, by marking them rather than sorting them (a SpamAssassin fold's
    200,000 entries 7.7 → 1 ms); a few, beside many terms, sort faster than n_terms are marked
    (one message: 21 against 34 µs; even at one entry in 32 terms, as fast either way)."""
    if indices.size * 32 < n_terms:
        return np.unique(indices, return_inverse=True)
    if _fast is not None:  # the same marking in C (textnb/_scores.c), two passes, not five
        used, inverse = _fast.used_terms(np.ascontiguousarray(indices), n_terms)
        return (np.frombuffer(used, dtype=np.int64).astype(indices.dtype),
                np.frombuffer(inverse, dtype=np.intp))
    mark = np.zeros(n_terms, dtype=bool)
    mark[indices] = True
    used = np.flatnonzero(mark).astype(indices.dtype, copy=False)
    place = np.empty(n_terms, dtype=np.intp)
    place[used] = np.arange(used.size)
    return used, place[indices]
