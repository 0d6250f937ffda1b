"""dict of arrays + JSON metadata ⇄ one versioned model file, written atomically, read safely.

The file is a zip archive holding ``meta.json`` and one ``.npy`` file per array. Reading uses
``json`` and ``numpy.lib.format.read_array(allow_pickle=False)`` only, so a model file can never
execute code. Writing goes to a temporary file in the same directory, then ``os.replace``: a
reader sees the old model or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .errors import ModelFileError

FORMAT = "textnb-model"
# 2: a text classifier's terms are an array of UTF-8 lines, no longer in meta.json.
VERSION = 2


def save(path: str | os.PathLike, kind: str, meta: dict[str, Any],
         arrays: dict[str, np.ndarray]) -> None:
    """Write ``meta`` (JSON-able) and ``arrays`` (numeric, no objects) to ``path`` atomically."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    header = {"format": FORMAT, "version": VERSION, "kind": kind, **meta}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            # ZIP_STORED: arrays of floats barely compress and stored entries load faster.
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
                archive.writestr("meta.json", json.dumps(header, ensure_ascii=False))
                for name, array in arrays.items():
                    with archive.open(f"{name}.npy", "w", force_zip64=True) as out:
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


def load(path: str | os.PathLike, kind: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read a model file written by :func:`save`; raise ModelFileError naming the file if not."""
    name = os.fspath(path)
    try:
        with zipfile.ZipFile(name) as archive:
            try:
                meta = json.loads(archive.read("meta.json").decode("utf-8"))
            except KeyError:
                raise ModelFileError(f"'{name}' is not a textnb model file") from None
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ModelFileError(f"'{name}' is not a textnb model file")
            version = meta.get("version", 0)
            if not isinstance(version, int) or isinstance(version, bool):
                raise ModelFileError(f"model file '{name}' is corrupt "
                                     f"(format version {version!r} is not a number)")
            if version > VERSION:
                raise ModelFileError(
                    f"model file '{name}' has format version {version}; "
                    f"this textnb reads up to {VERSION}: upgrade textnb")
            if meta.get("kind") != kind:
                raise ModelFileError(
                    f"model file '{name}' holds a {meta.get('kind')!r} model, not a {kind!r} one")
            arrays = {}
            for entry in archive.namelist():
                if entry.endswith(".npy"):
                    with archive.open(entry) as f:
                        arrays[entry[:-4]] = np.lib.format.read_array(f, allow_pickle=False)
    except FileNotFoundError:
        raise ModelFileError(f"model file '{name}' does not exist") from None
    except IsADirectoryError:
        raise ModelFileError(f"model file '{name}' is a directory") from None
    except PermissionError:
        raise ModelFileError(f"model file '{name}' cannot be read: permission denied") from None
    except ModelFileError:
        raise
    # NotImplementedError: a zip compressed with a method zipfile lacks (Deflate64, from Windows).
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, UnicodeDecodeError,
            NotImplementedError) as error:
        raise ModelFileError(f"model file '{name}' is truncated or corrupt ({error})") from None
    return meta, arrays


@contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``<model>.lock`` (fcntl.flock) while updating the model, so
    that concurrent updates (``textnb learn`` from several deliveries, the daemon's TELL) are
    serialised; readers need no lock, since :func:`save` replaces the file atomically."""
    import fcntl
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
