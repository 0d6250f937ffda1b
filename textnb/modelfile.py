"""dict of arrays + JSON metadata ⇄ one versioned model file, written atomically, read safely.

The file is a zip archive holding ``meta.json`` and one ``.npy`` file per array. Reading uses
``json`` and ``numpy.lib.format.read_array(allow_pickle=False)`` only, so a model file can never
execute code, and checks what the file declares before believing it: a regular file (a FIFO
would block, ``/dev/zero`` never ends), member sizes within the file and within a compression
ratio, each array's size equal to what its header declares, a format version this textnb
knows, and (for a text classifier) settings within bounds. Everything is read from one open
file, so a model replaced meanwhile is never half read. Writing goes to a temporary file in the
target's directory, then ``os.replace``: a reader sees the old model or the new one.

numpy is imported inside :func:`save` and :func:`load`: the mail filter's fast path
(:mod:`textnb.scorer`) shares the checks here without paying for it.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from contextlib import contextmanager
from pathlib import Path

from .errors import ModelFileError

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms, as in textnb.documents
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Iterator

FORMAT = "textnb-model"
# 1: the first format; 2: a text classifier's terms are an array of UTF-8 lines, no longer in
# meta.json; 3: its counts are stored by term, non-zero ones only, in the smallest exact type,
# and the weights the mail filter scores with follow from them (20 Newsgroups: 58 MB → 6.4 MB,
# scripts/bench_modelfile.py). Files of every version from 1 to VERSION are read.
VERSION = 3
TEXT_CLASSIFIER = "text-classifier"

# -- limits on what a file may declare ----------------------------------------------------------
# meta.json: version 1 kept the vocabulary there (500,000 terms of 20 Newsgroups ≈ 10 MB).
MAX_META_BYTES = 64 << 20
# The members of a file may declare at most this many times the file's size in all (plus
# INFLATION_SLACK bytes), checked before anything is inflated. textnb writes stored members
# (1x); a re-packed (deflated) SpamAssassin model inflates 2.9x in all — its int64 class
# numbers of the digests 280x, but each large array has an incompressible partner of its size
# (weights beside counts, digests beside their classes) — while a zip bomb inflates 1000x.
MAX_INFLATION = 20
INFLATION_SLACK = 1 << 20
# Settings a text classifier's file may hold: beyond these a tokenizer does absurd work
# (each word gives max_n n-grams of up to max_n words) for no benefit; papers stop at 3-5.
MAX_NGRAM = 10
MAX_TOKEN_LENGTH_LIMIT = 10_000
MAX_CLASSES = 100_000
MAX_JOBS = 4096
# Event models of :data:`textnb.classifier.MODELS` (tests/test_hostile_models.py checks they agree).
EVENT_MODELS = ("multinomial", "bernoulli", "complement")

# Temporary files of a save: ".<model>.<pid>.<random>.textnb-tmp". One a killed writer left is
# removed by a later save once its process is gone and it is older than STALE_SECONDS.
TMP_SUFFIX = ".textnb-tmp"
ZIP_STORED = 0  # zipfile.ZIP_STORED, without importing zipfile (8 ms) where it is not needed
STALE_SECONDS = 600


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


def check_header(meta: Any, name: str, kind: str) -> int:
    """The format version of a file whose meta.json holds ``meta``; ModelFileError unless it is
    a textnb model of ``kind`` in a version from 1 to VERSION."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"'{name}' is not a textnb model file")
    version = meta.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError(f"model file '{name}' is corrupt "
                             f"(format version {version!r} is not a number)")
    if version > VERSION:
        raise ModelFileError(f"model file '{name}' has format version {version}; "
                             f"this textnb reads up to {VERSION}: upgrade textnb")
    if version < 1:
        raise ModelFileError(f"model file '{name}' is corrupt (format version {version} "
                             f"does not exist; versions start at 1)")
    if meta.get("kind") != kind:
        raise ModelFileError(
            f"model file '{name}' holds a {meta.get('kind')!r} model, not a {kind!r} one")
    return version


def check_text_classifier(meta: dict, name: str) -> None:
    """ModelFileError naming the first setting of a text classifier's meta.json that is
    missing, of the wrong type or out of bounds."""
    problem = text_classifier_problem(meta)
    if problem:
        raise ModelFileError(f"model file '{name}' is corrupt ({problem})")


def text_classifier_problem(meta: dict) -> str | None:
    """What is wrong with a text classifier's classes, stop words or settings (meta.json's
    "classes", "stop_words", "params"), or None. Checked on load and before saving, so that
    textnb never writes a file it would refuse."""
    def number(value: Any) -> bool:
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value))

    def integer(value: Any, low: int, high: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high

    classes, p, stop_words = meta.get("classes"), meta.get("params"), meta.get("stop_words")
    if (not isinstance(classes, list) or not 1 <= len(classes) <= MAX_CLASSES
            or not all(isinstance(c, (str, bool)) or number(c) for c in classes)
            or len({str(c) for c in classes}) != len(classes)):
        return f"classes must be 1 to {MAX_CLASSES} distinct names or numbers"
    if not isinstance(stop_words, list) or not all(isinstance(w, str) for w in stop_words):
        return "stop words must be a list of strings"
    if not isinstance(p, dict):
        return "no settings"

    def ngram_range(value: Any) -> bool:
        return (isinstance(value, list) and len(value) == 2
                and all(integer(n, 1, MAX_NGRAM) for n in value) and value[0] <= value[1])

    ngrams = p.get("ngram_range")
    checks = [
        (p.get("model") in EVENT_MODELS, f"model must be one of {', '.join(EVENT_MODELS)}"),
        (number(p.get("alpha")) and p["alpha"] > 0, "alpha must be a finite number > 0"),
        (isinstance(p.get("fit_prior"), bool), "fit_prior must be true or false"),
        (p.get("class_prior") is None or (
            isinstance(p["class_prior"], list) and len(p["class_prior"]) == len(classes)
            and all(number(x) and x >= 0 for x in p["class_prior"])),
         "class_prior must be a non-negative number per class"),
        (p.get("stop_words") is None or isinstance(p["stop_words"], (str, list)),
         "stop_words must be a name or a list"),
        (p.get("stemmer") in (None, "porter", "snowball"), "stemmer must be porter or snowball"),
        # The setting (null: chosen by the documents) and, since it could be null, what was
        # counted (meta's own "ngram_range"; absent from older files: the setting's).
        ((ngrams is None or ngram_range(ngrams))
         and ngram_range(meta.get("ngram_range", ngrams)),
         f"ngram_range must be [min_n, max_n] with 1 <= min_n <= max_n <= {MAX_NGRAM}"),
        (isinstance(p.get("lowercase"), bool), "lowercase must be true or false"),
        (integer(p.get("max_token_length"), 1, MAX_TOKEN_LENGTH_LIMIT),
         f"max_token_length must be 1 to {MAX_TOKEN_LENGTH_LIMIT}"),
        (number(p.get("min_df")) and p["min_df"] >= 0, "min_df must be a number >= 0"),
        (number(p.get("max_df")) and p["max_df"] >= 0, "max_df must be a number >= 0"),
        (p.get("max_features") is None or integer(p["max_features"], 1, 2**63 - 1),
         "max_features must be a positive integer"),
        (p.get("tf") in ("raw", "log", "binary"), "tf must be raw, log or binary"),
        (p.get("norm") in (None, "l2"), "norm must be null or l2"),
        (p.get("n_jobs") is None or (integer(p["n_jobs"], -MAX_JOBS, MAX_JOBS) and p["n_jobs"]),
         f"n_jobs must be null or a number of processes from -{MAX_JOBS} to {MAX_JOBS}, not 0"),
        # How cutoffs are learned (absent from files older than learned cutoffs).
        (p.get("spam_class") is None or isinstance(p["spam_class"], str),
         "spam_class must be null or a class name"),
        (all(p.get(name, 0.0) is not None and number(p.get(name, 0.0)) and 0 <= p.get(name, 0.0) < 1
             for name in ("target_fpr", "target_fnr", "target_unsure")),
         "target rates must be in [0, 1)"),
        (integer(p.get("cutoff_folds", 2), 2, 1000), "cutoff_folds must be 2 to 1000"),
        (isinstance(p.get("keep_suspects", False), bool), "keep_suspects must be true or false"),
        (p.get("training", "full") in ("full", "on-error", "auto"),
         "training must be full, on-error or auto"),
        (number(p.get("margin", 0.0)) and p.get("margin", 0.0) >= 0, "margin must be >= 0"),
        (integer(p.get("max_passes", 1), 1, 1000), "max_passes must be 1 to 1000"),
        # The decision between two classes (absent from files older than it: "auto").
        (p.get("decision_threshold", "auto") in ("auto", None)
         or number(p["decision_threshold"]),
         "decision_threshold must be auto, null or a number"),
        (meta.get("decision_threshold") is None
         or (number(meta["decision_threshold"]) and len(classes) == 2),
         "its decision threshold must be a number, for two classes"),
    ]
    return next((what for ok, what in checks if not ok), None)


def save(path: str | os.PathLike, kind: str, meta: dict[str, Any],
         arrays: dict[str, Any]) -> None:
    """Write ``meta`` (JSON-able) and ``arrays`` (numeric, no objects) to ``path`` atomically.

    A symbolic link is written through: its target is replaced and the link stays.
    """
    import tempfile
    import zipfile

    import numpy as np

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
            # scoring a message take 7 (20 Newsgroups: 3.1 MB, not 6.4; scripts/bench_modelfile.py).
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
                # A fixed member date (zip's epoch): the same model is the same bytes, whenever
                # it is written (a dump loaded back, a backup compared).
                # Compact separators: the settings and cutoffs are most of a small model's file.
                archive.writestr(_member("meta.json"),
                                 json.dumps(header, ensure_ascii=False, separators=(",", ":")))
                for name, array in arrays.items():
                    with archive.open(_member(f"{name}.npy"), "w", force_zip64=True) as out:
                        np.lib.format.write_array(out, np.asarray(array), allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load(path: str | os.PathLike, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read a model file written by :func:`save`; raise ModelFileError naming the file if not."""
    import zipfile

    import numpy as np

    name = os.fspath(path)
    with open_model(name) as f:
        try:
            with zipfile.ZipFile(f) as archive:
                infos = {info.filename: info for info in archive.infolist()}
                _check_sizes(infos.values(), os.fstat(f.fileno()).st_size)
                if "meta.json" not in infos:
                    raise ModelFileError(f"'{name}' is not a textnb model file")
                if infos["meta.json"].file_size > MAX_META_BYTES:
                    raise ValueError(f"meta.json declares {infos['meta.json'].file_size} bytes, "
                                     f"over the {MAX_META_BYTES} allowed")
                meta = json.loads(archive.read("meta.json").decode("utf-8"))
                check_header(meta, name, kind)
                arrays = {}
                for entry, info in infos.items():
                    if entry.endswith(".npy"):
                        arrays[entry[:-4]] = _read_array(archive, info, np)
        except ModelFileError:
            raise
        except damaged_zip() as error:
            raise ModelFileError(f"model file '{name}' is truncated or corrupt ({error})") from None
    return meta, arrays


def damaged_zip() -> tuple[type[Exception], ...]:
    """What reading a damaged model file's zip and members raises: zipfile's BadZipFile,
    EOFError and OSError for a cut or scrambled file; ValueError and UnicodeDecodeError for
    bad members; NotImplementedError for a method zipfile lacks (Deflate64, from Windows);
    RecursionError for JSON nested deeper than the parser goes; RuntimeError for a member
    marked encrypted and zlib.error for stored bytes marked deflated (a flipped bit in the
    zip's directory: both found by fuzzing). zipfile is imported here, when it is needed."""
    import zipfile
    import zlib
    return (zipfile.BadZipFile, EOFError, OSError, ValueError, UnicodeDecodeError,
            NotImplementedError, RecursionError, RuntimeError, zlib.error)


def _check_sizes(infos, file_size: int) -> None:
    """ValueError unless every member lies within the file, a stored one declares its stored
    size, and all declare at most MAX_INFLATION times the file's size."""
    total = 0
    for info in infos:
        if info.header_offset + info.compress_size > file_size:
            raise ValueError(f"{info.filename} runs past the end of the file")
        if info.compress_type == ZIP_STORED and info.file_size != info.compress_size:
            raise ValueError(f"{info.filename} is stored in {info.compress_size} bytes "
                             f"but declares {info.file_size}")
        total += info.file_size
    if total > MAX_INFLATION * file_size + INFLATION_SLACK:
        raise ValueError(f"its members declare {total} bytes in a file of {file_size}, "
                         f"more than {MAX_INFLATION} times its size (a zip bomb?)")


def _read_array(archive, info, np) -> Any:
    """One .npy member as an array, its header checked against its declared size first, so
    that no array larger than the member is allocated."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise ValueError(f"{info.filename}: .npy format {version} is not read")
        size = math.prod(shape) * dtype.itemsize
        if dtype.hasobject or min(shape, default=0) < 0 or member.tell() + size != info.file_size:
            raise ValueError(f"{info.filename} holds {info.file_size} bytes, not an array of "
                             f"{dtype} of shape {shape}")
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


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
