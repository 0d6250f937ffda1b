#!/usr/bin/env python3
"""Benchmark expectation–maximisation in textnb: semi-supervised NB and clustering.

1. 20 Newsgroups (bydate): n = 1, 3, 10, 30, 100 labeled training posts per class (drawn with
   ``--seed``), the rest of the 11314 training posts unlabeled; accuracy on the 7532 test posts
   of the supervised multinomial NB on the labeled posts alone and of EM
   (:class:`textnb.em.SemiSupervisedNB`, Nigam et al., 2000). λ, the weight of the unlabeled
   posts, is chosen by 3-fold CV on the labeled posts among ``textnb.em.WEIGHTS`` when every
   class has at least 3 (the held-out fold stays in the unlabeled pool), else λ = 1.
2. SpamAssassin (scripts/bench_spam.py's seeded 70/30 split): 20 labeled messages per class,
   the rest of the training part unlabeled; accuracy and false-positive/negative rates.
3. Clustering the 20 Newsgroups training posts into 20: NMI, adjusted Rand index and purity of
   :class:`textnb.em.MixtureNB` (the model ``textnb cluster`` fits) and, when scikit-learn is
   installed, of its text-clustering example (TfidfVectorizer(max_df=0.5, min_df=5,
   stop_words="english") + KMeans(n_init=5)), with their times.

Terms: the TextClassifier tokenizer (NLTK stop words) over all training posts, min_df 2 for
clustering; raw counts; α = ``--alpha`` (default 0.01: α = 1 over 172,000 terms made EM put
nearly every post in one class — 16% accuracy at 10 labels per class, 4% with λ = 0.1 —
while 0.01 and 0.001 gave about 60%; measured with textnb.em at seed 0).

Run::

    python scripts/bench_em.py --quick      # n = 10 only, 20NG and spam, one clustering start
    python scripts/bench_em.py              # everything (about 20 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from textnb.classifier import TextClassifier  # noqa: E402
from textnb.em import CLUSTER_ALPHA, WEIGHTS, MixtureNB, SemiSupervisedNB  # noqa: E402
from textnb.metrics import adjusted_rand_index, normalized_mutual_info, purity  # noqa: E402
from textnb.models import MultinomialNB  # noqa: E402
from textnb.vocabulary import Vocabulary, to_scipy  # noqa: E402

ARCHIVE_20NG = ROOT.parent / "shared" / "corpora" / "20news-bydate.tar.gz"
ARCHIVE_SPAM = ROOT.parent / "shared" / "corpora" / "spamassassin-public.tar.gz"
LABELED = (1, 3, 10, 30, 100)
CV_FOLDS = 3


def read_20ng(scratch: Path) -> tuple[list[bytes], np.ndarray, list[bytes], np.ndarray]:
    import fetch_corpora
    print(f"unpacking {ARCHIVE_20NG} ...", flush=True)
    fetch_corpora.unpack(ARCHIVE_20NG, scratch, {"20news-bydate-train", "20news-bydate-test"},
                         lambda *a: None)
    out = []
    for split in ("20news-bydate-train", "20news-bydate-test"):
        texts, labels = [], []
        for group in sorted((scratch / "20news-bydate" / split).iterdir()):
            for path in sorted(group.iterdir()):
                texts.append(path.read_bytes())
                labels.append(group.name)
        out += [texts, np.array(labels)]
    return tuple(out)


def read_spam(scratch: Path):
    import bench_spam
    from tune import stratified_split
    directory = bench_spam.unpack_archive(ARCHIVE_SPAM, scratch / "spamassassin")
    paths, y = bench_spam.list_corpus(directory)
    train, test = stratified_split(y, 0.7, 0)
    texts = [Path(p).read_bytes() for p in paths]
    return ([texts[i] for i in train], y[train], [texts[i] for i in test], y[test])


def matrices(train_texts, test_texts, min_df: int = 1):
    """Raw count matrices (scipy CSR) over the training posts' vocabulary."""
    clf = TextClassifier(model="multinomial", norm=None)
    clf._build()
    vocabulary = Vocabulary(min_df=min_df)
    X = vocabulary.fit_parts(c for c, _ in clf._count(train_texts, digests=False))
    T = vocabulary.count_parts(c for c, _ in clf._count(test_texts, digests=False))
    return to_scipy(X), to_scipy(T), vocabulary


def pick_labeled(y: np.ndarray, n: int, rng) -> np.ndarray:
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), n, replace=False)
                                   for c in np.unique(y)]))


def em_fit(X, y_semi, weight: float, alpha: float) -> SemiSupervisedNB:
    return SemiSupervisedNB(alpha=alpha, unlabeled_weight=weight).fit(X, y_semi)


def choose_weight(X, y, labeled, alpha: float, seed: int) -> tuple[float, dict]:
    """λ by CV on the labeled posts; the held-out fold joins the unlabeled pool."""
    from tune import stratified_folds
    folds = stratified_folds(y[labeled], CV_FOLDS, seed)
    scores = {}
    for weight in WEIGHTS:
        hits = 0
        for k in range(CV_FOLDS):
            y_semi = np.full(len(y), -1, dtype=object)
            kept = labeled[folds != k]
            y_semi[kept] = y[kept]
            held = labeled[folds == k]
            model = em_fit(X, y_semi, weight, alpha)
            hits += int((model.predict(X[held]) == y[held]).sum())
        scores[weight] = hits / len(labeled)
    best = max(WEIGHTS, key=lambda w: (scores[w], w))
    return best, scores


def semi_supervised(name, X, y, T, t, counts, alpha, seed) -> list[list[str]]:
    rows = []
    for n in counts:
        rng = np.random.default_rng(seed)
        labeled = pick_labeled(y, n, rng)
        supervised = MultinomialNB(alpha=alpha).fit(X[labeled], y[labeled])
        acc_sup = float((supervised.predict(T) == t).mean())
        start = time.perf_counter()
        if n >= CV_FOLDS:
            weight, scores = choose_weight(X, y, labeled, alpha, seed)
            how = "CV " + " ".join(f"{w}:{s:.3f}" for w, s in scores.items())
        else:
            weight, how = 1.0, "fixed"
        y_semi = np.full(len(y), -1, dtype=object)
        y_semi[labeled] = y[labeled]
        model = em_fit(X, y_semi, weight, alpha)
        seconds = time.perf_counter() - start
        acc_em = float((model.predict(T) == t).mean())
        fixed = {w: float((em_fit(X, y_semi, w, alpha).predict(T) == t).mean())
                 for w in ((1.0, 0.1) if n >= CV_FOLDS else (0.1,))}
        rows.append([name, str(n), str(len(labeled)), f"{acc_sup:.2%}", f"{acc_em:.2%}",
                     f"{(acc_em - acc_sup) * 100:+.1f}", f"{weight}", str(model.n_iter_),
                     f"{seconds:.1f}", " ".join(f"λ={w}:{a:.2%}" for w, a in fixed.items()), how])
        print("  " + " | ".join(rows[-1]), flush=True)
    return rows


def clustering(X, y, texts, k, n_init, seed, alpha) -> list[list[str]]:
    rows = []
    start = time.perf_counter()
    mixture = MixtureNB(n_clusters=k, alpha=alpha, n_init=n_init, random_state=seed).fit(X)
    seconds = time.perf_counter() - start
    rows.append(_cluster_row(f"textnb MixtureNB a={alpha} n_init={n_init}", y,
                             mixture.labels_, seconds))
    print("  " + " | ".join(rows[-1]), flush=True)
    try:
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError:
        print("  (scikit-learn not installed: no KMeans row)")
        return rows
    start = time.perf_counter()
    strings = [t.decode("latin-1") for t in texts]
    tfidf = TfidfVectorizer(max_df=0.5, min_df=5, stop_words="english").fit_transform(strings)
    labels = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(tfidf)
    seconds = time.perf_counter() - start
    rows.append(_cluster_row(f"sklearn tfidf+KMeans n_init={n_init}", y, labels, seconds))
    print("  " + " | ".join(rows[-1]), flush=True)
    return rows


def _cluster_row(name, y, labels, seconds) -> list[str]:
    return [name, f"{normalized_mutual_info(y, labels):.3f}",
            f"{adjusted_rand_index(y, labels):.3f}", f"{purity(y, labels):.3f}", f"{seconds:.1f}"]


def table(header, rows) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in [header] + rows]
    return "\n".join(lines[:1] + ["  ".join("-" * w for w in widths)] + lines[1:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 10 only; one clustering start")
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["20ng", "spam", "cluster"], action="append")
    args = parser.parse_args(argv)
    parts = args.only or ["20ng", "spam", "cluster"]
    counts = (10,) if args.quick else LABELED
    header = ["corpus", "n/class", "labeled", "supervised", "EM", "gain", "λ", "iter",
              "EM s", "EM at fixed λ", "λ choice"]
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        rows, cluster_rows = [], []
        if "20ng" in parts or "cluster" in parts:
            train, y, test, t = read_20ng(scratch)
            if "20ng" in parts:
                X, T, vocabulary = matrices(train, test)
                print(f"20NG: {X.shape[0]} training posts, {X.shape[1]} terms", flush=True)
                rows += semi_supervised("20NG", X, y, T, t, counts, args.alpha, args.seed)
            if "cluster" in parts:
                X, _, vocabulary = matrices(train, test[:1], min_df=2)
                print(f"clustering 20NG train: {X.shape[0]} posts, {X.shape[1]} terms", flush=True)
                cluster_rows = clustering(X, y, train, 20, 1 if args.quick else 5, args.seed,
                                          CLUSTER_ALPHA)   # textnb cluster's default
        if "spam" in parts:
            train, y, test, t = read_spam(scratch)
            X, T, _ = matrices(train, test)
            print(f"SpamAssassin: {X.shape[0]} training messages, {X.shape[1]} terms", flush=True)
            rows += semi_supervised("SpamAssassin", X, y, T, t, (20,), args.alpha, args.seed)
    if rows:
        print("\nsemi-supervised (accuracy on the test set)\n" + table(header, rows))
    if cluster_rows:
        print("\nclustering 20NG train into 20\n" +
              table(["system", "NMI", "ARI", "purity", "seconds"], cluster_rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
