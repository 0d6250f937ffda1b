#!/usr/bin/env python3
"""Unpack the full SpamAssassin public corpus and 20 Newsgroups (bydate) for benchmarks.

The corpora are downloaded from their canonical URLs (stdlib urllib only), or read from local
archives given with ``--from``, and unpacked into ``corpora/full/`` (git-ignored; never commit
it)::

    corpora/full/spamassassin/{easy_ham,easy_ham_2,hard_ham,spam,spam_2}/<message files>
    corpora/full/20news-bydate/{20news-bydate-train,20news-bydate-test}/<group>/<id>

Run::

    python scripts/fetch_corpora.py                        # download everything
    python scripts/fetch_corpora.py --corpus 20news        # only 20 Newsgroups
    python scripts/fetch_corpora.py --from /work/shared/corpora/spamassassin-public.tar.gz \\
        --from /work/shared/corpora/20news-bydate.tar.gz   # offline, from local archives
    python scripts/fetch_corpora.py --from ~/Downloads/20021010_spam.tar.bz2 --corpus spamassassin

``--from`` accepts the canonical per-part archives (``20021010_spam.tar.bz2``, ...) as well as
combined archives holding several parts; an archive is recognised by its top-level
directories (``spam/``, ``easy_ham/``, ``20news-bydate-train/``, ...), not by its name.
Parts already present are left alone unless ``--force`` is given. Extraction is safe: only
regular files and directories are unpacked, no member may leave the target directory, and
tarfile's ``filter="data"`` is used where Python has it. The ``cmds`` file shipped in each
SpamAssassin directory (a shell script, not a message) is skipped.

Exit status: 0 on success, 1 on any error (one line on stderr), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import posixpath
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

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
DEFAULT_DEST = Path(__file__).resolve().parent.parent / "corpora" / "full"
TIMEOUT = 60  # seconds without data before a download fails


class FetchError(Exception):
    """A problem worth one line on stderr."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fetch_corpora.py",
        description="Unpack the SpamAssassin public corpus and 20 Newsgroups (bydate) into a "
                    "directory, downloading them or reading local archives.")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST,
                        help=f"target directory (default: {DEFAULT_DEST})")
    parser.add_argument("--corpus", choices=["all", *CORPORA], default=None,
                        help="which corpus to unpack (default: all when downloading; with "
                             "--from, the corpora found in the archives, and a part missing "
                             "from them is then only a warning)")
    parser.add_argument("--from", dest="sources", metavar="PATH", action="append", type=Path,
                        default=[],
                        help="a local .tar.gz/.tar.bz2 archive to unpack instead of downloading "
                             "(repeatable); with --from nothing is downloaded")
    parser.add_argument("--force", action="store_true",
                        help="replace parts that are already unpacked")
    parser.add_argument("--keep-archives", action="store_true",
                        help="keep downloaded archives in DEST/.downloads")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    args = parser.parse_args(argv)
    try:
        fetch(args)
    except FetchError as error:
        print(f"fetch_corpora: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fetch_corpora: interrupted", file=sys.stderr)
        return 1
    return 0


def fetch(args: argparse.Namespace) -> None:
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    dest = args.dest
    found: set[str] = set()
    for path in args.sources:
        if not path.is_file():
            raise FetchError(f"'{path}': no such archive file")
        found |= _recognised(path)
    if args.corpus is None and args.sources:
        corpora = [corpus for corpus in CORPORA if any(PART_CORPUS[p] == corpus for p in found)]
    else:
        corpora = list(CORPORA) if args.corpus in (None, "all") else [args.corpus]
    wanted = [part for corpus in corpora for part in CORPORA[corpus][1]]
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise FetchError(f"cannot create '{dest}': {error.strerror or error}") from None

    todo = [p for p in wanted if args.force or not _part_dir(dest, p).is_dir()]
    for part in wanted:
        if part not in todo:
            say(f"{part}: already in {_part_dir(dest, part)} (use --force to replace)")
    if not todo:
        return

    if args.sources:
        unpacked = set()
        for path in args.sources:
            unpacked |= unpack(path, dest, set(todo) - unpacked, say)
        missing = [p for p in todo if p not in unpacked]
        if missing and args.corpus is None:
            print(f"fetch_corpora: warning: still missing {', '.join(missing)} (give their "
                  f"archives with --from, or run without --from to download)", file=sys.stderr)
        elif missing:
            raise FetchError(f"the archives given with --from do not contain {', '.join(missing)} "
                             f"(give their archives, or run without --from to download)")
        return

    downloads = dest / ".downloads"
    downloads.mkdir(exist_ok=True)
    urls = list(dict.fromkeys(CORPORA[PART_CORPUS[p]][1][p] for p in todo))
    try:
        unpacked = set()
        for url in urls:
            archive = download(url, downloads, say)
            unpacked |= unpack(archive, dest, set(todo) - unpacked, say)
            if not args.keep_archives:
                archive.unlink()
        missing = [p for p in todo if p not in unpacked]
        if missing:
            raise FetchError(f"the downloaded archives did not contain {', '.join(missing)}")
    finally:
        if not args.keep_archives:
            shutil.rmtree(downloads, ignore_errors=True)


def download(url: str, directory: Path, say) -> Path:
    """Fetch ``url`` into ``directory`` (via a .part file, renamed when complete)."""
    target = directory / posixpath.basename(url)
    if target.is_file():
        say(f"{target.name}: using the copy in {directory}")
        return target
    partial = target.with_name(target.name + ".part")
    say(f"downloading {url}")
    request = urllib.request.Request(url, headers={"User-Agent": "textnb-fetch-corpora/1"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response, \
                open(partial, "wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except urllib.error.HTTPError as error:
        partial.unlink(missing_ok=True)
        raise FetchError(f"cannot download {url}: HTTP {error.code} {error.reason} "
                         f"(use --from with a local copy)") from None
    except (urllib.error.URLError, OSError) as error:
        partial.unlink(missing_ok=True)
        reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
        raise FetchError(f"cannot download {url}: {reason} (offline? use --from with a local "
                         f"copy of the archive)") from None
    partial.replace(target)
    return target


def unpack(archive: Path, dest: Path, parts: set[str], say) -> set[str]:
    """Unpack the wanted ``parts`` found in ``archive`` under ``dest``; returns those unpacked.

    Everything is first extracted into a temporary directory inside ``dest`` and each part is
    then renamed into place, so an interrupted run never leaves a half-filled part behind.
    """
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as error:
        raise FetchError(_unreadable(archive, error)) from None
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as error:
            raise FetchError(f"'{archive}' is damaged ({error})") from None
        recognised = {_top(m.name) for m in members} & set(PART_CORPUS)
        if not recognised:
            raise FetchError(f"'{archive}' holds no SpamAssassin or 20 Newsgroups directory "
                             f"(expected one of {', '.join(PART_CORPUS)})")
        chosen = recognised & parts
        if not chosen:
            say(f"{archive.name}: nothing needed ({', '.join(sorted(recognised))} already done)")
            return set()
        selected = []
        for member in members:
            top = _top(member.name)
            if top not in chosen:
                continue
            _check_member(archive, member)
            if member.isfile() and posixpath.basename(member.name) in SKIPPED_FILES \
                    and PART_CORPUS[top] == "spamassassin":
                continue
            selected.append(member)
        staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=dest))
        try:
            for member in selected:
                _extract(tar, member, staging)
            for part in sorted(chosen):
                source = staging / part
                if not source.is_dir():
                    source.mkdir()
                target = _part_dir(dest, part)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists():
                    shutil.rmtree(target)
                source.replace(target)
                n_files = sum(len(files) for _, _, files in os.walk(target))
                say(f"{part}: {n_files} files from {archive.name} → {target}")
        except (tarfile.TarError, OSError, EOFError) as error:
            raise FetchError(f"cannot unpack '{archive}': {error}") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return chosen


def _recognised(archive: Path) -> set[str]:
    """The corpus parts (top-level directories) in ``archive``."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            found = {_top(m.name) for m in tar} & set(PART_CORPUS)
    except (tarfile.TarError, OSError, EOFError) as error:
        raise FetchError(_unreadable(archive, error)) from None
    if not found:
        raise FetchError(f"'{archive}' holds no SpamAssassin or 20 Newsgroups directory "
                         f"(expected one of {', '.join(PART_CORPUS)})")
    return found


def _unreadable(archive: Path, error: Exception) -> str:
    if isinstance(error, tarfile.ReadError):
        return f"'{archive}' is not a tar archive (.tar, .tar.gz, .tar.bz2 or .tar.xz)"
    return f"cannot read '{archive}': {getattr(error, 'strerror', None) or error}"


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, staging: Path) -> None:
    if hasattr(tarfile, "data_filter"):  # Python 3.12, and 3.8.17+/3.9.17+/3.10.12+/3.11.4+
        try:
            tar.extract(member, staging, filter="data")
        except tarfile.FilterError as error:
            raise FetchError(f"refusing unsafe archive member '{member.name}' ({error})") from None
    else:
        tar.extract(member, staging, set_attrs=False)


def _check_member(archive: Path, member: tarfile.TarInfo) -> None:
    """Refuse links, devices, absolute paths and '..': nothing may land outside the target."""
    name = member.name
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        raise FetchError(f"'{archive}': refusing unsafe member path '{name}'")
    if not (member.isfile() or member.isdir()):
        raise FetchError(f"'{archive}': refusing member '{name}' "
                         f"(only regular files and directories are unpacked)")


def _top(name: str) -> str:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    return parts[0] if parts else ""


def _part_dir(dest: Path, part: str) -> Path:
    return dest / CORPORA[PART_CORPUS[part]][0] / part


if __name__ == "__main__":
    sys.exit(main())
