"""One pass of ``textnb imap filter``: finish the moves an interrupted run left, learn from
the user's moves (:mod:`.learning`), then classify each filtered folder's new mail and move
spam to Junk and unsure mail to Unsure, a batch at a time.

A folder's new mail is the UIDs past the last one looked at, for its UIDVALIDITY; a folder
seen for the first time, or whose UIDVALIDITY changed (it was recreated, or renamed and
another made under its name), starts past the mail it holds, unless ``filter_all``. Each
batch is fetched (a message's first megabyte), classified, its moves written to the state,
made, taken off the state, and the folder's progress recorded (:mod:`.moves`); with more
than a batch of new mail, a worker process classifies each batch while the next is fetched
(:mod:`.worker`). A message that cannot be fetched or classified stays where it is, is
reported, and is tried again on the next runs, three times in all (:mod:`.attempts`).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Iterator

from . import learning, mailbox, moves
from .attempts import Attempts
from .mailbox import JUNK_KEYWORD, NOT_JUNK_KEYWORD, Message
from .session import Report, Session
from .state import JUNK, UNSURE
from .worker import Worker, WorkerDied

# A folder's pass of at least this many new messages (more than a batch) has each batch
# classified by a child process while the next is fetched and the last moved; a batch alone
# would only wait for the child's start.
PIPELINED_FROM = mailbox.BATCH + 1


def run(s: Session, filter_all: bool = False) -> Report:
    """One pass over the account; what it did."""
    s.first_run = not s.state.any_folders()
    mailbox.require_move(s.client)
    _prepare(s)
    moves.resume(s.client, s.state, s.report, s.dry_run)
    if s.account.learn:
        learning.scan(s)
    s.verdicts.refresh()  # with what was just learned
    for folder in s.account.folders:
        _filter(s, folder, filter_all)
    return s.report


def _prepare(s: Session) -> None:
    """Junk and Unsure exist (created if absent) and their mail is remembered."""
    for folder, place in ((s.account.junk, JUNK), (s.account.unsure, UNSURE)):
        if s.dry_run and not s.client.folder_exists(folder):
            s.report.notes.append(f"{folder} does not exist: it would be created")
            continue
        if not s.dry_run and mailbox.ensure(s.client, folder):
            s.report.notes.append(f"created the folder {folder}")
        row = s.state.folder(folder)
        if row is None or row[0] != mailbox.status(s.client, folder)[0]:
            learning.first_look(s, folder, place)


def _filter(s: Session, folder: str, filter_all: bool) -> None:
    try:
        validity, uidnext = mailbox.select(s.client, folder, readonly=s.dry_run)
    except s.client.Error as error:
        s.report.problems.append(f"{folder}: cannot select it: {error}")
        return
    row = s.state.folder(folder)
    if row is None or row[0] != validity:
        seen = 0 if filter_all else uidnext - 1
        what = "first look" if row is None else "UIDVALIDITY changed (recreated or renamed)"
        s.report.notes.append(
            f"{folder}: {what}: " + ("all its mail is filtered" if filter_all else
                                     "the mail in it now is taken as seen, new mail is "
                                     "filtered from now on (--all filters it all)"))
        s.state.set_folder(folder, validity, seen)
    else:
        seen = row[1]
    attempts = Attempts(s, folder, validity)
    uids = [*mailbox.new_uids(s.client, seen), *attempts.tries]
    with Worker(s.verdicts) if len(uids) >= PIPELINED_FROM else nullcontext() as worker:
        batches = attempts.fetch(uids, settle=False)
        for batch, messages, (statuses, errors) in _classified(s, batches, worker):
            seen = max(seen, *batch)
            _file(s, folder, validity, messages, statuses, errors, attempts)
            attempts.settle(batch)
            s.state.set_folder(folder, validity, seen)
    s.state.set_folder(folder, validity, max(seen, uidnext - 1))


Statuses = tuple[list, dict]  # Verdicts.statuses: each message's, and index → why for None


def _classified(s: Session, batches: Iterator[tuple[list[int], list[Message]]],
                worker: Worker | None) -> Iterator[tuple[list[int], list[Message], Statuses]]:
    """Each batch with its messages' statuses (:meth:`Verdicts.statuses`). With a worker, a
    batch is yielded once the next one is fetched and sent to it; one the worker died with
    has none."""
    pending = None
    for batch, messages in batches:
        raws = [m.raw for m in messages]
        if worker is None:
            yield batch, messages, s.verdicts.statuses(raws)
            continue
        answer = _answer(worker, pending[1]) if pending else None
        worker.send(raws)
        if pending:
            yield *pending, answer
        pending = batch, messages
    if pending:
        yield *pending, _answer(worker, pending[1])


def _answer(worker: Worker, messages: list[Message]) -> Statuses:
    try:
        return worker.recv()
    except WorkerDied as error:  # each left where it is, reported, tried again next run
        return [None] * len(messages), dict.fromkeys(range(len(messages)), str(error))


def _file(s: Session, folder: str, validity: int, messages: list[Message],
          statuses: list[str | None], errors: dict[int, str], attempts: Attempts) -> None:
    """File a batch of a folder's messages, classified (index → why for those that could
    not be): move spam and unsure mail."""
    back = learning.taken_out(s, folder, messages)  # never filed back into Junk
    for i, why in errors.items():
        if messages[i].uid not in back:
            attempts.fail(messages[i].uid, why)
    decided = [(m, status) for m, status in zip(messages, statuses)
               if m.uid not in back and status is not None]
    targets = {"spam": s.account.junk, "unsure": s.account.unsure}
    plan = [(m, targets[status]) for m, status in decided if status in targets]
    for m, status in decided:
        if status in targets:
            s.report.line(f"move {folder} UID {m.uid} to {targets[status]} ({status}): "
                          f"{m.subject}")
            s.report.moved[targets[status]] += 1
    s.report.kept += sum(status == "ham" for _, status in decided)
    if s.dry_run:
        return
    planned = moves.planned(s.client, folder, validity, plan)
    places = {s.account.junk: JUNK, s.account.unsure: UNSURE}
    with s.state.transaction():
        s.state.add_moves(planned)
        for m, target in plan:
            s.state.remember(m.identity, m.size, m.digest, places[target])
    if s.account.keywords:
        mailbox.set_keywords(s.client, [m.uid for m, st in decided if st == "spam"],
                             JUNK_KEYWORD, NOT_JUNK_KEYWORD)
        mailbox.set_keywords(s.client, [m.uid for m, st in decided if st == "ham"],
                             NOT_JUNK_KEYWORD, JUNK_KEYWORD)
    moves.move(s.client, planned)
    s.state.done(planned)
