"""token lists → Vocabulary (sorted terms) → csr_matrix of counts or presence.

Terms are kept in sorted order, so a vocabulary built in pieces equals one built at once, and
two vocabularies can be merged by a sorted union. Tokens outside the vocabulary are ignored
(Mitchell's "positions that contain tokens found in Vocabulary", Machine Learning, ch. 6).
"""

from __future__ import annotations

from bisect import bisect_left
import operator
from itertools import chain, repeat
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from . import counting
from ..nb.sparse import CSR, Unseen

try:  # relabelling columns in C (textnb/_scores.c), where it was built
    from .. import _scores
except ImportError:  # numpy's indexing, the same arrays
    _scores = None


class Vocabulary:
    """The terms of a corpus, each a column of the count matrix.

    Parameters
    ----------
    min_df : int or float — keep terms in at least this many documents (a float in (0, 1] is a
        proportion of the documents).
    max_df : int or float — keep terms in at most this many documents (float: proportion);
        1.0 keeps all. Very common terms carry little class information (stop words).
    max_features : int, optional — keep the most frequent terms only (ties broken by term).
    binary : bool — presence (1) instead of counts, for the Bernoulli model.

    Attributes
    ----------
    terms_ : list of str
        The terms, sorted.
    index_ : dict
        Term → column (a restored vocabulary builds it when first asked for, and until then
        looks its terms up by bisection).

    Examples
    --------

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

    @property
    def index_(self) -> dict[str, int]:
        """dict term → column, built from ``terms_`` when first asked for."""
        index = self.__dict__.get("_index")
        if index is None:
            terms = self.terms_  # AttributeError before fit: hasattr says False
            index = self._index = dict(zip(terms, range(len(terms))))
        return index

    @index_.setter
    def index_(self, index: dict[str, int]) -> None:
        self._index = index

    def drop_index(self) -> None:
        """Let go of ``index_``, built again when first asked for: a trained vocabulary that is
        saved or scores next needs none (a million documents' 0.9 million terms: some 60 MB
        of dict and numbers beside the terms themselves)."""
        self.__dict__.pop("_index", None)

    def _lookup(self, terms: list[str]) -> np.ndarray:
        """The column of each of ``terms``, −1 where it is not a term: by the index if built,
        else, which spares building it (a loaded model never builds it), by each term's hash
        (Python's own) among the sorted hashes of ``terms_`` once as many terms were looked up
        as an eighth of them, and by bisection before (a message's few hundred tokens are
        bisected faster than the hashes are made)."""
        index = self.__dict__.get("_index")
        if index is not None:
            return number(index, terms)
        known, n = self.terms_, len(self.terms_)
        if not n:
            return np.full(len(terms), -1, dtype=np.int64)
        self._looked_up = self.__dict__.get("_looked_up", 0) + len(terms)
        if 8 * self._looked_up < n and "_hashed" not in self.__dict__:
            return self._bisected(terms)
        hashes, columns = self._hashes()
        wanted = np.fromiter(map(hash, terms), dtype=np.int64, count=len(terms))
        # Looked up in ascending order, each search starts near the last one's place in memory:
        # a part's 10,000 terms among 182,000 in a third of the time, the sort included.
        order = np.argsort(wanted)
        at = np.empty(len(terms), dtype=np.int64)
        at[order] = np.minimum(np.searchsorted(hashes, wanted[order]), n - 1)
        found = np.where(hashes[at] == wanted, columns[at], -1)
        hit = np.flatnonzero(found >= 0)
        same = np.fromiter(map(operator.eq, map(known.__getitem__, found[hit].tolist()),
                               map(terms.__getitem__, hit.tolist())), dtype=bool, count=hit.size)
        # A hash shared by two strings (as likely as 2^-64 a pair): bisection decides.
        clash = hit[~same]
        found[clash] = self._bisected([terms[i] for i in clash.tolist()])
        return found

    def _bisected(self, terms: list[str]) -> np.ndarray:
        """:meth:`_lookup` by bisection of the sorted terms."""
        known, n = self.terms_, len(self.terms_)
        at = np.fromiter(map(bisect_left, repeat(known), terms), dtype=np.int64, count=len(terms))
        nearest = np.minimum(at, n - 1).tolist()
        hit = np.fromiter(map(operator.eq, map(known.__getitem__, nearest), terms), dtype=bool,
                          count=len(terms))
        return np.where(hit, at, -1)

    def __getstate__(self) -> dict:
        # Python's string hashes differ from process to process (a worker is sent a model):
        # another process makes them again.
        return {name: value for name, value in self.__dict__.items() if name != "_hashed"}

    def _hashes(self) -> tuple[np.ndarray, np.ndarray]:
        """The hashes of ``terms_``, sorted, and the column of each; made once a vocabulary."""
        cached = self.__dict__.get("_hashed")
        if cached is None or cached[0] is not self.terms_ or cached[1] != len(self.terms_):
            hashes = np.fromiter(map(hash, self.terms_), dtype=np.int64, count=len(self.terms_))
            columns = np.argsort(hashes, kind="stable")
            cached = self._hashed = (self.terms_, len(self.terms_), hashes[columns], columns)
        return cached[2], cached[3]

    def fit(self, token_lists: Iterable[Sequence[str]]) -> "Vocabulary":
        """Choose the terms of ``token_lists``; returns self."""
        self.fit_count(token_lists)
        return self

    def fit_count(self, token_lists: Iterable[Sequence[str]]) -> CSR:
        """Fit, and return the documents' counts over the chosen terms (one pass over tokens)."""
        return self.fit_parts([count_tokens(token_lists)])

    def fit_parts(self, parts: Iterable[Counts]) -> CSR:
        """Fit on documents counted in parts (see :func:`count_tokens`); their counts, stacked.

        ``parts`` may be a generator: each part's terms are let go once numbered, so only the
        distinct terms of all parts and the parts' arrays are held, never every part's terms.
        """
        # A term's number is its order of first appearance; sorting the terms at the end gives
        # each its column. A part's terms are sorted, so its columns, renamed, stay sorted.
        numbers: dict[str, int] = {}
        numbered = [(part.matrix, number(numbers, part.terms, add=True)) for part in parts]
        terms = list(numbers)
        del numbers
        if not numbered:
            raise ValueError("cannot build a vocabulary from no documents")
        order = sorted(range(len(terms)), key=terms.__getitem__)
        rank = np.empty(len(terms), dtype=np.int64)
        rank[order] = np.arange(len(terms))
        terms = [terms[i] for i in order]
        del order
        X = _stack_renamed(numbered, rank, len(terms))
        if X.shape[0] == 0:
            raise ValueError("cannot build a vocabulary from no documents")
        df = np.bincount(X.indices, minlength=len(terms))
        keep = (df >= as_count(self.min_df, X.shape[0], "min_df")) & \
               (df <= as_count(self.max_df, X.shape[0], "max_df"))
        if self.max_features is not None:
            if int(self.max_features) < 1:
                raise ValueError(f"max_features must be a positive number, got {self.max_features}")
            total = np.bincount(X.indices, weights=X.data, minlength=len(terms))
            # Most frequent first, ties in term order (a stable sort of sorted terms).
            ranked = np.flatnonzero(keep)[np.argsort(-total[keep], kind="stable")]
            keep = np.zeros_like(keep)
            keep[ranked[:int(self.max_features)]] = True
        kept = np.flatnonzero(keep)
        if kept.size == 0:
            raise ValueError("empty vocabulary: every token was a stop word or was pruned by "
                             "min_df/max_df; try fewer stop words or a lower min_df")
        if kept.size < len(terms):
            X = relabel(X, np.cumsum(keep) - 1 - np.where(keep, 0, len(terms)), kept.size)
            terms = [terms[i] for i in kept.tolist()]
        # The index is built when first asked for: scoring finds terms without it (_lookup), and
        # word pairs' 1.2 million terms took a second to index (20 Newsgroups' --tune).
        self.terms_ = terms
        for name in ("_index", "_hashed", "_looked_up"):
            self.__dict__.pop(name, None)
        return presence(X) if self.binary else X

    @property
    def keeps_all(self) -> bool:
        """Whether every term found is kept, of any document frequency."""
        return (type(self.min_df) is int and self.min_df == 1 and type(self.max_df) is float
                and self.max_df == 1.0 and self.max_features is None)

    def fit_pairs(self, parts: Iterable[tuple[Counts, Any]]) -> CSR:
        """Fit on documents' words and word pairs counted apart, a part at a time
        (:func:`textnb.text.features.count_stream` with ``pairs``), without the pairs of one
        document: the terms and counts of :meth:`fit_parts` of the pairs' strings ("a b")
        less those pairs' columns, but a pair is two words' numbers until it is kept, and only
        the kept pairs' strings are made (docs/design/training-speed.md). Every document
        frequency is allowed (``min_df`` 1, ``max_df`` 1.0, no ``max_features``). SpacedWord
        (a ValueError) for a word that holds a space, whose pairs' strings could be another
        pair's."""
        if not self.keeps_all:
            raise ValueError("pairs are counted apart with every document frequency kept")
        numbers: dict[str, int] = {}
        held = []  # a part's word counts, its words' numbers, its pairs' counts and numbers
        for words, pairs in parts:
            at = number(numbers, words.terms, add=True)
            held.append((words.matrix, at, pairs.matrix, at[pairs.words]))
        terms = list(numbers)
        del numbers
        if not held or sum(part[0].shape[0] for part in held) == 0:
            raise ValueError("cannot build a vocabulary from no documents")
        if any(" " in term for term in terms):
            raise SpacedWord("a word holds a space: its pairs cannot be told from others")
        # A pair's key: its words' numbers in one int64. A document counts a pair once, so the
        # documents that hold it are its entries.
        keys = [(a[:, 0] << 32 | a[:, 1]) if a.size else np.zeros(0, dtype=np.int64)
                for *_, a in held]
        kept, frequency = np.unique(np.concatenate([key[pairs.indices] for key, (_, _, pairs, _)
                                                    in zip(keys, held)]), return_counts=True)
        kept = kept[frequency >= 2]
        del frequency
        n_words = len(terms)
        terms += map(" ".join, zip(map(terms.__getitem__, (kept >> 32).tolist()),
                                   map(terms.__getitem__, (kept & 0xFFFFFFFF).tolist())))
        order = sorted(range(len(terms)), key=terms.__getitem__)
        rank = np.empty(len(terms), dtype=np.int64)
        rank[order] = np.arange(len(terms))
        terms = [terms[i] for i in order]
        del order
        merged = []
        for i, key in enumerate(keys):
            word_counts, at, pair_counts, _ = held[i]
            held[i] = keys[i] = None  # type: ignore[call-overload]
            place = np.minimum(np.searchsorted(kept, key), max(kept.size - 1, 0))
            column = (np.where(kept[place] == key, rank[n_words + place], -1) if kept.size
                      else np.full(key.size, -1))
            merged.append(_merged(word_counts, rank[at], pair_counts, column, len(terms)))
        X = stack(merged)
        self.terms_ = terms
        for name in ("_index", "_hashed", "_looked_up"):
            self.__dict__.pop(name, None)
        return presence(X) if self.binary else X

    def count(self, token_lists: Iterable[Sequence[str]]) -> CSR:
        """Counts (or presence) of the vocabulary's terms: CSR of shape (n_documents, n_terms)."""
        return self.count_parts([count_tokens(token_lists)])

    def count_parts(self, parts: Iterable[Counts], unseen: bool = False) -> CSR:
        """``count`` of documents counted in parts (see :func:`count_tokens`), stacked; with
        ``unseen``, each document's words outside the vocabulary kept too (``X.unseen``, one
        entry a distinct word: its count), which are otherwise dropped."""
        n_terms = len(self.terms_)
        X = stack([_counted(part.matrix, self._lookup(part.terms), n_terms, unseen)
                   for part in parts]
                  or [CSR(np.zeros(0), np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64),
                          (0, n_terms), Unseen(np.zeros(0), np.zeros(1, dtype=np.int64))
                          if unseen else None)])
        return presence(X) if self.binary else X

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
        new = sorted(set(chain.from_iterable(token_lists)) - self.index_.keys())
        positions = np.array([bisect_left(self.terms_, t) for t in new], dtype=np.int64)
        if new:
            self.terms_ = list(np.insert(np.array(self.terms_, dtype=object), positions, new))
            self.index_ = {term: i for i, term in enumerate(self.terms_)}
        return positions

    def _extend(self, part: Counts) -> CSR:
        """A part's counts over this vocabulary's columns, its new terms added as columns after
        the others, in the order they come: the terms are sorted once, by :meth:`_settle`."""
        first = len(self.terms_)
        columns = number(self.index_, part.terms, add=True)
        self.terms_ += [part.terms[i] for i in np.flatnonzero(columns >= first).tolist()]
        return CSR(part.matrix.data, columns[part.matrix.indices].astype(np.int32),
                   part.matrix.indptr, (part.matrix.shape[0], len(self.terms_)))

    def _settle(self, first: int) -> np.ndarray | None:
        """Sort the terms again after :meth:`_extend` added some to the ``first``: the old
        column of each column, or None if no term was added. The index is updated in place,
        not built again."""
        if len(self.terms_) == first:
            return None
        self.terms_ = sorted(self.terms_)
        order = number(self.index_, self.terms_)   # each sorted term's old column
        self.index_.update(zip(self.terms_, range(len(self.terms_))))
        return order

    def _forget(self, first: int) -> None:
        """Undo :meth:`_extend`: keep the ``first`` terms only."""
        for term in self.terms_[first:]:
            del self.index_[term]
        del self.terms_[first:]


class SpacedWord(ValueError):
    """A word holds a space: :meth:`Vocabulary.fit_pairs` cannot name its pairs apart."""


class Counts(NamedTuple):
    """Documents' term counts over their own sorted terms: what a worker process sends back,
    the distinct tokens and three arrays instead of every token."""

    terms: list[str]
    matrix: CSR


def count_tokens(token_lists: Iterable[Sequence[str]]) -> Counts:
    """Count each document's tokens over the sorted distinct tokens of them all
    (:func:`textnb.text.counting.count_tokens`)."""
    return part_counts(counting.count_tokens(token_lists))


def part_counts(part: counting.Part) -> Counts:
    """A part's counts as a worker sends them (bytes), viewed as numpy arrays (not copied)."""
    n_documents = len(part.indptr) // 8 - 1
    return Counts(part.terms, CSR(np.frombuffer(part.data, dtype=np.float64),
                                  np.frombuffer(part.indices, dtype=np.int32),
                                  np.frombuffer(part.indptr, dtype=np.int64),
                                  (n_documents, len(part.terms))))


def number(index: dict[str, int], terms: Sequence[str], add: bool = False) -> np.ndarray:
    """Each of ``terms``' number in ``index`` (int64 array): −1 for one not in it, or, if
    ``add``, the next number, len(index), added to it (so numbers follow first appearance)."""
    return np.frombuffer(counting._numbers(index, terms, add), dtype=np.int64)


def to_scipy(X: CSR):
    """Wrap CSR arrays as a scipy.sparse.csr_matrix (scipy imported here: it is slow to import)."""
    from scipy.sparse import csr_matrix
    return csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)


def as_count(value: int | float, n_documents: int, name: str) -> float:
    """A document frequency setting as a number of documents: a proportion (a float in (0, 1])
    of ``n_documents``, else the number itself (``name``: the setting, for the error)."""
    if isinstance(value, float) and 0.0 < value <= 1.0:
        return value * n_documents
    if value >= 1 and float(value).is_integer():
        return float(value)
    raise ValueError(f"{name} must be a whole number of documents or a proportion in (0, 1], "
                     f"got {value!r}")


def relabel(X: CSR, column: np.ndarray, n_terms: int) -> CSR:
    """X with column j renamed column[j], or dropped where that is negative (−1). The renaming
    must keep the order of the kept columns, so that rows stay sorted."""
    if _scores is not None and X.data.dtype == np.float64:  # in C (textnb/_scores.c): one pass
        indices, data, indptr = _scores.relabel(np.ascontiguousarray(X.data),
                                              np.ascontiguousarray(X.indices),
                                              np.ascontiguousarray(X.indptr),
                                              np.ascontiguousarray(column, dtype=np.int64))
        indices = np.frombuffer(indices, dtype=np.int32)
        if data is None:  # no entry dropped
            return CSR(X.data, indices, X.indptr, (X.shape[0], n_terms))
        return CSR(np.frombuffer(data), indices, np.frombuffer(indptr, dtype=np.int64),
                   (X.shape[0], n_terms))
    new = column[X.indices]
    kept = new >= 0
    if kept.all():
        return CSR(X.data, new.astype(np.int32), X.indptr, (X.shape[0], n_terms))
    rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[kept], minlength=X.shape[0]), out=indptr[1:])
    return CSR(X.data[kept], new[kept].astype(np.int32), indptr, (X.shape[0], n_terms))


def _counted(X: CSR, column: np.ndarray, n_terms: int, unseen: bool) -> CSR:
    """:func:`relabel`, and with ``unseen`` the entries it drops kept as ``X.unseen``."""
    kept = relabel(X, column, n_terms)
    if not unseen:
        return kept
    missing = column[X.indices] < 0
    rows = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))[missing]
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
    return kept._replace(unseen=Unseen(X.data[missing].astype(float), indptr))


def _merged(words: CSR, word_column: np.ndarray, pairs: CSR, pair_column: np.ndarray,
            n_terms: int) -> CSR:
    """One part's rows of words and of pairs as one CSR of ``n_terms`` columns: word column
    j is ``word_column[j]``, pair column j ``pair_column[j]`` (dropped where −1), each row's
    columns sorted."""
    pair_new = pair_column[pairs.indices]
    keep = pair_new >= 0
    n = words.shape[0]
    row = np.concatenate([np.repeat(np.arange(n, dtype=np.int64), np.diff(words.indptr)),
                          np.repeat(np.arange(n, dtype=np.int64), np.diff(pairs.indptr))[keep]])
    column = np.concatenate([word_column[words.indices], pair_new[keep]])
    order = np.argsort(row * n_terms + column)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n), out=indptr[1:])
    return CSR(np.concatenate([words.data, pairs.data[keep]])[order],
               column[order].astype(np.int32), indptr, (n, n_terms))


def stack(parts: list[CSR]) -> CSR:
    """Rows of the parts one after another (all over the same columns)."""
    if len(parts) == 1:
        return parts[0]
    unseen = None
    if parts[0].unseen is not None:
        unseen = Unseen(np.concatenate([part.unseen.data for part in parts]),
                        _stacked_indptr([part.unseen.indptr for part in parts]))
    return CSR(np.concatenate([part.data for part in parts]),
               np.concatenate([part.indices for part in parts]),
               _stacked_indptr([part.indptr for part in parts]),
               (sum(part.shape[0] for part in parts), parts[0].shape[1]), unseen)


def _stacked_indptr(indptrs: list[np.ndarray]) -> np.ndarray:
    """The row pointers of rows stacked one part after another."""
    offsets = np.cumsum([0] + [indptr[-1] for indptr in indptrs[:-1]])
    return np.concatenate([[0]] + [indptr[1:] + offset for indptr, offset in zip(indptrs, offsets)])


def _stack_renamed(parts: list[tuple[CSR, np.ndarray]], rank: np.ndarray, n_terms: int) -> CSR:
    """Rows of the parts one after another, part column j renamed ``rank[numbers[j]]`` (an
    order-keeping renaming), each part let go once copied: the stacked matrix and one part are
    held, not two copies of every part."""
    sizes = [int(matrix.indptr[-1]) for matrix, _ in parts]
    n_documents = sum(matrix.shape[0] for matrix, _ in parts)
    data = np.empty(sum(sizes))
    indices = np.empty(sum(sizes), dtype=np.int32)
    indptr = np.zeros(n_documents + 1, dtype=np.int64)
    row = entry = 0
    for i, size in enumerate(sizes):
        matrix, numbers = parts[i]
        parts[i] = None  # type: ignore[call-overload]
        data[entry:entry + size] = matrix.data[:size]
        indices[entry:entry + size] = rank[numbers][matrix.indices[:size]]
        indptr[row + 1:row + matrix.shape[0] + 1] = matrix.indptr[1:] + entry
        row, entry = row + matrix.shape[0], entry + size
    return CSR(data, indices, indptr, (n_documents, n_terms))


def presence(X: CSR) -> CSR:
    """X with every stored count 1 (its unseen words' too)."""
    unseen = X.unseen and X.unseen._replace(data=np.ones(X.unseen.data.size))
    return CSR(np.ones(X.data.size), X.indices, X.indptr, X.shape, unseen)
