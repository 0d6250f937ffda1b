"""The progress line: one line on stderr for the phase of work under way (reading, the cutoffs'
cross-validation, training on error, tuning, EM), shown once the phase has lasted a second and
redrawn at most four times a second, by a thread that wakes as often; erased when the phase
ends. Nothing on a stderr that is not a terminal, nor with -q."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TextIO

from .. import progress

DELAY = 1.0      # seconds a phase runs before its line is shown
INTERVAL = 0.25  # seconds between redraws, at most


class StatusLine:
    """Phases (nested: the innermost is shown) drawn on ``stream`` by :meth:`tick`, which a
    thread calls every INTERVAL seconds once :meth:`start` is called (a test calls it itself,
    with its own ``clock``)."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.phases: list[list[Any]] = []  # [what, started, done, total, unit]
        self.shown = ""
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    def start(self) -> "StatusLine":
        threading.Thread(target=self._run, name="textnb-status", daemon=True).start()
        return self

    def _run(self) -> None:
        while not self.stopped.wait(INTERVAL):
            self.tick()

    def stop(self) -> None:
        self.stopped.set()
        with self.lock:
            self._draw("")

    @contextmanager
    def phase(self, what: str, total: int | None = None,
              unit: str = "") -> Iterator[Callable[..., None]]:
        entry = [what, self.clock(), 0, total, unit]

        def advance(n: int = 1) -> None:
            entry[2] += n  # read by tick: an int, replaced whole

        with self.lock:
            self.phases.append(entry)
        try:
            yield advance
        finally:
            with self.lock:
                self.phases.remove(entry)
                if not self.phases:
                    self._draw("")

    def tick(self) -> None:
        """Draw the innermost phase's line if it has run DELAY seconds and says anything new."""
        with self.lock:
            if self.phases and self.clock() - self.phases[-1][1] >= DELAY:
                self._draw(self.text(self.phases[-1]))

    def text(self, entry: list[Any]) -> str:
        what, started, done, total, unit = entry
        elapsed = self.clock() - started
        parts = [what]
        if total:
            parts.append(f"{done:,} of {total:,} {unit}".rstrip())
            if 0 < done < total and elapsed > 0:
                rate = done / elapsed
                parts.append(f"{rate:,.0f} {unit}/s" if rate >= 10 else f"{rate:.1f} {unit}/s")
                parts.append(f"{_seconds((total - done) / rate)} left")
        elif done:
            parts.append(f"{done:,} {unit}".rstrip())
        parts.append(_seconds(elapsed))
        return ", ".join(parts)

    def _draw(self, text: str) -> None:
        if text == self.shown:
            return
        width = 79
        try:
            import shutil
            width = shutil.get_terminal_size().columns - 1
        except (OSError, ValueError):
            pass
        # \r and the line over the old one, erased to its end: one line, however often.
        self.stream.write("\r" + text[:width] + "\x1b[K")
        self.stream.flush()
        self.shown = text


def _seconds(s: float) -> str:
    s = int(s)
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


_shown: list[StatusLine] = []  # the progress line of the command running, if any


def echo_above(message: str) -> None:
    """``message`` as a line of its own on stderr, the progress line (if one is shown) erased
    first, to be drawn again under it at the next tick."""
    import click
    if not _shown:
        click.echo(message, err=True)
        return
    line = _shown[-1]
    with line.lock:
        line._draw("")
        click.echo(message, err=True)


@contextmanager
def showing(quiet: bool, stream: TextIO | None = None) -> Iterator[None]:
    """The command's phases shown on stderr (``stream``) while in the block, unless ``quiet``
    or it is not a terminal."""
    stream = stream or sys.stderr
    if quiet or not stream.isatty():
        yield
        return
    line = StatusLine(stream).start()
    previous = progress.report_to(line.phase)
    _shown.append(line)
    try:
        yield
    finally:
        _shown.remove(line)
        progress.report_to(previous)
        line.stop()
