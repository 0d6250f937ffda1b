"""One pass over an account: what it works with (the connection, the settings, the state,
the model) and what it did (counts, a line per message moved or learned, the problems: a
message left where it was, and why; and notes: a folder seen first)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .account import Account
from .state import State
from .verdicts import Verdicts

if TYPE_CHECKING:
    from imapclient import IMAPClient


@dataclass
class Report:
    dry_run: bool = False
    moved: Counter = field(default_factory=Counter)      # target folder → messages
    kept: int = 0                                        # classified ham, left where they were
    learned: Counter = field(default_factory=Counter)    # spam/ham → messages
    resumed: int = 0                                     # moves an earlier run left unfinished
    lines: list[str] = field(default_factory=list)       # one per message moved or learned
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self, text: str) -> None:
        self.lines.append(("would " if self.dry_run else "") + text)

    @property
    def busy(self) -> bool:
        """Whether the pass did anything or has anything to say."""
        return bool(self.moved or self.kept or self.learned or self.resumed or self.problems
                    or self.notes)

    def summary(self) -> str:
        """One line: classified, moved, learned."""
        verb = "would move" if self.dry_run else "moved"
        total = self.kept + sum(self.moved.values())
        parts = [f"{total} new message{'s' if total != 1 else ''} classified"]
        parts += [f"{verb} {n} to {folder}" for folder, n in sorted(self.moved.items())]
        parts += [f"{'would learn' if self.dry_run else 'learned'} {n} as {role}"
                  for role, n in sorted(self.learned.items())]
        if self.resumed:
            parts.append(f"finished {self.resumed} move{'s' if self.resumed != 1 else ''} "
                         f"an interrupted run left")
        if self.problems:
            parts.append(f"{len(self.problems)} left where they were")
        return ", ".join(parts)


@dataclass
class Session:
    """A pass's tools: with ``dry_run``, folders are examined read-only, nothing is moved,
    flagged or learned, and the state is a copy in memory; ``first_run``: the state knew no
    folder of the account when the pass began."""

    client: "IMAPClient"
    account: Account
    state: State
    verdicts: Verdicts
    report: Report
    dry_run: bool = False
    first_run: bool = False
