"""Classifying a folder's batches in a child process while the filter fetches the next batch
and moves the last one: the tokenizer holds the interpreter's lock, so a thread would not
overlap the two. The child is forked with the model already in memory (no start-up, no
second load) and keeps none of its parent's files open but the standard streams and its
end of a socket pair: when the parent is killed, the child ends with its batch, and the
state's lock (and the IMAP connection) are never held by it.

One batch is in flight at a time; a child that dies is reported by :class:`WorkerDied` for
the batch it held, and the next batch gets a new child. Where no child can be started (a
limit on processes), the batch is classified in the parent, in sequence.
"""

from __future__ import annotations

import os
from multiprocessing import Pipe
from typing import Sequence

from .verdicts import Verdicts


class WorkerDied(Exception):
    """The child classifying a batch ended before answering; why, as one line."""


class Worker:
    """``Verdicts.statuses`` of one batch at a time, in a forked child."""

    def __init__(self, verdicts: Verdicts) -> None:
        self.verdicts = verdicts
        self._pid: int | None = None
        self._conn = None
        self._here: tuple | None = None  # a batch classified in the parent

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, raws: Sequence[bytes]) -> None:
        """Start classifying a batch (a child started if there is none)."""
        if self._pid is None:
            try:
                self._start()
            except OSError:  # no process to be had: classified here
                self._here = self.verdicts.statuses(raws)
                return
        try:
            self._conn.send(list(raws))
        except OSError:  # the child is gone; recv() says how
            pass

    def recv(self) -> tuple[list[str | None], dict[int, str]]:
        """The batch sent last: each message's status and index → why for those that could
        not be classified, as :meth:`Verdicts.statuses`; WorkerDied if the child ended."""
        if self._here is not None:
            here, self._here = self._here, None
            return here
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            why = self._end()
            raise WorkerDied(f"the process classifying it {why}") from None

    def close(self) -> None:
        if self._pid is not None:
            self._end()

    def _start(self) -> None:
        ours, theirs = Pipe()
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            raise
        if pid == 0:  # the child: only its end of the pair open (and the standard streams)
            code = 1
            try:
                keep = theirs.fileno()
                os.closerange(3, keep)
                os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
                _serve(self.verdicts, theirs)
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        self._pid, self._conn = pid, ours

    def _end(self) -> str:
        """Close the pair and reap the child; how it ended."""
        self._conn.close()
        _, status = os.waitpid(self._pid, 0)
        self._pid = self._conn = None
        if os.WIFSIGNALED(status):
            return f"was killed by signal {os.WTERMSIG(status)}"
        return f"ended with exit code {os.waitstatus_to_exitcode(status)}"


def _serve(verdicts: Verdicts, conn) -> None:
    """Classify each batch received until the parent closes its end."""
    while True:
        try:
            raws = conn.recv()
        except EOFError:
            return
        conn.send(verdicts.statuses(raws))
