"""The progress line (textnb.cli.status): a phase shown once it has lasted a second, redrawn at
most once a tick (four times a second), erased at its end; nothing off a terminal or with -q."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from textnb import progress
from textnb.cli.status import DELAY, INTERVAL, StatusLine

ROOT = Path(__file__).resolve().parent.parent
SPAM_DIR = ROOT / "corpora" / "spamassassin" / "spam"
HAM_DIR = ROOT / "corpora" / "spamassassin" / "ham"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_phase_is_shown_after_a_second_once_a_tick_and_erased_at_its_end():
    stream, clock = io.StringIO(), Clock()
    line = StatusLine(stream, clock)
    with line.phase("reading", 1000, "files") as advance:
        for _ in range(400):
            advance()
        line.tick()
        assert stream.getvalue() == ""            # not a second yet
        clock.now += DELAY
        for _ in range(3):  # ticks, however many files each: one line each, at most
            for _ in range(100):
                advance()
            line.tick()
            clock.now += INTERVAL
        line.tick()  # the rate fell: drawn again
        line.tick()  # nothing new to say: not drawn
    drawn = stream.getvalue().split("\r")[1:]
    assert drawn == ["reading, 500 of 1,000 files, 500 files/s, 1 s left, 1 s\x1b[K",
                     "reading, 600 of 1,000 files, 480 files/s, 0 s left, 1 s\x1b[K",
                     "reading, 700 of 1,000 files, 467 files/s, 0 s left, 1 s\x1b[K",
                     "reading, 700 of 1,000 files, 400 files/s, 0 s left, 1 s\x1b[K",
                     "\x1b[K"]


def test_the_innermost_phase_is_shown_and_a_phase_without_steps_its_time():
    stream, clock = io.StringIO(), Clock()
    line = StatusLine(stream, clock)
    with line.phase("cross-validating the cutoffs"):
        clock.now += 61
        line.tick()
        with line.phase("reading", 10, "files") as advance:
            advance(4)
            line.tick()  # under a second: the outer one still
            clock.now += DELAY
            line.tick()
    assert stream.getvalue().split("\r")[1:] == [
        "cross-validating the cutoffs, 1 min 01 s\x1b[K",
        "reading, 4 of 10 files, 4.0 files/s, 1 s left, 1 s\x1b[K", "\x1b[K"]


def test_the_library_reports_phases_to_whoever_listens_and_costs_nothing_else():
    seen = []

    def reporter(what, total, unit):
        from contextlib import contextmanager

        @contextmanager
        def shown():
            seen.append(what)
            yield lambda n=1: seen.append(n)
        return shown()

    with progress.phase("alone") as advance:
        advance(3)
    previous = progress.report_to(reporter)
    try:
        with progress.phase("training on error") as advance:
            advance(2)
    finally:
        progress.report_to(previous)
    assert seen == ["training on error", 2]


def _stderr_on_a_terminal(*args: str) -> bytes:
    """textnb's standard error as a terminal (a pty) shows it."""
    import pty
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "textnb", *args], stdout=subprocess.DEVNULL,
                               stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the other end closed (Linux: EIO)
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert process.wait(120) == 0, out
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pty as Linux gives it")
def test_train_on_a_terminal_draws_a_few_lines_not_one_a_file(tmp_path):
    """300 files read in under a second or two: at most a few lines of progress, not a redraw
    per file (click's bar drew 300, some 25 kB); with -q, nothing."""
    shown = _stderr_on_a_terminal("train", "-m", str(tmp_path / "m"), str(SPAM_DIR),
                                  str(HAM_DIR))
    assert len(shown) < 1000 and shown.count(b"\r") <= 12, shown
    assert _stderr_on_a_terminal("train", "-q", "-m", str(tmp_path / "q"), str(SPAM_DIR),
                                 str(HAM_DIR)) == b""


def test_off_a_terminal_there_is_no_progress_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "textnb", "train", "-m", str(tmp_path / "m"),
                           str(SPAM_DIR), str(HAM_DIR)], capture_output=True, timeout=120)
    assert done.returncode == 0 and b"\r" not in done.stderr and b"\x1b" not in done.stderr


def test_a_line_said_during_a_phase_goes_above_the_progress_line(capsys):
    """A skipped file named while the progress line is shown: the line is erased first, the
    message gets a line of its own, and the next tick draws the progress line again."""
    from textnb.cli import status

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, clock = Terminal(), Clock()
    line = StatusLine(terminal, clock)
    status._shown.append(line)
    try:
        with line.phase("reading", 10, "files") as advance:
            advance(3)
            clock.now += DELAY
            line.tick()
            status.echo_above("textnb: skipped x: empty file")
            assert terminal.getvalue().endswith("\r\x1b[K")  # erased before the message
            assert capsys.readouterr().err == "textnb: skipped x: empty file\n"
            line.tick()
    finally:
        status._shown.remove(line)
    assert terminal.getvalue().split("\r")[1:] == [
        "reading, 3 of 10 files, 3.0 files/s, 2 s left, 1 s\x1b[K", "\x1b[K",
        "reading, 3 of 10 files, 3.0 files/s, 2 s left, 1 s\x1b[K", "\x1b[K"]
