"""20 Newsgroups by time, on the training part alone: a check of defaults that the bydate test
split rewards and shuffled cross-validation cannot see.

The bydate test posts were written after the training posts, so a setting that learns threads
and authors (which shuffled folds share between training and held-out parts) scores well by
cross-validation and worse on the test. Within each group of the training part the article
numbers (the file names) grow with time, so fitting on each group's first 70 % and scoring its
last 30 % is a validation by time that uses no test post. Printed per row: that accuracy, and
the bydate test accuracy of the same settings fitted on the whole training part (for the
record; settings are chosen by the first).

The first row is the command a user types, at its defaults (``--no-command`` leaves it out):
``textnb train`` of the earlier posts (one directory a group) and ``textnb classify`` of the later
ones, then ``textnb train 20news-bydate-train/`` and ``textnb classify 20news-bydate-test/``.

Run (from the repository root; ``--settings`` adds a row of TextClassifier settings, Python
literals)::

    python -m bench.news_time                         # corpora/full, else the shared archive
    python -m bench.news_time --data corpora/full --settings tf=log --settings alpha=0.1
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import news_dir
from bench.common.splits import later
from bench.common.systems import command_run
from textnb import TextClassifier
from textnb.documents.sources import read_documents


def load(directory: Path) -> tuple[list, np.ndarray, np.ndarray]:
    """The parsed posts under directory, their groups, and their article numbers."""
    docs = list(read_documents([str(directory)], on_error=lambda *_: None))
    groups = np.array([Path(d.source).parent.name for d in docs])
    numbers = np.array([int(Path(d.source).name) for d in docs])
    return docs, groups, numbers


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.news_data(parser)
    parser.add_argument("--settings", action="append", default=[], metavar="K=V[,K=V]",
                        help="a row of TextClassifier settings (repeatable)")
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.news_time", lambda: run(args))


def run(args) -> None:
    data = news_dir(args.data, args.archive)
    train, groups, numbers = load(data / "20news-bydate-train")
    test, test_groups, _ = load(data / "20news-bydate-test")
    held = later(groups, numbers)
    print(f"{len(train)} training posts ({int(held.sum())} the later 30 % of their group), "
          f"{len(test)} test posts")
    rows = [{}] + [options.parse_settings(re.split(r",(?![^()]*\))", spec))
                   for spec in args.settings]
    print(f"{'settings':<48} {'by time':>8} {'test':>8}  seconds")
    if args.command:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="news-time-") as scratch:
            def accuracy(docs, labels, held_docs, held_labels) -> float:
                run = command_run(Path(scratch), {g: [Path(d.source) for d, x in zip(docs, labels)
                                                      if x == g] for g in np.unique(labels)},
                                  [Path(d.source) for d in held_docs])
                return float(np.mean(run.labels == held_labels))
            by_time = accuracy([d for d, h in zip(train, held) if not h], groups[~held],
                               [d for d, h in zip(train, held) if h], groups[held])
            on_test = accuracy(train, groups, test, test_groups)
        print(f"{'the command (textnb train / classify), defaults':<48} {by_time:>8.4f} "
              f"{on_test:>8.4f}  {time.perf_counter() - start:.0f}", flush=True)
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


if __name__ == "__main__":
    sys.exit(main())
