"""jobs → their results, in order, from worker processes: the steps that use every core
(reading and counting documents, the walks of training on error).

joblib's processes do the work for the Python API: they work from any script, and a joblib
backend the caller chooses (``with joblib.parallel_backend("dask")``) spreads them further. The
textnb command uses a standard-library pool instead: importing joblib costs a process 10 MB
(20 Newsgroups: `textnb classify` peak 86 → 75 MiB, `textnb train` 121 → 100 MiB).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any


def n_workers(n_jobs: int | None) -> int:
    """Processes for ``n_jobs``: None or -1 every core this process may use, -2 all but one."""
    if n_jobs is not None and n_jobs > 0:
        return n_jobs
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max((cores or 1) + 1 + (n_jobs if n_jobs is not None else -1), 1)


def imap(function: Callable[..., Any], jobs: Iterable[tuple], n_jobs: int | None) -> Iterator[Any]:
    """``function(*job)`` of each job, in order, computed in ``n_workers(n_jobs)`` processes.

    Jobs are taken from ``jobs`` as workers need them, a few ahead of the result the caller is
    waiting for, so a slow caller never lets results pile up.
    """
    if _main_is_textnb() and not _joblib_backend_chosen():
        yield from spawned(function, jobs, n_workers(n_jobs))
    else:
        yield from _joblib(function, jobs, -1 if n_jobs is None else n_jobs)


def spawned(function: Callable[..., Any], jobs: Iterable[tuple], processes: int) -> Iterator[Any]:
    """:func:`imap` in a standard-library pool of spawned processes: a job for each process and
    one more are sent ahead, then one more for each result taken (two for each process: 20
    Newsgroups' `textnb train` peaked 3 MiB higher, no faster)."""
    from concurrent.futures.process import BrokenProcessPool
    pool = _pool(processes) if processes > 1 else None
    if pool is None:
        yield from (function(*job) for job in jobs)
        return
    jobs = iter(jobs)
    pending = deque(pool.submit(function, *job) for job in islice(jobs, processes + 1))
    try:
        while pending:
            result = pending.popleft().result()
            for job in jobs:
                pending.append(pool.submit(function, *job))
                break
            yield result
    except BrokenProcessPool:  # a worker died: the next call starts afresh
        _pools.pop(processes, None)
        pool.shutdown(wait=False)
        raise
    finally:
        for future in pending:  # the caller stopped early, or a job failed
            future.cancel()


_pools: dict[int, Any] = {}


def _pool(processes: int) -> Any:
    """A pool of ``processes`` spawned processes, kept for the next call, as joblib keeps its
    workers: training on error walks in them once per fold (SpamAssassin's `textnb train`
    took 12.2 s with a new pool a call, 7.4 s with one kept). None where the system has no
    working semaphores (some containers): the jobs then run in this process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    pool = _pools.get(processes)
    if pool is None:
        # Spawned, not forked: forking a process that holds threads (numpy's BLAS) is unsafe.
        # Measured on 20 Newsgroups, spawning was as fast as a fork server (3.9-4.2 s).
        # Ctrl-C is the command's to handle (one line, "aborted"), not each worker's traceback.
        try:
            pool = _pools[processes] = ProcessPoolExecutor(
                processes, mp_context=multiprocessing.get_context("spawn"),
                initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
        except (OSError, NotImplementedError):
            return None
    return pool


def _shut_down() -> None:
    """Stop the kept pools' processes at exit, while the modules that stop them still exist
    (left to the garbage collector, a pool's clean-up ran after them: "Exception ignored")."""
    while _pools:
        _pools.popitem()[1].shutdown(wait=True)


atexit.register(_shut_down)


def _joblib(function: Callable[..., Any], jobs: Iterable[tuple], n_jobs: int) -> Iterator[Any]:
    from joblib import Parallel, delayed, effective_n_jobs
    # joblib sends a job as soon as a worker is free, whether the caller has taken the results
    # or not: a window of jobs at a time, the next when the caller has taken this one's (1 M
    # hashed documents: 650 MiB peak without, most of it results waiting).
    jobs, window = iter(jobs), 4 * effective_n_jobs(n_jobs)
    with Parallel(n_jobs=n_jobs, return_as="generator", pre_dispatch="2*n_jobs") as parallel:
        while batch := list(islice(jobs, window)):
            yield from parallel(delayed(function)(*job) for job in batch)


def _main_is_textnb() -> bool:
    """Whether this process runs the textnb command, whose main module a spawned process may
    import again (it does nothing on import). A caller's script may not be guarded by ``if
    __name__ == "__main__"``: joblib's processes never run it again."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    entry = getattr(main, "main", None)  # the console script's "from textnb.__main__ import main"
    return (spec is not None and spec.name == "textnb.__main__"
            or getattr(entry, "__module__", None) == "textnb.__main__")


def _joblib_backend_chosen() -> bool:
    """Whether the caller picked a joblib backend other than its default (loky) processes."""
    if "joblib" not in sys.modules:  # never imported: nobody chose one
        return False
    from joblib.parallel import get_active_backend
    return type(get_active_backend()[0]).__name__ != "LokyBackend"
