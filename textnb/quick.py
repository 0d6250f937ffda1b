"""``textnb filter`` and ``textnb classify --exit-code`` without click and numpy.

procmail starts these once per delivered message, so their start-up is the cost of every
delivery: here they read the model with :class:`~textnb.scorer.Scorer` and decide with
:mod:`textnb.decision`, as the full commands do. Only their usual options are understood; for
anything else (help, other options, several documents, an unreadable input, any failure) the
full command line takes over, with its messages, its exit codes, and for the filter the
delivery of the message unchanged.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence

from .decision import Exit, decide, line, spam_cutoffs

_OPTIONS = {"-m": "model", "--model": "model", "--spam-class": "spam_class",
            "--spam-cutoff": "spam_cutoff", "--ham-cutoff": "ham_cutoff",
            "--threshold": "threshold"}


def run(args: Sequence[str]) -> int | None:
    """Run the command line ``args`` and return its exit code, or None to leave it to
    :mod:`textnb.cli` (standard input is then as it was)."""
    if args[:1] == ["filter"]:
        return _filter(args[1:])
    if args[:1] == ["classify"] and "--exit-code" in args:
        return _classify([a for a in args[1:] if a != "--exit-code"])
    return None


def _filter(args: Sequence[str]) -> int | None:
    parsed = options(args)
    if parsed is None or parsed[1] or "threshold" in parsed[0]:
        return None
    from .mailfilter import filter_message
    raw = sys.stdin.buffer.read()
    try:
        out = filter_message(raw, **parsed[0])
    except BaseException:  # noqa: BLE001 — the full command says why, and delivers
        _restore_stdin(raw)
        return None
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return 0


def _classify(args: Sequence[str]) -> int | None:
    parsed = options(args)
    if parsed is None or len(parsed[1]) > 1:
        return None
    settings, paths = parsed
    path = paths[0] if paths else "-"
    stdin = sys.stdin.buffer.read() if path == "-" else None
    try:
        from .documents import read_bytes, read_raw
        from .scorer import score
        if stdin is not None:
            _restore_stdin(stdin)
        problems: list[str] = []
        documents = list(read_raw([path], on_error=lambda *problem: problems.append(problem)))
        if problems or len(documents) != 1:
            raise ValueError("not one readable document")
        source, raw = documents[0]
        document = read_bytes(raw, source)
        classes, row, learned = score(settings["model"], document.text, document.fields)
        cutoffs = spam_cutoffs(classes, learned, settings.get("spam_class"),
                               settings.get("spam_cutoff"), settings.get("ham_cutoff"),
                               settings.get("threshold"))
        if cutoffs is None:
            raise ValueError("no spam class")
        decision = decide(classes, row, source, cutoffs)
        out = (line(decision) + "\n").encode("utf-8", "replace")
    except BaseException:  # noqa: BLE001 — the full command says why
        if stdin is not None:
            _restore_stdin(stdin)
        return None
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return Exit.of(decision["status"])


def options(args: Sequence[str]) -> tuple[dict, list[str]] | None:
    """(options, positional arguments) when every option is one of the usual ones, well
    formed (``-m FILE``, ``--name VALUE`` or ``--name=VALUE``; cutoffs in [0, 1], the ham
    cutoff not above the spam cutoff when both are given); else None."""
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
        if key.endswith(("cutoff", "threshold")):
            try:
                value = float(value)
            except ValueError:
                return None
            if not 0.0 <= value <= 1.0:
                return None
        found[key] = value
    if "model" not in found:
        from .paths import default_model_path
        found["model"] = default_model_path()
    if found.get("ham_cutoff", 0.0) > found.get("spam_cutoff", 1.0):
        return None
    return found, positional


def _restore_stdin(data: bytes) -> None:
    """Standard input again as it was before ``data`` was read from it."""
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
