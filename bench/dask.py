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

Beside them, the command a user types, at its defaults (``--no-command`` leaves it out):
``textnb train 20news-bydate-train/`` and ``textnb classify 20news-bydate-test/`` here, and the
same with ``--dask ADDRESS`` on the cluster (fresh processes: start-up, imports and reading
included); its model is checked against the one-process model as the others are.

Run (from the repository root)::

    python -m bench.dask                 # corpora/full/20news-bydate, else the shared archive
    python -m bench.dask --workers 2 --data corpora/full/20news-bydate
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BenchError, args as options
from bench.common.corpora import news_dir
from bench.common.systems import classify, train as command_train
from textnb.classifier import TextClassifier


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.news_data(parser)
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    options.no_command(parser)
    args = parser.parse_args(argv)
    return options.run("bench.dask", lambda: run(args))


def run(args) -> None:
    try:
        import distributed
        import joblib
    except ImportError:
        raise BenchError("needs the extra: pip install 'textnb[dask]'") from None
    from textnb import load_model
    from textnb.distributed import classify_files, fit_files

    with tempfile.TemporaryDirectory() as scratch:
        data = news_dir(args.data, args.archive)
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
        commands = {}
        if args.command:
            commands["here"] = command(data, Path(scratch) / "here.model", [])
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
            if args.command:
                commands[f"Dask, {args.workers} workers"] = command(
                    data, Path(scratch) / "dask.model", ["--dask", cluster.scheduler_address])
        for where, (train_s, classify_s, model_path, labels) in commands.items():
            rows.append((f"{where}: textnb train (command, defaults)", train_s,
                         load_model(model_path)))

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
        for where, (train_s, classify_s, model_path, labels) in commands.items():
            print(f"{where + ': textnb classify (command)':<52} {classify_s:6.2f}s  accuracy "
                  f"{np.mean(labels == np.array([Path(p).parent.name for p in test])):.4f}")
        print(f"same labels: {np.array_equal(remote.argmax(axis=1), expected.argmax(axis=1))}, "
              f"largest |log P| difference {np.abs(remote - expected).max():.1e}, "
              f"accuracy {accuracy:.4f}")


def command(data: Path, model: Path, extra: list[str]) -> tuple[float, float, Path, np.ndarray]:
    """``textnb train`` of the training directory and ``textnb classify`` of the test one, at
    their defaults with ``extra`` options: their wall times, the model, the labels in
    :func:`files`' order."""
    trained, _ = command_train(model, [data / "20news-bydate-train"], ["-q", *extra])
    classified, records = classify(model, [data / "20news-bydate-test"], extra)
    label = {r["source"]: r["label"] for r in records}
    return (trained.wall, classified.wall, model,
            np.array([label.get(path) for _, path in files(data / "20news-bydate-test")]))


def same(a: TextClassifier, b: TextClassifier, texts: list, expected: np.ndarray) -> str:
    """'yes' if b holds a's model exactly (terms, counts, digests, test log-probabilities)."""
    checks = {"terms": a.vocabulary_.terms_ == b.vocabulary_.terms_,
              "class_count_": np.array_equal(a.model_.class_count_, b.model_.class_count_),
              "feature_count_": np.array_equal(a.model_.feature_count_, b.model_.feature_count_),
              "digests": np.array_equal(a.digests_, b.digests_),
              "log_proba": np.array_equal(b.predict_log_proba(texts), expected)}
    failed = [name for name, ok in checks.items() if not ok]
    return "yes" if not failed else "NO: " + ", ".join(failed)


def files(split: Path) -> list[tuple[str, str]]:
    """(newsgroup, path) of every post, in textnb train's order."""
    return [(group.name, str(path)) for group in sorted(split.iterdir())
            for path in sorted(group.iterdir())]


if __name__ == "__main__":
    sys.exit(main())
