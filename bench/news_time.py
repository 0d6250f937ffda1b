#!/usr/bin/env python3
"""20 Newsgroups by time, on the training part alone: a check of defaults that the bydate test
split rewards and shuffled cross-validation cannot see.

The bydate test posts were written after the training posts, so a setting that learns threads
and authors (which shuffled folds share between training and held-out parts) scores well by
cross-validation and worse on the test. Within each group of the training part the article
numbers (the file names) grow with time, so fitting on each group's first 70 % and scoring its
last 30 % is a validation by time that uses no test post. Printed per row: that accuracy, and
the bydate test accuracy of the same settings fitted on the whole training part (for the
record; settings are chosen by the first).

Run (``--settings`` adds a row of TextClassifier settings, Python literals)::

    python scripts/bench_news_time.py --data corpora/full
    python scripts/bench_news_time.py --data corpora/full --settings tf=log --settings alpha=0.1
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textnb import TextClassifier  # noqa: E402
from textnb.documents import read_documents  # noqa: E402


def load(directory: Path) -> tuple[list, np.ndarray, np.ndarray]:
    """The parsed posts under directory, their groups, and their article numbers."""
    docs = list(read_documents([str(directory)], on_error=lambda *_: None))
    groups = np.array([Path(d.source).parent.name for d in docs])
    numbers = np.array([int(Path(d.source).name) for d in docs])
    return docs, groups, numbers


def later(groups: np.ndarray, numbers: np.ndarray, share: float = 0.3) -> np.ndarray:
    """Mask of each group's last ``share`` of posts by article number."""
    held = np.zeros(groups.size, dtype=bool)
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        ordered = members[np.argsort(numbers[members], kind="stable")]
        held[ordered[int(round((1 - share) * ordered.size)):]] = True
    return held


def parse_setting(spec: str) -> tuple[str, object]:
    key, _, value = spec.partition("=")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="holding 20news-bydate-train/ and 20news-bydate-test/")
    parser.add_argument("--settings", action="append", default=[], metavar="K=V[,K=V]",
                        help="a row of TextClassifier settings (repeatable)")
    args = parser.parse_args(argv)
    train, groups, numbers = load(args.data / "20news-bydate-train")
    test, test_groups, _ = load(args.data / "20news-bydate-test")
    held = later(groups, numbers)
    print(f"{len(train)} training posts ({int(held.sum())} the later 30 % of their group), "
          f"{len(test)} test posts")
    rows = [{}] + [dict(parse_setting(s) for s in re.split(r",(?![^()]*\))", spec))
                   for spec in args.settings]
    print(f"{'settings':<48} {'by time':>8} {'test':>8}  seconds")
    for settings in rows:
        start = time.perf_counter()
        early = [d for d, h in zip(train, held) if not h]
        model = TextClassifier(**settings).fit(early, list(groups[~held]))
        by_time = float(np.mean(model.predict([d for d, h in zip(train, held) if h])
                                == groups[held]))
        model = TextClassifier(**settings).fit(train, list(groups))
        accuracy = float(np.mean(model.predict(test) == test_groups))
        name = ", ".join(f"{k}={v!r}" for k, v in settings.items()) or "defaults"
        print(f"{name:<48} {by_time:>8.4f} {accuracy:>8.4f}  {time.perf_counter() - start:.0f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
