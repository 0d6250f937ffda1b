"""A model file's arrays as numpy arrays, their values checked by the rules of
:data:`textnb.store.schema.RULES` (the same predicates :mod:`textnb.store.plain` checks without
numpy), and arrays written as .npy members."""

from __future__ import annotations

import math
import operator
from itertools import islice
from typing import Any, Callable

from .plain import Array
from .schema import COUNT_BITS, LOG_BITS, RULES, SCORE_BITS


def numpy_array(array: Array, np: Any) -> Any:
    values = np.frombuffer(array.data, dtype=np.dtype(array.descr), offset=array.offset,
                           count=math.prod(array.shape))
    values = values.reshape(array.shape[::-1]).T if array.fortran else values.reshape(array.shape)
    return values if values.flags.aligned else values.copy()


def _np_counts(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    ok = (bool((np.abs(a) < 2.0 ** COUNT_BITS).all() and not (a < 0).any()) if a.dtype.kind == "f"
          else not a.size or int(a.max()) < 2 ** COUNT_BITS)
    if not ok:
        raise model.corrupt(f"{name}: {RULES['counts']}")
    return a


def _np_weights(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not ((np.abs(a) < 2.0 ** COUNT_BITS).all() and (a > 0).all()):
        raise model.corrupt(f"{name}: {RULES['weights']}")
    return a


def _np_scores(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not (np.abs(a) < 2.0 ** SCORE_BITS).all():
        raise model.corrupt(f"{name}: {RULES['scores']}")
    return a


def _np_constants(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not ((np.abs(a[0]) < 2.0 ** LOG_BITS).all()
            and ((a[1] > -2.0 ** SCORE_BITS) & (a[1] <= -0.5)).all()):
        raise model.corrupt(f"{name}: {RULES['constants']}")
    return a


def _np_classes(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if a.size and not 0 <= int(a.min()) <= int(a.max()) < model.sizes["C"]:
        raise model.corrupt(f"{name}: {RULES['classes']}")
    return a


def _np_lines(model: Any, arrays: dict, name: str, np: Any, ordered: bool = True) -> list:
    data = arrays[name].tobytes()
    try:
        lines = data.decode("utf-8").split("\n") if data else []
    except UnicodeDecodeError:
        raise model.corrupt(f"{name}: {RULES['sorted lines']}") from None
    if len(lines) != model.sizes["L"] or (
            any(map(operator.ge, lines, islice(lines, 1, None))) if ordered
            else len(set(lines)) != len(lines)):
        raise model.corrupt(f"{name}: {RULES['sorted lines' if ordered else 'distinct lines']}")
    return lines


def _np_columns(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    bits = model.meta["params"]["hash_bits"]
    if a.size and not (a[0] >= 0 and a[-1] < 2 ** bits and (a[1:] > a[:-1]).all()):
        raise model.corrupt(f"{name}: {RULES['columns']}")
    return a


def _np_indptr(model: Any, arrays: dict, name: str, np: Any) -> Any:
    a = arrays[name]
    if not (a[0] == 0 and a[-1] == model.sizes["N"] and (a[1:] >= a[:-1]).all()):
        raise model.corrupt(f"{name}: {RULES['indptr']}")
    return a


def _np_rows(model: Any, arrays: dict, name: str, np: Any) -> Any:
    classes, indptr = arrays[name], arrays["count_indptr"]
    _np_indptr(model, arrays, "count_indptr", np)
    if classes.size:
        if int(classes.max()) >= model.sizes["C"]:
            raise model.corrupt(f"{name}: {RULES['rows']}")
        # Within a row (no row start between two entries) each class above the one before.
        starts = np.zeros(classes.size + 1, dtype=bool)
        starts[indptr.astype(np.int64)] = True
        drops = classes[1:] <= classes[:-1]
        if (drops & ~starts[1:-1]).any():
            raise model.corrupt(f"{name}: {RULES['rows']}")
    return classes


NUMPY_RULES: dict[str, Callable] = {
    "counts": _np_counts, "weights": _np_weights, "scores": _np_scores,
    "constants": _np_constants, "classes": _np_classes,
    "sorted lines": _np_lines,
    "distinct lines": lambda model, arrays, name, np: _np_lines(model, arrays, name, np, False),
    "columns": _np_columns, "indptr": _np_indptr, "rows": _np_rows,
}


def numpy_arrays(model: Any) -> dict[str, Any]:
    """Every member of a :class:`~textnb.store.container.ModelFile` as a numpy array (a view of
    the bytes read, copied if unaligned), its values checked by its rule; a member of lines
    ("terms") as the list of them (str)."""
    import numpy as np
    arrays = {name: numpy_array(array, np) for name, array in model.raw.items()}
    for name, member in model.members.items():
        if member.rule is not None and name in arrays:
            arrays[name] = NUMPY_RULES[member.rule](model, arrays, name, np)
    return arrays


def write_array(out: Any, array: Any) -> None:
    """``array`` as a .npy file to the binary file ``out``, never pickled."""
    import numpy as np
    np.lib.format.write_array(out, np.asarray(array), allow_pickle=False)
