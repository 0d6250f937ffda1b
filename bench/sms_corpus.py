"""The SMS Spam Collection as files, for ``python -m bench.spam --data`` and `textnb train`.

The collection (Almeida, Gómez Hidalgo & Yamakami, 2011: 5,574 English texts, 747 spam; UCI
Machine Learning Repository, https://archive.ics.uci.edu/dataset/228/sms+spam+collection) is
one file of ``label<TAB>text`` lines. Each text becomes a file of its own, numbered in the
file's order, under OUT/spam/ or OUT/easy_ham/ (the SpamAssassin layout bench.spam reads)::

    python -m bench.sms_corpus SMSSpamCollection /tmp/sms
    python -m bench.spam --data /tmp/sms --seed 0
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.common import args as options

PARTS = {"spam": "spam", "ham": "easy_ham"}


def write_corpus(collection: Path, out: Path) -> dict[str, int]:
    """Write each ``label<TAB>text`` line of ``collection`` to its own file; counts per label."""
    counts = dict.fromkeys(PARTS, 0)
    for part in PARTS.values():
        (out / part).mkdir(parents=True, exist_ok=True)
    for number, line in enumerate(collection.read_text(encoding="utf-8").splitlines(), 1):
        label, tab, text = line.partition("\t")
        if not tab or label not in PARTS:
            raise ValueError(f"{collection}:{number}: not 'ham' or 'spam', a tab, then the text")
        counts[label] += 1
        (out / PARTS[label] / f"{counts[label]:05d}").write_text(text + "\n", encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("collection", type=Path, help="the SMSSpamCollection file")
    parser.add_argument("out", type=Path, help="directory to write spam/ and easy_ham/ under")
    args = parser.parse_args(argv)
    try:
        counts = write_corpus(args.collection, args.out)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"bench.sms_corpus: error: {error}", file=sys.stderr)
        return 1
    print(f"{counts['spam']} spam, {counts['ham']} ham -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
