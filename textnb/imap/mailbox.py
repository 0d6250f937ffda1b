"""The IMAP operations textnb imap is made of: a folder's UIDVALIDITY and next UID, the UIDs
that arrived past a given one, what identifies and classifies a message (fetched a batch at a
time), and moving messages without losing or doubling one.

Only a message's first megabyte is fetched: textnb reads no more of any message
(:data:`textnb.documents.message.MAX_BYTES`; what lies beyond is attachments), so a 20 MB message
costs what a 1 MB one does and is classified as ``textnb filter`` would classify it whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from email.header import decode_header, make_header
from hashlib import blake2b
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from ..documents.message import MAX_BYTES
from .connection import ImapError

if TYPE_CHECKING:
    from imapclient import IMAPClient

# A fetch asks for at most BATCH messages, of which at most LARGE_BATCH larger than LARGE:
# 13 MB, and 32 MB of the first megabytes of large ones (a SEARCH LARGER tells them apart in
# one command: fetching each size first cost 0.12 ms a message, 2,000 messages on loopback).
# Identities alone (a few hundred bytes each): IDENTITIES a fetch.
BATCH = 200
LARGE = 64 << 10
LARGE_BATCH = 32
IDENTITIES = 1000
DELETED = b"\\Deleted"
# RFC 5788's registry: the keywords mail clients set and read for junk and not junk.
JUNK_KEYWORD, NOT_JUNK_KEYWORD = b"$Junk", b"$NotJunk"
# Folders whose new mail is not the user taking a message out of Junk: RFC 6154's special-use
# attributes, and the usual names where a server has none.
_NOT_TAKEN_OUT = {b"\\trash", b"\\junk", b"\\drafts", b"\\sent", b"\\all", b"\\flagged",
                  b"\\noselect", b"\\nonexistent"}
_NOT_TAKEN_OUT_NAMES = {"trash", "deleted messages", "deleted items", "drafts", "sent",
                        "sent messages", "sent items"}

# Identities alone: the size and the Message-ID and Subject fields; with the bytes: the size
# and the first MAX_BYTES, whose header block has the same fields (fetching them apart too
# would cost a fifth more a message).
_HEADER = "BODY[HEADER.FIELDS (MESSAGE-ID SUBJECT)]"
_ID_ITEMS = ["RFC822.SIZE", f"BODY.PEEK[{_HEADER[5:-1]}]"]
_BODY_ITEMS = ["RFC822.SIZE", f"BODY.PEEK[]<0.{MAX_BYTES}>"]
# A field at a line's start (the header block is searched with a newline before it: five
# times as fast as re.M's ^).
_MESSAGE_ID = re.compile(rb"\nmessage-id:[ \t]*(.*(?:\r?\n[ \t].*)*)", re.I)
_SUBJECT = re.compile(rb"\nsubject:[ \t]*(.*(?:\r?\n[ \t].*)*)", re.I)


@dataclass(frozen=True)
class Message:
    """A message of a folder: ``identity`` (its Message-ID, '' if it has none) and ``size``
    survive a move and find it again; ``raw`` is its first MAX_BYTES bytes (None when only
    its identity was fetched) and ``digest`` theirs ('' without them)."""

    uid: int
    size: int
    identity: str
    header: bytes  # its header block (with the bytes), or its Message-ID and Subject fields
    raw: bytes | None = None

    @cached_property
    def digest(self) -> str:
        return digest(self.raw) if self.raw is not None else ""

    @property
    def subject(self) -> str:
        """The Subject field's text, MIME words decoded (8-bit bytes as UTF-8 if they are)."""
        text = _field(_SUBJECT, self.header)
        try:
            text = text.encode("latin-1").decode("utf-8")
        except UnicodeError:
            pass
        try:
            return " ".join(str(make_header(decode_header(text))).split())
        except (ValueError, LookupError, UnicodeError):  # malformed MIME words: as they are
            return text


def digest(raw: bytes) -> str:
    """128-bit BLAKE2b of a message's bytes (as fetched: its first MAX_BYTES)."""
    return blake2b(raw, digest_size=16).hexdigest()


def select(client: "IMAPClient", folder: str, readonly: bool = False) -> tuple[int, int]:
    """Select a folder; its (UIDVALIDITY, UIDNEXT)."""
    info = client.select_folder(folder, readonly=readonly)
    return int(info[b"UIDVALIDITY"]), int(info.get(b"UIDNEXT") or _uidnext(client))


def _uidnext(client: "IMAPClient") -> int:
    # UIDNEXT is optional in a SELECT's answer (RFC 3501 wants it, some servers omit it).
    uids = client.search("ALL")
    return max(uids) + 1 if uids else 1


def status(client: "IMAPClient", folder: str) -> tuple[int, int]:
    """A folder's (UIDVALIDITY, UIDNEXT), without selecting it."""
    info = client.folder_status(folder, [b"UIDVALIDITY", b"UIDNEXT"])
    return int(info[b"UIDVALIDITY"]), int(info[b"UIDNEXT"])


def ensure(client: "IMAPClient", folder: str) -> bool:
    """Create and subscribe a folder if it does not exist; whether it was created."""
    if client.folder_exists(folder):
        return False
    client.create_folder(folder)
    try:
        client.subscribe_folder(folder)  # so that mail clients show it
    except client.Error:
        pass
    return True


def taken_out_candidates(client: "IMAPClient", skip: Iterable[str]) -> list[str]:
    """The folders where a message the user takes out of Junk or Unsure may land: all but
    ``skip`` and the trash, junk, drafts, sent and virtual folders."""
    skip = set(skip)
    found = []
    for flags, _, name in client.list_folders():
        if name in skip or name.lower() in _NOT_TAKEN_OUT_NAMES:
            continue
        if {flag.lower() for flag in flags} & _NOT_TAKEN_OUT:
            continue
        found.append(name)
    return found


def new_uids(client: "IMAPClient", seen: int) -> list[int]:
    """The selected folder's UIDs past ``seen``, ascending."""
    # "N:*" always includes the highest UID, even below N (RFC 3501 6.4.8): filter.
    return sorted(uid for uid in client.search(["UID", f"{seen + 1}:*"]) if uid > seen)


def existing(client: "IMAPClient", uids: Sequence[int]) -> set[int]:
    """Which of ``uids`` the selected folder still holds."""
    if not uids:
        return set()
    return set(client.search(["UID", _uid_set(uids)])) & set(uids)


def sizes(client: "IMAPClient", uids: Sequence[int]) -> dict[int, int]:
    """UID → RFC822.SIZE of those of ``uids`` the selected folder holds."""
    found: dict[int, int] = {}
    for part in _chunks(list(uids), 1000):  # a command line of 7 kB at most
        found.update((uid, int(data[b"RFC822.SIZE"]))
                     for uid, data in client.fetch(part, ["RFC822.SIZE"]).items()
                     if b"RFC822.SIZE" in data)
    return found


def large(client: "IMAPClient", uids: Sequence[int]) -> set[int]:
    """Which of ``uids`` in the selected folder are larger than LARGE."""
    if not uids:
        return set()
    return set(client.search(["UID", _uid_set(uids), "LARGER", str(LARGE)])) & set(uids)


def batches(uids: Iterable[int], large: Iterable[int] = (),
            limit: int = BATCH) -> Iterator[list[int]]:
    """The UIDs in ascending order, in batches of at most ``limit`` messages, of which at
    most LARGE_BATCH of ``large``."""
    large = set(large)
    batch: list[int] = []
    larger = 0
    for uid in sorted(uids):
        if batch and (len(batch) == limit or (uid in large and larger == LARGE_BATCH)):
            yield batch
            batch, larger = [], 0
        batch.append(uid)
        larger += uid in large
    if batch:
        yield batch


def fetch(client: "IMAPClient", uids: Sequence[int],
          body: bool = True) -> tuple[dict[int, Message], dict[int, str]]:
    """The messages of ``uids`` in the selected folder, with their first MAX_BYTES if
    ``body``; and UID → why, for those the server would not give. A UID no longer there
    is in neither."""
    items = _BODY_ITEMS if body else _ID_ITEMS
    try:
        return _parsed(client.fetch(list(uids), items), body), {}
    except client.AbortError:
        raise  # the connection is gone: nothing to learn from trying one at a time
    except client.Error:
        if len(uids) == 1:
            raise
    found, failed = {}, {}
    for uid in uids:  # one at a time: which ones the server refuses
        try:
            found.update(_parsed(client.fetch([uid], items), body))
        except client.AbortError:
            raise
        except client.Error as error:
            failed[uid] = str(error)
    return found, failed


def _parsed(response: dict, body: bool) -> dict[int, Message]:
    found = {}
    for uid, data in response.items():
        raw = data.get(b"BODY[]<0>") if body else None
        header = _header(raw) if body and raw is not None else data.get(_HEADER.encode())
        if b"RFC822.SIZE" not in data or header is None:
            continue  # an untagged FETCH of flags alone (another client's change)
        identity = _field(_MESSAGE_ID, header)
        found[uid] = Message(uid, int(data[b"RFC822.SIZE"]), f"id:{identity}" if identity else "",
                             header, raw)
    return found


def _header(raw: bytes) -> bytes:
    """A message's header block: up to its first empty line."""
    crlf = raw.find(b"\r\n\r\n")
    end = len(raw) if crlf < 0 else crlf
    lf = raw.find(b"\n\n", 0, end)  # not past the CRLF one: IMAP gives CRLF, a whole MiB
    return raw[:lf if lf >= 0 else end]


def _field(pattern: re.Pattern, header: bytes) -> str:
    """The first field of the pattern in a header block, unfolded, as Latin-1 text."""
    match = pattern.search(b"\n" + header)
    return " ".join(match.group(1).decode("latin-1").split()) if match else ""


def move(client: "IMAPClient", uids: Sequence[int], target: str) -> None:
    """Move messages of the selected folder to ``target``: MOVE (RFC 6851) where offered,
    else COPY, then \\Deleted and UID EXPUNGE (RFC 4315) of these messages only."""
    if not uids:
        return
    if client.has_capability("MOVE"):
        client.move(_uid_set(uids), target)
        return
    require_move(client)
    client.copy(_uid_set(uids), target)
    expunge(client, uids)


def expunge(client: "IMAPClient", uids: Sequence[int]) -> None:
    """Remove these messages of the selected folder, whose copies are elsewhere."""
    if uids:
        client.add_flags(_uid_set(uids), [DELETED], silent=True)
        client.uid_expunge(_uid_set(uids))


def require_move(client: "IMAPClient") -> None:
    """ImapError unless the server can move a message (MOVE) or remove it alone (UIDPLUS)."""
    if not (client.has_capability("MOVE") or client.has_capability("UIDPLUS")):
        raise ImapError("the server offers neither MOVE (RFC 6851) nor UIDPLUS (RFC 4315): "
                        "textnb cannot move a message without expunging others")


def set_keywords(client: "IMAPClient", uids: Sequence[int], add: bytes, remove: bytes) -> None:
    """Add one keyword and remove the other on messages of the selected folder."""
    if uids:
        client.add_flags(_uid_set(uids), [add], silent=True)
        client.remove_flags(_uid_set(uids), [remove], silent=True)


def _uid_set(uids: Iterable[int]) -> str:
    """1,2,3,7 → "1:3,7"."""
    ranges: list[list[int]] = []
    for uid in sorted(set(uids)):
        if ranges and uid == ranges[-1][1] + 1:
            ranges[-1][1] = uid
        else:
            ranges.append([uid, uid])
    return ",".join(f"{a}:{b}" if a != b else str(a) for a, b in ranges)


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
