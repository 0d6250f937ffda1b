"""jobs → their results, in order, from worker processes: the steps that use every core
(reading and counting documents, the walks of training on error).

The workers are fresh Python processes fed pickled jobs through a pipe (:class:`_Worker`):
nothing of the caller's main module runs in them, so they work from any script, guarded or
not, and the command line and the Python API share them. joblib is not imported (it costs a
process 10 MB, and its processes start in three times the time), unless the caller chose a
joblib backend (``with joblib.parallel_backend("dask")``): that backend then does the work.

Jobs and results cross the pipes pickled, as they did through the standard library's pool and
joblib's: only between this process and the workers it started, never from a file. Model files
are another matter: they load without pickle (:mod:`textnb.store.container`).
"""

from __future__ import annotations

import atexit
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import cycle, islice
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
    if _joblib_backend_chosen():
        yield from _joblib(function, jobs, -1 if n_jobs is None else n_jobs)
    else:
        yield from spawned(function, jobs, n_workers(n_jobs))


class WorkerDied(RuntimeError):
    """A worker process ended without sending a job's result back."""


def spawned(function: Callable[..., Any], jobs: Iterable[tuple], processes: int) -> Iterator[Any]:
    """:func:`imap` in a pool of ``processes`` worker processes (:class:`_Worker`), kept for the
    next call: job k goes to worker k mod ``processes``, a job for each and one more are sent
    ahead, then one more for each result taken (two for each process: 20 Newsgroups' `textnb
    train` peaked 3 MiB higher, no faster). ``function`` must be picklable by reference (a
    module's function). A job's exception is raised here; if a worker dies, WorkerDied."""
    pool = _take(processes) if processes > 1 else None
    if pool is None:
        yield from (function(*job) for job in jobs)
        return
    jobs, turns = iter(jobs), cycle(pool)
    pending: deque[_Worker] = deque()  # the worker of each job out, in the jobs' order

    def send(job: tuple) -> None:
        worker = next(turns)
        worker.send((function, job))
        pending.append(worker)

    done = False
    try:
        for job in islice(jobs, processes + 1):
            send(job)
        while pending:
            ok, result = pending.popleft().receive()
            if not ok:
                raise result
            for job in jobs:
                send(job)
                break
            yield result
        done = True
    finally:
        if done:
            _keep(processes, pool)
        else:  # a job failed, a worker died, or the caller stopped early: the results of the
            for worker in pool:  # jobs still out would come back to the next call
                worker.stop(at_once=True)


# A worker's start: no SIGINT (a terminal's Ctrl-C is the caller's to answer, once), its stdout
# kept for results (what the jobs print goes to stderr), the caller's module path, then jobs.
_BOOT = """\
import os, pickle, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
results = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
sys.stdout = sys.stderr
jobs = sys.stdin.buffer
sys.path[:] = pickle.load(jobs)
from textnb.workers import serve
serve(jobs, results)
"""


class _Worker:
    """A fresh Python process (``python -c``) that runs the (function, args) jobs sent down its
    stdin in turn and sends each ``(True, result)`` or ``(False, exception)`` back up its
    stdout, pickled. Nothing of the caller's main module runs in it, so any script may use
    workers, guarded by ``if __name__ == "__main__"`` or not; and they start faster than the
    standard library's pool of spawned processes or joblib's (docs/design/training-speed.md). A
    thread writes the jobs, so that a large job never waits on a worker that waits to send a
    large result."""

    def __init__(self) -> None:
        import queue
        import subprocess
        import threading
        self.process = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        self.jobs: Any = queue.SimpleQueue()
        self.jobs.put(list(sys.path))
        threading.Thread(target=self._write, daemon=True).start()

    def send(self, job: tuple) -> None:
        self.jobs.put(job)

    def receive(self) -> tuple[bool, Any]:
        import pickle
        try:
            return pickle.load(self.process.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            raise WorkerDied(f"a worker process ended (exit status {self.process.wait()})") \
                from None

    def stop(self, at_once: bool = False) -> None:
        """End the process: ``at_once`` (its jobs' results are no longer wanted), else when it
        reads the end of its jobs, as an idle one does at once."""
        import subprocess
        self.jobs.put(None)
        if not at_once:
            try:
                self.process.wait(timeout=5)
                return
            except subprocess.TimeoutExpired:
                pass
        self.process.kill()
        self.process.wait()

    def _write(self) -> None:
        import pickle
        pipe = self.process.stdin
        try:
            while (job := self.jobs.get()) is not None:
                pickle.dump(job, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.flush()
                job = None   # sent: its arrays are the caller's to let go (a tuning's counts)
            pipe.close()
        except (OSError, ValueError):  # the process died; receive() says so
            pass


def serve(jobs: Any, results: Any) -> None:
    """A worker's loop (:class:`_Worker`): each job read from the binary stream ``jobs`` run,
    its outcome written to ``results``, until ``jobs`` ends."""
    import pickle
    while True:
        try:
            function, args = pickle.load(jobs)
        except EOFError:
            return
        try:
            outcome = (True, function(*args))
        except BaseException as error:  # the caller's to handle, whatever it is
            outcome = (False, error)
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # a result or an exception that does not pickle
            data = pickle.dumps((False, RuntimeError(f"in a worker process: {error!r}")))
        results.write(data)
        results.flush()


_pools: dict[int, list[_Worker]] = {}


def _take(processes: int) -> list[_Worker] | None:
    """``processes`` workers for one call's use: the ones a call before kept (:func:`_keep`),
    else new ones. Kept, as joblib keeps its workers: training on error walks in them once per
    fold, and a new pool a call cost more than the walks. None where processes cannot be started: the jobs then run in this process."""
    pool = _pools.pop(processes, None)
    if pool is None:
        try:
            pool = [_Worker() for _ in range(processes)]
        except OSError:
            return None
    return pool


def _keep(processes: int, pool: list[_Worker]) -> None:
    """Keep a pool whose every result was taken for the next call (one of each size)."""
    if processes in _pools:  # another call kept one meanwhile
        for worker in pool:
            worker.stop()
    else:
        _pools[processes] = pool


def _shut_down() -> None:
    """Stop the kept pools' processes at exit, at once: they are idle (a pool is kept once its
    every result was taken). Each told to end instead would run a Python's teardown, one after
    the other."""
    while _pools:
        for worker in _pools.popitem()[1]:
            worker.stop(at_once=True)


atexit.register(_shut_down)
# A forked child has its parent's pools but not their pipes' writer threads, and its exit
# must not kill its parent's workers: it starts its own.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pools.clear)


def _joblib(function: Callable[..., Any], jobs: Iterable[tuple], n_jobs: int) -> Iterator[Any]:
    from joblib import Parallel, delayed, effective_n_jobs
    # joblib sends a job as soon as a worker is free, whether the caller has taken the results
    # or not: a window of jobs at a time, the next when the caller has taken this one's (1 M
    # hashed documents: 650 MiB peak without, most of it results waiting).
    jobs, window = iter(jobs), 4 * effective_n_jobs(n_jobs)
    with Parallel(n_jobs=n_jobs, return_as="generator", pre_dispatch="2*n_jobs") as parallel:
        while batch := list(islice(jobs, window)):
            yield from parallel(delayed(function)(*job) for job in batch)


def _joblib_backend_chosen() -> bool:
    """Whether the caller picked a joblib backend other than its default (loky) processes."""
    if "joblib" not in sys.modules:  # never imported: nobody chose one
        return False
    from joblib.parallel import get_active_backend
    return type(get_active_backend()[0]).__name__ != "LokyBackend"
