"""Learning from the user's corrections, training on error as SpamBayes' sb_imapfilter did:
a message the user moves into Junk that textnb did not put there is learned as spam; one
taken out of Junk or Unsure into another folder is learned as ham. Each is learned once (the
state remembers it by identity and digest, and the model by its tokens' digest) and
unlearned from the other class where it had been learned so.

A message taken out of Junk or Unsure is recognised wherever it lands, as the state
remembers what is in them: what textnb put there, what the user moved there, and what was
there when textnb first looked (by identity alone). Trash, Drafts, Sent and virtual folders
(RFC 6154's special uses, or those names) are not looked in: a message deleted from Junk is
no correction.
"""

from __future__ import annotations

from typing import Iterable

from . import mailbox
from .attempts import Attempts
from .mailbox import JUNK_KEYWORD, NOT_JUNK_KEYWORD, Message
from .session import Session
from .state import JUNK, OTHER, UNSURE, Known
from .verdicts import HAM, SPAM


def first_look(s: Session, folder: str, place: str) -> None:
    """A Junk or Unsure folder not looked at before, or recreated (its UIDVALIDITY changed):
    the messages remembered there are not known to be there any more (a renamed Junk is not
    a thousand messages taken out of it); remember the messages it holds, by identity, so
    that one taken out later is learned as ham rather than filtered back into it; its new
    mail starts past them."""
    validity, uidnext = mailbox.select(s.client, folder, readonly=True)
    s.state.displace(place)
    attempts = Attempts(s, folder, validity)
    for _, messages in attempts.fetch(mailbox.new_uids(s.client, 0), body=False):
        with s.state.transaction():
            for m in messages:  # one without a Message-ID is not recognisable by its size
                if m.identity and s.state.known(m.identity, m.size) is None:
                    s.state.remember(m.identity, m.size, "", place)
    s.state.set_folder(folder, validity, uidnext - 1)


def scan(s: Session) -> None:
    """Learn from the moves the user made since the last pass: into Junk, into Unsure (only
    remembered), and out of them into any other folder but the ones filtered, which
    :func:`taken_out` handles as their mail is fetched."""
    _moved_into(s, s.account.junk, JUNK)
    _moved_into(s, s.account.unsure, UNSURE)
    _taken_out_elsewhere(s)


def _moved_into(s: Session, folder: str, place: str) -> None:
    """Junk's new messages that textnb did not put there: learned as spam, remembered
    there; Unsure's: remembered there."""
    try:
        validity, uidnext = mailbox.select(s.client, folder, readonly=s.dry_run)
    except s.client.Error:  # a dry run before textnb created it
        return
    row = s.state.folder(folder)
    if row is None or row[0] != validity:  # recreated since this pass began
        first_look(s, folder, place)
        return
    attempts = Attempts(s, folder, validity)
    learned = []
    for batch, messages in attempts.fetch(mailbox.new_uids(s.client, row[1]), body=False):
        # Put there by textnb, or known there; without a Message-ID, the bytes tell.
        news = [m.uid for m in messages
                if not (m.identity and _is(s.state.known(m.identity, m.size), place))]
        for _, bodies in attempts.fetch(news):
            for m in bodies:
                known = s.state.known(m.identity, m.size, m.digest)
                if _is(known, place):
                    continue
                if place == JUNK:
                    _learn(s, folder, m, SPAM, place, known)
                    learned.append(m.uid)
                else:  # into Unsure: nothing to learn; remembered, as ham if taken out
                    s.state.remember(m.identity, m.size, m.digest, place,
                                     known.learned if known else None)
        s.state.set_folder(folder, validity, max(row[1], *batch))
    if s.account.keywords and not s.dry_run:
        mailbox.set_keywords(s.client, learned, JUNK_KEYWORD, NOT_JUNK_KEYWORD)
    s.state.set_folder(folder, validity, max(row[1], uidnext - 1))


def taken_out(s: Session, folder: str, messages: Iterable[Message]) -> set[int]:
    """Of messages new in ``folder`` (not Junk or Unsure; their bytes fetched), learn as ham
    those remembered in Junk or Unsure, and flag them; their UIDs. The folder is selected."""
    found = []
    for m in messages:  # the digest (of a MiB) only where the identity and size are known
        known = s.state.known(m.identity, m.size) and s.state.known(m.identity, m.size, m.digest)
        if known is not None and known.place != OTHER:
            _learn(s, folder, m, HAM, OTHER, known)
            found.append(m.uid)
    if s.account.keywords and not s.dry_run:
        mailbox.set_keywords(s.client, found, NOT_JUNK_KEYWORD, JUNK_KEYWORD)
    return set(found)


def _taken_out_elsewhere(s: Session) -> None:
    """Every other folder's new mail, looked for messages remembered in Junk or Unsure. A
    folder seen for the first time (or recreated) is looked through whole, as the user may
    have made it for what they took out of Junk, unless this is the account's first run."""
    skip = {s.account.junk, s.account.unsure, *s.account.folders}
    for folder in mailbox.taken_out_candidates(s.client, skip):
        try:
            validity, uidnext = mailbox.status(s.client, folder)
        except s.client.Error:  # gone since the listing
            continue
        row = s.state.folder(folder)
        seen = row[1] if row and row[0] == validity else uidnext - 1 if s.first_run else 0
        if uidnext - 1 > seen and s.state.any_placed():  # else none can have been taken out
            mailbox.select(s.client, folder, readonly=s.dry_run)
            attempts = Attempts(s, folder, validity)
            for batch, messages in attempts.fetch(mailbox.new_uids(s.client, seen),
                                                  body=False):
                placed = [m.uid for m in messages
                          if _is(s.state.known(m.identity, m.size), JUNK, UNSURE)]
                for _, bodies in attempts.fetch(placed):
                    taken_out(s, folder, bodies)
                s.state.set_folder(folder, validity, max(seen, *batch))
        s.state.set_folder(folder, validity, max(uidnext - 1, seen))


def _is(known: Known | None, *places: str) -> bool:
    return known is not None and known.place in places


def _learn(s: Session, folder: str, m: Message, role: str, place: str,
           known: Known | None) -> None:
    """Learn a message as spam or ham (role) unless it was learned so, and remember it at
    ``place``; with learning off, only remember."""
    learned = known.learned if known else None
    if s.account.learn and learned != role:
        if not s.dry_run:
            s.verdicts.learn(m.raw, role)
        s.report.learned[role] += 1
        s.report.line(f"learn {folder} UID {m.uid} as {role}: {m.subject}")
        learned = role
    s.state.remember(m.identity, m.size, m.digest, place, learned)
