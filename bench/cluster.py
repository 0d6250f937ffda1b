"""Clustering 20 Newsgroups into 20, seed by seed: ``textnb cluster`` at its defaults beside the
library's former random starts and scikit-learn's KMeans on TF-IDF: NMI, ARI, purity, time.

For each split (the 7,532 test posts, the 11,314 training posts) and each seed (0–4 unless
``--seeds``):

* ``textnb cluster -k 20 --seed S`` of the split's group directories, at its defaults (5 starts,
  each spherical k-means on TF-IDF seeded by k-means++, then EM: :class:`textnb.nb.em.MixtureNB`),
  a fresh process, its wall time (start-up and reading included);
* the library's clustering as it was before issue #42 (``MixtureNB(init="random")``: each of the
  5 starts one random post a cluster), on the command's counts (English stop words, terms in at
  least 2 posts, α 0.3);
* scikit-learn's text-clustering example, TfidfVectorizer(max_df=0.5, min_df=5,
  stop_words="english") + KMeans(n_init=5, random_state=S), when scikit-learn is installed.

The goal (issue #42): the command's NMI at least KMeans' on both splits, for every seed.

Run (from the repository root)::

    python -m bench.cluster                       # both splits, seeds 0–4: about 30 minutes
    python -m bench.cluster --splits test --seeds 0
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import news_dir, news_files
from bench.common.systems import latin1
from bench.em import command_cluster, table, tokens, _cluster_row
from textnb.classifier import TextClassifier
from textnb.cluster import CLUSTER_ALPHA, CLUSTER_MIN_DF
from textnb.nb.em import MixtureNB
from textnb.text.vocabulary import Vocabulary, to_scipy

K = 20
STARTS = 5


def counts(texts: list[bytes]):
    """The posts' counts as ``textnb cluster`` makes them: English stop words, min_df 2."""
    clf = TextClassifier(model="multinomial", norm=None, stop_words="english")
    return to_scipy(Vocabulary(min_df=CLUSTER_MIN_DF).fit_count(tokens(clf, texts)))


def kmeans_row(texts: list[bytes], y: np.ndarray, seed: int) -> list[str] | None:
    try:
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError:
        return None
    start = time.perf_counter()
    tfidf = TfidfVectorizer(max_df=0.5, min_df=5, stop_words="english").fit_transform(latin1(texts))
    labels = KMeans(n_clusters=K, n_init=STARTS, random_state=seed).fit_predict(tfidf)
    return _cluster_row(f"sklearn tfidf+KMeans n_init={STARTS}", y, labels,
                        time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--splits", default="test,train", help="test, train or both (default)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated (default 0–4)")
    parser.add_argument("--no-before", dest="before", action="store_false",
                        help="skip the library's former random starts")
    options.news_data(parser, "--news-data", archive=False)
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.cluster", lambda: run(args))


def run(args) -> None:
    seeds = [int(s) for s in args.seeds.split(",")]
    directory = news_dir(args.news_data, None)
    rows, gaps = [], {}
    with tempfile.TemporaryDirectory(prefix="cluster-") as scratch:
        for split in args.splits.split(","):
            paths, labels = news_files(directory / f"20news-bydate-{split}")
            y = np.array(labels)
            texts = [p.read_bytes() for p in paths]
            X = counts(texts) if args.before else None
            print(f"{split}: {len(texts)} posts", flush=True)
            for seed in seeds:
                found = []
                if args.command:
                    found.append(command_cluster(paths, y, K, seed, Path(scratch)))
                if args.before:
                    start = time.perf_counter()
                    before = MixtureNB(n_clusters=K, alpha=CLUSTER_ALPHA, n_init=STARTS,
                                       init="random", random_state=seed).fit(X)
                    found.append(_cluster_row(f"library before: random starts, n_init={STARTS}",
                                              y, before.labels_, time.perf_counter() - start))
                reference = kmeans_row(texts, y, seed)
                found += [reference] if reference else []
                for row in found:
                    rows.append([split, str(seed)] + row)
                    print("  " + " | ".join(rows[-1]), flush=True)
                if args.command and reference:
                    gaps[split, seed] = float(found[0][1]) - float(reference[1])
    print("\nclustering 20 Newsgroups into 20\n" +
          table(["split", "seed", "system", "NMI", "ARI", "purity", "seconds"], rows))
    if gaps:
        worst = min(gaps, key=gaps.get)
        print(f"\ncommand NMI − KMeans NMI: lowest {gaps[worst]:+.3f} ({worst[0]}, seed "
              f"{worst[1]}); {sum(g >= 0 for g in gaps.values())} of {len(gaps)} at or above")


if __name__ == "__main__":
    sys.exit(main())
