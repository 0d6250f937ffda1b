#!/usr/bin/env python3
"""Benchmark training and classifying on a Dask cluster against one machine, in one run.

20 Newsgroups (bydate): the 11314 training posts are read and counted

1. here, in this process (``TextClassifier(n_jobs=1)``), and with joblib's worker processes on
   every core (``n_jobs=-1``), the bytes read here first (as ``textnb train`` reads them);
2. on a LocalCluster of ``--workers`` single-threaded worker processes on loopback:
   :func:`textnb.distributed.fit_files` (paths sent, files read on the workers), and
   ``TextClassifier.fit`` under ``joblib.parallel_backend("dask")`` (the bytes sent).

Each model is checked against the one-process model — terms, class_count_, feature_count_,
digests and log P(c|x) of the 7532 test posts, all equal — and the test posts are classified
here and with :func:`textnb.distributed.classify_files`. The cluster's start-up is timed apart:
a standing cluster pays it once. On one 2-core machine the cluster can only add overhead to
joblib's processes; the figures say how much.

Run::

    python scripts/bench_dask.py              # unpacks ../shared/corpora/20news-bydate.tar.gz
    python scripts/bench_dask.py --workers 2 --data corpora/full/20news-bydate
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

ARCHIVE = ROOT.parent / "shared" / "corpora" / "20news-bydate.tar.gz"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path,
                        help="directory holding 20news-bydate-train/ and 20news-bydate-test/")
    parser.add_argument("--archive", type=Path, default=ARCHIVE)
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    args = parser.parse_args()
    try:
        import distributed
        import joblib
    except ImportError:
        sys.exit("needs the extra: pip install 'textnb[dask]'")
    from textnb.distributed import classify_files, fit_files

    with tempfile.TemporaryDirectory() as scratch:
        data = args.data or unpack(args.archive, Path(scratch))
        train = files(data / "20news-bydate-train")
        test = [path for _, path in files(data / "20news-bydate-test")]
        print(f"20 Newsgroups: {len(train)} training posts, {len(test)} test posts")

        def read(pairs):
            return [Path(p).read_bytes() for _, p in pairs], [label for label, _ in pairs]

        rows = []
        start = time.perf_counter()
        texts, labels = read(train)
        reference = TextClassifier(n_jobs=1).fit(texts, labels)
        rows.append(("here, one process (read + fit)", time.perf_counter() - start, reference))
        start = time.perf_counter()
        texts, labels = read(train)
        fitted = TextClassifier(n_jobs=-1).fit(texts, labels)
        rows.append(("here, joblib n_jobs=-1 (read + fit)", time.perf_counter() - start, fitted))
        test_texts = [Path(p).read_bytes() for p in test]
        start = time.perf_counter()
        expected = reference.predict_log_proba(test_texts)
        classify_here = time.perf_counter() - start

        start = time.perf_counter()
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                      processes=True, host="127.0.0.1",
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            startup = time.perf_counter() - start
            start = time.perf_counter()
            fitted = fit_files(TextClassifier(), train, client)
            rows.append((f"Dask, {args.workers} workers: fit_files (paths sent)",
                         time.perf_counter() - start, fitted))
            start = time.perf_counter()
            texts, labels = read(train)
            with joblib.parallel_backend("dask"):
                fitted = TextClassifier().fit(texts, labels)
            rows.append((f"Dask, {args.workers} workers: joblib backend (read + fit)",
                         time.perf_counter() - start, fitted))
            start = time.perf_counter()
            _, remote = classify_files(reference, test, client)
            classify_remote = time.perf_counter() - start

        print(f"\nDask LocalCluster start-up ({args.workers} worker processes): {startup:.2f} s")
        print(f"\n{'training':<52} {'time':>7} {'vs one process':>15}  same model")
        for name, seconds, model in rows:
            print(f"{name:<52} {seconds:6.2f}s {seconds / rows[0][1]:14.2f}x  "
                  f"{same(reference, model, test_texts, expected)}")
        accuracy = np.mean(reference.classes_[expected.argmax(axis=1)] ==
                           np.array([Path(p).parent.name for p in test]))
        print(f"\n{'classifying the test posts':<52} {'time':>7}")
        print(f"{'here (predict_log_proba, read first)':<52} {classify_here:6.2f}s")
        print(f"{'Dask: classify_files (paths sent)':<52} {classify_remote:6.2f}s")
        print(f"same labels: {np.array_equal(remote.argmax(axis=1), expected.argmax(axis=1))}, "
              f"largest |log P| difference {np.abs(remote - expected).max():.1e}, "
              f"accuracy {accuracy:.4f}")
    return 0


def same(a: TextClassifier, b: TextClassifier, texts: list, expected: np.ndarray) -> str:
    """'yes' if b holds a's model exactly (terms, counts, digests, test log-probabilities)."""
    checks = {"terms": a.vocabulary_.terms_ == b.vocabulary_.terms_,
              "class_count_": np.array_equal(a.model_.class_count_, b.model_.class_count_),
              "feature_count_": np.array_equal(a.model_.feature_count_, b.model_.feature_count_),
              "digests": np.array_equal(a.digests_, b.digests_),
              "log_proba": np.array_equal(b.predict_log_proba(texts), expected)}
    failed = [name for name, ok in checks.items() if not ok]
    return "yes" if not failed else "NO: " + ", ".join(failed)


def unpack(archive: Path, scratch: Path) -> Path:
    import fetch_corpora
    print(f"unpacking {archive} ...", flush=True)
    fetch_corpora.unpack(archive, scratch, {"20news-bydate-train", "20news-bydate-test"},
                         lambda *a: None)
    return scratch / "20news-bydate"


def files(split: Path) -> list[tuple[str, str]]:
    """(newsgroup, path) of every post, in textnb train's order."""
    return [(group.name, str(path)) for group in sorted(split.iterdir())
            for path in sorted(group.iterdir())]


if __name__ == "__main__":
    sys.exit(main())
