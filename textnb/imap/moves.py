"""Moving classified messages so that none is lost or doubled, whenever a run is killed.

Before the server is asked to move a batch, each move is written to the state (its source
folder, UIDVALIDITY and UID, its target and the target's next UID then, and the size and
digest of the message); when the server has moved them, the moves are removed in the same
transaction that records the folder's progress. A move still written at the start of a run
was interrupted somewhere, and the server is asked where the message is:

* still in its folder, and a copy in the target (at a UID the target gave after the move was
  written, of the same size and digest): the copy was made and the original not yet removed
  (COPY done, EXPUNGE not; or a MOVE the server did not finish): the original is expunged;
* still in its folder, no copy: the move is made again;
* gone, a copy in the target: the move was done;
* gone, no copy: the user moved or deleted it meanwhile; it is not remembered as textnb's.

A message is never expunged unless its copy was seen in the target.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Iterable, Sequence

from . import mailbox
from .session import Report
from .state import Move, State

if TYPE_CHECKING:
    from imapclient import IMAPClient


def move(client: "IMAPClient", moves: Sequence[Move]) -> None:
    """Make the moves (written to the state already) of the selected folder, a target at a
    time."""
    by_target: dict[str, list[int]] = defaultdict(list)
    for m in moves:
        by_target[m.target].append(m.uid)
    for target, uids in by_target.items():
        mailbox.move(client, uids, target)


def planned(client: "IMAPClient", folder: str, uidvalidity: int,
            plan: Iterable[tuple[mailbox.Message, str]]) -> list[Move]:
    """The moves of (message, target) pairs of a folder, with each target's UIDVALIDITY and
    next UID as they are now (before the moves)."""
    targets: dict[str, tuple[int, int]] = {}
    moves = []
    for message, target in plan:
        if target not in targets:
            targets[target] = mailbox.status(client, target)
        validity, uidnext = targets[target]
        moves.append(Move(folder, uidvalidity, message.uid, target, validity, uidnext,
                          message.identity, message.size, message.digest))
    return moves


def resume(client: "IMAPClient", state: State, report: Report, dry_run: bool) -> None:
    """Finish the moves an earlier run left written (see the module's docstring)."""
    groups: dict[tuple[str, int], list[Move]] = defaultdict(list)
    for m in state.moves():
        groups[(m.folder, m.uidvalidity)].append(m)
    for (folder, uidvalidity), moves in groups.items():
        try:
            validity, _ = mailbox.select(client, folder, readonly=True)
        except client.Error:
            validity = None
        if validity != uidvalidity:
            report.notes.append(f"{folder}: {len(moves)} interrupted move(s) not checked: the "
                                f"folder is gone or was recreated (UIDVALIDITY changed)")
            with state.transaction():
                state.done(moves)
            continue
        there = mailbox.existing(client, [m.uid for m in moves])
        copies: Counter = Counter()
        for target in {m.target for m in moves}:
            copies.update(_copies(client, target, [m for m in moves if m.target == target]))
        copied, redo, lost = [], [], []
        for m in moves:
            if copies[(m.target, m.digest)] > 0:
                copies[(m.target, m.digest)] -= 1
                copied.append(m)
            elif m.uid in there:
                redo.append(m)
            else:
                lost.append(m)
        mailbox.select(client, folder, readonly=dry_run)
        doubled = [m.uid for m in copied if m.uid in there]
        for m in redo:
            report.line(f"move again {folder} UID {m.uid} to {m.target}")
        if doubled:
            report.line(f"expunge {len(doubled)} message(s) of {folder} already copied")
        if not dry_run:
            mailbox.expunge(client, doubled)
            for target in {m.target for m in redo}:
                mailbox.ensure(client, target)
            move(client, redo)
        with state.transaction():
            for m in lost:
                state.forget(m.identity, m.size, m.digest)
            state.done(moves)
        report.resumed += len(moves)


def _copies(client: "IMAPClient", target: str, moves: list[Move]) -> Counter:
    """(target, digest) → how many of the target's messages, among those it got since the
    moves were written, have the bytes of one of these moves."""
    try:
        validity, _ = mailbox.select(client, target, readonly=True)
    except client.Error:  # the target is gone: no copy there
        return Counter()
    moves = [m for m in moves if m.target_uidvalidity == validity]
    if not moves:
        return Counter()
    sizes = {m.size for m in moves}
    since = min(m.target_uidnext for m in moves)
    found = mailbox.sizes(client, mailbox.new_uids(client, since - 1))
    candidates = {uid: size for uid, size in found.items() if size in sizes}
    copies: Counter = Counter()
    for batch in mailbox.batches(candidates, mailbox.large(client, list(candidates))):
        messages, _ = mailbox.fetch(client, batch)
        copies.update((target, m.digest) for m in messages.values())
    return copies
