"""paths → bytes: plain files, directory trees, mbox files, Maildirs and standard input.

Each document is read as it is, unparsed (:mod:`textnb.documents.message` makes a Document of
it; :func:`read_documents` does), at most :data:`~textnb.documents.message.MAX_BYTES` of it
(cut at a line end, so that a multibyte character or a base64 line is not split), with one
buffer of the file's own size, never a MAX_BYTES one (see :func:`_read_capped`). Only an empty
file is skipped, through ``on_error(source, "empty file")``.

* A file is an mbox when it starts with "From " and a later line is a dated From_ separator
  ("From jo@example.com Mon Jan  6 10:00:00 2003"); a SpamAssassin file, one message after a
  From_ line, is one message even if its body has a line starting with "From ".
* Directories are read recursively in sorted order; hidden files and directories (name starting
  with ".") are skipped, and so are the special files (FIFOs, sockets, devices) found in them.
  A symbolic link is followed: one to a file is read as a file; one to a directory already being
  read (a loop), and a broken or looping link, is reported through ``on_error`` and skipped.
"""

from __future__ import annotations

import itertools
import os
import stat
import sys

from ..errors import DocumentError
from . import message
from .message import Document, read_bytes

TYPE_CHECKING = False  # typing itself costs a mail filter's start-up 3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import BinaryIO

    ErrorHandler = Callable[[str, str], None]


_READ_CHUNK = 64 * 1024  # under glibc's 128 kB threshold for giving an allocation its own map

# An mbox separator: "From sender asctime-date", e.g. "From jo@example.com  Thu Aug 22 13:17:22
# 2002". Requiring the date keeps a body line like "From the desk of ..." in a single message
# from making it an mbox.
# Compiled (and re imported) where a file starts with "From ": `classify --exit-code` reads
# a message on stdin without it.
_MBOX_SEPARATOR = rb"\nFrom \S* +[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d{1,2}:\d\d"
_MBOX_SEPARATOR_MAX = 1024  # overlap kept between chunks when scanning a long file
_MBOX_CHUNK = 1 << 20  # an mbox is read this much at a time for its messages' boundaries


def first_raw(paths: Iterable[str], n: int) -> list[bytes]:
    """The bytes of the first n readable documents under ``paths`` (unreadable ones skipped
    silently: whoever reads them all reports them)."""
    return [raw for _, raw in itertools.islice(read_raw(paths, on_error=lambda *_: None), n)]


def read_raw(paths: Iterable[str], on_error: ErrorHandler | None = None) -> Iterator[tuple[str, bytes]]:
    """(source, bytes) of each document :func:`read_documents` gives, not yet parsed: for a
    caller that parses them elsewhere (a TextClassifier parses bytes in its worker processes).
    """
    report = on_error or _raise
    for path in paths:
        if path == "-":
            yield from _documents(sys.stdin.buffer.read(), "-", report)
        elif os.path.isdir(path):
            for found, maildir in walk(path, report):
                yield from (_read_maildir if maildir else _read_file)(found, report)
        else:
            yield from _read_file(path, report)


def iter_files(path: str, on_error: ErrorHandler | None = None) -> Iterator[str]:
    """The files a directory expands to (recursive, sorted, hidden skipped); else ``path``.

    A Maildir gives its message files (``cur/`` and ``new/``). A directory that cannot be
    listed, or holds no file, calls ``on_error(path, reason)`` or raises DocumentError.
    """
    if not os.path.isdir(path):
        yield path
        return
    for found, maildir in walk(path, on_error or _raise):
        if maildir:
            for sub in ("cur", "new"):
                yield from (os.path.join(found, sub, name) for name in _listdir(found, sub))
        else:
            yield found


def _raise(source: str, reason: str) -> None:
    raise DocumentError(f"{source}: {reason}")


def _reason(error: OSError) -> str:
    return (error.strerror or str(error)).lower()


def _documents(raw: bytes, source: str, report: ErrorHandler) -> Iterator[tuple[str, bytes]]:
    """One file's bytes, or a report of why they are no document."""
    if raw:
        yield source, raw
    else:
        report(source, "empty file")


def _read_capped(file: BinaryIO, size: int | None = None) -> bytes:
    """The first MAX_BYTES + 1 bytes of file (one more than the cap tells cap it was longer),
    reading ``size + 1`` bytes when the file's size is known, else 64 kB at a time.

    A read of n bytes allocates n first: a MAX_BYTES buffer is a memory map of its own, which
    the bytes shrunk from it keep. Training on 100,000 small files that way passed the kernel's
    65,530 maps per process (vm.max_map_count) and failed (issue #10).
    """
    chunks = []
    left = message.MAX_BYTES + 1
    want = _READ_CHUNK if size is None else size + 1  # + 1: a file that grew since fstat
    while left > 0:
        ask = min(want, left)
        chunk = file.read(ask)
        if chunk:
            chunks.append(chunk)
            left -= len(chunk)
        if len(chunk) < ask:
            break
        want = _READ_CHUNK
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _read_file(path: str, report: ErrorHandler) -> Iterator[tuple[str, bytes]]:
    try:
        with open(path, "rb", buffering=0) as file:
            status = os.fstat(file.fileno())
            head = _read_capped(file, status.st_size if stat.S_ISREG(status.st_mode) else None)
            is_mbox = _is_mbox(head, file)
    except OSError as error:
        report(path, _reason(error))
        return
    if is_mbox:
        yield from _read_mbox(path, report)
    else:
        yield from _documents(head, path, report)


def _is_mbox(head: bytes, file: BinaryIO) -> bool:
    """Whether the file starting with head is an mbox: a "From " line, then a separator line
    somewhere (the whole file is scanned: a first message may hold a large attachment)."""
    if not head.startswith(b"From "):
        return False
    import re
    separator = re.compile(_MBOX_SEPARATOR)
    if len(head) <= message.MAX_BYTES:  # _read_capped read to the end: all of it
        return separator.search(head) is not None
    tail, chunk = b"", head
    while chunk:
        if separator.search(tail + chunk):
            return True
        tail, chunk = chunk[-_MBOX_SEPARATOR_MAX:], file.read(_READ_CHUNK)
    return False


def _read_mbox(path: str, report: ErrorHandler) -> Iterator[tuple[str, bytes]]:
    """Each message of an mbox, its "From " line left out, as mailbox.mbox gives them."""
    try:
        with open(path, "rb") as file:
            for number, (start, stop) in enumerate(_mbox_spans(file), 1):
                yield f"{path}:{number}", _mbox_message(file.fileno(), start, stop)
    except OSError as error:
        report(path, _reason(error))


def mbox_messages(path: str) -> int:
    """How many messages the file at ``path`` holds as an mbox (:func:`_mbox_spans`), if it
    starts with a "From " line; else 1 (one message, however large, is not read through)."""
    with open(path, "rb") as file:
        if file.read(5) != b"From ":
            return 1
        return sum(1 for _ in _mbox_spans(file))


def _mbox_message(fd: int, start: int, stop: int) -> bytes:
    """The bytes of file ``fd`` from ``start`` to ``stop`` after their first line (the "From "
    line), at most MAX_BYTES + 1 of them (one over tells the caller to cut, as _read_capped
    reads): one read where the line is under _READ_CHUNK bytes, else more, none of more than a
    megabyte. By offset (pread): the file is being scanned for the next message meanwhile."""
    want = _READ_CHUNK + message.MAX_BYTES + 1
    raw = os.pread(fd, min(stop - start, want), start)
    end = raw.find(b"\n") + 1
    while not end and raw and start + len(raw) < stop:  # a longer "From " line
        start += len(raw)
        raw = os.pread(fd, min(stop - start, want), start)
        end = raw.find(b"\n") + 1
    if not end:  # the line runs to the message's end
        return b""
    if start + len(raw) == stop or len(raw) - end > message.MAX_BYTES:
        return raw[end:end + message.MAX_BYTES + 1]
    return os.pread(fd, min(stop - start - end, message.MAX_BYTES + 1), start + end)


def _mbox_spans(file: BinaryIO) -> Iterator[tuple[int, int]]:
    """(start, stop) of each message of an mbox file, its "From " line included, where the
    standard library's mailbox.mbox puts them: a line that starts "From " starts a message and
    ends the one before it, less the empty line before it if there is one; the end of the file
    ends the last one, less a last empty line. Found by bytes.find over chunks rather than a line
    at a time (mailbox's table of contents took 1.9 s for a 335 MB mbox of long messages), each
    given as soon as the next is found: nothing is held for a file of two million messages."""
    start = None
    file.seek(0)
    # data: the file's bytes from offset `base` on; first a line end before the file (at -1),
    # so that "From " at 0 starts a line and a first empty line is one.
    data, base, kept = b"\n", -1, 0
    while True:
        at = data.find(b"\nFrom ", max(kept - 5, 0))  # one ending in the kept bytes was found
        while at >= 0:
            if start is not None:  # it ends here, or at the empty line ("\n\n") before
                yield start, base + at + 1 - (data[at - 1:at] == b"\n")
            start = base + at + 1
            at = data.find(b"\nFrom ", at + 1)
        chunk = file.read(_MBOX_CHUNK)
        if not chunk:
            break
        kept = min(len(data), 7)  # a match across the chunks, and the byte before it
        base += len(data) - kept
        data = data[len(data) - kept:] + chunk
    if start is not None:
        yield start, base + len(data) - (data[-2:] == b"\n\n")


def _read_maildir(path: str, report: ErrorHandler) -> Iterator[tuple[str, bytes]]:
    import mailbox

    box = mailbox.Maildir(path, factory=None, create=False)
    try:
        keys = sorted(key for key in box.iterkeys() if key[0] != ".")  # hidden, as elsewhere
    except OSError as error:
        report(path, _reason(error))
        return
    for key in keys:
        source = f"{path}:{key}"
        try:
            with box.get_file(key) as file:
                raw = _read_capped(file)
        except KeyError:  # moved away (deleted, refiled) since the listing
            report(source, "no such message")
            continue
        except OSError as error:
            report(source, _reason(error))
            continue
        yield source, raw


def is_maildir(path: str) -> bool:
    return all(os.path.isdir(os.path.join(path, sub)) for sub in ("cur", "new", "tmp"))


def _listdir(path: str, sub: str) -> list[str]:
    try:
        return sorted(name for name in os.listdir(os.path.join(path, sub)) if name[0] != ".")
    except OSError:
        return []


def walk(top: str, report: ErrorHandler) -> Iterator[tuple[str, bool]]:
    """(path, is_maildir) of the files and Maildirs under the directory top, sorted."""
    seen: set[tuple[int, int]] = set()  # directories entered: each is read once

    def walk(path: str, ancestors: frozenset[tuple[int, int]]) -> Iterator[tuple[str, bool]]:
        if is_maildir(path):
            yield path, True
            return
        try:
            status = os.stat(path)
            key = (status.st_dev, status.st_ino)
            if key in ancestors:
                report(path, "symbolic link loop")
                return
            if key in seen:  # a second link to a directory read already
                return
            with os.scandir(path) as scan:
                entries = sorted((e for e in scan if e.name[0] != "."), key=lambda e: e.name)
        except OSError as error:
            report(path, _reason(error))
            return
        seen.add(key)
        ancestors = ancestors | {key}
        for entry in entries:
            try:
                # is_dir and is_file follow links; a loop of links raises ELOOP (which aborted
                # a whole training run, issue #10), a broken link gives False to both.
                if entry.is_dir():
                    yield from walk(entry.path, ancestors)
                elif entry.is_file():
                    yield entry.path, False
                elif entry.is_symlink():
                    os.stat(entry.path)  # raises: broken
                else:  # a FIFO would block the reading, a device never end
                    report(entry.path, "not a regular file")
            except OSError as error:
                report(entry.path, _reason(error))

    found = False
    for item in walk(top, frozenset()):
        found = True
        yield item
    if not found and seen:  # top was listed (an unlistable top has been reported already)
        report(top, "no files")


def read_documents(paths: Iterable[str],
                   on_error: ErrorHandler | None = None) -> Iterator[Document]:
    """Documents of files, directories (recursively), mboxes, Maildirs and "-" (stdin).

    A path or message that cannot be read calls ``on_error(source, reason)`` and is skipped;
    without ``on_error`` it raises :class:`~textnb.errors.DocumentError`.
    """
    return (read_bytes(raw, source) for source, raw in read_raw(paths, on_error))
