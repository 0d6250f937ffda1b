"""Unpack the full SpamAssassin public corpus and 20 Newsgroups (bydate) for benchmarks.

The corpora are downloaded from their canonical URLs (stdlib urllib only), or read from local
archives given with ``--from``, and unpacked into ``corpora/full/`` (git-ignored; never commit
it)::

    corpora/full/spamassassin/{easy_ham,easy_ham_2,hard_ham,spam,spam_2}/<message files>
    corpora/full/20news-bydate/{20news-bydate-train,20news-bydate-test}/<group>/<id>

Run::

    python -m bench.fetch_corpora                          # download everything
    python -m bench.fetch_corpora --corpus 20news          # only 20 Newsgroups
    python -m bench.fetch_corpora --from ../shared/corpora/spamassassin-public.tar.gz \\
        --from ../shared/corpora/20news-bydate.tar.gz      # offline, from local archives
    python -m bench.fetch_corpora --from ~/Downloads/20021010_spam.tar.bz2 --corpus spamassassin

``--from`` accepts the canonical per-part archives (``20021010_spam.tar.bz2``, ...) as well as
combined archives holding several parts; an archive is recognised by its top-level
directories (``spam/``, ``easy_ham/``, ``20news-bydate-train/``, ...), not by its name.
Parts already present are left alone unless ``--force`` is given. Extraction is safe
(bench.common.archives): only regular files and directories are unpacked, no member may leave
the target directory, and the ``cmds`` file shipped in each SpamAssassin directory (a shell
script, not a message) is skipped. The studies use ``corpora/full/`` when it is there; without
it they unpack the archives of ../shared/corpora into a cache themselves.

Exit status: 0 on success, 1 on any error (one line on stderr), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import posixpath
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

from bench.common import BenchError, args as options
from bench.common.archives import CORPORA, PART_CORPUS, part_dir, recognised, unpack
from bench.common.corpora import FULL

TIMEOUT = 60  # seconds without data before a download fails


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--dest", type=Path, default=FULL,
                        help=f"target directory (default: {FULL})")
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
        return options.run("fetch_corpora", lambda: fetch(args))
    except KeyboardInterrupt:
        print("fetch_corpora: interrupted", file=sys.stderr)
        return 1


def fetch(args: argparse.Namespace) -> None:
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    dest = args.dest
    found: set[str] = set()
    for path in args.sources:
        if not path.is_file():
            raise BenchError(f"'{path}': no such archive file")
        found |= recognised(path)
    if args.corpus is None and args.sources:
        corpora = [corpus for corpus in CORPORA if any(PART_CORPUS[p] == corpus for p in found)]
    else:
        corpora = list(CORPORA) if args.corpus in (None, "all") else [args.corpus]
    wanted = [part for corpus in corpora for part in CORPORA[corpus][1]]
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BenchError(f"cannot create '{dest}': {error.strerror or error}") from None

    todo = [p for p in wanted if args.force or not part_dir(dest, p).is_dir()]
    for part in wanted:
        if part not in todo:
            say(f"{part}: already in {part_dir(dest, part)} (use --force to replace)")
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
            raise BenchError(f"the archives given with --from do not contain {', '.join(missing)} "
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
            raise BenchError(f"the downloaded archives did not contain {', '.join(missing)}")
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
        raise BenchError(f"cannot download {url}: HTTP {error.code} {error.reason} "
                         f"(use --from with a local copy)") from None
    except (urllib.error.URLError, OSError) as error:
        partial.unlink(missing_ok=True)
        reason = getattr(error, "reason", None) or getattr(error, "strerror", None) or error
        raise BenchError(f"cannot download {url}: {reason} (offline? use --from with a local "
                         f"copy of the archive)") from None
    partial.replace(target)
    return target


if __name__ == "__main__":
    sys.exit(main())
