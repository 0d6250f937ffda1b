"""model file → log P(c|x) of one document, without numpy: the mail filter's fast path.

A TextClassifier's scores decompose as jll(x) = bias + Σ_k x'_k W_k, where x' is the
document's weighted counts over the vocabulary (:meth:`~textnb.models._DiscreteNB.
decomposition`). Scoring one message needs the settings, the sorted terms, and the weights W_k
of the terms the message holds. A file of format 3 holds the counts by term (CSR: row k of
``count_indptr``, ``count_classes``, ``count_values`` is term k), and W_k follows from term
k's counts and two numbers per class (``score_constants``, see
:func:`textnb.classifier._score_constants`); a file of format 2 holds W_k itself, row k of
``score_weights``. The terms are searched as UTF-8 bytes, whose order is the code-point order
they were sorted in, so they are never decoded. So ``textnb filter`` costs milliseconds more
than Python's start-up, where importing numpy and reading the whole model took 200
(scripts/bench_filter.py).

The file is read whole in one read and every member's CRC-32 checked: a model replaced
meanwhile (``textnb learn``) is read as one version, never two, and a flipped byte anywhere is
found. The checks of :mod:`textnb.modelfile` apply (a regular file, a known version, settings
in bounds); each array must have the size its header declares and the shape the classes and
terms imply, weights and constants must be finite and counts finite and non-negative, as
:func:`~textnb.classifier.load_model` requires. For a SpamAssassin model of 50,000 terms,
opening the file and scoring a message take 0.8 times as long in format 3 as in format 2,
whose file is 1.8 times larger, though the weights are computed (scripts/bench_modelfile.py).
Not checked here, for it would take a Python loop over the vocabulary: that the terms are in
order, and that the rows of counts are in order where a message does not read them (the rows
it reads are checked there); the full load checks both.

The file is read directly, not with :mod:`zipfile` (whose import alone costs 8 ms): only the
stored, non-zip64 members textnb writes are accepted; anything else (format 1, a re-packed
zip) is a ModelFileError, and the caller falls back to :func:`textnb.classifier.load_model`.

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
# .npy types of a format-3 file's indices and integral counts, and the array typecodes of all
# the types read ("I" is 4 bytes wherever CPython runs on a 32- or 64-bit platform).
_UNSIGNED = ("|u1", "<u2", "<u4", "<u8")
_TYPECODES = {"|u1": "B", "<u2": "H", "<u4": "I", "<u8": "Q", "<f8": "d", "<i8": "q"}


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
                if version < 2:
                    raise ValueError(f"format version {version}, not 2 or later")
                check_text_classifier(meta, self.path)
                self.classes = list(meta["classes"])
                self.cutoffs = check_cutoffs(meta.get("cutoffs"), self.classes)
                params = meta["params"]
                if params.get("hash_bits") is not None:  # load_model hashes the terms
                    raise ValueError("its vocabulary is hashed")
                self.tokenizer = Tokenizer(
                    lowercase=params["lowercase"], stop_words=meta["stop_words"],
                    stemmer=params["stemmer"],
                    ngram_range=meta.get("ngram_range") or params["ngram_range"],
                    max_length=params["max_token_length"])
                self._model, self._alpha = params["model"], float(params["alpha"])
                self._binary = params["model"] == "bernoulli" or params["tf"] == "binary"
                self._log_tf = params["tf"] == "log" and not self._binary
                self._l2 = params["norm"] == "l2" and params["model"] != "bernoulli"
                data = {name: self._member(blob, name) for name in self._members}
                self._terms = bytes(_npy(data["terms.npy"], "|u1"))
                self._ends = _numbers(data["term_ends.npy"],
                                      ("<u8",) if version == 2 else _UNSIGNED)
                n_terms, n_classes = len(self._ends), len(self.classes)
                # The counts are learning's, not only scoring's: checked, so that what classify
                # refuses is refused here too.
                class_count = _npy(data["class_count.npy"], "<f8", (n_classes,))
                _check_floats(class_count, "class_count", counts=True)
                self._class_count = list(_array("d", class_count))
                digests = _npy(data["digests.npy"], "<u8")
                owners = _numbers(data["digest_classes.npy"],
                                  ("<i8",) if version == 2 else _UNSIGNED, (len(digests) // 8,))
                if owners and not 0 <= min(owners) <= max(owners) < n_classes:
                    raise ValueError("digest_classes holds a class number out of range")
                bias = _npy(data["score_bias.npy"], "<f8", (n_classes,))
                _check_floats(bias, "score_bias")
                self.bias = list(_array("d", bias))
                if version == 2:
                    _check_floats(_npy(data["feature_count.npy"], "<f8", (n_classes, n_terms)),
                                  "feature_count", counts=True)
                    weights = _npy(data["score_weights.npy"], "<f8", (n_terms, n_classes))
                    _check_floats(weights, "score_weights")
                    self._weights = _array("d", weights)
                else:
                    self._weights = None
                    self._read_counts(data, n_terms, n_classes)
            except ModelFileError:
                raise
            except (OSError, KeyError, TypeError, ValueError, struct.error,
                    RecursionError) as error:
                raise ModelFileError(f"model file '{self.path}' cannot be scored without numpy "
                                     f"({error})") from None
        if self._ends and self._ends[-1] != len(self._terms) + 1:
            raise ModelFileError(f"model file '{self.path}' is corrupt")

    def _read_counts(self, data: dict[str, memoryview], n_terms: int, n_classes: int) -> None:
        """The counts by term of a format-3 file (CSR: count_indptr over terms, count_classes
        and count_values per stored count) and score_constants, checked as far as a pass in C
        goes: the ends of count_indptr, the class numbers of a file of up to 256 classes, the
        float counts. Each row the scorer reads is checked where it is read (:meth:`_rows`);
        that count_indptr ascends everywhere would take a Python loop over the vocabulary, so
        only the full load checks it."""
        indptr = _numbers(data["count_indptr.npy"], _UNSIGNED, (n_terms + 1,))
        classes = _numbers(data["count_classes.npy"], _UNSIGNED)
        values = _numbers(data["count_values.npy"], (*_UNSIGNED, "<f8"), (len(classes),))
        if indptr[0] != 0 or indptr[-1] != len(classes):
            raise ValueError("count_indptr does not run from 0 to the number of counts")
        if classes.typecode == "B" and n_classes < 256:  # a table lookup in C, not max()
            if 1 in bytes(classes).translate(bytes(b >= n_classes for b in range(256))):
                raise ValueError("count_classes holds a class number out of range")
        elif classes and max(classes) >= n_classes:
            raise ValueError("count_classes holds a class number out of range")
        if values.typecode == "d":
            _check_floats(values.tobytes(), "count_values", counts=True)
        constants = _npy(data["score_constants.npy"], "<f8", (2, n_classes))
        _check_floats(constants, "score_constants")
        constants = _array("d", constants)
        self._indptr, self._count_classes, self._count_values = indptr, classes, values
        self._a, self._b = list(constants[:n_classes]), list(constants[n_classes:])
        if 0.0 in self._b:
            raise ValueError("score_constants holds a divisor of zero")
        # The multinomial and Bernoulli weights of a term no class has (count 0).
        log_alpha = math.log(0.0 + self._alpha)
        self._absent = [log_alpha - a_c if self._model == "multinomial" else
                        (log_alpha - a_c) - (math.log(max(total, 0.0) + self._alpha) - a_c)
                        for a_c, total in zip(self._a, self._class_count)]

    def _rows(self, terms: list[int]) -> list:
        """The weights of each of ``terms``, one per class
        (:meth:`~textnb.models._DiscreteNB.decomposition`): rows of score_weights (format 2),
        or from the term's counts n_c with the expressions of
        :func:`textnb.classifier._score_constants`, a class without the term taking the
        weight of a count of 0, computed once."""
        n_classes = len(self.classes)
        if self._weights is not None:
            weights = self._weights
            return [weights[k * n_classes:(k + 1) * n_classes] for k in terms]
        indptr, classes, values, size = (self._indptr, self._count_classes, self._count_values,
                                         len(self._count_classes))
        alpha, a, b, absent, log = self._alpha, self._a, self._b, self._absent, math.log
        model, class_count, divisors = self._model, self._class_count, list(zip(a, b))
        rows = []
        # One loop for all terms, locals only, array slices, no max(): 5 µs a term where
        # a method call per term with max() took 8 (2 classes, a loaded machine).
        for k in terms:
            lo, hi = indptr[k], indptr[k + 1]
            if not lo <= hi <= size:
                raise ValueError("count_indptr is out of order")
            cs, vs = classes[lo:hi], values[lo:hi]
            if hi - lo > 1 and any(c <= previous for previous, c in zip(cs, cs[1:])):
                raise ValueError("count_classes is out of order")
            if model == "complement":
                total = 0.0
                for n in vs:  # in class order, as numpy sums feature_count_ over classes
                    total += n
                zero = log(total + alpha)
                row = [(zero - a_c) / b_c for a_c, b_c in divisors]
                for c, n in zip(cs, vs):
                    x = total - n + alpha
                    row[c] = (log(x if x > alpha else alpha) - a[c]) / b[c]
            elif model == "multinomial":
                row = absent[:]
                for c, n in zip(cs, vs):
                    row[c] = log(n + alpha) - a[c]
            else:
                row = absent[:]
                for c, n in zip(cs, vs):
                    x = class_count[c] - n
                    row[c] = (log(n + alpha) - a[c]) - (
                        log((x if x > 0.0 else 0.0) + alpha) - a[c])
            rows.append(row)
        return rows

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
        try:
            for value, row in zip(values, self._rows([k for k, _ in counts])):
                for c in range(n_classes):
                    sums[c] += value * row[c]
        except ValueError as error:  # a row of a crafted file that the load did not check
            raise ModelFileError(f"model file '{self.path}' is corrupt ({error})") from None
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
        (signature, _, _, flags, method, _, _, crc, packed, unpacked, name_length, extra_length,
         comment_length, _, _, _, local) = _DIRECTORY_ENTRY.unpack_from(directory, pos)
        if signature != b"PK\x01\x02" or method != 0 or packed != unpacked or packed == 0xFFFFFFFF \
                or flags & 1:  # encrypted: what zipfile, and so load_model, refuses
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
    return _typed_npy(data, (dtype,), shape)[1]


def _numbers(data: memoryview, dtypes: tuple[str, ...],
             shape: tuple[int, ...] | None = None) -> array:
    """The numbers of a .npy file (as :func:`_npy`) of one of ``dtypes``, as an array."""
    dtype, body = _typed_npy(data, dtypes, shape)
    return _array(_TYPECODES[dtype], body)


def _typed_npy(data: memoryview, dtypes: tuple[str, ...],
               shape: tuple[int, ...] | None) -> tuple[str, memoryview]:
    """(dtype, data bytes) of a .npy file as :func:`_npy` accepts it, of one of ``dtypes``."""
    if data[:6] != _NPY_MAGIC or data[6] not in (1, 2, 3):
        raise ValueError("not a .npy array")
    if data[6] == 1:
        length, start = int.from_bytes(data[8:10], "little"), 10
    else:
        length, start = int.from_bytes(data[8:12], "little"), 12
    header = dict(_NPY_FIELD.findall(bytes(data[start:start + length])))
    dtype = header.get(b"descr", b"").strip(b"'").decode("ascii", "replace")
    if dtype not in dtypes or header.get(b"fortran_order") != b"False":
        raise ValueError(f"array of {header.get(b'descr')}, expected {' or '.join(dtypes)}")
    declared = tuple(int(n) for n in header.get(b"shape", b"()").strip(b"()").split(b",")
                     if n.strip())
    if declared != shape if shape is not None else len(declared) != 1:
        raise ValueError(f"array of shape {declared}, expected {shape or 'one dimension'}")
    body = data[start + length:]
    if len(body) != math.prod(declared) * int(dtype[2:]):  # "<f8": 8 bytes each
        raise ValueError(f"array of shape {declared} in {len(body)} bytes")
    return dtype, body
