"""The daemon's fold of a model file's journal into the file (textnb.store.learning.compact),
in a process of its own: ``python -m textnb.serve.fold PATH``.

A fold reads and writes the whole model. On a thread of the daemon it held the interpreter's
lock against the TELLs after it; in a process it runs on another core, and the daemon only
starts it and hears of its end, on its event loop (docs/design/online.md, "Compaction off
the learner's path").
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from ..store.journal import COMPACT_BYTES, size_of

# Bytes kept of what a failed fold says (one line, bounded by the child; this bounds a bug's).
SAID = 1024


class Fold:
    """At most one fold process of the model file at ``path`` at a time, per daemon worker.

    Its end is the end of file on its stderr pipe, read by the worker's loop: the daemon never
    waits for it. The process has its own session, so it outlives a daemon that stops."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.process: subprocess.Popen | None = None
        self.said = b""

    def start(self, loop: Any, failed: Callable[[str], None]) -> None:
        """Start a fold if the journal is larger than COMPACT_BYTES and none is running;
        ``failed`` is told, in one line, why one did not fold (the next TELL tries again)."""
        if self.process is not None or size_of(self.path) <= COMPACT_BYTES:
            return
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", __name__, self.path], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as error:  # no process to be had (EAGAIN, ENOMEM): the next TELL tries
            failed(f"no fold process: {error}")
            return
        self.process, self.said = process, b""
        os.set_blocking(process.stderr.fileno(), False)
        loop.add_reader(process.stderr.fileno(), self._readable, loop, failed)

    def _readable(self, loop: Any, failed: Callable[[str], None]) -> None:
        process = self.process
        pipe = process.stderr.fileno()
        try:
            data = os.read(pipe, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            self.said = (self.said + data)[:SAID]
            return
        # End of file: the process has exited (or is exiting); its status is at hand.
        loop.remove_reader(pipe)
        process.stderr.close()
        status = process.wait()
        self.process = None
        if status == 0:
            self._prepare()
        elif status < 0:
            failed(f"the fold process {process.pid} was killed by signal {-status}")
        elif status:
            said = self.said.decode("utf-8", "replace").strip().splitlines()
            failed(said[-1][:200] if said else f"the fold process {process.pid} exited "
                   f"with status {status}")

    def _prepare(self) -> None:
        """The replaced file read now, while the worker waits for requests, not by the next
        TELL (store.appending.prepare)."""
        from ..store.appending import prepare
        try:
            prepare(self.path)
        except Exception:  # noqa: BLE001 - only a head start: the next TELL reads it itself
            pass


def main(argv: list[str]) -> int:
    """Fold the journal of the model file ``argv[1]``: 0 folded or nothing to fold, 1 (and
    one line on stderr) failed."""
    from ..store.learning import compact
    from .protocol import printable
    try:
        compact(argv[1])
    except Exception as error:  # the daemon logs this line
        print(f"{type(error).__name__}: {printable(str(error), 120)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
