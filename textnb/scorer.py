"""model file → log P(c|x) of one document, without numpy: the mail filter's fast path.

A TextClassifier's file holds its scores decomposed as jll(x) = bias + Σ_k x'_k W_k, where x'
is the document's weighted counts over the vocabulary (:meth:`~textnb.models._DiscreteNB.
decomposition`; term k's weights W_k are row k of ``score_weights``). Scoring one message needs
the settings, the sorted terms, and the rows of the terms the message holds. The terms are
searched as UTF-8 bytes, whose order is the code-point order they were sorted in, so they are
never decoded. So ``textnb filter`` costs milliseconds more than Python's start-up, where
importing numpy and reading the whole model took 200 (scripts/bench_filter.py).

The file is read whole in one read and every member's CRC-32 checked: a model replaced
meanwhile (``textnb learn``) is read as one version, never two, and a flipped byte anywhere is
found. The checks of :mod:`textnb.modelfile` apply (a regular file, a known version, settings
in bounds); each array must have the size its header declares and the shape the classes and
terms imply, weights must be finite and counts finite and non-negative, as
:func:`~textnb.classifier.load_model` requires. This costs 3.8 ms per message for a
SpamAssassin model of 70,000 terms, where reading only the rows a message needs cost 1.6 ms
(scripts/bench_filter.py). Not checked here, for it would take a Python loop over the
vocabulary: that the terms are in order (the full load checks it).

The file is read directly, not with :mod:`zipfile` (whose import alone costs 8 ms): only the
stored, non-zip64 members textnb writes are accepted; anything else is a ModelFileError, and
the caller falls back to :func:`textnb.classifier.load_model`.

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
from .modelfile import (MAX_META_BYTES, TEXT_CLASSIFIER, check_header, check_text_classifier,
                        open_model)
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
        with open_model(self.path) as f:
            try:
                # The zip's last record first, so that a large file of anything else is not
                # read; then one read of the whole file, the snapshot every member comes from.
                f.seek(-min(os.fstat(f.fileno()).st_size, _END_OF_DIRECTORY.size + 0xFFFF), 2)
                if b"PK\x05\x06" not in f.read():
                    raise ValueError("not a zip file")
                f.seek(0)
                blob = memoryview(f.read())
                self._members = _members(blob)
                meta = json.loads(bytes(self._member(blob, "meta.json")))
                version = check_header(meta, self.path, TEXT_CLASSIFIER)
                if version != 2:
                    raise ValueError(f"format version {version}, not 2")
                check_text_classifier(meta, self.path)
                self.classes = list(meta["classes"])
                self.cutoffs = check_cutoffs(meta.get("cutoffs"), self.classes)
                params = meta["params"]
                if params.get("hash_bits") is not None:  # load_model hashes the terms
                    raise ValueError("its vocabulary is hashed")
                self.tokenizer = Tokenizer(
                    lowercase=params["lowercase"], stop_words=meta["stop_words"],
                    stemmer=params["stemmer"], ngram_range=params["ngram_range"],
                    max_length=params["max_token_length"])
                self._binary = params["model"] == "bernoulli" or params["tf"] == "binary"
                self._log_tf = params["tf"] == "log" and not self._binary
                self._l2 = params["norm"] == "l2" and params["model"] != "bernoulli"
                data = {name: self._member(blob, name) for name in self._members}
                self._terms = bytes(_npy(data["terms.npy"], "|u1"))
                self._ends = _array("Q", _npy(data["term_ends.npy"], "<u8"))
                n_terms, n_classes = len(self._ends), len(self.classes)
                # The counts are learning's, not scoring's: checked, so that what classify
                # refuses is refused here too.
                for name, shape in (("class_count", (n_classes,)),
                                    ("feature_count", (n_classes, n_terms))):
                    _check_floats(_npy(data[f"{name}.npy"], "<f8", shape), name, counts=True)
                digests = _npy(data["digests.npy"], "<u8")
                owners = _array("q", _npy(data["digest_classes.npy"], "<i8", (len(digests) // 8,)))
                if owners and not 0 <= min(owners) <= max(owners) < n_classes:
                    raise ValueError("digest_classes holds a class number out of range")
                bias = _npy(data["score_bias.npy"], "<f8", (n_classes,))
                weights = _npy(data["score_weights.npy"], "<f8", (n_terms, n_classes))
                _check_floats(bias, "score_bias")
                _check_floats(weights, "score_weights")
                self.bias, self._weights = list(_array("d", bias)), _array("d", weights)
            except ModelFileError:
                raise
            except (OSError, KeyError, TypeError, ValueError, struct.error,
                    RecursionError) as error:
                raise ModelFileError(f"model file '{self.path}' cannot be scored without numpy "
                                     f"({error})") from None
        if self._ends and self._ends[-1] != len(self._terms) + 1:
            raise ModelFileError(f"model file '{self.path}' is corrupt")

    def log_proba(self, text: str, fields: tuple[tuple[str, str], ...] = ()) -> list[float]:
        """log P(c|x) per class, in ``classes`` order, of a text and its header fields."""
        counts = sorted(self._counts(self.tokenizer.document(text, fields)).items())
        values = [1.0 if self._binary else math.log1p(n) if self._log_tf else float(n)
                  for _, n in counts]
        if self._l2 and values:
            length = math.sqrt(sum(v * v for v in values))
            values = [v / length for v in values]
        n_classes, weights = len(self.classes), self._weights
        sums = [0.0] * n_classes
        for value, (k, _) in zip(values, counts):
            row = k * n_classes
            for c in range(n_classes):
                sums[c] += value * weights[row + c]
        jll = [s + b for s, b in zip(sums, self.bias)]
        if not all(map(math.isfinite, jll)):
            raise ModelFileError(f"model file '{self.path}' is corrupt "
                                 f"(its weights give scores that are not finite numbers)")
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

    def _member(self, blob: memoryview, name: str) -> memoryview:
        """A member's bytes, its CRC-32 checked."""
        offset, size, crc = self._members[name]
        if name == "meta.json" and size > MAX_META_BYTES:
            raise ValueError(f"meta.json of {size} bytes, over the {MAX_META_BYTES} allowed")
        data = blob[offset:offset + size]
        if zlib.crc32(data) != crc:
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


def _members(blob: memoryview) -> dict[str, tuple[int, int, int]]:
    """name → (data offset, size, CRC-32) of a zip's members, stored (uncompressed) ones only,
    each within the file."""
    size = len(blob)
    tail_start = max(0, size - _END_OF_DIRECTORY.size - 0xFFFF)
    at = bytes(blob[tail_start:]).rfind(b"PK\x05\x06")
    if at < 0:
        raise ValueError("not a zip file")
    *_, count, directory_size, directory_offset, _ = _END_OF_DIRECTORY.unpack_from(
        blob, tail_start + at)
    if directory_offset + directory_size > size:
        raise ValueError("the zip directory runs past the end of the file")
    directory = blob[directory_offset:directory_offset + directory_size]
    members, pos = {}, 0
    for _ in range(count):
        (signature, _, _, _, method, _, _, crc, packed, unpacked, name_length, extra_length,
         comment_length, _, _, _, local) = _DIRECTORY_ENTRY.unpack_from(directory, pos)
        if signature != b"PK\x01\x02" or method != 0 or packed != unpacked or packed == 0xFFFFFFFF:
            raise ValueError("not a zip file of stored members")
        start = pos + _DIRECTORY_ENTRY.size
        name = bytes(directory[start:start + name_length]).decode("utf-8")
        pos = start + name_length + extra_length + comment_length
        header = _LOCAL_HEADER.unpack_from(blob, local)
        if header[0] != b"PK\x03\x04":
            raise ValueError(f"bad local header of {name}")
        start = local + _LOCAL_HEADER.size + header[-2] + header[-1]
        if start + packed > size:
            raise ValueError(f"{name} runs past the end of the file")
        members[name] = (start, packed, crc)
    return members


def _array(typecode: str, data: memoryview) -> array:
    """An array of the numbers in ``data`` (array() would read a memoryview as bytes' ints)."""
    numbers = array(typecode)
    numbers.frombytes(data)
    return numbers


# Bytes of little-endian float64s: a NaN or an infinity has every exponent bit set — its top
# byte 0x7F or 0xFF, the high half of the next one 0xF — and a negative number its top bit.
# Found by slicing and translating bytes in C: 0.5 ms for 200,000 numbers, where summing them
# in Python takes 2 ms and min() 5.
_EXPONENT_HIGH = bytes(b & 0x7F == 0x7F for b in range(256))
_EXPONENT_LOW = bytes(b & 0xF0 == 0xF0 for b in range(256))
_SIGN = bytes(b >= 0x80 for b in range(256))


def _check_floats(data: bytes, name: str, counts: bool = False) -> None:
    """ValueError if the float64s in ``data`` include a NaN or an infinity, or, for counts,
    a negative number (-0.0 is not)."""
    data = bytes(data)  # a strided slice of bytes is a fast copy, of a memoryview a slow one
    top = data[7::8]
    if int.from_bytes(top.translate(_EXPONENT_HIGH), "little") & int.from_bytes(
            data[6::8].translate(_EXPONENT_LOW), "little"):
        raise ValueError(f"{name} holds numbers that are not finite")
    if counts and 1 in top.translate(_SIGN) and min(_array("d", data)) < 0:
        raise ValueError(f"{name} holds negative counts")


def _npy(data: memoryview, dtype: str, shape: tuple[int, ...] | None = None) -> memoryview:
    """The data bytes of a .npy file holding a C-ordered array of ``dtype``: one-dimensional,
    or of ``shape`` if given, and exactly as long as its header declares. Only plain arrays
    are accepted (a pickle never is: its dtype is 'O')."""
    if data[:6] != _NPY_MAGIC or data[6] not in (1, 2, 3):
        raise ValueError("not a .npy array")
    if data[6] == 1:
        length, start = int.from_bytes(data[8:10], "little"), 10
    else:
        length, start = int.from_bytes(data[8:12], "little"), 12
    header = dict(_NPY_FIELD.findall(bytes(data[start:start + length])))
    if header.get(b"descr") != f"'{dtype}'".encode() or header.get(b"fortran_order") != b"False":
        raise ValueError(f"array of {header.get(b'descr')}, expected {dtype}")
    declared = tuple(int(n) for n in header.get(b"shape", b"()").strip(b"()").split(b",")
                     if n.strip())
    if declared != shape if shape is not None else len(declared) != 1:
        raise ValueError(f"array of shape {declared}, expected {shape or 'one dimension'}")
    body = data[start + length:]
    if len(body) != math.prod(declared) * int(dtype[2:]):  # "<f8": 8 bytes each
        raise ValueError(f"array of shape {declared} in {len(body)} bytes")
    return body
