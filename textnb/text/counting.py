"""texts → tokens → each document's counts over the sorted distinct terms of them all: the job a
worker process runs (:mod:`textnb.workers`), and what :mod:`textnb.text.vocabulary` builds on.

Nothing here imports numpy where textnb's C part was built, so a worker starts without paying
for it (docs/design/training-speed.md): its results are the CSR arrays' bytes, which the caller
views as numpy arrays (:func:`textnb.text.vocabulary.part_counts`).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import count, repeat
from typing import NamedTuple, Union

from ..documents.message import Document, read_bytes
from .tokens import Tokenizer, with_subject

try:  # numbering and counting tokens in C (textnb/_tokens.c), where it was built
    from .. import _tokens as _fast
except ImportError:  # the same numbers in Python
    _fast = None

Text = Union[str, bytes, Document]


class Part(NamedTuple):
    """Documents' counts over their own sorted terms, as a worker sends them back: the terms,
    then a CSR matrix's arrays as native float64, int32 and int64 bytes, and the documents'
    digests (uint64 bytes; empty where not asked for)."""

    terms: list[str]
    data: bytearray
    indices: bytearray
    indptr: bytearray
    digests: bytearray


def count_part(tokenizer: Tokenizer, texts: Sequence[Text], digests: bool) -> Part:
    """Counts of ``texts`` (each parsed and tokenized) and, if asked, their digests."""
    if _fast is not None and tokenizer.stemmer is None and tokenizer.ngram_range == (1, 1):
        return _numbered_part(tokenizer, texts, digests)
    found = array("Q")

    def token_lists() -> Iterator[list[str]]:
        for text in texts:
            tokens = document_tokens(tokenizer, text)
            if digests:
                found.append(digest(tokens))
            yield tokens

    return count_tokens(token_lists())._replace(digests=bytearray(found))


class Pairs(NamedTuple):
    """A part's word pairs as a worker sends them, by number, never as strings: each of the
    part's sorted terms' number in the order first found (int64), each pair's two words'
    numbers so (int64, two a pair, the pairs in the order of those numbers), and the
    documents' counts of the pairs, CSR arrays as :class:`Part`'s (a column a pair)."""

    order: bytes
    words: bytes
    data: bytearray
    indices: bytearray
    indptr: bytearray


def count_pair_part(tokenizer: Tokenizer, texts: Sequence[Text], digests: bool
                    ) -> tuple[Part, Pairs]:
    """:func:`count_part` of a tokenizer of words and word pairs (``ngram_range`` (1, 2)),
    the pairs apart: (the words' and other unigrams' Part, the pairs'). A pair is the numbers
    of its two words, one int64, so no string is made of it but for the digest; most pairs are
    in one document, and :meth:`textnb.text.vocabulary.Vocabulary.fit_pairs` keeps the others.
    numpy is imported here, where tuning counts: a worker counting words alone starts without."""
    import numpy as np
    if tokenizer.ngram_range != (1, 2):
        raise ValueError(f"pairs are counted apart for ngram_range (1, 2), "
                         f"not {tokenizer.ngram_range}")
    index: dict[str, int] = {}
    ids, found = bytearray(), array("Q")
    ends, bodies, body_ends = array("q"), bytearray(), array("q")
    for text in texts:
        words, rest = tokenizer.document_words(*_body_and_fields(text))
        if digests:  # of the tokens as Tokenizer.document gives them, the pairs' strings too
            found.append(digest(tokenizer._ngrams(words) + rest))
        numbers = _numbers(index, words, True)
        ids += numbers
        ids += _numbers(index, rest, True)
        ends.append(len(ids) >> 3)
        bodies += numbers
        body_ends.append(len(bodies) >> 3)
    terms = sorted(index)
    order = _numbers(index, terms, False)
    part = Part(terms, *_count(ids, ends, order), bytearray(found))
    # Each two neighbouring words of a document, as one number; numbered by np.unique (a
    # dict of the pairs took five times as long).
    word = np.frombuffer(bodies, dtype=np.int64)
    last = np.frombuffer(body_ends, dtype=np.int64)
    keys = word[:-1] << 32 | word[1:]
    within = np.ones(keys.size, dtype=bool)
    within[last[(last > 0) & (last < word.size)] - 1] = False  # a document's last word
    keys, pair_ids = np.unique(keys[within], return_inverse=True)
    pair_ends = np.cumsum(np.maximum(np.diff(last, prepend=0) - 1, 0))
    pairs = Pairs(order, np.stack([keys >> 32, keys & 0xFFFFFFFF], axis=1).tobytes(),
                  *_count(pair_ids.astype(np.int64).tobytes(), pair_ends.astype(np.int64),
                          np.arange(keys.size, dtype=np.int64).tobytes()))
    return part, pairs


def _numbered_part(tokenizer: Tokenizer, texts: Sequence[Text], digests: bool) -> Part:
    """:func:`count_part` of words, unstemmed, with the tokens numbered as they are found
    (textnb._tokens.Numbering): no token list, and a str only for each new term."""
    index: dict[str, int] = {}
    numbering = _fast.Numbering(index, tokenizer.stop_words, tokenizer.lowercase,
                                tokenizer.min_length, tokenizer.max_length, _KEY)
    ids, ends, found = bytearray(), array("q"), array("Q")
    joined = bytearray() if digests else None
    for text in texts:
        text, fields = _body_and_fields(text)
        numbering.document(ids, with_subject(text, fields), fields, joined)
        ends.append(len(ids) >> 3)
        if joined is not None:  # digest()'s bytes, joined in C
            found.append(_digest(joined))
            del joined[:]
    return _part(index, ids, ends, bytearray(found))


def count_tokens(token_lists: Iterable[Sequence[str]]) -> Part:
    """Count each document's tokens over the sorted distinct tokens of them all.

    Columns are in Python's string order (as ``Vocabulary.grow``'s bisect uses; numpy's str
    dtype would ignore trailing NULs), so relabelling them to another sorted vocabulary keeps
    each row's columns sorted: parts counted apart stack without sorting again.
    """
    index: dict[str, int] = {}
    ids = bytearray()  # each token's number, int64
    ends = array("q")
    for tokens in token_lists:
        ids += _numbers(index, tokens, True)
        ends.append(len(ids) >> 3)
    return _part(index, ids, ends, bytearray())


def _part(index: dict[str, int], ids: bytes, ends: array, digests: bytearray) -> Part:
    """The Part of documents whose tokens' numbers in ``index`` are ``ids`` (int64, document d's
    ending at ``ends[d]``)."""
    # The terms sorted as strings, then each one's number looked up (the dict's own strings,
    # found at once): a third less time than sorting the numbers by their terms.
    terms = sorted(index)
    return Part(terms, *_count(ids, ends, _numbers(index, terms, False)), digests)


def document_tokens(tokenizer: Tokenizer, text: Text) -> list[str]:
    """The tokens of a str, of bytes read as a document, or of a Document."""
    return tokenizer.document(*_body_and_fields(text))


def _body_and_fields(text: Text) -> tuple[str, Iterable[tuple[str, str]]]:
    if isinstance(text, str):
        return text, ()
    if isinstance(text, (bytes, bytearray)):
        text = read_bytes(bytes(text))
    if hasattr(text, "fields"):
        return text.text, text.fields
    raise ValueError(f"a text must be str, bytes or Document, not {type(text).__name__}")


def digest(tokens: list[str]) -> int:
    """64-bit BLAKE2b digest of a document's tokens: recognises a document learned before."""
    return _digest("\0".join(tokens).encode("utf-8", "replace"))


def _digest(data: bytes) -> int:
    # Imported here: hashlib loads OpenSSL (3.6 MB of RSS), which classifying never needs.
    from hashlib import blake2b
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def _python_numbers(index: dict[str, int], terms: Sequence[str], add: bool) -> bytes:
    """Each of ``terms``' number in ``index`` as native int64 bytes: −1 for one not in it, or,
    if ``add``, the next number, len(index), added to it (so numbers follow first appearance).
    textnb._tokens.number where it was not built."""
    if add:
        new = [term for term in dict.fromkeys(terms) if term not in index]
        index.update(zip(new, count(len(index))))
        return array("q", map(index.__getitem__, terms)).tobytes()
    return array("q", map(index.get, terms, repeat(-1))).tobytes()


def _python_count(ids: bytes, ends: Sequence[int], order: bytes) -> tuple[bytearray, ...]:
    """Documents' term numbers → CSR counts (data, indices, indptr bytes), columns in the order
    of ``order`` (the terms' numbers): textnb._tokens.count where it was not built."""
    import numpy as np
    rank = np.empty(len(order) // 8, dtype=np.int64)
    rank[np.frombuffer(order, dtype=np.int64)] = np.arange(rank.size)
    columns = rank[np.frombuffer(ids, dtype=np.int64)]
    lengths = np.diff(np.asarray(ends, dtype=np.int64), prepend=0)
    rows = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    keys, counts = np.unique(rows * rank.size + columns, return_counts=True)
    indptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // max(rank.size, 1), minlength=lengths.size), out=indptr[1:])
    return (bytearray(counts.astype(np.float64)),
            bytearray((keys % max(rank.size, 1)).astype(np.int32)), bytearray(indptr))


# A token's number looked up (and added) in C, into an int64 buffer: the dict's own methods
# mapped over the tokens, then made an array, took a quarter of 20 Newsgroups' time once
# tokenizing was in C (1.3 s of a 4.9 s profile; 0.6 s in C).
_numbers = _fast.number if _fast is not None else _python_numbers
_count = _fast.count if _fast is not None else _python_count
# The key of Numbering's hash: a process's own, as Python's string hash is, so that no text
# can be made to collide in its table.
_KEY = os.urandom(16)
