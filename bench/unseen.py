"""Words unseen in training, dropped or scored: the command's model, each way, on six shapes.

``textnb train`` (at its defaults, and with ``--tune``) writes one model per corpus; its test
documents are then scored twice by that model file as ``textnb classify`` scores them
(:func:`textnb.store.text_model.load_model`), once with the words outside the vocabulary
dropped (``unseen="drop"``, the model files of before) and once scored as terms no class
counted (``unseen="score"``, as a cross-validation fold scores a held-out document's words its
training lacks: :attr:`textnb.nb.discrete.DiscreteNB.unseen_weight_`). Training is the same
both ways, so the two rows differ by the scoring alone; beside each, the CPU seconds of
``predict`` on the test documents (parsed already; in this process, the least of three
rounds, the two ways interleaved). Mail models drop them at the default
(``unseen="auto"``), every other model scores them.

Shapes (``--only`` picks some):

* ``reuters``: Reuters-21578's one-topic stories, ModApte-like date split (bench.reuters'
  ``single``): accuracy.
* ``newsgroups``: 20 Newsgroups bydate, train / test: accuracy.
* ``spam``: SpamAssassin, stratified 70/30 (seed 0, bench.spam's split): 1 − ROC AUC of
  the spam log-odds, the spam an oracle cutoff at 0.1 % FPR leaves uncaught, and the verdicts'
  FPR / FNR.
* ``subject-body``: the same messages reduced to ``Subject:`` and the text parts
  (bench.common.corpora.reduce), the same figures.
* ``sms``: the SMS Spam Collection (``--sms``), stratified 70/30 (seed 0), the same figures.
* ``imdb``: Maas et al.'s IMDB reviews, stratified 70/30 (seed 0, bench.sentiment's split):
  accuracy.

Run (from the repository root)::

    python -m bench.unseen --only reuters newsgroups
    python -m bench.unseen --no-tune
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import (list_spam, load_reviews, news_dir, news_files, reduce,
                                  reuters, reviews_csv, spam_dir)
from bench.common.metrics import best_not_caught, roc_auc
from bench.common.splits import stratified_split
from bench.common.systems import documents, lay_out, train

SHAPES = ("reuters", "newsgroups", "spam", "subject-body", "sms", "imdb")
SMS = Path("/work/corpora-extra/SMSSpamCollection")
ROUNDS = 3  # of predict's timing, each way


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--only", nargs="+", choices=SHAPES, help="run these shapes")
    parser.add_argument("--no-tune", action="store_true", help="leave out --tune")
    parser.add_argument("--sms", type=Path, default=SMS, help="the SMSSpamCollection file")
    args = parser.parse_args(argv)
    return options.run("bench.unseen", lambda: run(args))


def run(args) -> None:
    print(f"{'shape':<14} {'command':<14} {'unseen':<6} {'accuracy':>8} {'1-AUC %':>8} "
          f"{'oracle %':>8} {'FPR %':>6} {'FNR %':>6}", flush=True)
    for shape in args.only or SHAPES:
        train_groups, test_texts, truth, spam = corpus(shape, args.sms)
        for flags in ([], ["--tune"])[: 1 if args.no_tune else 2]:
            with tempfile.TemporaryDirectory(prefix="unseen-") as scratch:
                for unseen, row in scored(Path(scratch), train_groups, test_texts, flags):
                    print(f"{shape:<14} {' '.join(['train', *flags]):<14} {unseen:<6} "
                          + figures(row, truth, spam), flush=True)


def corpus(shape: str, sms: Path) -> tuple[dict[str, list], list, np.ndarray, str | None]:
    """({class: training items}, test items, their classes, the spam class or None)."""
    if shape == "reuters":
        train_texts, train_labels, test_texts, test_labels = reuters("single")
        return (grouped(train_texts, [l for (l,) in train_labels]), test_texts,
                np.array([l for (l,) in test_labels]), None)
    if shape == "newsgroups":
        top = news_dir()
        (train_paths, train_labels), (test_paths, test_labels) = (
            news_files(top / "20news-bydate-train"), news_files(top / "20news-bydate-test"))
        return grouped(train_paths, train_labels), test_paths, np.array(test_labels), None
    if shape == "imdb":
        texts, y = load_reviews(reviews_csv(), "imdb")
        return split(texts, y) + (None,)
    if shape == "sms":
        rows = [line.partition("\t") for line in sms.read_text(encoding="utf-8").splitlines()]
        texts, y = [text + "\n" for _, _, text in rows], np.array([label for label, _, _ in rows])
        return split(texts, y) + ("spam",)
    paths, y = list_spam(spam_dir())
    items = ([Path(p) for p in paths] if shape == "spam"
             else [reduce(Path(p).read_bytes(), "subject-body") for p in paths])
    return split(items, y) + ("spam",)


def grouped(items: list, labels: list) -> dict[str, list]:
    groups: dict[str, list] = {}
    for item, label in zip(items, labels):
        groups.setdefault(str(label), []).append(item)
    return groups


def split(items: list, y: np.ndarray) -> tuple[dict[str, list], list, np.ndarray]:
    """A stratified 70/30 split, seed 0 (bench.spam's and bench.sentiment's)."""
    train_index, test_index = stratified_split(y, 0.7, 0)
    return (grouped([items[i] for i in train_index], y[train_index].tolist()),
            [items[i] for i in test_index], y[test_index])


def scored(scratch: Path, train_groups: dict[str, list], test_items: list,
           flags: list[str]) -> list[tuple[str, dict]]:
    """``textnb train [flags]`` of the groups; its model's labels and log-odds (of two
    classes) and verdicts (with a spam class) of the test items, each way of ``unseen``."""
    from textnb.store.text_model import load_model
    dirs = lay_out(scratch / "train", train_groups)
    test = lay_out(scratch / "test", {"documents": test_items})[0]
    model = scratch / "textnb.model"
    train(model, dirs, ["-q", *flags])
    classifier = load_model(model)
    classifier.n_jobs = 1  # in this process: its CPU seconds are predict's all
    docs = documents(sorted(str(p) for p in test.iterdir()))  # lay_out numbers them in order
    seconds: dict[str, list[float]] = {"drop": [], "score": []}
    for unseen in ("drop", "score") * ROUNDS:  # interleaved: the least of each
        classifier.unseen = unseen
        began = time.process_time()
        classifier.predict(docs)
        seconds[unseen].append(time.process_time() - began)
    found = []
    for unseen in ("drop", "score"):
        classifier.unseen = unseen
        row = {"labels": classifier.predict(docs), "seconds": min(seconds[unseen])}
        if len(classifier.classes_) == 2:
            row["log_odds"] = classifier.decision_function(docs)
            row["classes"] = classifier.classes_
            if classifier.__dict__.get("cutoffs_"):
                row["verdicts"] = classifier.spam_status(docs)
        found.append((unseen, row))
    return found


def figures(row: dict, truth: np.ndarray, spam: str | None) -> str:
    accuracy = np.mean(row["labels"] == truth)
    seconds = f"  predict {row['seconds']:.2f} CPU s"
    if spam is None or "log_odds" not in row:
        return f"{accuracy:8.4f}" + seconds
    is_spam = truth == spam
    odds = row["log_odds"] if str(row["classes"][1]) == spam else -row["log_odds"]
    text = (f"{accuracy:8.4f} {100 * (1 - roc_auc(is_spam, odds)):8.3f} "
            f"{100 * best_not_caught(is_spam, odds, 0.001):8.2f}")
    if "verdicts" in row:
        verdicts = row["verdicts"]
        text += (f" {100 * np.mean(verdicts[~is_spam] == 'spam'):6.2f}"
                 f" {100 * np.mean(verdicts[is_spam] == 'ham'):6.2f}")
    return text + seconds


if __name__ == "__main__":
    sys.exit(main())
