"""texts → parts → counts → weighted counts: how a TextClassifier reads its documents.

Texts are counted a part at a time (:func:`count_stream`), in this process or in worker
processes that parse, tokenize and count, so that only distinct terms and arrays travel back
and an iterator's texts are never all held; counts are weighed (:func:`weigh`: tf raw, log or
binary, then unit length) as the classifier, EM, tuning's refit, the multi-label classifier
and distributed training all weigh them.
"""

from __future__ import annotations

import threading
from collections import deque
from itertools import chain, islice
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

import numpy as np

from ..nb.estimator import check_label_kinds, check_labels
from ..nb.sparse import CSR, StoredCounts, divide_rows, row_sums
from ..workers import imap
from .counting import Pairs, Part, count_pair_part, count_part
from .tokens import Tokenizer
from .vocabulary import Counts, part_counts


# Below this many documents, and this many bytes of them, starting worker processes costs more
# than tokenizing.
_PARALLEL_MIN_DOCUMENTS = 2000


_PARALLEL_MIN_BYTES = 8 << 20


# Documents counted as one part, in a worker or here: a part's texts, tokens and term list are
# held at once (1,000 news posts: 2 MB of bytes), and each part sends back its distinct terms,
# so that fewer, larger parts repeat fewer common terms.
_PART_DOCUMENTS = 1000


# ... or fewer, as many as hold this many bytes (the last one passing it): what a part holds in
# flight is bounded whatever the documents' sizes (2,400 messages with 400 kB attachments:
# 1.36 GB peak with parts of 1,000). On SpamAssassin it keeps the workers busy to the end
# rather than one counting the last thousand messages, hard_ham's long ones (8.5 MB), alone.
_PART_BYTES = 4 << 20


# A Document (textnb.documents.message) is recognised by its ``text`` and ``fields`` attributes.
Text = Any


class Added:
    """Weighted counts added a part at a time (partial_fit), kept sparse: the non-zero cells
    (a class, a term) as sorted keys and their sums (20 Newsgroups: 430,000 of 3.4 million
    cells, 7 MB where a dense row per class took 31 MB). Classes and terms are numbered as they
    come. ``np.add.at`` adds each entry in turn, from 0, as one bincount over every document
    does (the model's ``_count``): the same sums, bit for bit, however the documents are parted."""

    def __init__(self, binary: bool) -> None:
        self.binary = binary
        self.classes: dict[Any, int] = {}   # label → its number
        self.documents: list[int] = []      # per class number
        self.keys = np.zeros(0, dtype=np.int64)  # class number << 32 | term, ascending
        self.sums = np.zeros(0)

    def add(self, X: CSR, labels: Sequence) -> None:
        y = check_labels(labels, X.shape[0])
        found, inverse = np.unique(y, return_inverse=True)
        for label in found.tolist():
            if label not in self.classes:
                self.classes[label] = len(self.classes)
                self.documents.append(0)
        number = np.array([self.classes[label] for label in found.tolist()], dtype=np.int64)
        row_class = number[inverse.ravel()]
        for c, n in zip(*np.unique(row_class, return_counts=True)):
            self.documents[c] += int(n)
        values = (X.data > 0).astype(float) if self.binary else X.data.astype(float, copy=False)
        keys = np.repeat(row_class << 32, np.diff(X.indptr)) | X.indices
        cells = np.unique(keys)
        at = np.searchsorted(self.keys, cells)
        new = at == self.keys.size
        new[~new] = self.keys[at[~new]] != cells[~new]
        if new.any():  # new cells, each put in its place, with a sum of 0
            self.keys = np.insert(self.keys, at[new], cells[new])
            self.sums = np.insert(self.sums, at[new], 0.0)
        del cells, at, new
        np.add.at(self.sums, np.searchsorted(self.keys, keys), values)

    def counts(self, n_terms: int, order: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """classes_ (sorted), class_count_ and the counts as a model file stores them, by term
        (terms in the vocabulary's ``order``). The last call: the cells and sums are let go
        as they are used (their copies by term take their place)."""
        labels = list(self.classes)
        classes = np.unique(check_labels(labels, len(labels)))
        rank = np.searchsorted(classes, check_labels(labels, len(labels)))  # number → row
        place = (np.arange(n_terms) if order is None
                 else np.argsort(order, kind="stable"))  # term number → column
        # Each cell's place, term-major: column × classes + row, built in place, and each
        # temporary (8 bytes a cell: 2.8 MB for 20 Newsgroups' 350,000) let go when done.
        keys, sums, self.keys, self.sums = self.keys, self.sums, None, None
        cell = place[keys & 0xFFFFFFFF]
        cell *= classes.size
        cell += rank[keys >> 32]
        del keys
        by_term = np.argsort(cell, kind="stable")
        cell = cell[by_term]
        sums = sums[by_term]
        del by_term
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell // classes.size, minlength=n_terms), out=indptr[1:])
        cell %= classes.size
        class_count = np.zeros(classes.size)
        class_count[rank] = self.documents
        return classes, class_count, StoredCounts(indptr, cell, sums, (classes.size, n_terms))


# Documents looked at to tell full mail from other texts (default_ngram_range).
SAMPLE_DOCUMENTS = 100


def text_length(text: Any) -> int:
    """A text's length in characters (a document's body and fields), or bytes as read; 0 for
    what is no text (counting refuses it, saying why)."""
    body = getattr(text, "text", text)
    if not isinstance(body, (str, bytes)):
        return 0
    return len(body) + sum(len(value) for _, value in getattr(text, "fields", ()))


def peek(texts: Iterable[Text]) -> tuple[list[Text], Iterable[Text]]:
    """The first documents of ``texts``, and ``texts`` as they were (an iterator, rebuilt)."""
    if isinstance(texts, Sequence):
        return list(texts[:SAMPLE_DOCUMENTS]), texts
    texts = iter(texts)
    sample = list(islice(texts, SAMPLE_DOCUMENTS))
    return sample, chain(sample, texts)


def text_iterable(texts: Iterable[Text]) -> Iterable[Text]:
    """``texts`` as given (a list, or an iterator to read once); a single str or bytes is
    refused, not split into characters, and so is a 2-D array."""
    if isinstance(texts, (str, bytes, bytearray)):
        raise ValueError(f"expected a list of texts, got a single {type(texts).__name__}; "
                         f"wrap it in a list: [text]")
    if texts is None:  # else "'NoneType' object is not iterable", from deep inside
        raise ValueError("expected a list of texts, got None")
    shape = getattr(texts, "shape", None)
    if shape is not None and len(shape) != 1:  # a table's rows are not texts
        raise ValueError(f"expected a list of texts (str, bytes or Document), one a document: "
                         f"a 1-D sequence, not an array of shape {tuple(shape)}")
    return texts


def noting_digests(parts: Iterable[tuple[Counts, np.ndarray]],
                   found: list[np.ndarray]) -> Iterator[Counts]:
    """The counts of :meth:`TextClassifier._count_stream`'s parts, each part's digests
    appended to ``found`` as it is taken."""
    for part, digests in parts:
        found.append(digests)
        yield part


def import_meanwhile(*modules: str) -> threading.Thread | None:
    """Import ``modules`` in a thread (returned; None if all are imported already): numpy imports
    its submodules when first used, and the cross-validations after counting would wait 16 ms for
    numpy.random and numpy.ma (SpamAssassin) where this process mostly waits on the workers."""
    import importlib
    import sys

    def load() -> None:
        try:
            for name in modules:
                importlib.import_module(name)
        except Exception:  # no traceback from here: the cross-validation's own import will say
            pass

    if all(name in sys.modules for name in modules):
        return None
    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    return thread


def text_list(texts: Iterable[Text]) -> list[Text]:
    """``texts`` as a list; a single str or bytes is refused, not split into characters."""
    return list(text_iterable(texts))


def in_parts(texts: Iterator[Text], size: int) -> Iterator[list[Text]]:
    """``texts`` in lists of ``size``, or of fewer that hold :data:`_PART_BYTES`."""
    part, held = [], 0
    for text in texts:
        part.append(text)
        held += text_length(text)
        if len(part) == size or held >= _PART_BYTES:
            yield part
            part, held = [], 0
    if part:
        yield part


def _drain(texts: deque) -> Iterator[Text]:
    """The texts of ``texts``, each removed as it is given."""
    while texts:
        yield texts.popleft()


def counted_part(tokenizer: Tokenizer, texts: list[Text],
                digests: bool) -> tuple[Counts, np.ndarray]:
    """Counts of ``texts`` and, if asked, their digests (else an empty array)."""
    return _counted(count_part(tokenizer, texts, digests))


def _counted(part: Part) -> tuple[Counts, np.ndarray]:
    """A part as :func:`textnb.text.counting.count_part` gives it → its counts and digests."""
    return part_counts(part), np.frombuffer(part.digests, dtype=np.uint64)


class PairCounts(NamedTuple):
    """A part's word pairs (:class:`textnb.text.counting.Pairs`) as numpy arrays (not copied):
    the two words of each pair, as columns of the part's words' Counts (int64, shape
    (pairs, 2)), and the documents' counts of them (a column a pair)."""

    words: np.ndarray
    matrix: CSR


def _pair_counted(found: tuple[Part, Pairs]) -> tuple[tuple[Counts, PairCounts], np.ndarray]:
    """A part as :func:`textnb.text.counting.count_pair_part` gives it → ((its words' counts,
    its pairs'), its digests): each pair's words renumbered as the words' columns."""
    part, pairs = found
    column = np.empty(len(pairs.order) // 8, dtype=np.int64)
    column[np.frombuffer(pairs.order, dtype=np.int64)] = np.arange(column.size)
    words = column[np.frombuffer(pairs.words, dtype=np.int64).reshape(-1, 2)]
    matrix = part_counts(Part([], pairs.data, pairs.indices, pairs.indptr, bytearray())).matrix
    counts, digests = _counted(part)
    return (counts, PairCounts(words, matrix._replace(shape=(matrix.shape[0], len(words))))), \
        digests


def count_stream(tokenizer: Tokenizer, texts: Iterable[Text], n_jobs: int | None = None,
                 digests: bool = True, size: int = 0, pairs: bool = False
                 ) -> Iterator[tuple[Counts, np.ndarray]]:
    """Texts counted in parts of ``size`` (default ``_PART_DOCUMENTS``), in order, each with
    its documents' digests: in this process, or in ``n_jobs`` worker processes
    (:mod:`textnb.workers`) that parse, tokenize and count, so that only distinct tokens and
    arrays travel back. ``texts`` is read as the parts are counted (a few parts ahead), so an
    iterator's texts are never all held. With ``pairs`` (a tokenizer of words and pairs), each
    part's counts are (words' Counts, :class:`PairCounts`): its pairs by number
    (:func:`textnb.text.counting.count_pair_part`)."""
    count, counted = (count_pair_part, _pair_counted) if pairs else (count_part, _counted)
    texts = iter(texts)
    first, held = deque(), 0
    end = object()  # not None: a None among the texts is counting's to refuse, by name
    while len(first) < _PARALLEL_MIN_DOCUMENTS and held < _PARALLEL_MIN_BYTES:
        if (text := next(texts, end)) is end:
            break
        first.append(text)
        held += text_length(text)
    # The first texts are let go as they are counted, not held until all are (3 MB of news).
    parts = in_parts(chain(_drain(first), texts), size or _PART_DOCUMENTS)
    if n_jobs == 1 or (len(first) < _PARALLEL_MIN_DOCUMENTS and held < _PARALLEL_MIN_BYTES):
        for part in parts:
            yield (counted(count(tokenizer, part, digests)) if pairs
                   else counted_part(tokenizer, part, digests))
    else:
        yield from map(counted, imap(count, ((tokenizer, part, digests) for part in parts),
                                     n_jobs))


def weigh(X: CSR, model: str, tf: str, norm: str | None) -> CSR:
    """Counts X weighed for an event ``model``: unchanged for "bernoulli" (presence is its
    own), else each count c as ``tf`` says — "raw" c, "log" log(1 + c), "binary" 1 — then each
    row scaled to unit length for ``norm="l2"``: CSR of X's shape. Words outside the
    vocabulary kept (``X.unseen``) are weighed alike, and count in a row's length, as they
    would as terms of the vocabulary."""
    if model == "bernoulli" or (tf == "raw" and norm is None):
        return X
    data = _tf(X.data, tf)
    unseen = X.unseen and X.unseen._replace(data=_tf(X.unseen.data, tf))
    if norm == "l2":
        squares = row_sums(data ** 2, X.indptr)
        if unseen is not None:
            squares = squares + row_sums(unseen.data ** 2, unseen.indptr)
        length = np.sqrt(squares)
        divide_rows(data, X.indptr, length)
        if unseen is not None:
            divide_rows(unseen.data, unseen.indptr, length)
    return CSR(data, X.indices, X.indptr, X.shape, unseen)


def _tf(counts: np.ndarray, tf: str) -> np.ndarray:
    """A copy of ``counts`` as ``tf`` weighs them, floats (rows are divided)."""
    return (np.log1p(counts) if tf == "log" else np.ones_like(counts, dtype=float)
            if tf == "binary" else counts.astype(float))


def check_in(labels: Sequence, classes: np.ndarray) -> None:
    """ValueError for labels not among ``classes`` (partial_fit's, as scikit-learn's)."""
    unknown = np.setdiff1d(np.asarray(labels), classes).tolist() if len(labels) else []
    if unknown:
        raise ValueError(f"label {unknown[0]!r} of y is not among the classes given: "
                         f"{classes.tolist()}")


def check_lengths(texts: list, labels: list) -> None:
    if len(texts) != len(labels):
        raise ValueError(f"got {len(texts)} texts but {len(labels)} labels")


def label_list(y: Iterable) -> list:
    """``y`` as a list of labels; a single str is refused, not read as its characters, and so
    are strings and numbers mixed (:func:`~textnb.nb.estimator.check_label_kinds`)."""
    if y is None:
        raise ValueError("a classifier requires y to be passed, but the target y is None")
    if not isinstance(y, Iterable):
        raise ValueError(f"y must be a sequence of labels, one a document, not "
                         f"{type(y).__name__} ({y!r:.40})")
    labels = y if isinstance(y, (list, str, bytes)) else list(y)
    check_label_kinds(labels)
    return labels


def check_training(texts: list, labels: list) -> None:
    check_lengths(texts, labels)
    check_label_kinds(labels)
    if len(texts) == 0:  # not `not texts`: an array's truth is ambiguous
        raise ValueError("cannot fit on an empty training set")
    if any(label is None or isinstance(label, (list, tuple, set, dict, np.ndarray))
           for label in labels):  # else a TypeError of set() or of sorting, further in
        raise ValueError("y must hold one class label per text, not None or a collection "
                         "(several labels a text: textnb.multilabel.MultiLabelClassifier)")
    if len(set(labels)) < 2:
        raise ValueError(f"need at least two classes to train, got only {sorted(set(map(str, labels)))}")


def encode_labels(labels: Iterable, names: list[str] | None = None) -> tuple[list[str], np.ndarray]:
    """(names, codes): each label's number among the distinct names (``names`` first, then new
    ones in the order they come), without a string array of every label."""
    index = {name: i for i, name in enumerate(names or [])}
    labels = labels if isinstance(labels, (list, tuple, np.ndarray)) else list(labels)
    codes = np.fromiter((index.setdefault(str(label), len(index)) for label in labels),
                        dtype=np.int64, count=len(labels))
    return list(index), codes
