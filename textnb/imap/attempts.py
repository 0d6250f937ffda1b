"""Fetching a folder's messages so that no message can stop the others for good.

A message may make the server refuse it (NO), or drop the connection (Dovecot says BYE to
a FETCH of a file it cannot read), or stop a run some other way. So before a batch is
fetched, each of its messages is counted in the state as tried once more, and when the
caller has dealt with the batch (it asks for the next one, or ends) they are forgotten,
(or, fetching ``settle=False``, when it calls :meth:`Attempts.settle`: the filter's
batches are classified while the next one is fetched), unless the server refused one or
the caller could not use it (:meth:`Attempts.fail`). A
message still counted at the next run was in a batch a run did not finish: it is fetched
alone, and after MAX_TRIES tries it is left where it is and reported, not tried again.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from . import mailbox
from .mailbox import Message
from .session import Session

MAX_TRIES = 3


class Attempts:
    """The tries at one folder's messages (of one UIDVALIDITY) in this run; the folder is
    selected."""

    def __init__(self, s: Session, folder: str, uidvalidity: int) -> None:
        self.s, self.folder, self.uidvalidity = s, folder, uidvalidity
        self.tries = s.state.failures(folder, uidvalidity)
        self.counted: set[int] = set()  # counted once more in this run already
        self.failed: dict[int, str] = {}

    def fetch(self, uids: Iterable[int], body: bool = True,
              settle: bool = True) -> Iterator[tuple[list[int], list[Message]]]:
        """(a batch of ``uids``, the messages of it the folder still has, with their bytes if
        ``body``), in UID order: first alone, those a run did not finish with, then the
        others (:func:`mailbox.batches`, the large ones found a thousand at a time, counted as
        tried then: a message whose size the server cannot tell may drop the connection). A
        message tried MAX_TRIES times is reported and left. Without ``settle``, each batch
        is the caller's to :meth:`settle`."""
        uids = sorted(set(uids))
        for uid in [uid for uid in uids if self.tries.get(uid, 0) >= MAX_TRIES]:
            self._report(uid, "it stopped every run that fetched it", last=True)
            self.s.state.succeeded(self.folder, self.uidvalidity, [uid])
        for uid in [uid for uid in uids if 0 < self.tries.get(uid, 0) < MAX_TRIES]:
            yield from self._batch([uid], body, settle)
        fresh = [uid for uid in uids if not self.tries.get(uid)]
        for start in range(0, len(fresh), mailbox.IDENTITIES):
            part = fresh[start:start + mailbox.IDENTITIES]
            if not body:
                yield from self._batch(part, body, settle)
                continue
            self._count(part)
            large = mailbox.large(self.s.client, part)
            for batch in mailbox.batches(part, large):
                yield from self._batch(batch, body, settle)

    def _batch(self, batch: list[int], body: bool,
               settle: bool) -> Iterator[tuple[list[int], list[Message]]]:
        self._count(batch)
        found, refused = mailbox.fetch(self.s.client, batch, body)
        absent = [uid for uid in batch if uid not in found and uid not in refused]
        refused.update((uid, "the server sent nothing for it")
                       for uid in mailbox.existing(self.s.client, absent))
        for uid, why in refused.items():
            self.fail(uid, why)
        yield batch, [found[uid] for uid in sorted(found)]
        if settle:
            self.settle(batch)

    def _count(self, uids: list[int]) -> None:
        """Count these messages as tried once more in the state, once a run."""
        new = {uid: self.tries.get(uid, 0) + 1 for uid in uids if uid not in self.counted}
        with self.s.state.transaction():  # one commit, not one a row
            self.s.state.failed(self.folder, self.uidvalidity, new)
        self.counted.update(new)

    def fail(self, uid: int, why: str) -> None:
        """The caller could not use a message (or the server refused it): left where it is,
        reported, tried again next run unless it was its last try."""
        self.failed[uid] = why

    def settle(self, batch: list[int]) -> None:
        """The caller is done with a batch: its messages forgotten, but those that failed."""
        done = []
        for uid in batch:
            tries = self.tries.get(uid, 0) + 1
            if uid in self.failed and tries < MAX_TRIES:
                self._report(uid, self.failed.pop(uid), last=False)
                continue  # counted: tried again next run
            if uid in self.failed:
                self._report(uid, self.failed.pop(uid), last=True)
            done.append(uid)
        with self.s.state.transaction():
            self.s.state.succeeded(self.folder, self.uidvalidity, done)

    def _report(self, uid: int, why: str, last: bool) -> None:
        self.s.report.problems.append(
            f"{self.folder} UID {uid}: {why}; left where it is, "
            + (f"not tried again ({MAX_TRIES} tries)" if last else "tried again next run"))
