"""20 Newsgroups made multi-label → textnb's MultiLabelClassifier (its defaults, and each scoring)
vs scikit-learn's OneVsRestClassifier(MultinomialNB()) and TF-IDF LinearSVC: micro/macro F1,
Hamming loss, time, same split, same run.

The bydate release keeps only the From, Subject, Organization and Lines header fields: the
Newsgroups field that named a cross-post's groups is gone (39 of 18,846 files hold the word
"Newsgroups:", all in quoted text), and cross-posted duplicates were removed (no two files
are byte-identical). So the multi-label set is built honestly from what is left:

* real cross-posts: posts of the same split whose bodies (after the header) are identical
  but which sit in several group directories become one document with all those groups;
* composites (synthetic): a share of the posts is paired, two posts of different groups joined
  into one document (the first one's header, both bodies) labelled with both groups;
* rare labels (synthetic, Reuters' 1–20 story topics): words of 6 letters or more found in
  exactly 1, 2, 3, 5, 10 and 20 training documents, five of each (seeded), each a label
  ``rare-WORD`` of every training and test document whose body holds it. The groups' micro-F1
  is reported apart, so that the rare labels' cost to the rest is seen.

Beside the library (MultiLabelClassifier, thresholds by CV) and scikit-learn, the command a
user types, at its defaults: the training documents written as files named in a label file
(``training/N label label``, Reuters' layout), ``textnb train --labels training.txt`` and
``textnb classify --format json`` of the test files, fresh processes (their times: start-up,
imports and reading included; ``--no-command`` leaves it out).

Reuters-21578 itself: python -m bench.reuters --only multi (the same rows).

Run (from the repository root)::

    python -m bench.multilabel [--corpus ../shared/corpora/20news-bydate.tar.gz]
    python -m bench.multilabel --data corpora/multilabel     # the committed sample: seconds
    python -m bench.multilabel --sample corpora/multilabel   # write the committed sample
    textnb train --labels corpora/multilabel/training.txt -m ml.model
    textnb evaluate --labels corpora/multilabel/test.txt -m ml.model
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import BenchError, args as options
from bench.common.corpora import NEWS_ARCHIVE
from bench.common.systems import classify, has_sklearn, latin1, train
from textnb.evaluation.metrics import multilabel_summary
from textnb.multilabel import MultiLabelClassifier, decide, label_matrix, read_label_file

# Share of posts paired into composites: 30 % of posts → 15 % of documents carry two labels,
# about Reuters-21578's share of multi-topic stories (Yang & Liu count 1.24 topics per story).
PAIRED = 0.3
SEED = 0
# The committed sample: a few groups, the shortest posts, so the files stay small.
SAMPLE_GROUPS = ("comp.graphics", "rec.autos", "sci.med", "sci.space")
SAMPLE_POSTS = {"training": 24, "test": 8}  # per group


def read_bydate(path: str) -> dict[str, list[tuple[str, bytes]]]:
    """{split: [(group, bytes), ...]} of the bydate tarball, in archive order."""
    splits: dict[str, list[tuple[str, bytes]]] = {"train": [], "test": []}
    with tarfile.open(path) as tar:
        for member in tar:
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 3:
                split = "train" if parts[0].endswith("train") else "test"
                splits[split].append((parts[1], tar.extractfile(member).read()))
    return splits


def body(raw: bytes) -> bytes:
    return raw.partition(b"\n\n")[2]


def multi_label(posts: list[tuple[str, bytes]], seed: int = SEED, paired: float = PAIRED
                ) -> tuple[list[bytes], list[list[str]], dict[str, int]]:
    """(documents, label sets, how many of each kind) from (group, post) pairs: identical
    bodies in several groups merged (real cross-posts), then a share of posts paired."""
    by_body: dict[object, list[int]] = defaultdict(list)
    for i, (_, raw) in enumerate(posts):
        text = body(raw).strip()  # an empty body is no evidence of a cross-post
        by_body[hashlib.blake2b(text, digest_size=16).digest() if text else i].append(i)
    docs: list[tuple[bytes, list[str]]] = []
    crossposts = 0
    for members in by_body.values():
        groups = sorted({posts[i][0] for i in members})
        crossposts += len(groups) > 1
        docs.append((posts[members[0]][1], groups))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(docs)).tolist()
    n_pair = int(len(docs) * paired) // 2 * 2
    out, pending, composites = [], [], 0
    for i in order[:n_pair]:
        raw, groups = docs[i]
        mate = next((j for j, (_, g) in enumerate(pending) if not set(g) & set(groups)), None)
        if mate is None:
            pending.append((raw, groups))
            continue
        first, first_groups = pending.pop(mate)
        out.append((first.rstrip(b"\n") + b"\n\n" + body(raw), sorted(set(first_groups) | set(groups))))
        composites += 1
    out += pending + [docs[i] for i in order[n_pair:]]
    return [d for d, _ in out], [g for _, g in out], {"documents": len(out),
                                                     "crossposts": crossposts,
                                                     "composites": composites}


RARE_SIZES = (1, 2, 3, 5, 10, 20)
RARE_EACH = 5
RARE_WORD = re.compile(rb"[a-z]{6,}")


def add_rare_labels(train_texts, train_labels, test_texts, test_labels, seed: int = SEED) -> int:
    """Add the rare labels (module docstring) to the label sets in place; how many labels."""
    words = [[set(RARE_WORD.findall(body(t).lower())) for t in texts]
             for texts in (train_texts, test_texts)]
    frequency = Counter(w for found in words[0] for w in found)
    rng = np.random.default_rng(seed)
    rare = []
    for size in RARE_SIZES:
        candidates = sorted(w for w, n in frequency.items() if n == size)
        rare += rng.choice(candidates, min(RARE_EACH, len(candidates)), replace=False).tolist()
    for found, label_sets in zip(words, (train_labels, test_labels)):
        for present, labels in zip(found, label_sets):
            labels += [f"rare-{w.decode()}" for w in rare if w in present]
    return len(rare)


def write_sample(corpus: str, directory: str) -> None:
    """The committed sample: for each split, the shortest posts of a few groups made
    multi-label as above, as files training/N and test/N named in cats.txt (Reuters' layout)."""
    splits = read_bydate(corpus)
    lines: list[str] = []
    for split, name in (("train", "training"), ("test", "test")):
        chosen = []
        for group in SAMPLE_GROUPS:
            posts = sorted((p for p in splits[split] if p[0] == group), key=lambda p: len(p[1]))
            middle = len(posts) // 3  # short posts, but not the near-empty ones
            chosen += posts[middle:middle + SAMPLE_POSTS[name]]
        texts, label_sets, _ = multi_label(chosen, paired=0.5)
        os.makedirs(os.path.join(directory, name), exist_ok=True)
        for n, (text, labels) in enumerate(zip(texts, label_sets), 1):
            with open(os.path.join(directory, name, str(n)), "wb") as f:
                f.write(text)
            lines.append(f"{name}/{n} {' '.join(labels)}")
    # cats.txt names both parts, as Reuters' does; training.txt and test.txt one each.
    for file, prefix in (("cats.txt", ""), ("training.txt", "training/"), ("test.txt", "test/")):
        with open(os.path.join(directory, file), "w") as f:
            f.write("".join(f"{line}\n" for line in lines if line.startswith(prefix)))


def read_layout(directory: Path) -> tuple[list[bytes], list[list[str]], list[bytes], list[list[str]]]:
    """(texts, label sets) of DIR/training.txt's documents, then of DIR/test.txt's."""
    out = []
    for listing in ("training.txt", "test.txt"):
        if not (directory / listing).is_file():
            raise BenchError(f"'{directory}' has no {listing}")
        named = read_label_file(directory / listing)
        out += [[Path(path).read_bytes() for path, _ in named], [labels for _, labels in named]]
    return tuple(out)


def command(train_texts, train_labels, test_texts, scratch: Path) -> tuple[list[list[str]], float, float]:
    """The command at its defaults: the documents as files named in a label file,
    ``textnb train --labels`` and ``textnb classify --format json``; each test document's
    labels, and the two commands' wall times."""
    for name, texts in (("training", train_texts), ("test", test_texts)):
        (scratch / name).mkdir()
        for n, text in enumerate(texts, 1):
            (scratch / name / str(n)).write_bytes(text)
    (scratch / "training.txt").write_text("".join(f"training/{n} {' '.join(labels)}\n"
                                                  for n, labels in enumerate(train_labels, 1)))
    model = scratch / "multilabel.model"
    trained, _ = train(model, [], ["-q", "--labels", str(scratch / "training.txt")])
    classified, records = classify(model, [scratch / "test"])
    found = {int(Path(r["source"]).name): [x["label"] for x in r["labels"]] for r in records}
    if len(found) != len(test_texts):
        raise BenchError(f"textnb classify labelled {len(found)} of {len(test_texts)} documents")
    return [found[n] for n in range(1, len(test_texts) + 1)], trained.wall, classified.wall


def library_rows(train_texts, train_labels, test_texts) -> tuple[list, Any, Any, np.ndarray]:
    """The library's rows (name, predicted, fit s, predict s): MultiLabelClassifier at its
    defaults (the scoring chosen by CV, whose figures it prints), then each scoring given: the posterior (α 0.1) and
    one-vs-rest (α 1, the defaults before; its CV thresholds and 0); and that one-vs-rest model,
    its test counts and its scores, which scikit-learn's must equal (:func:`sklearn_rows`)."""
    rows = []
    for name, params in (("textnb defaults: scoring {} chosen by CV", {}),
                         ("textnb posterior NB, α 0.1, CV thresholds", {"scoring": "posterior"}),
                         ("textnb OvR NB, α 1, CV thresholds", {"scoring": "one-vs-rest"})):
        start = time.perf_counter()
        ours = MultiLabelClassifier(n_jobs=1, **params).fit(train_texts, train_labels)
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        X_test = ours.transform(test_texts)
        scores = ours.decision_function_counts(X_test)
        predict_time = time.perf_counter() - start
        rows.append((name.format(ours.scoring_), decide(scores, ours.thresholds_), fit_time,
                     predict_time))
        if not params:  # what the defaults' CV weighed
            print("textnb defaults' CV micro-F1 on the training documents: " + ", ".join(
                f"{t['scoring']} {t['micro_f1']:.4f}" for t in ours.cv_["choice"])
                + f" ({int(ours.one_vs_rest_.sum())} of {ours.labels_.size} labels one-vs-rest)")
    rows.append(("textnb OvR NB, α 1, threshold 0 (P = 0.5)",
                 decide(scores, np.zeros(scores.shape[1])), fit_time, predict_time))
    return rows, ours, X_test, scores


def sklearn_rows(rows: list, ours, train_texts, test_texts, X_test, Y_train) -> np.ndarray:
    """scikit-learn's rows, appended to ``rows``: CountVectorizer + OvR(MultinomialNB), and
    OvR(MultinomialNB) on textnb's counts, whose log-odds (returned) must be textnb's."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.naive_bayes import MultinomialNB
    start = time.perf_counter()
    vectorizer = CountVectorizer(stop_words="english")
    sk = OneVsRestClassifier(MultinomialNB()).fit(vectorizer.fit_transform(latin1(train_texts)),
                                                  Y_train)
    fit_time = time.perf_counter() - start
    start = time.perf_counter()
    predicted = sk.predict(vectorizer.transform(latin1(test_texts))).astype(bool)
    predict_time = time.perf_counter() - start
    rows.append(("scikit-learn CountVectorizer + OvR(MultinomialNB)", predicted, fit_time,
                 predict_time))
    # The same counts as textnb's, through scikit-learn's estimator: the scores must agree.
    X_train = ours.transform(train_texts)
    sk_same = OneVsRestClassifier(MultinomialNB()).fit(X_train, Y_train)
    theirs = np.column_stack([np.diff(e.predict_log_proba(X_test), axis=1)[:, 0]
                              for e in sk_same.estimators_])
    # scikit-learn gives a document no label when no P(l|x) reaches 0.5; textnb at least one.
    rows.append(("scikit-learn OvR(MultinomialNB) on textnb's counts", theirs > 0, float("nan"),
                 float("nan")))
    # The discriminative yardstick (Yang & Liu's SVM): a linear SVM per label on TF-IDF.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    svm = OneVsRestClassifier(LinearSVC()).fit(vectorizer.fit_transform(latin1(train_texts)),
                                               Y_train)
    fit_time = time.perf_counter() - start
    start = time.perf_counter()
    predicted = svm.predict(vectorizer.transform(latin1(test_texts))).astype(bool)
    rows.append(("scikit-learn TF-IDF + OvR(LinearSVC)", predicted, fit_time,
                 time.perf_counter() - start))
    return theirs


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--corpus", type=Path, default=NEWS_ARCHIVE,
                        help=f"the 20 Newsgroups bydate archive (default {NEWS_ARCHIVE})")
    parser.add_argument("--data", type=Path, metavar="DIR",
                        help="a multi-label set already made, DIR/training.txt and DIR/test.txt "
                             "naming the files and their labels (corpora/multilabel), instead "
                             "of the one made from --corpus")
    parser.add_argument("--sample", metavar="DIR", help="write the committed sample and stop")
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.multilabel", lambda: run(args))


def run(args) -> None:
    if args.data is not None:
        train_texts, train_labels, test_texts, test_labels = read_layout(args.data)
        train_kinds = {"documents": len(train_texts)}
        test_kinds = {"documents": len(test_texts)}
    else:
        if not args.corpus.exists():
            raise BenchError(f"no corpus at {args.corpus}")
        if args.sample:
            write_sample(str(args.corpus), args.sample)
            return
        splits = read_bydate(str(args.corpus))
        train_texts, train_labels, train_kinds = multi_label(splits["train"])
        test_texts, test_labels, test_kinds = multi_label(splits["test"], seed=SEED + 1)
        train_kinds["rare labels"] = add_rare_labels(train_texts, train_labels, test_texts,
                                                     test_labels)
    labels, Y_train = label_matrix(train_labels)
    names, Y = label_matrix(test_labels)
    Y_test = np.zeros((len(test_texts), labels.size), dtype=bool)
    Y_test[:, np.searchsorted(labels, names)] = Y
    print(f"train: {train_kinds}; test: {test_kinds}; {labels.size} labels")
    rows, ours, X_test, scores = library_rows(train_texts, train_labels, test_texts)
    theirs = sklearn_rows(rows, ours, train_texts, test_texts, X_test, Y_train) if has_sklearn() else None
    if args.command:
        with tempfile.TemporaryDirectory(prefix="multilabel-") as scratch:
            found, fit_s, predict_s = command(train_texts, train_labels, test_texts, Path(scratch))
        predicted = np.zeros_like(Y_test)
        for row, names in enumerate(found):
            predicted[row, np.searchsorted(labels, names)] = True
        rows.insert(0, ("textnb command: train --labels + classify, defaults", predicted, fit_s,
                        predict_s))

    rare = np.char.startswith(labels, "rare-")
    print(f"\n{'model':<52} {'micro-F1':>8} {'macro-F1':>8} {'Hamming':>8} {'subset':>7} "
          f"{'fit s':>7} {'pred s':>7} {'groups':>7} {'rare/doc':>8}")
    for name, predicted, fit_s, predict_s in rows:
        r = multilabel_summary(Y_test, predicted, labels)
        groups = multilabel_summary(Y_test[:, ~rare], predicted[:, ~rare], labels[~rare])
        print(f"{name:<52} {r['micro']['f1']:8.4f} {r['macro']['f1']:8.4f} "
              f"{r['hamming_loss']:8.4f} {r['subset_accuracy']:7.4f} "
              f"{fit_s:7.2f} {predict_s:7.2f} "
              f"{groups['micro']['f1']:7.4f} {predicted[:, rare].sum() / len(predicted):8.3f}")
    print("(groups: micro-F1 over the labels that are not rare-*; rare/doc: rare labels given "
          "a test document, on average)")
    if theirs is not None:
        print(f"\nlargest |textnb − scikit-learn| log-odds on the same counts: "
              f"{np.abs(scores - theirs).max():.2e}")
    else:
        print("\n(scikit-learn is not installed: no reference rows)")
    print("(textnb's fit time includes the 5-fold CV that chooses the thresholds; the "
          "command's are the commands' wall times, start-up and reading the files included.)")


if __name__ == "__main__":
    sys.exit(main())
