"""One pass of ``textnb imap filter``: finish the moves an interrupted run left, learn from
the user's moves (:mod:`.learning`), then classify each filtered folder's new mail and move
spam to Junk and unsure mail to Unsure, a batch at a time.

A folder's new mail is the UIDs past the last one looked at, for its UIDVALIDITY; a folder
seen for the first time, or whose UIDVALIDITY changed (it was recreated, or renamed and
another made under its name), starts past the mail it holds, unless ``filter_all``. Each
batch is fetched (a message's first megabyte), classified, its moves written to the state,
made, and then the moves and the folder's progress are recorded in one transaction
(:mod:`.moves`). A message that cannot be fetched or classified stays where it is, is
reported, and is tried again on the next runs, MAX_TRIES times in all.
"""

from __future__ import annotations

from . import learning, mailbox, moves
from .mailbox import JUNK_KEYWORD, NOT_JUNK_KEYWORD
from .session import Report, Session
from .state import JUNK, UNSURE

MAX_TRIES = 3


def run(s: Session, filter_all: bool = False) -> Report:
    """One pass over the account; what it did."""
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
    tries = s.state.failures(folder, validity)
    uids = sorted(set(mailbox.new_uids(s.client, seen)) | tries.keys())
    sizes = mailbox.sizes(s.client, uids)
    s.state.succeeded(folder, validity, tries.keys() - sizes.keys())  # gone meanwhile
    for batch in mailbox.batches(sizes):
        seen = max(seen, _batch(s, folder, validity, batch, tries, seen))
    s.state.set_folder(folder, validity, max(seen, uidnext - 1))


def _batch(s: Session, folder: str, validity: int, batch: list[int], tries: dict[int, int],
           seen: int) -> int:
    """Fetch, classify and file a batch of a folder's messages; the last UID looked at."""
    messages, failed = mailbox.fetch(s.client, batch)
    absent = [uid for uid in batch if uid not in messages and uid not in failed]
    failed.update((uid, "the server sent nothing for it")
                  for uid in mailbox.existing(s.client, absent))
    back = learning.taken_out(s, folder, messages.values())  # never filed back into Junk
    rest = [messages[uid] for uid in sorted(messages) if uid not in back]
    statuses, errors = s.verdicts.statuses([m.raw for m in rest])
    failed.update((rest[i].uid, why) for i, why in errors.items())
    targets = {"spam": s.account.junk, "unsure": s.account.unsure}
    decided = list(zip(rest, statuses))
    plan = [(m, targets[status]) for m, status in decided if status in targets]
    for m, status in decided:
        if status in targets:
            s.report.line(f"move {folder} UID {m.uid} to {targets[status]} ({status}): "
                          f"{m.subject}")
            s.report.moved[targets[status]] += 1
    ham = [m.uid for m, status in decided if status == "ham"]
    spam = [m.uid for m, status in decided if status == "spam"]
    s.report.kept += len(ham)
    if not s.dry_run:
        planned = moves.planned(s.client, folder, validity, plan)
        places = {s.account.junk: JUNK, s.account.unsure: UNSURE}
        with s.state.transaction():
            s.state.add_moves(planned)
            for m, target in plan:
                s.state.remember(m.identity, m.size, m.digest, places[target])
        if s.account.keywords:
            mailbox.set_keywords(s.client, spam, JUNK_KEYWORD, NOT_JUNK_KEYWORD)
            mailbox.set_keywords(s.client, ham, NOT_JUNK_KEYWORD, JUNK_KEYWORD)
        moves.move(s.client, s.state, planned)
    with s.state.transaction():
        if not s.dry_run:
            s.state.done(planned)
        last = max(seen, *batch)
        s.state.set_folder(folder, validity, last)
        for uid, why in sorted(failed.items()):
            n = tries.get(uid, 0) + 1
            if n < MAX_TRIES:
                s.state.failed(folder, validity, uid, n)
                s.report.problems.append(f"{folder} UID {uid}: {why}; left where it is, "
                                         f"tried again next run")
            else:
                s.report.problems.append(f"{folder} UID {uid}: {why}; left where it is, "
                                         f"not tried again ({MAX_TRIES} tries)")
        s.state.succeeded(folder, validity,
                          [uid for uid in batch if uid not in failed or tries.get(uid, 0) + 1
                           >= MAX_TRIES])
    return last
