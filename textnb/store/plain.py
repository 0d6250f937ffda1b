"""A model file's arrays checked and read without numpy, and its meta.json's JSON read without the
json module: the mail filter's reader. Each rule of :data:`textnb.store.schema.RULES` is the same
exact predicate as :mod:`textnb.store.arrays`' numpy one, so that the two readers refuse the
same files."""

from __future__ import annotations

import math
import os
from itertools import islice

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Callable

try:  # the plain reader's passes over terms and counts in C (textnb/_modelfile.c), if built
    from .. import _modelfile as _fast
except ImportError:  # no C compiler at install time: the same predicates in Python
    _fast = None


_TYPECODES = {"u1": "B", "u2": "H", "u4": "I", "u8": "Q", "i1": "b", "i2": "h", "i4": "i",
              "i8": "q", "f8": "d"}


_LITTLE = os.sys.byteorder == "little"


def plain_array(array: Array) -> Any:
    """An :class:`Array`'s values as numbers: a memoryview of its bytes (no copy) where they
    are in this machine's byte order, else an array.array of them turned around."""
    typecode = _TYPECODES[array.descr[1:]]
    if array.descr[0] != (">" if _LITTLE else "<"):
        return array.values.cast(typecode)
    from array import array as make
    numbers = make(typecode)
    numbers.frombytes(array.values)
    numbers.byteswap()
    return numbers


def _byte(array: Array, k: int) -> bytes:
    """Byte ``k`` (0: the least significant) of each of a float64 array's values: slices of
    a copy of them (a bytes object slices ten times as fast as a memoryview)."""
    if array.copy is None:
        array.copy = (array.data[array.offset:] if isinstance(array.data, bytes)
                      else bytes(array.values))
    return array.copy[(7 - k if array.descr[0] == ">" else k)::8]


# Tables of bytes.translate, written as runs of bytes: a generator over range(256) each would
# cost the mail filter's start-up 0.1 ms.
_SIGN = bytes(128) + b"\1" * 128                  # b >> 7


_MAGNITUDE = bytes(range(128)) * 2                # b & 0x7F


_NONZERO = b"\0" + b"\1" * 255                    # b != 0


def _below(array: Array, bits: int) -> bool:
    """Whether every float64 of ``array`` is below 2**bits in size (so finite): its biased
    exponent, the 11 bits after the sign, below 1023 + bits; big integers and translations of
    bytes, in C."""
    if bits not in _EXPONENT_TABLES:
        _EXPONENT_TABLES[bits] = _exponent_tables(bits)
    over, at, low_over = _EXPONENT_TABLES[bits]
    top = _byte(array, 7)
    return not (int.from_bytes(top.translate(over), "little")
                or int.from_bytes(top.translate(at), "little")
                & int.from_bytes(_byte(array, 6).translate(low_over), "little"))


def _exponent_tables(bits: int) -> tuple[bytes, bytes, bytes]:
    """For a top byte: is its exponent part above, at, the limit's high 7 bits; for the next
    byte: are its high 4 bits at least the limit's low 4."""
    high, low = (1023 + bits) >> 4, (1023 + bits) & 0xF
    return ((b"\0" * (high + 1) + b"\1" * (127 - high)) * 2,      # (b & 0x7F) > high
            (b"\0" * high + b"\1" + b"\0" * (127 - high)) * 2,     # (b & 0x7F) == high
            b"\0" * (16 * low) + b"\1" * (16 * (16 - low)))          # b >> 4 >= low


_EXPONENT_TABLES: dict[int, tuple[bytes, bytes, bytes]] = {}  # bits → tables, made when first used


def _nonzero(array: Array) -> int:
    """A big integer of a byte a float64 of ``array``: 1 where it is neither 0 nor -0.0 (a
    bit set but the sign): its eight bytes OR-ed together."""
    folded = int.from_bytes(_byte(array, 7).translate(_MAGNITUDE), "little")
    for k in range(7):
        folded |= int.from_bytes(_byte(array, k), "little")
    return int.from_bytes(folded.to_bytes(len(array.values) // 8, "little").translate(_NONZERO),
                          "little")


def _signs(array: Array) -> int:
    """A big integer of a byte a float64 of ``array``: 1 where its sign bit is set."""
    return int.from_bytes(_byte(array, 7).translate(_SIGN), "little")


# The checks below import textnb.store.schema's rules where they run: a file whose sidecar vouches
# for it is read without them (textnb.store.verdict), and the mail filter's start without the
# module (1 ms, python -X importtime).

def _plain_counts(model: Any, name: str) -> Any:
    from .schema import COUNT_BITS, RULES
    array = model.raw[name]
    if array.descr[1] == "f":  # -0.0 is no negative count
        signs = _signs(array)
        ok = _below(array, COUNT_BITS) and not (signs and signs & _nonzero(array))
    else:  # unsigned integers: only 8-byte ones reach 2**54
        numbers = plain_array(array)
        ok = array.descr[2] != "8" or not numbers or max(numbers) < 2 ** COUNT_BITS
        if ok:
            return numbers
    if not ok:
        raise model.corrupt(f"{name}: {RULES['counts']}")
    return plain_array(array)


def _plain_weights(model: Any, name: str) -> Any:
    from .schema import COUNT_BITS, RULES
    array = model.raw[name]
    all_ones = int.from_bytes(b"\1" * (len(array.values) // 8), "little")
    if not _below(array, COUNT_BITS) or _signs(array) or _nonzero(array) != all_ones:
        raise model.corrupt(f"{name}: {RULES['weights']}")
    return plain_array(array)


def _plain_scores(model: Any, name: str) -> Any:
    from .schema import RULES, SCORE_BITS
    if not _below(model.raw[name], SCORE_BITS):
        raise model.corrupt(f"{name}: {RULES['scores']}")
    return plain_array(model.raw[name])


def _plain_constants(model: Any, name: str) -> Any:
    from .schema import LOG_BITS, RULES, SCORE_BITS
    numbers = plain_array(model.raw[name])  # (2, C), C order: a then b
    n = len(numbers) // 2
    if not (all(abs(a) < 2.0 ** LOG_BITS for a in numbers[:n])
            and all(-2.0 ** SCORE_BITS < b <= -0.5 for b in numbers[n:])):
        raise model.corrupt(f"{name}: {RULES['constants']}")
    return numbers


def _plain_classes(model: Any, name: str) -> Any:
    from .schema import RULES
    numbers = plain_array(model.raw[name])
    if numbers and not 0 <= min(numbers) <= max(numbers) < model.sizes["C"]:
        raise model.corrupt(f"{name}: {RULES['classes']}")
    return numbers


def _plain_lines(model: Any, name: str) -> tuple[bytes, Any]:
    """(the terms' bytes, where each line ends: the offset after its end, plus one), as bytes
    and an array (which a scorer slices and indexes faster than a memoryview of them)."""
    from .schema import RULES
    array = model.raw[name]
    data = (array.data[array.offset:] if isinstance(array.data, bytes) else bytes(array.values))
    if _fast is not None:
        found = _fast.sorted_lines(data, model.sizes["L"])
        if found is not None:
            from array import array
            ends = array("Q")
            ends.frombytes(found)
        else:
            ends = None
    else:
        ends = _line_ends(data)
    if ends is None or len(ends) != model.sizes["L"]:
        raise model.corrupt(f"{name}: {RULES['sorted lines']}")
    return data, ends


def _line_ends(data: bytes) -> list[int] | None:
    """:func:`_np_lines`'s verdict in Python: where each line of UTF-8 ``data`` ends, if its
    lines ascend, else None."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    import operator  # here, not at every mail filter's start: the C checks leave it unused
    lines = data.split(b"\n") if data else []
    if not all(map(operator.lt, lines, islice(lines, 1, None))):
        return None
    ends, at = [], 1
    for line in lines:
        at += len(line)
        ends.append(at)
        at += 1
    return ends


def _plain_rows(model: Any, name: str) -> Any:
    from .schema import RULES
    indptr = plain_array(model.raw["count_indptr"])
    classes = plain_array(model.raw[name])
    if _fast is not None:
        problem = _fast.rows(indptr, classes, model.sizes["C"])
    else:
        problem = _rows_problem(indptr, classes, model.sizes["C"])
    if problem:
        raise model.corrupt(f"{'count_indptr' if problem == 'indptr' else name}: {RULES[problem]}")
    return classes


def _rows_problem(indptr: Any, classes: Any, n_classes: int) -> str | None:
    """"indptr", "rows" or None: what :func:`_np_indptr` and :func:`_np_rows` refuse."""
    import operator
    if indptr[0] != 0 or indptr[-1] != len(classes) or any(map(operator.gt, indptr,
                                                             islice(indptr, 1, None))):
        return "indptr"
    if classes and max(classes) >= n_classes:
        return "rows"
    for lo, hi in zip(indptr, islice(indptr, 1, None)):
        if hi - lo > 1 and any(map(operator.ge, classes[lo:hi - 1], classes[lo + 1:hi])):
            return "rows"
    return None


PLAIN_RULES: dict[str | None, Callable] = {
    "counts": _plain_counts, "weights": _plain_weights, "scores": _plain_scores,
    "constants": _plain_constants, "classes": _plain_classes,
    "sorted lines": _plain_lines,
    "indptr": lambda model, name: plain_array(model.raw[name]), "rows": _plain_rows,
}


def _vouched_lines(model: Any, name: str) -> tuple[bytes, Any]:
    """:func:`_plain_lines` of a file already checked: where its lines end is ``term_ends``."""
    array = model.raw[name]
    data = (array.data[array.offset:] if isinstance(array.data, bytes) else bytes(array.values))
    return data, plain_array(model.raw["term_ends"])


# The same values of a file whose sidecar vouches that it passed PLAIN_RULES (textnb.store.verdict).
VOUCHED_RULES: dict[str | None, Callable] = {
    **{rule: lambda model, name: plain_array(model.raw[name]) for rule in PLAIN_RULES},
    "sorted lines": _vouched_lines,
}


class Array:
    """A .npy member as read: its type (``descr``, e.g. '<f8'), shape, C or Fortran order, and
    the bytes of the whole member (``data``), its values from ``offset`` on."""

    __slots__ = ("descr", "shape", "fortran", "data", "offset", "copy")

    def __init__(self, descr: str, shape: tuple[int, ...], fortran: bool, offset: int) -> None:
        self.descr, self.shape, self.fortran, self.offset = descr, shape, fortran, offset
        self.data: bytes | bytearray = b""
        self.copy: bytes | None = None  # the values as bytes, once a check needs them

    @property
    def values(self) -> memoryview:
        return memoryview(self.data)[self.offset:]


def term_index(blob: bytes, ends: Any, key: bytes) -> int:
    """The index of the term ``key`` among a model file's sorted terms (``blob``, each ended
    by a newline at its ``ends`` offset), or -1: a bisection over slices of the blob."""
    lo, hi = 0, len(ends)
    while lo < hi:
        mid = (lo + hi) // 2
        if blob[ends[mid - 1] if mid else 0:ends[mid] - 1] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(ends) and blob[ends[lo - 1] if lo else 0:ends[lo] - 1] == key else -1


def term_columns(blob: bytes, ends: Any, keys: Sequence[str]) -> list[int]:
    """:func:`term_index` of each of ``keys`` (str, as UTF-8 with surrogates passed), in C
    where it was built: a Python bisection costs a slice and a comparison a step (SpamAssassin's
    72,000 terms: 17 steps a token)."""
    if _fast is not None:
        return _fast.columns(blob, ends, keys)
    return [term_index(blob, ends, key.encode("utf-8", "surrogatepass")) for key in keys]


def json_loads(text: str, what: str = "meta.json") -> Any:
    """``json.loads(text)``, refusing an object that names a key twice (ValueError: ``what``
    names a key twice), by json's C scanner where there is one: importing json, its encoder and
    its patterns, costs every mail filter's start 1 ms."""
    def once(pairs: list[tuple[str, Any]]) -> dict:
        found = dict(pairs)
        if len(found) != len(pairs):
            raise ValueError(f"{what} names a key twice")
        return found

    try:
        from _json import make_scanner
    except ImportError:  # no C scanner (another Python): json itself
        import json
        return json.loads(text, object_pairs_hook=once)
    # What json.loads does with a str and json.JSONDecoder(object_pairs_hook=once).
    blank = " \t\n\r"
    if text.startswith("\ufeff"):
        _json_error("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value, end = make_scanner(_JSONContext(once))(text, len(text) - len(text.lstrip(blank)))
    except StopIteration as error:
        _json_error("Expecting value", text, error.value)
    rest = text[end:]
    if rest.strip(blank):
        _json_error("Extra data", text, end + len(rest) - len(rest.lstrip(blank)))
    return value


def _json_error(message: str, text: str, at: int) -> None:
    """Raise json's error (importing json, where there is one to say)."""
    from json import JSONDecodeError
    raise JSONDecodeError(message, text, at) from None


class _JSONContext:
    """The settings json's scanner reads, as json.JSONDecoder(object_pairs_hook=hook) has them."""

    def __init__(self, hook) -> None:
        self.strict, self.object_hook, self.object_pairs_hook = True, None, hook
        self.parse_float, self.parse_int = float, int
        self.parse_constant = {"-Infinity": -math.inf, "Infinity": math.inf,
                               "NaN": math.nan}.__getitem__
        self.memo: dict = {}


def journal_path(model_path: str | os.PathLike) -> str:
    """The journal of the model file at ``model_path`` (beside its target, if a link):
    :mod:`textnb.store.journal`'s, named here where the mail filter looks for it."""
    return os.path.realpath(model_path) + ".journal"
