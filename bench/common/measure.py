"""Wall time, CPU time and peak memory: of a command in a fresh process, of work in this
process, and of running processes (from /proc).

Peak RSS is the kernel's high-water mark of resident memory (``ru_maxrss``, VmHWM), in KiB
where a name says ``kib`` and MiB where it says ``mib`` or returns :class:`Usage`.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from bench.common import BenchError
from bench.common.corpora import ROOT

# An installed textnb has compiled modules (pip writes .pyc files); with PYTHONDONTWRITEBYTECODE,
# set on some machines, every run would compile them again, which no deployment pays.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


class Usage(NamedTuple):
    """What a command cost: wall seconds, CPU seconds (user + system, its worker processes
    included) and peak RSS in MiB (the largest of it and the processes it waited for)."""
    wall: float
    cpu: float
    rss: float


# A fresh Python process a measurement: RUSAGE_CHILDREN keeps the largest child's peak, so each
# command is measured from a process that has run nothing else.
_PROBE = ("import resource, subprocess, sys, time, json\n"
          "out = open(sys.argv[1], 'wb') if sys.argv[1] else subprocess.DEVNULL\n"
          "t = time.perf_counter()\n"
          "done = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)\n"
          "wall = time.perf_counter() - t\n"
          "if done.returncode: sys.exit(done.stderr.decode(errors='replace')[-300:])\n"
          "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
          "print(json.dumps([wall, r.ru_utime + r.ru_stime, r.ru_maxrss]))\n")


def measure(command: list[str], tree: Path = ROOT, out: Path | None = None) -> Usage:
    """Run ``command`` with the textnb of source tree ``tree`` (first on PYTHONPATH, and the
    working directory, which ``python -m`` puts first); its stdout into ``out``."""
    compile_once(tree)
    done = subprocess.run([sys.executable, "-c", _PROBE, str(out or ""), *command],
                          capture_output=True, text=True, cwd=tree,
                          env={**ENV, "PYTHONPATH": str(tree)})
    if done.returncode != 0:
        raise BenchError(f"{' '.join(map(str, command[:4]))} ... failed: {done.stderr.strip()}")
    wall, cpu, kib = json.loads(done.stdout)
    return Usage(wall, cpu, kib / 1024)


_compiled: set[Path] = set()


def compile_once(tree: Path) -> None:
    """Byte-compile ``tree``'s textnb, as an installed package is, before its first run: where
    PYTHONDONTWRITEBYTECODE is set, a baseline tree never compiled took 0.1 s longer a
    command, compiling every module each time."""
    if tree not in _compiled:
        import compileall
        compileall.compile_dir(tree / "textnb", quiet=1)
        _compiled.add(tree)


def timed(command: list[str], stdin: bytes | None = None, env: dict[str, str] = ENV,
          cwd: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds around ``subprocess.run`` (start-up included), and what it returned."""
    t0 = time.perf_counter()
    done = subprocess.run(command, input=stdin if stdin is not None else b"",
                          capture_output=True, env=env, cwd=cwd)
    return time.perf_counter() - t0, done


def warm(paths) -> None:
    """Read every file once, so that every system finds them in the page cache."""
    for path in paths:
        with open(path, "rb") as file:
            file.read()


# -- this process ------------------------------------------------------------------------------

class Stopwatch:
    """``with Stopwatch() as s: ...``: then ``s.wall`` and ``s.cpu`` (this process's) seconds."""

    def __enter__(self) -> "Stopwatch":
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def maxrss_kib(who: int = resource.RUSAGE_SELF) -> int:
    return resource.getrusage(who).ru_maxrss  # KiB on Linux (bytes on macOS)


def children_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def workers() -> tuple[int, float]:
    """(the largest peak RSS in KiB, the CPU seconds summed) of this process's living children:
    the worker processes textnb keeps between calls."""
    pids = children(os.getpid())
    peaks = [_status(pid, "VmHWM:") for pid in pids]
    return max(peaks, default=0), cpu_seconds(pids)


# -- other processes (/proc) ---------------------------------------------------------------------

def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far, from /proc/<pid>/stat."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def memory(pids: list[int]) -> tuple[int, float, float, float]:
    """(processes, Σ peak RSS, Σ PSS now, largest peak RSS) in MB, from /proc."""
    peaks, pss = [], 0.0
    for pid in pids:
        peaks.append(_status(pid, "VmHWM:") / 1024)
        with open(f"/proc/{pid}/smaps_rollup") as f:
            pss += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) / 1024
    return len(pids), sum(peaks), pss, max(peaks)


def tree_rss_kib(root: int) -> int:
    """Resident KiB of ``root`` and its descendants, now."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(_status(pid, "VmRSS:") for pid in tree)


def _status(pid: int, field: str) -> int:
    """A KiB figure of /proc/<pid>/status (0 if the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith(field)), 0)
    except OSError:
        return 0
