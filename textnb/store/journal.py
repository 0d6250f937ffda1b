"""A model file's journal: the documents learned and unlearned since the file was written,
appended beside it (``<model>.journal``), so that learning one message writes a few
kilobytes, not the whole model. Every reader reads the file and its journal as one model.

The journal is lines of text. The first names the snapshot it belongs to (its
:attr:`~textnb.store.container.ModelFile.identity`: the size and CRC-32s of its members); a
journal naming another is stale (the file was written again since: compacted, trained anew)
and is read as empty. Then records, each ``<CRC-32 of the JSON, 8 hex digits> <JSON>``:

* a document: ``{"op": "learn" or "unlearn", "class": its class number, "digest": 16 hex
  digits, "weight": its weight in the counts, "keys": its terms (sorted str) or hashed
  columns (increasing int), "values": its weighted counts (each > 0)}``;
* a commit, after each update's documents: ``{"op": "commit", "score_bias": [C numbers],
  "score_constants": [2·C numbers], "documents": how many it commits}``, the score constants
  of the model with them (as :func:`textnb.store.text_model.save_model` writes them), which
  every reader scores with, as it does with a snapshot's; a mail model's learners add
  ``"learned_errors": [messages, errors]``, their count after it
  (:func:`textnb.online.learning_weight`).

A fold (:func:`textnb.store.learning.compact`) that writes the new file before the update
lock carries the records committed since it read the old one: under the lock it appends a
line naming the new file and those records (the old file's readers stop at that line, as at
any line that is not a record), renames the new file over the old, and replaces the journal
by that section alone; a reader reads the section that follows the line naming its file.

A reader applies the committed documents only, in order: an update killed while it appended
leaves records after the last commit (or a record cut short, whose CRC is wrong), which are
not read; the next update cuts them off first. So a crash at any point leaves the old model
or the new one. Each record is checked before it is used, as a model file's members are
(:mod:`textnb.store.schema`'s limits and rules): its keys, its values and weight finite,
positive and below 2**54, its class one of the file's, its score constants in their ranges,
a document unlearned one that was learned as that class; the whole journal at most
MAX_BYTES. Plain Python, no numpy: the mail filter's scorer reads it too.
"""

from __future__ import annotations

import math
import operator
import os
import stat
import zlib

from ..errors import ModelFileError
from .plain import journal_path, json_loads, term_index
from .schema import (COUNT_BITS, LOG_BITS, MAX_TOKEN_LENGTH_LIMIT, SCORE_BITS,
                     learned_errors_problem)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar
    T = TypeVar("T")
    from .container import ModelFile

MAGIC = b"textnb-journal 1 "
# A journal a reader reads at most (a writer compacts it long before: COMPACT_BYTES).
MAX_BYTES = 16 << 20
# The terms of one document (a message's distinct tokens, word pairs included, cut at 1 MiB).
MAX_KEYS = 1 << 20
# Once a commit leaves the journal larger than this (about 24 SpamAssassin messages), it is
# folded into the file after the learner has answered (textnb.store.learning.compact: the
# daemon on a thread, other learners in a detached process): the mail filter reads the
# journal for every message it scores; the balance, measured: docs/design/online.md.
COMPACT_BYTES = 128 << 10
# A learner that would leave the journal larger than this compacts it itself, before it
# returns: what bounds the filter's reading should the later compactions fail or lag.
HARD_BYTES = 4 * COMPACT_BYTES
_KEYS = {"op", "class", "digest", "weight", "keys", "values"}
_COMMIT = {"op", "score_bias", "score_constants", "documents"}


path_of = journal_path  # the journal of a model file (beside its target, if a link)


class Journal:
    """A journal as read against its snapshot: ``documents`` (the committed records, in
    order, as dicts), ``constants`` (the last commit's score_bias and score_constants, or
    None), ``end`` (the byte after the last commit: where the next update appends), ``size``
    (its bytes on disk), ``stale`` (it belongs to another snapshot), ``start`` (where the
    line naming its snapshot is: 0, or where a fold appended it) and ``inode`` (the file's
    (st_dev, st_ino), or None)."""

    def __init__(self) -> None:
        self.documents: list[dict] = []
        self.constants: tuple[list[float], list[float]] | None = None
        self.learned_errors: list[int] | None = None  # the last commit's that has them
        self.end, self.size, self.stale, self.start = 0, 0, False, 0
        self.inode: tuple[int, int] | None = None


def read(model: ModelFile) -> Journal:
    """The journal beside the model file ``model`` was read from, checked as the module says;
    ModelFileError naming it for a journal no reader may use."""
    name = path_of(model.name)
    journal = Journal()
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return journal
    except OSError as error:
        raise ModelFileError(f"journal '{name}' cannot be read: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ModelFileError(f"journal '{name}' is not a regular file")
        if info.st_size > MAX_BYTES:
            raise ModelFileError(f"journal '{name}' is too large to read ({info.st_size} "
                                 f"bytes; at most {MAX_BYTES})")
        data = os.pread(fd, info.st_size, 0)
    finally:
        os.close(fd)
    journal.inode = (info.st_dev, info.st_ino)
    journal.size = len(data)
    header = MAGIC + model.identity.encode() + b"\n"
    # Its section: from the line naming this snapshot, the first or one a fold appended
    start = 0 if data.startswith(header) else data.find(b"\n" + header) + 1 or -1
    if start < 0:
        journal.stale = bool(data)
        return journal
    if model.version < 3:
        raise ModelFileError(f"journal '{name}' is corrupt (it follows a model file of "
                             f"format {model.version}; only format 3 files have journals)")
    journal.start = start
    _records(journal, data, start + len(header), model, name)
    return journal


def _records(journal: Journal, data: bytes, offset: int, model: ModelFile, name: str) -> None:
    """The committed records of ``data`` from byte ``offset`` (where a record starts) into
    ``journal``: its documents, constants and end (offsets in ``data``)."""
    pending: list[dict] = []
    journal.end = offset
    for line in data[offset:].split(b"\n")[:-1]:  # the last piece has no break: cut short
        crc, _, body = line.partition(b" ")
        if len(crc) != 8 or crc != b"%08x" % zlib.crc32(body):
            break  # cut short by a crash: this and what follows are not read
        offset += len(line) + 1
        try:
            record = json_loads(body.decode("utf-8"), "a record")
            problem = _problem(record, model)
        except (ValueError, RecursionError) as error:
            problem = str(error)
        if problem:
            raise ModelFileError(f"journal '{name}' is corrupt (record at byte "
                                 f"{offset - len(line) - 1}: {problem})")
        if record["op"] == "commit":
            if record["documents"] != len(pending):
                raise ModelFileError(f"journal '{name}' is corrupt (a commit of "
                                     f"{record['documents']} documents after {len(pending)})")
            journal.documents += pending
            journal.constants = (record["score_bias"], record["score_constants"])
            journal.learned_errors = record.get("learned_errors", journal.learned_errors)
            pending, journal.end = [], offset
        else:
            pending.append(record)


def _finite(x: Any, bits: int) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            and abs(x) < 2.0 ** bits)


def _problem(record: Any, model: ModelFile) -> str | None:
    """What is wrong with a record of the journal of ``model``, or None."""
    n_classes = len(model.meta["classes"])
    if not isinstance(record, dict) or record.get("op") not in ("learn", "unlearn", "commit"):
        return "not a record of a journal"
    if record["op"] == "commit":
        if set(record) - {"learned_errors"} != _COMMIT:
            return f"a commit has the keys {sorted(_COMMIT)}, and learned_errors or not"
        problem = ("learned_errors" in record
                   and learned_errors_problem(record["learned_errors"]))
        if problem:
            return problem
        bias, constants = record["score_bias"], record["score_constants"]
        if not (isinstance(bias, list) and len(bias) == n_classes
                and all(_finite(b, SCORE_BITS) for b in bias)):
            return f"score_bias must be {n_classes} numbers below 2**{SCORE_BITS} in size"
        if not (isinstance(constants, list) and len(constants) == 2 * n_classes
                and all(_finite(a, LOG_BITS) for a in constants[:n_classes])
                and all(_finite(b, SCORE_BITS) and b <= -0.5 for b in constants[n_classes:])):
            return "score_constants out of their ranges"
        documents = record["documents"]
        return None if isinstance(documents, int) and documents >= 0 else "documents: a count"
    if set(record) != _KEYS:
        return f"a document has the keys {sorted(_KEYS)}"
    c, digest, weight = record["class"], record["digest"], record["weight"]
    if not (isinstance(c, int) and not isinstance(c, bool) and 0 <= c < n_classes):
        return f"class {c!r} is not a class number of the model (0 to {n_classes - 1})"
    if not (isinstance(digest, str) and len(digest) == 16
            and all(ch in "0123456789abcdef" for ch in digest)):
        return "digest must be 16 hexadecimal digits"
    if not (_finite(weight, COUNT_BITS) and weight > 0):
        return f"weight must be a number > 0 below 2**{COUNT_BITS}"
    keys, values = record["keys"], record["values"]
    if not (isinstance(keys, list) and isinstance(values, list) and 0 < len(keys) <= MAX_KEYS
            and len(values) == len(keys)):
        return f"keys and values must be two lists of 1 to {MAX_KEYS} items, as many of each"
    # Loops in C (map over builtins): a message's few hundred items in microseconds.
    if not (set(map(type, values)) <= {float, int} and all(map(math.isfinite, values))
            and min(values) > 0 and max(values) < 2.0 ** COUNT_BITS):
        return f"values must be numbers > 0 below 2**{COUNT_BITS}"
    increasing = all(map(operator.lt, keys, keys[1:]))
    hash_bits = model.meta["params"].get("hash_bits")
    if hash_bits is not None:
        if not (set(map(type, keys)) == {int} and increasing and keys[0] >= 0
                and keys[-1] < 1 << hash_bits):
            return f"keys must be increasing column numbers below 2**{hash_bits}"
        return None
    if not (set(map(type, keys)) == {str} and increasing and keys[0]
            and max(map(len, keys)) <= MAX_TOKEN_LENGTH_LIMIT * 10 and "\n" not in "".join(keys)):
        return "keys must be distinct sorted terms, each one line"
    return None


def lines(documents: list[dict], constants: tuple[list[float], list[float]],
          learned_errors: tuple[int, int] = (0, 0)) -> bytes:
    """The records of one update: its documents (dicts as :class:`Journal` holds them), then
    its commit with the model's score constants after them, and its learners' count of
    messages and errors where there is one."""
    commit = {"op": "commit", "score_bias": constants[0], "score_constants": constants[1],
              "documents": len(documents)}
    if learned_errors[0]:
        commit["learned_errors"] = list(learned_errors)
    records = documents + [commit]
    import json  # the writer's alone: its readers (the mail filter's among them) need not
    out = bytearray()
    for record in records:
        body = json.dumps(record, separators=(",", ":")).encode("ascii")
        out += b"%08x " % zlib.crc32(body) + body + b"\n"
    return bytes(out)


def append(model_path: str | os.PathLike, identity: str, journal: Journal,
           records: bytes) -> int:
    """Append one update's ``records`` (:func:`lines`) to the journal of the model file at
    ``model_path``, whose snapshot is ``identity`` (a stale or missing journal is started
    anew, what follows its last commit cut off first), and make them durable; the
    journal's size after. Under the update lock (:func:`textnb.store.container.locked`)."""
    name = path_of(model_path)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOFOLLOW", 0), 0o644 & ~_umask())
    try:
        if journal.stale or journal.end == 0:  # started anew: the header, then the records
            header = MAGIC + identity.encode() + b"\n"
            os.ftruncate(fd, 0)
            records, start = header + records, 0
        else:
            os.ftruncate(fd, journal.end)
            start = journal.end
        _write(fd, records, start)
        return start + len(records)
    except OSError as error:
        raise OSError(error.errno, error.strerror, name) from None
    finally:
        os.close(fd)


def tail(model_path: str | os.PathLike, model: ModelFile, found: Journal
         ) -> tuple[bytes, int] | None:
    """(the committed records appended to the journal of the model file at ``model_path``
    since it was read as ``found`` (against ``model``), checked as :func:`read` checks them,
    the byte after them): what a fold that read the file and ``found`` has not folded. None
    if the journal is not the one read (replaced, or cut before ``found.end``). Under the
    update lock."""
    name = path_of(model_path)
    header = MAGIC + model.identity.encode() + b"\n"
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if ((info.st_dev, info.st_ino) != found.inode or info.st_size < found.end
                or os.pread(fd, len(header), found.start) != header):
            return None
        begin = max(found.end, found.start + len(header))
        data = os.pread(fd, info.st_size - begin, begin)
    finally:
        os.close(fd)
    appended = Journal()
    _records(appended, data, 0, model, name)
    return data[:appended.end], begin + appended.end


def carry(model_path: str | os.PathLike, end: int, identity: str, records: bytes) -> None:
    """Append to the journal of the model file at ``model_path``, after its last commit
    (``end``), a section for the snapshot ``identity`` holding ``records``, made durable:
    the journal of both files, the old one's readers stopping at its first line, so that a
    fold can replace the file before it writes the new file's journal. Under the update
    lock."""
    name = path_of(model_path)
    fd = os.open(name, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.ftruncate(fd, end)
        _write(fd, MAGIC + identity.encode() + b"\n" + records, end)
    finally:
        os.close(fd)


def restart(model_path: str | os.PathLike, identity: str, records: bytes) -> None:
    """Replace the journal of the model file at ``model_path`` by one of the snapshot
    ``identity`` holding ``records`` (written and synced beside it, then renamed over it).
    Under the update lock."""
    name = path_of(model_path)
    directory, base = os.path.split(os.path.realpath(model_path))
    # A name the model file's writer removes once this process is gone (container.save)
    temporary = os.path.join(directory, f".{base}.{os.getpid()}.journal.textnb-tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOFOLLOW", 0), 0o644 & ~_umask())
    try:
        _write(fd, MAGIC + identity.encode() + b"\n" + records, 0)
    finally:
        os.close(fd)
    os.replace(temporary, name)


def _write(fd: int, data: bytes, start: int) -> None:
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], start + written)
    os.fsync(fd)


def remove(model_path: str | os.PathLike) -> None:
    """Delete the journal of the model file at ``model_path``: the file now holds it all."""
    try:
        os.unlink(path_of(model_path))
    except FileNotFoundError:
        pass


def size_of(model_path: str | os.PathLike) -> int:
    """The bytes of the journal of the model file at ``model_path`` (0 if none)."""
    try:
        return os.stat(path_of(model_path)).st_size
    except FileNotFoundError:
        return 0


_compactions: list = []  # the detached compactions this process started, reaped as it goes


def compact_detached(model_path: str | os.PathLike) -> None:
    """Start :func:`textnb.store.learning.compact` of the model file at ``model_path`` in a
    process of its own session (it outlives this one) and return at once. Its errors are not
    reported: the journal stays large, and the next learner tries again (at
    :data:`HARD_BYTES`, itself)."""
    import subprocess
    import sys
    _compactions[:] = [p for p in _compactions if p.poll() is None]
    _compactions.append(subprocess.Popen(
        [sys.executable, "-m", "textnb.store.learning", os.fspath(model_path),
         str(COMPACT_BYTES)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True))


def replay_plain(model: ModelFile, values: dict[str, Any], journal: Journal) -> Touched:
    """For the mail filter's scorer: a text classifier's plain values (:meth:`ModelFile.plain`)
    with ``journal``'s committed documents applied as :mod:`textnb.incremental` replays them
    for :func:`~textnb.store.text_model.load_model` — class_count, score_bias and
    score_constants replaced — and the terms they touched (:class:`Touched`). ModelFileError
    for a document unlearned that was not learned as its class."""
    touched = Touched(values, model.meta["params"]["model"] == "bernoulli")
    if not journal.documents:
        return touched
    class_count = list(values["class_count"])
    learned = None  # the documents learned, (digest, class) → copies: asked only to unlearn
    if any(record["op"] == "unlearn" for record in journal.documents):
        from collections import Counter

        from .plain import plain_array
        learned = Counter(zip(plain_array(model.raw["digests"]), values["digest_classes"]))
    for record in journal.documents:
        c, unlearn = record["class"], record["op"] == "unlearn"
        if learned is not None:
            key = (int(record["digest"], 16), c)
            if unlearn and not learned[key]:
                raise ModelFileError(f"journal '{path_of(model.name)}' is corrupt (it unlearns "
                                     f"a document never learned as class {c})")
            learned[key] += -1 if unlearn else 1
        touched.note(record)
        weight = record["weight"]
        left = class_count[c] - weight if unlearn else class_count[c] + weight
        class_count[c] = 0.0 if unlearn and left < TOLERANCE else left
    values["class_count"] = class_count
    values["score_bias"], values["score_constants"] = journal.constants
    return touched


# Counts this close to 0 after a document is unlearned are 0 (textnb.incremental's).
TOLERANCE = 1e-9


class Touched:
    """The terms a journal's documents touched (str), each term's counts worked out when first
    asked for: ``touched[term]`` is (its classes, their counts), none where no document has
    it any more. Most of a journal's terms are never asked for: a message holds few of them."""

    def __init__(self, values: dict[str, Any], binary: bool) -> None:
        self.values, self.binary = values, binary
        self.records: list[tuple[int, float, bool, dict]] = []
        self.rows: dict[str, tuple[list[int], list[float]]] = {}
        self.terms: set[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.records)

    def __contains__(self, term: str) -> bool:
        if self.terms is None:
            self.terms = set().union(*(found for _, _, _, found in self.records))
        return term in self.terms

    def note(self, record: dict) -> None:
        # term → value as a dict made in C: a message asks for a few of a journal's terms.
        self.records.append((record["class"], record["weight"], record["op"] == "unlearn",
                             dict(zip(record["keys"], record["values"]))))

    def add(self, record: dict) -> None:
        """A document learned or unlearned after the journal's (an update's own): its terms'
        counts are worked out again when next asked for."""
        self.note(record)
        for term in record["keys"]:
            self.rows.pop(term, None)
        if self.terms is not None:
            self.terms.update(record["keys"])

    def __getitem__(self, term: str) -> tuple[list[int], list[float]]:
        found = self.rows.get(term)
        if found is None:
            row = self._snapshot(term.encode("utf-8", "surrogatepass"))
            for c, weight, unlearn, values in self.records:
                value = values.get(term)
                if value is None:
                    continue
                # weight × value as numpy multiplies the row (1 for presence), then added or
                # taken back; what is within the tolerance of 0, or below, is 0
                amount = weight * (1.0 if self.binary else float(value))
                if unlearn:
                    left = row[c] - amount
                    row[c] = left if left >= TOLERANCE else 0.0
                else:
                    row[c] += amount
            found = self.rows[term] = ([c for c, n in enumerate(row) if n],
                                       [n for n in row if n])
        return found

    def _snapshot(self, name: bytes) -> list[float]:
        """The snapshot's counts of a term, one a class (0.0 where none; all 0 if no term)."""
        values = self.values
        lo = term_index(*values["terms"], name)
        row = [0.0] * len(values["class_count"])
        if lo >= 0:
            indptr, classes, counts = (values["count_indptr"], values["count_classes"],
                                       values["count_values"])
            for k in range(indptr[lo], indptr[lo + 1]):
                row[classes[k]] = float(counts[k])
        return row


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def steady(path: str | os.PathLike, read: Callable[[], T], tries: int = 8) -> T:
    """``read()`` of the model file at ``path`` and its journal, done again while either
    changed between its start and its end: a fold writes the file anew and then removes the
    journal, so a reader between the two would have the old file without its journal (the
    messages learned since missing). The last try is taken as it is."""
    for _ in range(tries - 1):
        seen = signature(path)
        found = read()
        if signature(path) == seen:
            return found
    return read()


def signature(path: str | os.PathLike) -> tuple:
    """What stat says of the model file and its journal: any write changes it."""
    found = []
    for name in (path, path_of(path)):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            found.append(None)
            continue
        found.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(found)
