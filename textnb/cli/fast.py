"""``textnb filter`` and ``textnb classify --exit-code`` without click and numpy.

procmail starts these once per delivered message, so their start-up is the cost of every
delivery: here they read the model with :class:`~textnb.store.scorer.Scorer` and decide with
:mod:`textnb.decision.rules`, as the full commands do. Only their usual options are understood; for
anything else (help, other options, several documents, an unreadable input, any failure) the
full command line takes over, with its messages, its exit codes, and for the filter the
delivery of the message unchanged.

Both run under a wall-clock budget (``--timeout``, :func:`budget`): a message that would take
too long is passed through unchanged by the filter, an error for classify. A command handed
over to the full command line keeps what is left of the budget, not a new one.
"""

from __future__ import annotations

import io
import math
import os
import sys
import time

# The signal module's C core: the module itself wraps it in enums, whose making costs every
# delivery 0.7 ms (python -X importtime); the alarm needs none of them.
import _signal as signal

from ..decision.rules import Exit, line
from ..errors import TimedOut, describe

_OPTIONS = {"-m": "model", "--model": "model", "--spam-class": "spam_class",
            "--spam-cutoff": "spam_cutoff", "--ham-cutoff": "ham_cutoff",
            "--threshold": "threshold", "--timeout": "timeout"}

# The filter's default budget, in seconds. Parsing and scoring a SpamAssassin message takes
# 0.9 ms (median), the slowest of all 6,046 58 ms (a 196 KB message), to which start-up and
# reading the model add about 50 ms (python -m bench.filter): 10 s is 100 times the worst
# honest case, and well inside the limits of what waits on the filter (procmail kills a
# filter after TIMEOUT, 960 s; an MTA retries a delivery that hangs).
FILTER_TIMEOUT = 10.0
# sysexits.h EX_TEMPFAIL: the filter could not write the message out. procmail keeps the
# original message when a `:0fw` filter fails; an MTA (Postfix's pipe) retries the delivery
# later, where other codes would bounce it.
UNDELIVERED = 75

_handed_over: float | None = None  # the deadline a command handed over to the full one keeps


def budget(seconds: float | None) -> _Budget:
    """Raise :class:`~textnb.errors.TimedOut` in the body of ``with budget(seconds)`` once
    ``seconds`` of wall-clock time have passed (SIGALRM; None, 0 or infinity: no limit). It
    gives the deadline (time.monotonic()), for :func:`hand_over`. Only the main thread
    receives signals: elsewhere there is no limit."""
    return _Budget(seconds)


class _Budget:
    """:func:`budget`'s context manager: a class, where contextlib would cost a delivery's
    start-up 0.5 ms (python -X importtime)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds, self.previous, self.armed = seconds, None, False

    def __enter__(self) -> float | None:
        global _handed_over
        inherited, _handed_over = _handed_over, None
        seconds = self.seconds
        if not seconds or not math.isfinite(seconds):  # 0 or inf: no limit
            return None
        now = time.monotonic()
        deadline = now + seconds if inherited is None else min(now + seconds, inherited)

        def expire(signum, frame):
            raise TimedOut(f"timed out after {seconds:g} s")

        try:
            self.previous = signal.signal(signal.SIGALRM, expire)
        except ValueError:  # not the main thread
            return None
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(deadline - now, 1e-6))
        return deadline

    def __exit__(self, *exc_info: object) -> None:
        if self.armed:
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def hand_over(deadline: float | None) -> None:
    """The next :func:`budget` in this process ends by ``deadline`` at the latest."""
    global _handed_over
    _handed_over = deadline


def run(args: Sequence[str]) -> int | None:
    """Run the command line ``args`` and return its exit code, or None to leave it to
    :mod:`textnb.cli.app` (standard input is then as it was)."""
    if args[:1] == ["filter"]:
        return _filter(args[1:])
    if args[:1] == ["classify"] and "--exit-code" in args:
        return _classify([a for a in args[1:] if a != "--exit-code"])
    if args[:1] == ["learn"]:
        return _learn(args[1:])
    return None


def _filter(args: Sequence[str]) -> int | None:
    parsed = options(args)
    if parsed is None or parsed[1] or "threshold" in parsed[0]:
        return None
    settings = dict(parsed[0])
    timeout = settings.pop("timeout", FILTER_TIMEOUT)
    from ..mail.filter import filter_message, read_head
    # The message's first MiB is read, classified and rewritten; its rest is copied from stdin
    # to stdout after it, never held: memory is bounded whatever the message's size.
    stdin = sys.stdin.buffer
    head, whole = read_head(stdin)
    deadline = None
    try:
        with budget(timeout) as deadline:
            out = filter_message(head, whole=whole, **settings)
    except TimedOut as error:
        out = head
        sys.stderr.write(f"textnb filter: message passed through unchanged: {describe(error)}\n")
    except BaseException:  # noqa: BLE001 — the full command says why, and delivers
        hand_over(deadline)
        _restore_stdin(head, stdin)
        return None
    return write_out(out, "textnb filter: cannot write the message", rest=stdin)


def _classify(args: Sequence[str]) -> int | None:
    parsed = options(args)
    if parsed is None or len(parsed[1]) > 1:
        return None
    settings, paths = parsed
    path = paths[0] if paths else "-"
    stdin = sys.stdin.buffer.read() if path == "-" else None
    deadline = None
    try:
        with budget(settings.get("timeout")) as deadline:
            from ..mail.filter import classify_file
            if stdin is not None:
                _restore_stdin(stdin)
            decision = classify_file(path, settings["model"], settings.get("spam_class"),
                                     settings.get("spam_cutoff"), settings.get("ham_cutoff"),
                                     settings.get("threshold"))
            out = (line(decision) + "\n").encode("utf-8", "replace")
    except TimedOut as error:
        sys.stderr.write(f"Error: {describe(error)}\n")
        return Exit.ERROR
    except BaseException:  # noqa: BLE001 — the full command says why
        hand_over(deadline)
        if stdin is not None:
            _restore_stdin(stdin)
        return None
    if write_out(out, "Error: cannot write the result"):
        return Exit.ERROR
    return Exit.of(decision["status"])


def _learn(args: Sequence[str]) -> int | None:
    """``textnb learn --class LABEL [-m MODEL] [-q] PATH...`` into an existing model of that
    class, through :mod:`textnb.store.appending` (no numpy: what the update needs, read);
    anything else, and anything it declines (before it writes), to the full command."""
    parsed = _learn_options(args)
    if parsed is None:
        return None
    label, model, quiet, paths = parsed
    stdin = sys.stdin.buffer.read() if "-" in paths else None
    if stdin is not None:
        _restore_stdin(stdin)
    try:
        from ..store.appending import learn_all
        done, again = learn_all(model, paths, label)
    except Exception:  # noqa: BLE001 — the full command learns it, or says why
        if stdin is not None:
            _restore_stdin(stdin)
        return None
    if not quiet:
        already = f" ({again} learned as {label} already, not counted again)" if again else ""
        sys.stdout.write(f"learned {done} document{'s' if done != 1 else ''} as {label} -> "
                         f"{model}{already}\n")
    return 0


def _learn_options(args: Sequence[str]) -> tuple[str, str, bool, list[str]] | None:
    """(--class, the model, -q, the paths) of learn's usual options, else None."""
    found: dict = {"quiet": False}
    paths: list[str] = []
    args = list(args)
    while args:
        arg = args.pop(0)
        if arg in ("-q", "--quiet"):
            found["quiet"] = True
            continue
        if not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        name, equals, value = arg.partition("=")
        key = {"--class": "label", "-m": "model", "--model": "model"}.get(name)
        if key is None or (equals and name == "-m") or (not equals and not args):
            return None
        found[key] = value if equals else args.pop(0)
    if "label" not in found or not paths:
        return None
    if "model" not in found:
        from ..paths import default_model_path
        found["model"] = str(default_model_path())
    return found["label"], found["model"], found["quiet"], paths


TYPE_CHECKING = False  # typing costs a mail filter's start-up 4 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import BinaryIO

# The rest of a message is copied this much at a time: few system calls, little memory.
_COPY = 256 << 10


def write_out(data: bytes, failure: str, rest: BinaryIO | None = None) -> int:
    """Write ``data`` to standard output, then what is left to read of ``rest`` (a message's
    rest on stdin, a chunk at a time): 0, or UNDELIVERED with ``failure`` and the reason on
    stderr when it cannot all be written (a full disk, a closed pipe) or read."""
    try:
        out = sys.stdout.buffer
        out.write(data)
        while rest is not None and (chunk := rest.read(_COPY)):
            out.write(chunk)
        out.flush()
    except OSError as error:
        sys.stderr.write(f"{failure}: {error.strerror or error}\n")
        try:  # what is left unwritten would fail again when Python flushes stdout at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (a test's captured output)
            pass
        return UNDELIVERED
    return 0


def options(args: Sequence[str]) -> tuple[dict, list[str]] | None:
    """(options, positional arguments) when every option is one of the usual ones, well
    formed (``-m FILE``, ``--name VALUE`` or ``--name=VALUE``; cutoffs in [0, 1], the ham
    cutoff not above the spam cutoff when both are given, a timeout of finite seconds >= 0); else None."""
    found: dict = {}
    positional: list[str] = []
    args = list(args)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, equals, value = arg.partition("=")
        if name not in _OPTIONS or (equals and name == "-m") or (not equals and not args):
            return None
        value = value if equals else args.pop(0)
        key = _OPTIONS[name]
        if key == "timeout":
            try:
                value = float(value)
            except ValueError:
                return None
            if not (math.isfinite(value) and value >= 0):
                return None
        elif key.endswith(("cutoff", "threshold")):
            try:
                value = float(value)
            except ValueError:
                return None
            if not 0.0 <= value <= 1.0:
                return None
        found[key] = value
    if "model" not in found:
        from ..paths import default_model_path
        found["model"] = default_model_path()
    if found.get("ham_cutoff", 0.0) > found.get("spam_cutoff", 1.0):
        return None
    return found, positional


def _restore_stdin(data: bytes, rest: BinaryIO | None = None) -> None:
    """Standard input again as it was before ``data`` was read from it: ``data``, then what
    is left to read of ``rest`` (the real stdin, where only a message's head was read)."""
    sys.stdin = io.TextIOWrapper(io.BufferedReader(_Rejoined(data, rest)))


class _Rejoined(io.RawIOBase):
    """The bytes read already, then the stream they were read from."""

    def __init__(self, head: bytes, rest: BinaryIO | None) -> None:
        self._head, self._rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._rest.readinto(buffer) if self._rest is not None else 0
