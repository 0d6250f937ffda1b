"""token lists → hashed columns (CRC-32 of UTF-8, 2**hash_bits) → csr_matrix of counts.

A HashedVocabulary keeps no terms. A term's column is the low ``hash_bits`` bits of the CRC-32
of its UTF-8 bytes, the same in every process, run and machine (Python's ``hash`` of a str is
salted per process). CRC-32 rather than BLAKE2b: a third of the time, and its terms fill as
many columns as a random function's would (docs/design/scale.md; ``python -m bench.hashing``).
Only each part's distinct terms are hashed, not every token.

Of the 2**hash_bits columns, those the training documents use and pruning keeps become the
model's columns, in increasing order (``columns_``): memory grows with the columns used, never
with the distinct terms, and a term seen only at prediction needs no entry. Pruning is
:class:`~textnb.text.vocabulary.Vocabulary`'s applied to columns: a column's document frequency is
that of the union of the terms hashed to it, ``min_df``/``max_df`` bound it, and
``max_features`` keeps the columns of the largest total counts (ties: lower column first).
Terms that share a column share its counts, as in scikit-learn's
``HashingVectorizer(alternate_sign=False)``; a fit here equals a fit on that matrix restricted
to its non-empty columns (tests/test_hashing.py).
"""

from __future__ import annotations

import zlib
from itertools import chain
from typing import Iterable, Sequence

import numpy as np

from ..nb.sparse import CSR
from ..settings import MAX_HASH_BITS, setting_problem  # noqa: F401 (MAX_HASH_BITS: this module's limit)
from .vocabulary import Counts, Vocabulary, as_count, presence, relabel, stack



def hash_columns(terms: Sequence[str], hash_bits: int) -> np.ndarray:
    """Each term's column: CRC-32 of its UTF-8 bytes, low ``hash_bits`` bits; int64 array."""
    crcs = np.fromiter(map(zlib.crc32, (t.encode("utf-8", "surrogatepass") for t in terms)),
                       dtype=np.int64, count=len(terms))
    return crcs & ((1 << hash_bits) - 1)


def check_hash_bits(hash_bits: object) -> int:
    """``hash_bits`` if a whole number from 1 to MAX_HASH_BITS (its rule in
    :data:`textnb.settings.RULES`), else ValueError."""
    problem = setting_problem("hash_bits", hash_bits)
    if hash_bits is None or problem:
        raise ValueError(problem or f"hash_bits must be a whole number from 1 to "
                                    f"{MAX_HASH_BITS}, not None")
    return int(hash_bits)


class HashedVocabulary(Vocabulary):
    """Columns chosen by hashing terms: a :class:`~textnb.text.vocabulary.Vocabulary` that keeps no
    terms.

    Parameters
    ----------
    hash_bits : int — 2**hash_bits possible columns.
    min_df, max_df, max_features, binary : as for Vocabulary, applied to columns.

    Attributes
    ----------
    columns_ : ndarray of int64, increasing — the hash columns kept, one per model column.
    terms_ : list of str — "#<column>" labels, for explanations (the terms are not kept).

    >>> v = HashedVocabulary(hash_bits=4).fit([["b", "a", "b"], ["c"]])
    >>> v.columns_.tolist(), v.count([["b", "b", "x", "a"]]).data.tolist()  # x shares a's column
    ([3, 9, 15], [2.0, 2.0])
    """

    def __init__(self, *, hash_bits: int, min_df: int | float = 1, max_df: int | float = 1.0,
                 max_features: int | None = None, binary: bool = False) -> None:
        self.hash_bits = hash_bits
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.binary = binary

    def __len__(self) -> int:
        return self.columns_.size

    @property
    def terms_(self) -> list[str]:
        return [f"#{c}" for c in self.columns_.tolist()]

    def fit_parts(self, parts: Iterable[Counts]) -> CSR:
        """Choose the columns of documents counted in parts; their counts over them, stacked."""
        bits = check_hash_bits(self.hash_bits)
        X = stack([rename_columns(part.matrix, hash_columns(part.terms, bits)[part.matrix.indices],
                            1 << bits) for part in parts])
        if X.shape[0] == 0:
            raise ValueError("cannot build a vocabulary from no documents")
        # The columns used, numbered in increasing order: renumbering keeps rows sorted.
        used, inverse = np.unique(X.indices, return_inverse=True)
        df = np.bincount(inverse, minlength=used.size)
        keep = (df >= as_count(self.min_df, X.shape[0], "min_df")) & \
               (df <= as_count(self.max_df, X.shape[0], "max_df"))
        if self.max_features is not None:
            if int(self.max_features) < 1:
                raise ValueError(f"max_features must be a positive number, got {self.max_features}")
            total = np.bincount(inverse, weights=X.data, minlength=used.size)
            ranked = np.flatnonzero(keep)[np.argsort(-total[keep], kind="stable")]
            keep = np.zeros_like(keep)
            keep[ranked[:int(self.max_features)]] = True
        if not keep.any():
            raise ValueError("empty vocabulary: every token was a stop word or was pruned by "
                             "min_df/max_df; try fewer stop words or a lower min_df")
        self.columns_ = used[keep]
        X = relabel(CSR(X.data, inverse.ravel(), X.indptr, X.shape),
                     np.where(keep, np.cumsum(keep) - 1, -1), self.columns_.size)
        return presence(X) if self.binary else X

    def count_parts(self, parts: Iterable[Counts], unseen: bool = False) -> CSR:
        """Counts over the kept columns (CSR of shape (n_documents, len(self))), stacked.
        ``unseen`` is :class:`Vocabulary`'s; here every word has a column (its hash's), so a
        word never counted is scored as its column is, and none is kept apart."""
        X = stack([rename_columns(part.matrix, self._positions(part.terms)[part.matrix.indices],
                            len(self)) for part in parts]
                  or [CSR(np.zeros(0), np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64),
                          (0, len(self)))])  # no documents
        return presence(X) if self.binary else X

    def grow(self, token_lists: Iterable[Sequence[str]]) -> np.ndarray:
        """Add the columns of tokens not yet kept; the positions, in the old column order,
        before which the new columns go (``numpy.insert`` semantics), as Vocabulary.grow."""
        old = getattr(self, "columns_", np.zeros(0, dtype=np.int64))
        found = hash_columns(list(set(chain.from_iterable(token_lists))),
                             check_hash_bits(self.hash_bits))
        new = np.setdiff1d(found, old)
        positions = np.searchsorted(old, new)
        self.columns_ = np.insert(old, positions, new)
        return positions

    def _extend(self, part: Counts) -> CSR:
        """A part's counts over the kept columns, with its columns not yet kept added after
        the others (unsorted until :meth:`_settle`); the part's terms that share a column are
        summed in it first, in column order, as :meth:`count_parts` sums them."""
        X = rename_columns(part.matrix, hash_columns(part.terms, check_hash_bits(self.hash_bits))
                    [part.matrix.indices], 1 << self.hash_bits)
        old = getattr(self, "columns_", np.zeros(0, dtype=np.int64))
        used, inverse = np.unique(X.indices, return_inverse=True)
        ids = np.full(used.size, -1, dtype=np.int64)
        if old.size:
            by_column = np.argsort(old, kind="stable")
            at = np.minimum(np.searchsorted(old[by_column], used), old.size - 1)
            ids = np.where(old[by_column[at]] == used, by_column[at], -1)
        new = ids < 0
        ids[new] = np.arange(old.size, old.size + int(new.sum()))
        self.columns_ = np.concatenate([old, used[new]])
        return CSR(X.data, ids[inverse.ravel()], X.indptr, (X.shape[0], self.columns_.size))

    def _settle(self, first: int) -> np.ndarray | None:
        """Sort the columns again after :meth:`_extend`: the old position of each, or None."""
        if self.columns_.size == first:
            return None
        order = np.argsort(self.columns_, kind="stable")
        self.columns_ = self.columns_[order]
        return order

    def _forget(self, first: int) -> None:
        if hasattr(self, "columns_"):
            self.columns_ = self.columns_[:first]

    def subset(self, kept: np.ndarray) -> "HashedVocabulary":
        """A vocabulary of the columns at positions ``kept`` (increasing) only."""
        vocabulary = HashedVocabulary(hash_bits=self.hash_bits, min_df=self.min_df,
                                      max_df=self.max_df, max_features=self.max_features,
                                      binary=self.binary)
        vocabulary.columns_ = self.columns_[kept]
        return vocabulary

    def names(self, tokens: Sequence[str]) -> dict[int, str]:
        """Position of a kept column → the given tokens hashed to it, "|"-joined (else its
        "#<column>" label): what a document's contributions can be called without terms."""
        distinct = sorted(set(tokens))
        names = dict(enumerate(self.terms_))
        found: dict[int, list[str]] = {}
        for token, k in zip(distinct, self._positions(distinct).tolist()):
            if k >= 0:
                found.setdefault(k, []).append(token)
        names.update((k, "|".join(group)) for k, group in found.items())
        return names

    @classmethod
    def restore(cls, hash_bits: object, columns: np.ndarray, **settings) -> "HashedVocabulary":
        """A fitted vocabulary of the given columns; ValueError unless they are increasing
        column numbers below 2**hash_bits."""
        bits = check_hash_bits(hash_bits)
        columns = np.asarray(columns)
        if columns.ndim != 1 or (columns.size and not np.issubdtype(columns.dtype, np.integer)):
            raise ValueError("the hashed columns must be a list of column numbers")
        columns = columns.astype(np.int64)
        if columns.size and (columns[0] < 0 or columns[-1] >= 1 << bits
                             or (np.diff(columns) <= 0).any()):
            raise ValueError(f"the hashed columns must increase, from 0 to 2**{bits} − 1")
        vocabulary = cls(hash_bits=bits, **settings)
        vocabulary.columns_ = columns
        return vocabulary

    def _positions(self, terms: Sequence[str]) -> np.ndarray:
        """Each term's position among the kept columns, −1 if its column is not kept."""
        columns = hash_columns(terms, check_hash_bits(self.hash_bits))
        if not len(self):
            return np.full(columns.size, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.columns_, columns), len(self) - 1)
        return np.where(self.columns_[at] == columns, at, -1)


def rename_columns(X: CSR, new: np.ndarray, n_columns: int) -> CSR:
    """X with each entry moved to column ``new[i]`` (one per entry; −1 drops it), entries that
    meet in a row summed: rows stay sorted, with no repeated column."""
    rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))
    kept = new >= 0
    keys, inverse = np.unique(rows[kept] * max(n_columns, 1) + new[kept], return_inverse=True)
    data = np.bincount(inverse.ravel(), weights=X.data[kept], minlength=keys.size)
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // max(n_columns, 1), minlength=X.shape[0]), out=indptr[1:])
    indices = keys % max(n_columns, 1)
    return CSR(data, indices.astype(np.int32 if n_columns <= 2**31 else np.int64), indptr,
               (X.shape[0], n_columns))
