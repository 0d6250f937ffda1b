"""Long work names its phases here (reading, cross-validations, training on error, tuning, EM)
for whoever shows them: the command line sets a reporter (:mod:`textnb.cli.status`); without
one a phase costs nothing, and the library prints nothing.

    with phase("training on error") as advance:     # advance(n): n more of ``total`` done
        ...
"""

from __future__ import annotations

from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, ContextManager, Iterator

    # reporter(what, total, unit) → a context manager yielding advance(n=1)
    Reporter = Callable[[str, "int | None", str], ContextManager[Callable[..., None]]]

_reporter: Reporter | None = None


def _ignore(n: int = 1) -> None:
    return None


@contextmanager
def phase(what: str, total: int | None = None, unit: str = "") -> Iterator[Callable[..., None]]:
    """A phase of work called ``what``, of ``total`` ``unit`` if known (files, settings): yields
    ``advance(n=1)``, to call as each n more are done, shown by the reporter if one is set."""
    if _reporter is None:
        yield _ignore
        return
    with _reporter(what, total, unit) as advance:
        yield advance


def report_to(reporter: Reporter | None) -> Reporter | None:
    """Show the phases with ``reporter`` (None: show none); returns the one it replaces."""
    global _reporter
    previous, _reporter = _reporter, reporter
    return previous
