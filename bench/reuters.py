"""Reuters-21578 through the commands a user types, at their defaults.

The corpus is fetched once into the bench cache (a JSON copy of all 21,578 stories from the npm
registry, bench.common.corpora.reuters) and split as ModApte splits it by date; the JSON copy
lacks the attributes that leave out a few hundred stories, so the split holds 7,906 training
and 3,460 test stories with 95 topics against ModApte's 7,769, 3,019 and 90.

* ``multi``: ``textnb train --labels training.txt`` (``training/N topic topic``, Reuters'
  own ``cats.txt`` layout) and ``textnb classify --format json`` of the test stories:
  micro- and macro-F1 over the topics, labels given a story on average, wrong labels.
  Published on ModApte's 90 topics: micro-F1 0.80 for NB, 0.86 for an SVM (Yang & Liu, 1999).
* ``single``: the stories with one topic (59 topics in training), one directory a topic:
  ``textnb train`` and ``textnb train --tune``, then ``textnb classify``: accuracy, and what
  ``--tune`` chose by its cross-validation of the training stories (``textnb info``); beside
  them scikit-learn's ``TfidfVectorizer()`` + ``MultinomialNB(alpha=0.01)`` (its
  text-classification example's setting) and + ``LinearSVC()`` (where scikit-learn is
  installed; ``--no-sklearn`` leaves them out).

Run (from the repository root)::

    python -m bench.reuters                 # both
    python -m bench.reuters --only multi
    python -m bench.reuters --only single --no-tune
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import reuters
from bench.common.systems import command_info, command_run, has_sklearn
from bench.multilabel import command, library_rows, sklearn_rows
from textnb.evaluation.metrics import multilabel_summary
from textnb.multilabel import label_matrix


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--only", choices=["multi", "single"], help="run one part")
    parser.add_argument("--no-tune", action="store_true", help="single: leave out --tune")
    parser.add_argument("--no-sklearn", action="store_true",
                        help="single: leave out scikit-learn's references")
    parser.add_argument("--json-dir", type=Path, metavar="DIR",
                        help="the copy's JSON files already unpacked (default: the bench cache)")
    args = parser.parse_args(argv)
    return options.run("bench.reuters", lambda: run(args))


def run(args) -> None:
    with tempfile.TemporaryDirectory(prefix="reuters-") as scratch:
        if args.only in (None, "multi"):
            multi(Path(scratch) / "multi", args.json_dir)
        if args.only in (None, "single"):
            single(Path(scratch), args.json_dir, tune=not args.no_tune,
                   sklearn=not args.no_sklearn)


def multi(scratch: Path, given: Path | None) -> None:
    train_texts, train_labels, test_texts, test_labels = reuters("multi", given)
    scratch.mkdir()
    predicted, train_s, classify_s = command(train_texts, train_labels, test_texts, scratch)
    labels, Y_train = label_matrix(train_labels)
    index = {label: i for i, label in enumerate(labels)}

    def matrix(rows):
        out = np.zeros((len(rows), labels.size), dtype=bool)
        for i, row in enumerate(rows):
            out[i, [index[x] for x in row if x in index]] = True
        return out
    truth = matrix(test_labels)
    # The reference rows, in the same run: the library (its defaults and the one-vs-rest model
    # of before) and, when installed, scikit-learn's OvR(MultinomialNB) and TF-IDF LinearSVC.
    rows, ours, X_test, _ = library_rows(train_texts, train_labels, test_texts)
    if has_sklearn():
        sklearn_rows(rows, ours, train_texts, test_texts, X_test, Y_train)
    print(f"multi-label: {len(train_texts)} training, {len(test_texts)} test stories, "
          f"{labels.size} topics ({truth.sum() / len(truth):.2f} a test story)")
    print(f"  {'system':<52} {'micro-F1':>8} {'macro-F1':>8} {'labels':>6} {'wrong':>6} "
          f"{'fit s':>6} {'pred s':>6}")
    for name, guess, fit_s, predict_s in [("textnb train --labels + classify, defaults",
                                          matrix(predicted), train_s, classify_s), *rows]:
        summary = multilabel_summary(truth, guess, labels)
        print(f"  {name:<52} {summary['micro']['f1']:8.4f} {summary['macro']['f1']:8.4f} "
              f"{guess.sum() / len(guess):6.2f} {int((guess & ~truth).sum()):6d} "
              f"{fit_s:6.1f} {predict_s:6.1f}")
    print("  (labels: given a story, on average; wrong: labels given that the story does not "
          "carry; the command's times include start-up and reading the files)")


def single(scratch: Path, given: Path | None, tune: bool, sklearn: bool = True) -> None:
    train_texts, train_labels, test_texts, test_labels = reuters("single", given)
    groups: dict[str, list] = defaultdict(list)
    for text, (label,) in zip(train_texts, train_labels):
        groups[label].append(text)
    truth = np.array([label for (label,) in test_labels])
    print(f"single-label: {len(train_texts)} training stories in {len(groups)} topics, "
          f"{len(test_texts)} test stories")
    for name, extra in (("train", []), ("train --tune", ["--tune"]))[: 2 if tune else 1]:
        done = command_run(scratch, dict(groups), test_texts, ["-q", *extra])
        print(f"  textnb {name}: accuracy {np.mean(done.labels == truth):.4f}; "
              f"train {done.train.wall:.1f} s, peak {done.train.rss:.0f} MiB")
        chose = command_info(done.model).get("tuning")
        if chose:
            best = chose["best"]
            print(f"    chose {best['model']} α {best['alpha']:g}, words 1-"
                  f"{best['ngram_range'][1]}, stop words {best['stop_words']}, tf "
                  f"{best['tf']}, norm {best['norm'] or 'none'}: {chose['folds']}-fold CV "
                  f"{chose['metric']} {best['mean']:.4f} ± {best['sd']:.4f}")
    if sklearn:
        for name, accuracy, seconds in sklearn_single(train_texts, [l for (l,) in train_labels],
                                                      test_texts, truth):
            print(f"  scikit-learn {name}: accuracy {accuracy:.4f}; fit {seconds:.1f} s")


def sklearn_single(train_texts: list[bytes], labels: list[str], test_texts: list[bytes],
                   truth: np.ndarray) -> list[tuple[str, float, float]]:
    """(name, accuracy, fit seconds) of scikit-learn's TF-IDF + MultinomialNB(alpha=0.01) and
    TF-IDF + LinearSVC() at their defaults, the stories read as latin-1; [] without it."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.naive_bayes import MultinomialNB
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import LinearSVC
    except ImportError:
        print("  (scikit-learn not installed: its references left out)")
        return []
    train = [t.decode("latin-1") for t in train_texts]
    test = [t.decode("latin-1") for t in test_texts]
    found = []
    for name, model in (("TfidfVectorizer() + MultinomialNB(alpha=0.01)",
                         MultinomialNB(alpha=0.01)),
                        ("TfidfVectorizer() + LinearSVC()", LinearSVC())):
        began = time.perf_counter()
        pipeline = make_pipeline(TfidfVectorizer(), model).fit(train, labels)
        seconds = time.perf_counter() - began
        found.append((name, float(np.mean(pipeline.predict(test) == truth)), seconds))
    return found


if __name__ == "__main__":
    sys.exit(main())
