"""Unpacking the corpus archives safely: the SpamAssassin public corpus and 20 Newsgroups
(bydate), recognised by their top-level directories (``spam/``, ``easy_ham/``,
``20news-bydate-train/``, ...), not by their names.

Only regular files and directories are unpacked, no member may leave the target directory
(tarfile's ``filter="data"`` where Python has it), and the ``cmds`` shell script shipped in each
SpamAssassin directory is skipped. Each part is extracted into a staging directory and renamed
into place, so an interrupted run never leaves a half-filled part behind.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Callable

from bench.common import BenchError

SPAMASSASSIN_URL = "https://spamassassin.apache.org/old/publiccorpus/"
TWENTY_NEWS_URL = "http://qwone.com/~jason/20Newsgroups/"

# corpus → (subdirectory of the destination, {part (top-level directory) → archive URL})
CORPORA = {
    "spamassassin": ("spamassassin", {
        "easy_ham": SPAMASSASSIN_URL + "20021010_easy_ham.tar.bz2",
        "easy_ham_2": SPAMASSASSIN_URL + "20030228_easy_ham_2.tar.bz2",
        "hard_ham": SPAMASSASSIN_URL + "20021010_hard_ham.tar.bz2",
        "spam": SPAMASSASSIN_URL + "20021010_spam.tar.bz2",
        "spam_2": SPAMASSASSIN_URL + "20030228_spam_2.tar.bz2",
    }),
    "20news": ("20news-bydate", {
        "20news-bydate-train": TWENTY_NEWS_URL + "20news-bydate.tar.gz",
        "20news-bydate-test": TWENTY_NEWS_URL + "20news-bydate.tar.gz",
    }),
}
PART_CORPUS = {part: corpus for corpus, (_, parts) in CORPORA.items() for part in parts}
SKIPPED_FILES = {"cmds"}  # SpamAssassin's per-directory shell script


def part_dir(dest: Path, part: str) -> Path:
    """Where ``part`` goes under ``dest``: dest/spamassassin/spam, dest/20news-bydate/..."""
    return dest / CORPORA[PART_CORPUS[part]][0] / part


def unpack(archive: Path, dest: Path, parts: set[str],
           say: Callable[..., None] = lambda *a: None) -> set[str]:
    """Unpack the wanted ``parts`` found in ``archive`` under ``dest`` (see :func:`part_dir`);
    returns those unpacked."""
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as error:
        raise BenchError(unreadable(archive, error)) from None
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as error:
            raise BenchError(f"'{archive}' is damaged ({error})") from None
        found = {top(m.name) for m in members} & set(PART_CORPUS)
        if not found:
            raise BenchError(f"'{archive}' holds no SpamAssassin or 20 Newsgroups directory "
                             f"(expected one of {', '.join(PART_CORPUS)})")
        chosen = found & parts
        if not chosen:
            say(f"{archive.name}: nothing needed ({', '.join(sorted(found))} already done)")
            return set()
        selected = []
        for member in members:
            part = top(member.name)
            if part not in chosen:
                continue
            _check_member(archive, member)
            if member.isfile() and posixpath.basename(member.name) in SKIPPED_FILES \
                    and PART_CORPUS[part] == "spamassassin":
                continue
            selected.append(member)
        dest.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=dest))
        try:
            for member in selected:
                _extract(tar, member, staging)
            for part in sorted(chosen):
                source = staging / part
                if not source.is_dir():
                    source.mkdir()
                target = part_dir(dest, part)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists():
                    shutil.rmtree(target)
                source.replace(target)
                n_files = sum(len(files) for _, _, files in os.walk(target))
                say(f"{part}: {n_files} files from {archive.name} → {target}")
        except (tarfile.TarError, OSError, EOFError) as error:
            raise BenchError(f"cannot unpack '{archive}': {error}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return chosen


def recognised(archive: Path) -> set[str]:
    """The corpus parts (top-level directories) in ``archive``."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            found = {top(m.name) for m in tar} & set(PART_CORPUS)
    except (tarfile.TarError, OSError, EOFError) as error:
        raise BenchError(unreadable(archive, error)) from None
    if not found:
        raise BenchError(f"'{archive}' holds no SpamAssassin or 20 Newsgroups directory "
                         f"(expected one of {', '.join(PART_CORPUS)})")
    return found


def unreadable(archive: Path, error: Exception) -> str:
    if isinstance(error, tarfile.ReadError):
        return f"'{archive}' is not a tar archive (.tar, .tar.gz, .tar.bz2 or .tar.xz)"
    return f"cannot read '{archive}': {getattr(error, 'strerror', None) or error}"


def top(name: str) -> str:
    """An archive member's top-level directory."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    return parts[0] if parts else ""


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, staging: Path) -> None:
    if hasattr(tarfile, "data_filter"):  # Python 3.12, and 3.8.17+/3.9.17+/3.10.12+/3.11.4+
        try:
            tar.extract(member, staging, filter="data")
        except tarfile.FilterError as error:
            raise BenchError(f"refusing unsafe archive member '{member.name}' ({error})") from None
    else:
        tar.extract(member, staging, set_attrs=False)


def _check_member(archive: Path, member: tarfile.TarInfo) -> None:
    """Refuse links, devices, absolute paths and '..': nothing may land outside the target."""
    name = member.name
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        raise BenchError(f"'{archive}': refusing unsafe member path '{name}'")
    if not (member.isfile() or member.isdir()):
        raise BenchError(f"'{archive}': refusing member '{name}' "
                         f"(only regular files and directories are unpacked)")
