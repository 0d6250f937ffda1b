"""The options the studies share, and errors for people: one line on stderr, exit status 1."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Callable

from bench.common import BenchError
from bench.common.corpora import NEWS_ARCHIVE, SPAM_ARCHIVE


def parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The parser of ``python -m bench.NAME`` (``module`` is its __name__): its --help shows the
    study's docstring, which says what it measures."""
    if module == "__main__":   # run by python -m: the module's own name is its spec's
        module = sys.modules["__main__"].__spec__.name
    return argparse.ArgumentParser(prog=f"python -m {module}", description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def spam_data(parser: argparse.ArgumentParser, flag: str = "--data") -> None:
    parser.add_argument(flag, type=Path, metavar="DIR",
                        help="the SpamAssassin directory (spam/ spam_2/ easy_ham/ easy_ham_2/ "
                             "hard_ham/, or spam/ and ham/; default: corpora/full/spamassassin, "
                             "else the archive unpacked into the cache)")
    parser.add_argument("--archive", type=Path, metavar="FILE",
                        help=f"a SpamAssassin archive to unpack (into the cache) when no "
                             f"directory is given (default {SPAM_ARCHIVE})")


def news_data(parser: argparse.ArgumentParser, flag: str = "--data",
              archive: bool = True) -> None:
    parser.add_argument(flag, type=Path, metavar="DIR",
                        help="the directory holding 20news-bydate-train/ and 20news-bydate-test/ "
                             "(default: corpora/full/20news-bydate, else the archive unpacked "
                             "into the cache)")
    if archive:
        parser.add_argument("--archive", type=Path, metavar="FILE",
                            help=f"20news-bydate.tar.gz to unpack (into the cache) when no "
                                 f"directory is given (default {NEWS_ARCHIVE})")


def no_command(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-command", dest="command", action="store_false",
                        help="skip the rows of the command at its defaults (textnb train / "
                             "classify in fresh processes)")


def parse_settings(specs: list[str]) -> dict:
    """TextClassifier settings from ``key=value`` strings; values are Python literals
    (``alpha=0.1``, ``ngram_range=(1,2)``, ``norm=None``), anything else a string."""
    settings = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise BenchError(f"settings are key=value, not {spec!r}")
        try:
            settings[key.strip()] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            settings[key.strip()] = value
    return settings


def run(prog: str, work: Callable[[], int | None]) -> int:
    """``work()``'s exit status (0 for None); a BenchError is one line on stderr and 1."""
    try:
        return work() or 0
    except BenchError as error:
        print(f"{prog}: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
