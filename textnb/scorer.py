"""model file → log P(c|x) of one document, without numpy: the mail filter's fast path.

A TextClassifier's file holds its scores decomposed as jll(x) = bias + Σ_k x'_k W_k, where x'
is the document's weighted counts over the vocabulary (:meth:`~textnb.models._DiscreteNB.
decomposition`; term k's weights W_k are row k of ``score_weights``). Scoring one message needs
the settings, the sorted terms, and the rows of the terms the message holds, which are read
alone. The terms are searched as UTF-8 bytes, whose order is the code-point order they were
sorted in, so they are never decoded. So ``textnb filter`` costs milliseconds more than
Python's start-up, where importing numpy and reading the whole model took 200
(scripts/bench_filter.py).

The file is read directly, not with :mod:`zipfile` (whose import alone costs 8 ms): only the
stored, non-zip64 members textnb writes are accepted; anything else is a ModelFileError, and
the caller falls back to :func:`textnb.classifier.load_model`. The CRC-32 of the small members
is checked; the weight rows are read where they lie, unchecked.

The arithmetic is that of :meth:`TextClassifier.predict_log_proba`, in the same order, so the
two agree to rounding (tests/test_scorer.py).
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import zlib
from array import array
from collections import Counter

from .decision import check_cutoffs
from .errors import ModelFileError
from .tokens import Tokenizer

_NPY_MAGIC = b"\x93NUMPY"
_NPY_FIELD = re.compile(rb"'(descr|fortran_order|shape)':\s*('[^']*'|False|True|\([^)]*\))")
_END_OF_DIRECTORY = struct.Struct("<4s4H2IH")        # the zip's last record
_DIRECTORY_ENTRY = struct.Struct("<4s6H3I5H2I")       # one member in the central directory
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")            # before a member's data


class Scorer:
    """Scores of single documents from a TextClassifier's model file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        try:
            with open(self.path, "rb") as f:
                self._members = _members(f)
                meta = json.loads(self._read(f, "meta.json"))
                if (meta.get("format"), meta.get("kind")) != ("textnb-model", "text-classifier"):
                    raise ValueError("not a textnb text classifier")
                if meta.get("version") != 2:
                    raise ValueError(f"format version {meta.get('version')}, not 2")
                self.classes = list(meta["classes"])
                self.cutoffs = check_cutoffs(meta.get("cutoffs"), self.classes)
                params = meta["params"]
                self.tokenizer = Tokenizer(
                    lowercase=params["lowercase"], stop_words=meta["stop_words"],
                    stemmer=params["stemmer"], ngram_range=params["ngram_range"],
                    max_length=params["max_token_length"])
                self._binary = params["model"] == "bernoulli" or params["tf"] == "binary"
                self._log_tf = params["tf"] == "log" and not self._binary
                self._l2 = params["norm"] == "l2" and params["model"] != "bernoulli"
                self._terms = _npy(self._read(f, "terms.npy"), "|u1")
                self._ends = array("Q", _npy(self._read(f, "term_ends.npy"), "<u8"))
                self.bias = list(array("d", _npy(self._read(f, "score_bias.npy"), "<f8")))
                offset, size, _ = self._members["score_weights.npy"]
                f.seek(offset)
                self._weights = offset + _npy_header_length(f.read(min(size, 4096)), "<f8")
        except FileNotFoundError:
            raise ModelFileError(f"model file '{self.path}' does not exist") from None
        except (OSError, KeyError, TypeError, ValueError, struct.error) as error:
            raise ModelFileError(f"model file '{self.path}' cannot be scored without numpy "
                                 f"({error})") from None
        if len(self.bias) != len(self.classes) or (self._ends and self._ends[-1] != len(self._terms) + 1):
            raise ModelFileError(f"model file '{self.path}' is corrupt")

    def log_proba(self, text: str, fields: tuple[tuple[str, str], ...] = ()) -> list[float]:
        """log P(c|x) per class, in ``classes`` order, of a text and its header fields."""
        counts = sorted(self._counts(self.tokenizer.document(text, fields)).items())
        values = [1.0 if self._binary else math.log1p(n) if self._log_tf else float(n)
                  for _, n in counts]
        if self._l2 and values:
            length = math.sqrt(sum(v * v for v in values))
            values = [v / length for v in values]
        n_classes = len(self.classes)
        sums = [0.0] * n_classes
        for value, row in zip(values, self._rows([k for k, _ in counts])):
            for c in range(n_classes):
                sums[c] += value * row[c]
        jll = [s + b for s, b in zip(sums, self.bias)]
        top = max(jll)
        norm = top + math.log(sum(math.exp(j - top) for j in jll))
        return [j - norm for j in jll]

    def _counts(self, tokens: list[str]) -> dict[int, int]:
        """Column → count of the tokens that are vocabulary terms (Mitchell's positions)."""
        blob, ends, found = self._terms, self._ends, {}
        for token, n in Counter(tokens).items():
            key = token.encode("utf-8", "surrogatepass")
            lo, hi = 0, len(ends)
            while lo < hi:  # bisect_left over the terms, each a slice of the blob
                mid = (lo + hi) // 2
                if blob[ends[mid - 1] if mid else 0:ends[mid] - 1] < key:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < len(ends) and blob[ends[lo - 1] if lo else 0:ends[lo] - 1] == key:
                found[lo] = n
        return found

    def _rows(self, columns: list[int]) -> list[array]:
        """The weight rows of the given columns, each read where it lies in the file."""
        width = 8 * len(self.classes)
        rows = []
        with open(self.path, "rb") as f:
            for k in columns:
                f.seek(self._weights + k * width)
                row = array("d", f.read(width))
                if len(row) != len(self.classes):
                    raise ModelFileError(f"model file '{self.path}' is truncated")
                rows.append(row)
        return rows

    def _read(self, f, name: str) -> bytes:
        """A small member's bytes, its CRC-32 checked."""
        offset, size, crc = self._members[name]
        f.seek(offset)
        data = f.read(size)
        if len(data) != size or zlib.crc32(data) != crc:
            raise ValueError(f"{name} is truncated or corrupt")
        return data


def score(path: str | os.PathLike, text: str,
          fields: tuple[tuple[str, str], ...] = ()) -> tuple[list, list[float], dict | None]:
    """(classes, log P(c|x) per class, learned cutoffs or None) of one text and its fields by
    the model file at path:
    read by a Scorer, or, for a file it declines (an older format, a re-packed zip), by
    :func:`~textnb.classifier.load_model`, which reads every file textnb wrote or says what is
    wrong with it."""
    try:
        scorer = Scorer(path)
    except ModelFileError:
        from .classifier import load_model
        from .documents import Document
        classifier = load_model(path)
        classes = [c.item() if hasattr(c, "item") else c for c in classifier.classes_]
        return (classes, classifier.predict_log_proba([Document("-", text, fields)])[0].tolist(),
                classifier.cutoffs_)
    return scorer.classes, scorer.log_proba(text, fields), scorer.cutoffs


def _members(f) -> dict[str, tuple[int, int, int]]:
    """name → (data offset, size, CRC-32) of a zip's members, stored (uncompressed) ones only."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - _END_OF_DIRECTORY.size - 0xFFFF))
    tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        raise ValueError("not a zip file")
    *_, count, directory_size, directory_offset, _ = _END_OF_DIRECTORY.unpack_from(tail, at)
    f.seek(directory_offset)
    directory = f.read(directory_size)
    members, pos = {}, 0
    for _ in range(count):
        (signature, _, _, _, method, _, _, crc, packed, unpacked, name_length, extra_length,
         comment_length, _, _, _, local) = _DIRECTORY_ENTRY.unpack_from(directory, pos)
        if signature != b"PK\x01\x02" or method != 0 or packed != unpacked or packed == 0xFFFFFFFF:
            raise ValueError("not a zip file of stored members")
        start = pos + _DIRECTORY_ENTRY.size
        name = directory[start:start + name_length].decode("utf-8")
        pos = start + name_length + extra_length + comment_length
        f.seek(local)
        header = _LOCAL_HEADER.unpack(f.read(_LOCAL_HEADER.size))
        if header[0] != b"PK\x03\x04":
            raise ValueError(f"bad local header of {name}")
        members[name] = (local + _LOCAL_HEADER.size + header[-2] + header[-1], packed, crc)
    return members


def _npy(data: bytes, dtype: str) -> bytes:
    """The data bytes of a .npy file holding a C-ordered array of ``dtype``."""
    return data[_npy_header_length(data, dtype):]


def _npy_header_length(head: bytes, dtype: str) -> int:
    """Where the data of the .npy file starting with ``head`` starts. Only plain C-ordered
    arrays of ``dtype`` are accepted (a pickle never is: its dtype is 'O')."""
    if head[:6] != _NPY_MAGIC or head[6] not in (1, 2, 3):
        raise ValueError("not a .npy array")
    if head[6] == 1:
        length, start = int.from_bytes(head[8:10], "little"), 10
    else:
        length, start = int.from_bytes(head[8:12], "little"), 12
    header = dict(_NPY_FIELD.findall(head[start:start + length]))
    if header.get(b"descr") != f"'{dtype}'".encode() or header.get(b"fortran_order") != b"False":
        raise ValueError(f"array of {header.get(b'descr')}, expected {dtype}")
    return start + length
