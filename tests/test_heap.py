"""textnb.heap: glibc's heap calls."""

import ctypes

from textnb import heap


def test_heap_calls_do_nothing_without_glibc(monkeypatch):
    """give_back and return_large_frees are glibc's; elsewhere they do nothing."""
    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())  # no malloc_trim, no mallopt
    heap.give_back()
    heap.return_large_frees()
