"""What the commands share: exit codes, one-line errors, unreadable documents reported as they
come, the reading progress, suspects named, glibc's large frees."""

from __future__ import annotations

import functools
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import click

from ..classifier import TextClassifier
from ..progress import phase
from .status import echo_above, showing


# Exit codes: Exit (textnb.decision.rules) for classify --exit-code, these everywhere else.
OK, FAILURE = 0, 1


def stdout_failed() -> OSError | None:
    """Flush standard output; when it cannot be written (a full disk, a closed pipe), point it
    at /dev/null, so that Python's own flush at exit does not fail again with a traceback, and
    return why."""
    try:
        sys.stdout.flush()
    except OSError as error:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (a test's captured output)
            pass
        return error
    return None


def note_build_once() -> None:
    """On an install without its C parts, say so on stderr, once for this user (a marker in
    :func:`~textnb.paths.state_dir`): at the first train, where they cost the time (training
    about 3 times slower), with how to get them. Not on every run, where it would be noise in
    every cron and procmail log; ``textnb --version`` names the build at any time."""
    from ..build import pure_python_note
    from ..paths import state_dir
    note = pure_python_note()
    marker = state_dir() / "build-noted"
    if note is None or marker.exists():
        return
    click.echo(f"textnb: note: {note} (said once; textnb --version names the build)", err=True)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:  # a read-only home: said again next time, which is no harm
        pass


def count_noun(n: int, noun: str) -> str:
    """'1 document', '2 documents'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def echo_error(message: str) -> None:
    click.echo(f"Error: {message}", err=True)


class Skips:
    """Reports unreadable documents on stderr as they happen and counts them."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, source: str, reason: str) -> None:
        self.count += 1
        echo_above(f"textnb: skipped {source}: {reason}")

    def summary(self) -> None:
        if self.count:
            click.echo(f"textnb: skipped {self.count} unreadable document"
                       f"{'s' if self.count != 1 else ''}", err=True)


class Cuts:
    """Counts the documents read only to their first MAX_BYTES (1 MiB), for train's summary."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, source: str) -> None:
        self.count += 1

    def summary(self) -> str | None:
        """The summary's line, or None when no document was cut."""
        from ..documents.message import MAX_BYTES
        if not self.count:
            return None
        return (f"cut         {count_noun(self.count, 'document')} longer than "
                f"{MAX_BYTES >> 20} MiB: each read to its first {MAX_BYTES >> 20} MiB "
                f"(beyond lie attachments, which give no words)")


@contextmanager
def progress(items: Sequence, label: str, quiet: bool, unit: str = "files") -> Iterator:
    """items, counted on the progress line (:mod:`textnb.cli.status`) as they are taken."""
    if quiet:
        yield items
        return
    with phase(label, len(items), unit) as advance:

        def counted() -> Iterator:
            for item in items:
                yield item
                advance()

        yield counted()


def shows_progress(command: Callable) -> Callable:
    """A command whose phases (reading, cross-validations, training on error, tuning, EM) are
    shown on a progress line while it runs, unless its ``quiet`` option is given."""
    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        with showing(kwargs.get("quiet", False)):
            return command(*args, **kwargs)
    return run


def echo_suspects(classifier: TextClassifier, where: list[str], labels: Sequence[str]) -> None:
    """Say on stderr, a line each as for an unreadable file, which training messages were left
    out as likely mis-sorted (a spam in the ham directory), where their files are known, then
    how many."""
    found = getattr(classifier, "suspects_", ())
    if not len(found):
        return
    if len(where) > found[-1]:
        for i in found.tolist():
            click.echo(f"textnb: left out {where[i]}: labelled {labels[i]}, but models that "
                       f"never saw it place it among the other class (mis-sorted?)", err=True)
    click.echo(f"textnb: left out {len(found)} training message{'s' if len(found) != 1 else ''} "
               f"as mis-sorted (--keep-suspects keeps them)", err=True)


def reading(quiet: bool) -> Any:
    """The progress of reading files, as :mod:`textnb.training` takes it: counted on the
    progress line (``quiet``: not)."""
    return lambda files: progress(files, "reading", quiet)
