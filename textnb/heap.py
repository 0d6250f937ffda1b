"""glibc's heap: freed memory given back to the system (elsewhere there is nothing to do)."""

from __future__ import annotations

# Arrays of this many bytes or more are mapped apart and unmapped when freed (glibc's
# M_MMAP_THRESHOLD, fixed): by default glibc raises the threshold to the largest block freed,
# and from then on keeps the freed temporaries of scoring in its heap. Only for scoring and
# for training that streams (or counts on a cluster): a fit's cross-validations would map and
# fault in every fold's temporaries afresh (docs/design/performance.md).
_MMAP_THRESHOLD = 2 << 20


def return_large_frees() -> None:
    """Have glibc return freed large blocks to the system from now on."""
    _glibc("mallopt", -3, _MMAP_THRESHOLD)  # -3: M_MMAP_THRESHOLD (malloc.h)


def give_back() -> None:
    """Have glibc return the free memory of its heaps to the system now: a fold's or a
    weighing's temporaries are freed into the heap, which glibc keeps, and the next ones
    would not fit its holes but be added to it (docs/design/training-speed.md)."""
    _glibc("malloc_trim", 0)


def _glibc(name: str, *args: int) -> None:
    """glibc's function ``name`` called with ``args``; nothing where there is none."""
    import ctypes
    try:
        getattr(ctypes.CDLL(None), name)(*args)
    except (OSError, AttributeError):  # not glibc
        pass
