"""What textnb imap remembers of an account between runs, in an SQLite file beside the model.

* ``folders``: per folder, its UIDVALIDITY and the last UID looked at: the mail that arrived
  since is the UIDs past it (RFC 3501: UIDs only grow while UIDVALIDITY holds).
* ``moves``: the moves in flight, written before the server is asked to move and removed
  when it has: a run killed at any point leaves the next one what to finish (:mod:`.moves`).
* ``messages``: the messages textnb put into (or found in) Junk and Unsure, and those it
  learned from, by identity (Message-ID and size: what a move keeps) and a digest of their
  bytes (which alone recognises a message without a Message-ID), so that a message moved out
  again is recognised and each is learned once.
* ``failures``: messages that could not be fetched or classified, tried again next run.

Each change is one SQLite transaction, so the file is consistent wherever a run is killed.
One run at a time per account: :func:`open_state` holds an exclusive lock on it.
"""

from __future__ import annotations

import fcntl
import os
import re
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import TextnbError

SCHEMA_VERSION = 1
# A message remembered in Junk or Unsure is forgotten after this long (seconds): moved out
# later, it is no longer learned as ham. A year keeps the table small and covers mail a user
# digs out of Junk.
FORGET_AFTER = 365 * 24 * 3600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS folders (
    name TEXT PRIMARY KEY, uidvalidity INTEGER NOT NULL, seen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS moves (
    folder TEXT NOT NULL, uidvalidity INTEGER NOT NULL, uid INTEGER NOT NULL,
    target TEXT NOT NULL, target_uidvalidity INTEGER NOT NULL, target_uidnext INTEGER NOT NULL,
    identity TEXT NOT NULL, size INTEGER NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (folder, uidvalidity, uid));
CREATE TABLE IF NOT EXISTS messages (
    identity TEXT NOT NULL, size INTEGER NOT NULL, digest TEXT NOT NULL, place TEXT NOT NULL,
    learned TEXT, time REAL NOT NULL, PRIMARY KEY (identity, size, digest));
CREATE TABLE IF NOT EXISTS failures (
    folder TEXT NOT NULL, uidvalidity INTEGER NOT NULL, uid INTEGER NOT NULL,
    tries INTEGER NOT NULL, PRIMARY KEY (folder, uidvalidity, uid));
"""

# Where a remembered message is: in Junk or Unsure (put there by textnb, or found there), or
# elsewhere (taken out of them by the user).
JUNK, UNSURE, OTHER = "junk", "unsure", "other"


class StateError(TextnbError):
    """The state file cannot be opened, is not ours, or is in use by another run."""


@dataclass(frozen=True)
class Move:
    """A move in flight: the message at ``uid`` of ``folder`` (as of ``uidvalidity``) going to
    ``target``, whose next UID was ``target_uidnext`` before the move; ``size`` and ``digest``
    (of the bytes fetched) recognise its copy there, ``identity`` its record in ``messages``."""

    folder: str
    uidvalidity: int
    uid: int
    target: str
    target_uidvalidity: int
    target_uidnext: int
    identity: str
    size: int
    digest: str


@dataclass(frozen=True)
class Known:
    """A remembered message: its identity, size and digest ('' where its bytes were never
    fetched: it was found in Junk or Unsure), where it is, and the class it was learned as."""

    identity: str
    size: int
    digest: str
    place: str
    learned: str | None


def state_path(model: Path, account_name: str) -> Path:
    """The account's state file, beside the model: ``<model>.imap.<user>@<host>.sqlite``."""
    safe = re.sub(r"[^\w.@+-]", "_", account_name)
    return model.with_name(f"{model.name}.imap.{safe}.sqlite")


class State:
    """The state of one account; see the module's docstring. Use :func:`open_state`."""

    def __init__(self, db: sqlite3.Connection, lock: int | None) -> None:
        self.db, self._lock, self._depth = db, lock, 0

    def close(self) -> None:
        self.db.close()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> "State":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``with state.transaction():`` the changes inside, all or none (nested: the
        outermost decides). Changes outside one are each a transaction of their own."""
        self._depth += 1
        if self._depth == 1:
            self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._depth == 1:
                self.db.execute("ROLLBACK")
            raise
        else:
            if self._depth == 1:
                self.db.execute("COMMIT")
        finally:
            self._depth -= 1

    # -- folders ----------------------------------------------------------------------------

    def folder(self, name: str) -> tuple[int, int] | None:
        """(UIDVALIDITY, last UID looked at) of a folder, or None if never looked at."""
        row = self.db.execute("SELECT uidvalidity, seen FROM folders WHERE name = ?",
                              (name,)).fetchone()
        return (row[0], row[1]) if row else None

    def set_folder(self, name: str, uidvalidity: int, seen: int) -> None:
        """Record a folder's last UID looked at (a new UIDVALIDITY forgets its failures)."""
        self.db.execute("DELETE FROM failures WHERE folder = ? AND uidvalidity != ?",
                        (name, uidvalidity))
        self.db.execute("INSERT OR REPLACE INTO folders VALUES (?, ?, ?)",
                        (name, uidvalidity, seen))

    def any_folders(self) -> bool:
        return self.db.execute("SELECT 1 FROM folders LIMIT 1").fetchone() is not None

    # -- moves in flight ----------------------------------------------------------------------

    def add_moves(self, moves: Iterable[Move]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO moves VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [(m.folder, m.uidvalidity, m.uid, m.target, m.target_uidvalidity,
                              m.target_uidnext, m.identity, m.size, m.digest) for m in moves])

    def moves(self) -> list[Move]:
        return [Move(*row) for row in self.db.execute(
            "SELECT * FROM moves ORDER BY folder, uidvalidity, uid")]

    def done(self, moves: Iterable[Move]) -> None:
        self.db.executemany("DELETE FROM moves WHERE folder = ? AND uidvalidity = ? AND uid = ?",
                            [(m.folder, m.uidvalidity, m.uid) for m in moves])

    # -- messages remembered ------------------------------------------------------------------

    def known(self, identity: str, size: int, digest: str | None = None) -> Known | None:
        """The remembered message of that identity and size, and digest if given (a message
        remembered without one matches any)."""
        rows = self.db.execute(
            "SELECT identity, size, digest, place, learned FROM messages "
            "WHERE identity = ? AND size = ? ORDER BY time DESC", (identity, size)).fetchall()
        for row in rows:
            if digest is None or row[2] in (digest, ""):
                return Known(*row)
        return None

    def remember(self, identity: str, size: int, digest: str, place: str,
                 learned: str | None = None) -> None:
        """Remember a message's place (and the class learned, if any); a record of it without
        a digest gives way to this one."""
        if digest:
            self.db.execute("DELETE FROM messages WHERE identity = ? AND size = ? AND digest = ''",
                            (identity, size))
        self.db.execute("INSERT OR REPLACE INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                        (identity, size, digest, place, learned, time.time()))

    def forget(self, identity: str, size: int, digest: str) -> None:
        self.db.execute("DELETE FROM messages WHERE identity = ? AND size = ? AND digest = ?",
                        (identity, size, digest))

    def displace(self, place: str) -> None:
        """The messages remembered at ``place`` are not known to be there any more (the
        folder was recreated): remembered elsewhere."""
        self.db.execute("UPDATE messages SET place = ? WHERE place = ?", (OTHER, place))

    def any_placed(self) -> bool:
        """Whether any message is remembered in Junk or Unsure (else none can be moved out)."""
        return self.db.execute("SELECT 1 FROM messages WHERE place != ? LIMIT 1",
                               (OTHER,)).fetchone() is not None

    # -- failures -------------------------------------------------------------------------------

    def failures(self, folder: str, uidvalidity: int) -> dict[int, int]:
        """UID → tries so far, of the messages of a folder that failed before."""
        return dict(self.db.execute(
            "SELECT uid, tries FROM failures WHERE folder = ? AND uidvalidity = ?",
            (folder, uidvalidity)))

    def failed(self, folder: str, uidvalidity: int, tries: dict[int, int]) -> None:
        """Record UID → tries so far of messages of a folder."""
        self.db.executemany("INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?)",
                            [(folder, uidvalidity, uid, n) for uid, n in tries.items()])

    def succeeded(self, folder: str, uidvalidity: int, uids: Iterable[int]) -> None:
        self.db.executemany("DELETE FROM failures WHERE folder = ? AND uidvalidity = ? AND uid = ?",
                            [(folder, uidvalidity, uid) for uid in uids])


def open_state(path: Path, dry_run: bool = False) -> State:
    """The state at ``path``, created if absent, locked for this run; with ``dry_run`` a copy
    in memory (the file is neither created nor changed)."""
    lock = None
    try:
        if dry_run:
            db = sqlite3.connect(":memory:", isolation_level=None)
            if path.exists():
                source = sqlite3.connect(path)
                try:
                    source.backup(db)
                finally:
                    source.close()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(lock)
                raise StateError(f"another textnb imap run uses {path} (one run at a time "
                                 f"per account: is a --watch running?)") from None
            db = sqlite3.connect(path, isolation_level=None)  # transactions: State.transaction
            # A write-ahead log, synced at checkpoints: a commit costs no fsync (a batch
            # fetched alone after a failure commits four times), and a killed run loses no
            # commit; power lost may take the last ones back, which the next run redoes.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StateError(f"state file '{path}' is from a newer textnb")
        db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; "
                         f"COMMIT;")
        db.execute("DELETE FROM messages WHERE time < ?", (time.time() - FORGET_AFTER,))
    except sqlite3.DatabaseError as error:
        if lock is not None:
            os.close(lock)
        raise StateError(f"state file '{path}': {error}") from None
    except OSError as error:
        if lock is not None:
            os.close(lock)
        raise StateError(f"state file '{path}': {error.strerror or error}") from None
    return State(db, lock)
