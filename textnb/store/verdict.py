"""A model file's verdict, cached: the mail filter checks a file once, not once a message.

The plain reader (:meth:`textnb.store.container.ModelFile.plain`) checks every value of a file
(its CRC-32s, the terms' order, the counts' rows): whole-file passes that cost a fresh
``textnb filter`` process more than scoring its message. A file that passed them all is recorded
in a sidecar beside it, ``.<model>.textnb-checked``, one line naming the file by what
``fstat`` says of it (device, inode, size, modification and change times in ns). A reader that
finds its open file so named skips those passes: the bytes are those checked, so the verdict is
the one every reader would give. The mail filter's scorer reads such a file by :func:`read`,
without the rules' modules, and only the members it scores with.

A file is recorded only once its change time is :data:`SETTLED` seconds past: a file changed
again within one tick of the file system's clock could keep the times of the version checked
("racy git"); a later change makes a new change time, which no process can set back. The
sidecar is written atomically by whoever checked the file, if the directory lets it; one that
cannot be read, belongs to another user, or names another file is ignored.
"""

from __future__ import annotations

import os
import stat
import time

SUFFIX = ".textnb-checked"
# Raise when a rule of the readers changes (textnb.store.schema's RULES and limits, the plain and
# numpy readers): verdicts of the older rules are then void.
RULES_VERSION = 1
SETTLED = 1.0  # seconds: longer than any file system's timestamp tick but FAT's (2 s mtime)
_MAX_BYTES = 200


def key(fd: int) -> str:
    """The open file ``fd`` as a verdict names it: the rules' version and what fstat says."""
    st = os.fstat(fd)
    return (f"textnb-checked {RULES_VERSION} {st.st_dev} {st.st_ino} {st.st_size} "
            f"{st.st_mtime_ns} {st.st_ctime_ns} {st.st_uid}\n")


def sidecar(path: str) -> str:
    """Where the verdict on the model file at ``path`` is kept."""
    directory, name = os.path.split(os.path.realpath(path))
    return os.path.join(directory, f".{name}{SUFFIX}")


def vouched(path: str, name: str) -> bool:
    """Whether the sidecar of ``path`` records the file named ``name`` (:func:`key`) as
    checked, written by that file's owner."""
    try:
        fd = os.open(sidecar(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        uid = name.rsplit(" ", 1)[-1].strip()
        return (stat.S_ISREG(st.st_mode) and str(st.st_uid) == uid
                and os.read(fd, _MAX_BYTES) == name.encode())
    except OSError:
        return False
    finally:
        os.close(fd)


def vouch(path: str, name: str) -> None:
    """Record the file named ``name`` as checked in the sidecar of ``path``, if its change time
    has settled, this process runs as the file's owner (another's record would be ignored, and
    rewritten by every filter) and the directory can be written; else nothing."""
    fields = name.split()
    if time.time_ns() - int(fields[6]) < SETTLED * 1e9 or str(os.geteuid()) != fields[7]:
        return
    target = sidecar(path)
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                     | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            os.write(fd, name.encode())
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError:  # a read-only directory, a full disk: the next reader checks again
        try:
            os.unlink(tmp)
        except OSError:
            pass


def read(path: str, names: tuple[str, ...]) -> tuple[dict, dict] | None:
    """(meta.json, name → :class:`~textnb.store.plain.Array` of each of ``names``) of the model
    file at ``path`` when its sidecar vouches for it, found as :func:`textnb.store.container.read`
    finds them, the other members never read; None for any other file, or one not of textnb's
    layout (the caller reads it by the rules, which say what is wrong with it).

    Nothing is checked again: the bytes are those every rule passed, meta.json's included. So
    a fresh mail filter reads a checked model without the rules' modules (importing container,
    schema and settings ran 10.7 million instructions, valgrind's callgrind) and copies only
    what it scores with.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not vouched(path, key(fd)):
            return None
        members = _directory(fd)
        from .plain import Array, json_loads
        start, size = members["meta.json"]
        meta = json_loads(os.pread(fd, size, start).decode("utf-8"))
        found = {}
        for name in names:
            start, size = members[f"{name}.npy"]
            head = os.pread(fd, 256, start)  # numpy's .npy header: 128 bytes
            width = 2 if head[6] == 1 else 4
            length = 8 + width + int.from_bytes(head[8:8 + width], "little")
            header = head[8 + width:length].decode("latin-1")
            if len(header) != length - 8 - width or not header.startswith("{'descr': '"):
                return None  # a longer header: the rules' reader reads it
            array = Array(header[11:header.index("'", 11)], (),
                          "'fortran_order': True" in header, 0)
            array.data = os.pread(fd, size - length, start + length)
            found[name] = array
        return meta, found
    except (OSError, ValueError, LookupError):
        return None
    finally:
        os.close(fd)


def _directory(fd: int) -> dict[str, tuple[int, int]]:
    """name → (data offset, size) of the members of a zip as Python's zipfile writes it for
    textnb (:func:`textnb.store.container._directory`, which checks what this takes as read)."""
    size = os.fstat(fd).st_size
    end = os.pread(fd, 22, size - 22)
    count = int.from_bytes(end[10:12], "little")
    directory = os.pread(fd, int.from_bytes(end[12:16], "little"),
                         int.from_bytes(end[16:20], "little"))
    members, pos = {}, 0
    for _ in range(count):
        entry = directory[pos:pos + 46]
        packed = int.from_bytes(entry[20:24], "little")
        name_length = int.from_bytes(entry[28:30], "little")
        local = int.from_bytes(entry[42:46], "little")
        name = directory[pos + 46:pos + 46 + name_length].decode("ascii")
        header = os.pread(fd, 30, local)
        members[name] = (local + 30 + int.from_bytes(header[26:28], "little")
                         + int.from_bytes(header[28:30], "little"), packed)
        pos += (46 + name_length + int.from_bytes(entry[30:32], "little")
                + int.from_bytes(entry[32:34], "little"))
    return members
