"""What a hashed vocabulary costs on 20 Newsgroups (bydate): accuracy, time, peak memory.

Systems, each trained on 20news-bydate-train and tested on 20news-bydate-test, each in its own
subprocess (peak RSS = that process's ``ru_maxrss``, interpreter and posts included):

* ``textnb command``  — what a user types, at its defaults: ``textnb train -m MODEL
  20news-bydate-train/`` and ``textnb classify -m MODEL 20news-bydate-test/`` (fresh processes:
  start-up, imports and reading the files included; peak RSS the larger of the two, worker
  processes included), and ``textnb command hash N``: the same with ``--hash-bits N``;
* ``textnb exact``    — ``TextClassifier(model="multinomial", alpha=1.0, fit_prior=True,
  norm=None, n_jobs=--jobs)``, a vocabulary of terms (scikit-learn's model and smoothing);
* ``textnb hash N``   — the same with ``hash_bits=N`` for N in --bits (default 16 18 20 22);
* when scikit-learn is installed: ``CountVectorizer()`` + ``MultinomialNB(alpha=1)`` and
  ``HashingVectorizer(n_features=2**N, alternate_sign=False, norm=None)`` +
  ``MultinomialNB(alpha=1)``, on the posts read as latin-1 as ``fetch_20newsgroups`` does.

Two differences to keep in mind when reading the ratios: textnb keeps only the columns that
training documents use (|V| in the smoothing is theirs; the model is n_classes × used columns),
where scikit-learn's model has all 2**N columns (dense arrays of 20 × 2**N float64, twice:
counts and log-probabilities); and the tokenizers differ (textnb's keeps header fields as
prefixed tokens). The ratio that measures the cost of hashing is textnb hash N / textnb exact.

It also prints how many columns the exact vocabulary's terms fill under CRC-32 (textnb's hash)
and BLAKE2b against what a random function would fill, m(1 − (1 − 1/m)^n), and their speed.

Run (from the repository root)::

    python -m bench.hashing                          # corpora/full/20news-bydate, else the shared archive
    python -m bench.hashing --data /tmp/20ng --bits 18 20
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import BenchError, args as options
from bench.common.corpora import ROOT, news_dir, news_files
from bench.common.measure import ENV, maxrss_kib
from bench.common.report import table
from bench.common.systems import classify, has_sklearn, train

DEFAULT_BITS = [16, 18, 20, 22]


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.news_data(parser)
    parser.add_argument("--bits", type=int, nargs="+", default=DEFAULT_BITS, metavar="N")
    parser.add_argument("--jobs", type=int, help="textnb's processes (default: textnb's)")
    options.no_command(parser)
    parser.add_argument("--json", type=Path, help="also write the measurements to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_system(args.worker, args.data, args.jobs)))
        return 0
    if not all(1 <= b <= 31 for b in args.bits):
        parser.error("--bits must be from 1 to 31")
    names = ((["textnb command"] + [f"textnb command hash {b}" for b in args.bits])
             if args.command else [])
    names += ["textnb exact"] + [f"textnb hash {b}" for b in args.bits]
    if has_sklearn():
        names += ["sklearn count"] + [f"sklearn hash {b}" for b in args.bits]
    else:
        print("scikit-learn is not installed: textnb only", file=sys.stderr)
    return options.run("bench.hashing", lambda: run(args, names))


def run(args: argparse.Namespace, names: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="benchhash-") as scratch:
        data = news_dir(args.data, args.archive)
        print(f"20 Newsgroups bydate from {data}; {os.cpu_count()} CPUs; "
              f"Python {sys.version.split()[0]}", flush=True)
        results = {}
        for name in names:
            print(f"  {name} ...", end="", flush=True)
            results[name] = (run_command(name, data, args.jobs, Path(scratch))
                             if name.startswith("textnb command") else
                             _run_worker(name, data, args.jobs))
            print(f" {results[name]['fit_s'] + results[name]['predict_s']:.1f} s", flush=True)
    print()
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


def _run_worker(name: str, data: Path, jobs: int | None) -> dict:
    command = [sys.executable, "-m", "bench.hashing", "--worker", name, "--data",
               str(data)] + ([] if jobs is None else ["--jobs", str(jobs)])
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                          env={**ENV, "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BenchError(f"{name} failed (exit {done.returncode}): {tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_system(name: str, data: Path, jobs: int | None) -> dict:
    import numpy as np

    train_paths, y_train = news_files(data / "20news-bydate-train")
    test_paths, y_test = news_files(data / "20news-bydate-test")
    bits = int(name.rsplit(" ", 1)[1]) if "hash" in name else None
    if name.startswith("textnb"):
        import scipy.sparse  # noqa: F401 — imports are not timed (see bench.newsgroups)
        from textnb import TextClassifier
    else:
        from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
        from sklearn.naive_bayes import MultinomialNB
    train = [p.read_bytes() for p in train_paths]
    test = [p.read_bytes() for p in test_paths]
    extra = {}
    if name.startswith("textnb"):
        model = TextClassifier(model="multinomial", alpha=1.0, fit_prior=True, norm=None,
                               n_jobs=jobs, hash_bits=bits)
        t0 = time.perf_counter()
        model.fit(train, y_train)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        predicted = model.predict(test)
        t_predict = time.perf_counter() - t0
        columns = len(model.vocabulary_)
        if bits is None:
            extra = {"spread": _spread(model.vocabulary_.terms_)}
    else:
        train = [r.decode("latin-1") for r in train]
        test = [r.decode("latin-1") for r in test]
        vectorizer = (CountVectorizer() if bits is None else
                      HashingVectorizer(n_features=2 ** bits, alternate_sign=False, norm=None))
        nb = MultinomialNB(alpha=1.0)
        t0 = time.perf_counter()
        X = vectorizer.fit_transform(train)
        nb.fit(X, y_train)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        predicted = nb.predict(vectorizer.transform(test))
        t_predict = time.perf_counter() - t0
        columns = (len(vectorizer.vocabulary_) if bits is None
                   else int(np.count_nonzero(X.getnnz(axis=0))))
    return {"system": name, "n_train": len(train), "n_test": len(test), "columns": columns,
            "fit_s": t_fit, "predict_s": t_predict,
            "accuracy": float(np.mean(np.asarray(predicted) == np.asarray(y_test))),
            "rss_peak_kib": maxrss_kib(), **extra}


def run_command(name: str, data: Path, jobs: int | None, scratch: Path) -> dict:
    """``textnb train`` of the training directory (``--hash-bits N`` for "... hash N") and
    ``textnb classify`` of the test one, at their defaults otherwise, fresh processes."""
    bits = name.rsplit(" ", 1)[1] if "hash" in name else None
    model = scratch / f"{name.replace(' ', '-')}.model"
    trained, _ = train(model, [data / "20news-bydate-train"],
                       ["-q", *([] if bits is None else ["--hash-bits", bits]),
                        *([] if jobs is None else ["--jobs", str(jobs)])])
    classified, records = classify(model, [data / "20news-bydate-test"])
    truth = {str(p): label for p, label in zip(*news_files(data / "20news-bydate-test"))}
    from textnb import load_model
    return {"system": name, "n_train": len(news_files(data / "20news-bydate-train")[0]),
            "n_test": len(truth), "columns": len(load_model(model).vocabulary_),
            "fit_s": trained.wall, "predict_s": classified.wall,
            "accuracy": sum(truth.get(r["source"]) == r["label"] for r in records) / len(truth),
            "rss_peak_kib": 1024 * max(trained.rss, classified.rss)}


def _spread(terms: list[str]) -> dict:
    """Columns the terms fill under CRC-32 and BLAKE2b, and the hashes' speed per term."""
    import hashlib
    import numpy as np
    from textnb.text.hashing import hash_columns

    t0 = time.perf_counter()
    crc = hash_columns(terms, 31)
    crc_us = (time.perf_counter() - t0) / len(terms) * 1e6
    t0 = time.perf_counter()
    blake = np.frombuffer(b"".join(hashlib.blake2b(t.encode("utf-8", "surrogatepass"),
                                                   digest_size=4).digest() for t in terms),
                          dtype="<u4").astype(np.int64)
    blake_us = (time.perf_counter() - t0) / len(terms) * 1e6
    n = len(terms)
    return {"terms": n, "crc_us": crc_us, "blake2b_us": blake_us,
            "bits": {b: {"random": (1 << b) * (1 - (1 - 1 / (1 << b)) ** n),
                         "crc32": int(np.unique(crc & ((1 << b) - 1)).size),
                         "blake2b": int(np.unique(blake & ((1 << b) - 1)).size)}
                     for b in DEFAULT_BITS}}


def report(results: dict[str, dict]) -> str:
    rows = [[name, f"{r['fit_s']:.2f}", f"{r['predict_s']:.2f}",
             f"{r['rss_peak_kib'] / 1024:.0f}", f"{r['accuracy']:.4f}", f"{r['columns']:,}"]
            for name, r in results.items()]
    lines = [table(["system", "fit s", "predict s", "peak RSS MiB", "accuracy",
                    "columns used"], rows)]
    first = next(iter(results.values()))
    lines.append(f"\n{first['n_train']} training and {first['n_test']} test posts; fit = parse "
                 f"+ tokenize + vocabulary + count + fit. multinomial NB, α = 1, learned priors "
                 f"(textnb command: the command's defaults; fit = `textnb train`, predict = "
                 f"`textnb classify`, fresh processes, start-up and reading included).")
    exact, sklearn_exact = results.get("textnb exact"), results.get("sklearn count")
    ratio_rows = []
    for name, r in results.items():
        if not name.startswith(("textnb hash", "textnb command hash")):
            continue
        bits = name.rsplit(" ", 1)[1]
        base = results.get("textnb command" if "command" in name else "textnb exact")
        if base is None:
            continue
        row = [name.replace("textnb ", ""),
               f"{(r['fit_s'] + r['predict_s']) / (base['fit_s'] + base['predict_s']):.2f}",
               f"{r['rss_peak_kib'] / base['rss_peak_kib']:.2f}",
               f"{r['accuracy'] - base['accuracy']:+.4f}"]
        theirs = results.get(f"sklearn hash {bits}")
        if theirs and "command" not in name:
            row += [f"{(r['fit_s'] + r['predict_s']) / (theirs['fit_s'] + theirs['predict_s']):.2f}",
                    f"{r['rss_peak_kib'] / theirs['rss_peak_kib']:.2f}",
                    f"{r['accuracy'] - theirs['accuracy']:+.4f}",
                    f"{theirs['accuracy'] - sklearn_exact['accuracy']:+.4f}"]
        elif sklearn_exact:
            row += ["-"] * 4
        ratio_rows.append(row)
    if ratio_rows:
        header = ["", "time / exact", "RSS / exact", "acc − exact"]
        if len(ratio_rows[0]) > 4:
            header += ["time / sk hash", "RSS / sk hash", "acc − sk hash", "sk hash − sk count"]
        lines += ["\ntextnb hashed vs textnb exact (the command's hashed vs the command at its "
                  "defaults), and vs scikit-learn's HashingVectorizer of the same size (time = "
                  "fit + predict):", table(header, ratio_rows)]
    spread = exact and exact.get("spread")
    if spread:
        lines.append(f"\nColumns filled by the {spread['terms']:,} terms of the exact vocabulary "
                     f"(CRC-32 {spread['crc_us']:.2f} µs/term, BLAKE2b {spread['blake2b_us']:.2f} "
                     f"µs/term):")
        lines.append(table(
            ["bits", "random function", "CRC-32", "BLAKE2b"],
            [[b, f"{s['random']:,.0f}", f"{s['crc32']:,}", f"{s['blake2b']:,}"]
             for b, s in spread["bits"].items()]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
