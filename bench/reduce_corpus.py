"""Rewrite a mail corpus in the shapes of corpora we do not have, to see the defaults there.

The mail corpora the defaults are judged on are not all full RFC 822 mail: a mailing-list
corpus keeps a Subject line and a body (Ling-Spam's "bare" form: lower case, words and
punctuation spaced), an SMS corpus has no headers and 160 characters. This writes a copy of a
SpamAssassin-layout corpus (one directory per part: easy_ham/, spam/, ...) in one of those
shapes (bench.common.corpora.reduce), file for file, so that ``python -m bench.spam --data
OUT`` compares textnb (the command and the library) and bogofilter on it:

* ``subject-body``: ``Subject: <subject>`` and the text of the text/* parts (HTML tags
  dropped), lower-cased, each word and punctuation mark separated by a space;
* ``short``: the text parts' first 160 characters, white space collapsed, no header.

Run (from the repository root)::

    python -m bench.reduce_corpus corpora/full/spamassassin /tmp/subject-body subject-body
    python -m bench.spam --data /tmp/subject-body
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.common import BenchError, args as options
from bench.common.corpora import SHAPES, reduce


def write(source: Path, target: Path, shape: str) -> int:
    """Each file of each part of ``source``, reduced to ``shape``, under ``target``; how many."""
    if not source.is_dir():
        raise BenchError(f"'{source}' is not a directory")
    count = 0
    for part in sorted(p for p in source.iterdir() if p.is_dir()):
        (target / part.name).mkdir(parents=True, exist_ok=True)
        for path in sorted(part.iterdir()):
            if path.is_file():
                (target / part.name / path.name).write_text(reduce(path.read_bytes(), shape),
                                                            encoding="utf-8")
                count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("source", type=Path, help="a directory of parts, each of message files")
    parser.add_argument("target", type=Path, help="where the reduced copy goes (created)")
    parser.add_argument("shape", choices=SHAPES)
    args = parser.parse_args(argv)

    def work() -> None:
        count = write(args.source, args.target, args.shape)
        print(f"{count} messages written to {args.target} ({args.shape})")
    return options.run("bench.reduce_corpus", work)


if __name__ == "__main__":
    sys.exit(main())
