"""dict of arrays + JSON metadata ⇄ one versioned model file, written atomically, read safely.

A model file is a zip archive of stored members: ``meta.json`` and one ``.npy`` file per
array. What a file may hold is declared once (:mod:`textnb.store.schema`), and every reader
applies it: the mail filter's numpy-free scorer (:mod:`textnb.store.scorer`) through
:func:`read` and :meth:`ModelFile.plain`, the text classifier's and the multi-label loaders
(:mod:`textnb.store.text_model`, :mod:`textnb.store.multilabel_model`) through :func:`read` and
:meth:`ModelFile.arrays`:

* the zip: one member of each name, each stored (never inflated: no zip bomb), within the file
  and in order, no byte outside them, its CRC-32 right (:func:`read`);
* meta.json: at most MAX_META_BYTES and MAX_META_VALUES values, JSON without a key twice; its
  format, version and kind; the keys, settings and records each kind's table names, every
  number read finite and bounded;
* the arrays: none missing, none unknown, each .npy header a plain type of the member's (a
  pickle is never read) and the shape the file's own sizes give it — classes C, terms T,
  documents learned D, counts stored N;
* the sizes: C, T, C × T, C² × T (what ``info`` compares), D and N within their limits, all
  checked on the directory, the headers and meta.json before any array is read;
* the values: each member's rule, checked with numpy (:mod:`textnb.store.arrays`) or in plain
  Python (:mod:`textnb.store.plain`) as the same exact predicates, so that the two readers
  refuse the same files (tests/test_hostile_models.py).

Everything is read from one open regular file (a FIFO would block, ``/dev/zero`` never ends),
so a model replaced meanwhile is never half read. Writing goes to a temporary file in the
target's directory, then ``os.replace``: a reader sees the old model or the new one.
:func:`save` reads a text classifier or multi-label model back by the same rules before it
replaces the old file, so that textnb never writes a file it would refuse. numpy is imported
where arrays are built.
"""

from __future__ import annotations

import math
import os
import stat
import struct
import time
import zlib
from contextlib import contextmanager

from ..errors import ModelFileError
from . import verdict
from .plain import Array, PLAIN_RULES, VOUCHED_RULES, json_loads, plain_array
from .schema import (FORMAT, MAX_CELLS, MAX_CLASSES, MAX_COMPARISONS, MAX_DIGESTS, MAX_TERMS,
                     MAX_TERM_BYTES, MEMBERS, META_PROBLEM, Member, TEXT_CLASSIFIER, VERSION,
                     is_whole, members)

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms, as in textnb.documents.message
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, BinaryIO, Iterator

# -- limits on what a file may declare ----------------------------------------------------------
# meta.json: version 1 kept the vocabulary there (500,000 terms of 20 Newsgroups ≈ 10 MB). JSON
# builds up to 60 bytes of objects a value ("[]," is a list), so values are counted too.
MAX_META_BYTES = 16 << 20
MAX_META_VALUES = 1 << 20
MAX_MEMBERS = 32
MAX_NPY_HEADER = 4096  # numpy writes 118 bytes for any array textnb stores

# Temporary files of a save: ".<model>.<pid>.<random>.textnb-tmp". One a killed writer left is
# removed by a later save once its process is gone and it is older than STALE_SECONDS.
TMP_SUFFIX = ".textnb-tmp"
STALE_SECONDS = 600


# -- reading ---------------------------------------------------------------------------------------

_END = struct.Struct("<4s4H2IH")               # the zip's last record, 22 bytes
_ENTRY = struct.Struct("<4s6H3I5H2I")           # a member in the central directory, 46 bytes
_LOCAL = struct.Struct("<4s5H3I2H")             # before a member's data, 30 bytes
_NPY_MAGIC = b"\x93NUMPY"
_UTF8_NAMES = 0x800                             # the only flag a member may carry


class ModelFile:
    """A model file as :func:`read` checked it: ``meta`` (meta.json), ``version``, ``kind``,
    ``raw`` (member name → :class:`Array`), ``sizes`` (C, T, L, B, D, N) and ``members`` (its
    kind's table for its version); ``verdict_key`` (:func:`verdict.key`, if read with
    verdicts) and ``checked`` (whether its sidecar vouched for it: its values were checked)."""

    def __init__(self, name: str, meta: dict, raw: dict[str, Array], sizes: dict[str, int]
                 ) -> None:
        self.name, self.meta, self.raw, self.sizes = name, meta, raw, sizes
        self.identity = ""  # set by read: which written file this is (journal.py)
        self.version, self.kind = meta["version"], meta["kind"]
        self.members = members(self.kind, self.version) if self.kind in MEMBERS else {}
        self.path: str | None = None
        self.verdict_key: str | None = None
        self.checked = False

    def corrupt(self, problem: str) -> ModelFileError:
        return ModelFileError(f"model file '{self.name}' is corrupt ({problem})")

    def arrays(self) -> dict[str, Any]:
        """Every member as a numpy array (a view of the bytes read, copied if unaligned), its
        values checked by its rule; a member of lines ("terms") as the list of them (str)."""
        from .arrays import numpy_arrays  # numpy: not for the mail filter's plain()
        return numpy_arrays(self)

    def check(self) -> None:
        """Check every value by its rule, as :meth:`plain` reads them where it reads the file
        (the same rules, in C, the terms left as bytes), else as :meth:`arrays` does."""
        if self.kind == TEXT_CLASSIFIER and self.version >= 2 and "columns" not in self.raw:
            self.plain()
        else:
            self.arrays()

    def plain(self) -> dict[str, Any]:
        """A text classifier's members of format 2 or 3, for a vocabulary of terms, without
        numpy, their values checked by the same rules as :meth:`arrays`: "terms" as (its
        bytes, where each line ends), the others with a rule as numbers (:func:`plain_array`;
        2-d ones flat, in the order ``raw[name].fortran`` says), those without one left out.

        A file its sidecar vouches for (``checked``) is not checked again, its line ends taken
        from ``term_ends``; one read with verdicts that passes is recorded there
        (:mod:`textnb.store.verdict`) if its ``term_ends`` are where its lines end."""
        if self.kind != TEXT_CLASSIFIER or self.version < 2 or "columns" in self.raw:
            raise ValueError("only a text classifier of format 2 or 3 with terms is read so")
        rules = VOUCHED_RULES if self.checked else PLAIN_RULES
        values = {name: rules[member.rule](self, name) for name, member in self.members.items()
                  if name in self.raw and member.rule is not None}
        if (self.verdict_key is not None and not self.checked
                and list(values["terms"][1]) == list(plain_array(self.raw["term_ends"]))):
            verdict.vouch(self.path, self.verdict_key)
        return values


def open_model(path: str | os.PathLike) -> BinaryIO:
    """The model file at ``path`` open for reading; ModelFileError unless it is a regular file.

    Opened without blocking (a FIFO would wait for a writer forever), then checked with fstat
    on the open file itself, so the file checked is the file read.
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelFileError(f"model file '{name}' does not exist") from None
    except IsADirectoryError:
        raise ModelFileError(f"model file '{name}' is a directory") from None
    except PermissionError:
        raise ModelFileError(f"model file '{name}' cannot be read: permission denied") from None
    except OSError as error:
        raise ModelFileError(f"model file '{name}' cannot be read: {error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ModelFileError(f"model file '{name}' is "
                             f"{'a directory' if stat.S_ISDIR(mode) else 'not a regular file'}")
    return os.fdopen(fd, "rb")


def read(path: str | os.PathLike, kind: str | None, name: str | None = None, *,
         writable: bool = True, verdicts: bool = False) -> ModelFile:
    """The model file at ``path``, of ``kind`` (a kind of :data:`MEMBERS`; None: any kind's
    meta.json and arrays of plain numbers, unchecked), checked as the module says but for the
    values; ModelFileError naming the file (as ``name``, if given), in one line, if it is not
    one. ``writable``: its arrays' bytes in bytearrays, which numpy arrays of them may change;
    else in bytes, read without zeroing them first (:meth:`ModelFile.plain` reads them).
    ``verdicts``: a file its sidecar vouches for (:mod:`textnb.store.verdict`) is read without
    its members' CRC-32s, and :meth:`ModelFile.plain` neither checks it again nor records it."""
    name = os.fspath(path) if name is None else name
    with open_model(path) as f:
        try:
            key = verdict.key(f.fileno()) if verdicts else None
            checked = key is not None and verdict.vouched(os.fspath(path), key)
            model = _read(f.fileno(), name, kind, writable, checked)
            model.path, model.verdict_key, model.checked = os.fspath(path), key, checked
            return model
        except ModelFileError:
            raise
        except (ValueError, UnicodeDecodeError, RecursionError, OSError, struct.error) as error:
            raise ModelFileError(f"model file '{name}' is truncated or corrupt ({error})") from None


def read_meta(path: str | os.PathLike) -> dict | None:
    """meta.json of the model file at ``path`` if it is a zip of textnb's layout whose
    meta.json is JSON (whatever else it holds), else None: which loader to ask."""
    name = os.fspath(path)
    try:
        with open_model(name) as f:
            entries = _directory(f.fileno(), os.fstat(f.fileno()).st_size)
            if "meta.json" not in entries:
                return None
            return _meta(f.fileno(), entries["meta.json"], name, None)
    except (ModelFileError, ValueError, UnicodeDecodeError, RecursionError, OSError,
            struct.error):
        return None


def _read(fd: int, name: str, kind: str | None, writable: bool, checked: bool = False
          ) -> ModelFile:
    entries = _directory(fd, os.fstat(fd).st_size)
    if "meta.json" not in entries:
        raise ModelFileError(f"'{name}' is not a textnb model file")
    meta = _meta(fd, entries["meta.json"], name, kind)
    table = members(kind, meta["version"]) if kind is not None else None
    arrays: dict[str, Array] = {}
    for entry, (start, size, crc) in entries.items():
        if entry == "meta.json":
            continue
        member = entry[:-4]
        if not entry.endswith(".npy") or (table is not None and member not in table):
            raise ModelFileError(f"model file '{name}' is corrupt (unknown member {entry})")
        arrays[member] = _header(fd, start, size, entry)
    sizes = _sizes(name, meta, table, arrays) if table is not None else {}
    for member, array in arrays.items():  # the values, each member's CRC-32 checked
        start, size, crc = entries[f"{member}.npy"]
        data = bytearray(size) if writable else os.pread(fd, size, start)
        if (_pread_into(fd, data, start) if writable else len(data)) != size:
            raise ValueError(f"{member}.npy is cut short")
        if not checked and zlib.crc32(data) != crc:
            raise ValueError(f"{member}.npy is truncated or corrupt")
        if _parse_header(data, f"{member}.npy")[1:] != (array.descr, array.shape, array.fortran):
            raise ValueError(f"{member}.npy changed while it was read")
        array.data = data
    model = ModelFile(name, meta, arrays, sizes)
    model.identity = identity(entries)
    return model


def identity(entries: dict[str, tuple[int, int, int]]) -> str:
    """What tells one written model file from another: the CRC-32 of its members' names,
    places, sizes and CRC-32s, and their number (its journal names the file it follows)."""
    listed = ";".join(f"{name}:{start}:{size}:{crc}" for name, (start, size, crc)
                      in sorted(entries.items()))
    return f"{len(entries)}-{zlib.crc32(listed.encode()):08x}-{sum(s for _, s, _ in entries.values())}"


def _pread_into(fd: int, buffer: bytearray, offset: int) -> int:
    """Read into ``buffer`` from ``offset`` of the file; the bytes read."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [buffer], offset)
    data = os.pread(fd, len(buffer), offset)
    buffer[:len(data)] = data
    return len(data)


def _directory(fd: int, size: int) -> dict[str, tuple[int, int, int]]:
    """name → (data offset, size, CRC-32) of the members of a zip as Python's zipfile writes
    it for textnb: stored members one after another from the start, no two of one name, then
    the central directory, then its end record without a comment; nothing else."""
    if size < _END.size:
        raise ValueError("not a zip file")
    (signature, disk, directory_disk, here, count, directory_size, directory_offset,
     comment) = _END.unpack(os.pread(fd, _END.size, size - _END.size))
    if signature != b"PK\x05\x06" or comment or disk or directory_disk or here != count:
        raise ValueError("not a zip file")
    if count > MAX_MEMBERS or directory_offset + directory_size != size - _END.size:
        raise ValueError(f"a zip directory of {count} members in {directory_size} bytes "
                         f"where a model's has at most {MAX_MEMBERS}")
    directory = os.pread(fd, directory_size, directory_offset)
    if len(directory) != directory_size:
        raise ValueError("the zip directory is cut short")
    entries: dict[str, tuple[int, int, int]] = {}
    pos = end = 0
    for _ in range(count):
        (signature, _, _, flags, method, _, _, crc, packed, unpacked, name_length, extra_length,
         comment_length, disk, _, _, local) = _ENTRY.unpack_from(directory, pos)
        raw = directory[pos + _ENTRY.size:pos + _ENTRY.size + name_length]
        name = raw.decode("ascii", "replace")
        if signature != b"PK\x01\x02" or comment_length or disk or not raw.isascii():
            raise ValueError("the zip directory is garbled")
        if flags & ~_UTF8_NAMES or method or packed != unpacked:
            raise ValueError(f"{name} is not stored as textnb stores members "
                             f"(flags {flags:#x}, method {method})")
        if name in entries:
            raise ValueError(f"two members named {name}")
        if local != end:
            raise ValueError(f"{name} is not where the member before it ends")
        header = os.pread(fd, _LOCAL.size + name_length, local)
        if len(header) != _LOCAL.size + name_length:
            raise ValueError(f"{name} runs past the end of the file")
        fields = _LOCAL.unpack_from(header)
        if (fields[0] != b"PK\x03\x04" or fields[2:4] != (flags, method)
                or fields[-2] != name_length or header[_LOCAL.size:] != raw):
            raise ValueError(f"bad local header of {name}")
        start = local + _LOCAL.size + name_length + fields[-1]
        end = start + packed
        if end > directory_offset:
            raise ValueError(f"{name} runs past the end of the members")
        entries[name] = (start, packed, crc)
        pos += _ENTRY.size + name_length + extra_length
    if pos != directory_size or end != directory_offset:
        raise ValueError("bytes outside the zip's members")
    return entries


def _meta(fd: int, entry: tuple[int, int, int], name: str, kind: str | None) -> dict:
    """meta.json, checked: size, values, JSON, format, version, kind and (for a kind with a
    table) keys, settings and records."""
    start, size, crc = entry
    if size > MAX_META_BYTES:
        raise ModelFileError(f"model file '{name}' is too large to read (meta.json of {size} "
                             f"bytes; at most {MAX_META_BYTES})")
    data = os.pread(fd, size, start)
    if len(data) != size or zlib.crc32(data) != crc:
        raise ValueError("meta.json is truncated or corrupt")
    # Each JSON value is a list's or object's first, or follows a comma or a colon.
    values = sum(map(data.count, (b",", b":", b"[", b"{"))) + 1
    if values > MAX_META_VALUES:
        raise ModelFileError(f"model file '{name}' is too large to read (meta.json of up to "
                             f"{values} values; at most {MAX_META_VALUES})")
    meta = json_loads(data.decode("utf-8"))
    check_header(meta, name, kind)
    problem = META_PROBLEM[kind](meta) if kind in META_PROBLEM else None
    if problem:
        raise ModelFileError(f"model file '{name}' is corrupt ({problem})")
    return meta


def check_header(meta: Any, name: str, kind: str | None) -> int:
    """The format version of a file whose meta.json holds ``meta``; ModelFileError unless it is
    a textnb model (of ``kind``, if given) in a version from 1 to VERSION."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"'{name}' is not a textnb model file")
    version = meta.get("version", 0)
    if not is_whole(version):
        raise ModelFileError(f"model file '{name}' is corrupt "
                             f"(format version {version!r} is not a number)")
    if version > VERSION:
        raise ModelFileError(f"model file '{name}' has format version {version}; "
                             f"this textnb reads up to {VERSION}: upgrade textnb")
    if version < 1:
        raise ModelFileError(f"model file '{name}' is corrupt (format version {version} "
                             f"does not exist; versions start at 1)")
    if kind is not None and meta.get("kind") != kind:
        raise ModelFileError(
            f"model file '{name}' holds a {meta.get('kind')!r} model, not a {kind!r} one")
    return version


def _header(fd: int, start: int, size: int, entry: str) -> Array:
    """A .npy member's header, read and checked: that the member holds exactly its array."""
    data = os.pread(fd, min(size, MAX_NPY_HEADER), start)
    length, descr, shape, fortran = _parse_header(data, entry)
    if length + math.prod(shape) * int(descr[2:]) != size:
        raise ValueError(f"{entry} holds {size - length} bytes, not an array of {descr} of "
                         f"shape {shape}")
    return Array(descr, shape, fortran, length)


def _parse_header(data: bytes | bytearray, entry: str) -> tuple[int, str, tuple[int, ...], bool]:
    """(header length, descr, shape, Fortran order) of a .npy file's header as numpy writes it
    (``{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }``, spaces, a line break),
    read without eval and without a regular expression (compiling one would cost the mail
    filter's start-up 1 ms): plain numbers only (b1, i, u, f; a pickle's "|O" is refused), of
    at most two dimensions."""
    if len(data) < 10 or data[:6] != _NPY_MAGIC or data[6] not in (1, 2, 3) or data[7]:
        raise ValueError(f"{entry} is not a .npy array")
    width = 2 if data[6] == 1 else 4
    length = 8 + width + int.from_bytes(data[8:8 + width], "little")
    if length > min(len(data), MAX_NPY_HEADER):
        raise ValueError(f"{entry} has a .npy header of {length} bytes")
    text = bytes(data[8 + width:length]).decode("latin-1")
    head = text[:-1].rstrip(" ") if text.endswith("\n") else ""
    descr, _, rest = head.removeprefix("{'descr': '").partition("', 'fortran_order': ")
    fortran, _, shape = rest.partition(", 'shape': (")
    dims = [d.strip() for d in shape.removesuffix("), }").split(",")]
    if dims[-1] == "" and len(dims) > 1:  # (3,)
        dims.pop()
    if dims == [""]:  # ()
        dims = []
    if (not head.startswith("{'descr': '") or not shape.endswith("), }")
            or fortran not in ("False", "True") or len(dims) > 2
            or not all(d.isascii() and d.isdigit() and len(d) <= 12 for d in dims)
            or len(descr) not in (3, 4) or descr[0] not in "<>|" or descr[1] not in "biuf"
            or descr[2:] not in ("1", "2", "4", "8") or (descr[0] == "|") != (descr[2:] == "1")):
        raise ValueError(f"{entry} has a .npy header that is not one of plain numbers "
                         f"of at most two dimensions")
    return length, descr, tuple(map(int, dims)), fortran == "True"


def _sizes(name: str, meta: dict, table: dict[str, Member], arrays: dict[str, Array]
           ) -> dict[str, int]:
    """The file's sizes from meta.json and the .npy headers — C classes (labels), T terms,
    L lines of terms (T, or 0 for a hashed vocabulary), B bytes of terms, D documents learned,
    N counts stored — each within its limit, and each member there as its kind's table says,
    of one of its types and of its shape in these sizes."""
    def corrupt(problem: str) -> ModelFileError:
        return ModelFileError(f"model file '{name}' is corrupt ({problem})")

    text = meta["kind"] == TEXT_CLASSIFIER
    hashed = text and meta["params"].get("hash_bits") is not None
    for member, spec in table.items():
        if member not in arrays:
            if spec.when is None or (spec.when == "hashed" and hashed):
                raise corrupt(f"no {member}.npy")
        elif spec.when == "hashed" and not hashed:
            raise corrupt(f"{member}.npy in a model without a hashed vocabulary")
        elif arrays[member].descr[1:] not in spec.types:
            raise corrupt(f"{member} holds {arrays[member].descr}, not "
                          f"{' or '.join(spec.types)}")

    def first(member: str) -> int:  # a size as the first dimension of a member declares it
        shape = arrays[member].shape if member in arrays else ()
        return shape[0] if shape else 0

    sizes = {"C": len(meta["classes"] if text else meta["labels"]), "B": first("terms"),
             "D": first("digests"), "N": first("count_classes")}
    if not text:
        sizes["T"] = sizes["L"] = first("total_count")
    elif meta["version"] == 1:
        sizes["T"] = len(meta["terms"])
    elif hashed:
        sizes["T"], sizes["L"] = first("columns"), 0
    else:
        sizes["T"] = sizes["L"] = first("term_ends")
    c, t = sizes["C"], sizes["T"]
    for size, limit, what in ((c, MAX_CLASSES, "classes"), (t, MAX_TERMS, "terms"),
                              (sizes["B"], MAX_TERM_BYTES, "bytes of terms"),
                              (c * t, MAX_CELLS, "classes × terms"),
                              (c * c * t, MAX_COMPARISONS, "classes² × terms"),
                              (sizes["D"], MAX_DIGESTS, "documents learned"),
                              (sizes["N"], MAX_CELLS, "counts stored")):
        if size > limit:
            raise ModelFileError(f"model file '{name}' is too large to read ({size} {what}; "
                                 f"at most {limit})")
    for member, array in arrays.items():
        want = tuple(t + 1 if d == "T+1" else sizes[d] if isinstance(d, str) else d
                     for d in table[member].shape)
        if array.shape != want:
            raise corrupt(f"{member} of shape {array.shape}, expected {want}")
        if array.fortran and len(want) < 2:  # numpy writes 1-d arrays in C order
            raise corrupt(f"{member} in Fortran order")
    return sizes


# -- the generic reader and the writer -------------------------------------------------------------

def load(path: str | os.PathLike, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(meta, arrays) of a model file of ``kind`` written by :func:`save`, as numpy arrays; for
    a kind of :data:`MEMBERS` checked as the module says, values too; ModelFileError naming the
    file if it is not one."""
    if kind in MEMBERS:
        model = read(path, kind)
        return model.meta, model.arrays()
    model = read(path, None)
    name = os.fspath(path)
    if model.kind != kind:
        raise ModelFileError(f"model file '{name}' holds a {model.kind!r} model, "
                             f"not a {kind!r} one")
    return model.meta, model.arrays()  # a kind without a table: no rules to check


def save(path: str | os.PathLike, kind: str, meta: dict[str, Any],
         arrays: dict[str, Any]) -> None:
    """Write ``meta`` (JSON-able) and ``arrays`` (numeric, no objects) to ``path`` atomically.

    A symbolic link is written through: its target is replaced and the link stays. An OSError
    of the writing (a full disk) names the model file. A model of a kind of :data:`MEMBERS` is
    read back before it replaces the old one: ValueError if a reader would refuse it.
    """
    import json
    import tempfile
    import zipfile
    from pathlib import Path

    from .arrays import write_array

    path = Path(os.path.realpath(path))
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    _remove_stale(directory, path.name)
    header = {"format": FORMAT, "version": VERSION, "kind": kind, **meta}
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TMP_SUFFIX,
                                   dir=directory)
    except OSError as error:  # named as the model, not as the temporary file never made
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            # ZIP_STORED: the mail filter reads every member for each message (its CRC-32
            # checks) and inflating costs more than the whole read: deflated, a SpamAssassin
            # model is 0.62 MB, not 1.47, but takes 12 ms to inflate where opening it and
            # scoring a message take 7 (20 Newsgroups: 3.1 MB, not 6.4; python -m bench.modelfile).
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
                # A fixed member date (zip's epoch): the same model is the same bytes, whenever
                # it is written (a dump loaded back, a backup compared).
                # Compact separators: the settings and cutoffs are most of a small model's file.
                archive.writestr(_member("meta.json"),
                                 json.dumps(header, ensure_ascii=False, separators=(",", ":")))
                for name, array in arrays.items():
                    with archive.open(_member(f"{name}.npy"), "w", force_zip64=True) as out:
                        write_array(out, array)
            f.flush()
            os.fsync(f.fileno())
        if kind in MEMBERS:  # read back by the readers' rules: textnb writes no file they refuse
            # (by the plain reader where it reads the file: the numpy reader's list of every
            # term was the peak of a million documents' training, 50 MB of 0.9 million strings)
            try:
                read(tmp, kind, str(path), writable=False).check()
            except ModelFileError as error:
                raise ValueError(f"cannot save this model: {error}") from None
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException as error:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError) and error.filename is None and error.errno:
            raise OSError(error.errno, error.strerror or str(error), str(path)) from None
        raise


def _remove_stale(directory: Path, name: str) -> None:
    """Remove the temporary files of saves of ``name`` that were killed: their process is gone
    (a live one may still be writing) and they are older than STALE_SECONDS (a process on
    another host sharing the directory is not seen here)."""
    prefix = f".{name}."
    now = time.time()
    try:
        entries = [e for e in os.scandir(directory)
                   if e.name.startswith(prefix) and e.name.endswith(TMP_SUFFIX)]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix):].split(".", 1)[0]
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if not pid.isdigit() or age < STALE_SECONDS:
                continue
            if _alive(int(pid)):
                continue
            os.unlink(entry.path)
        except OSError:  # gone already, or not ours to remove
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


@contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``<model>.lock`` (fcntl.flock) while updating the model, so
    that concurrent updates (``textnb learn`` from several deliveries, the daemon's TELL) are
    serialised; readers need no lock, since :func:`save` replaces the file atomically.

    A symbolic link is followed: the lock is beside its target, the file :func:`save` replaces.
    The lock file stays after the update, on purpose: the kernel releases a flock when its
    holder exits, even killed, so a leftover lock file locks nothing, while removing it could
    let a waiting process and a new one each lock a different file.
    """
    import fcntl
    from pathlib import Path
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _member(name: str):
    """A stored zip member of that name, dated 1980-01-01 00:00."""
    import zipfile
    return zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
