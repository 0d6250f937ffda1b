#!/usr/bin/env python3
"""Benchmark textnb against scikit-learn on 20 Newsgroups (bydate split): speed, memory, accuracy.

Systems, each trained on 20news-bydate-train (11314 posts) and tested on 20news-bydate-test
(7532 posts):

* ``textnb mnb a=1``  — ``TextClassifier(model="multinomial", alpha=1.0, fit_prior=True, norm=None)``:
  the configuration comparable to scikit-learn's;
* ``textnb default``  — ``TextClassifier()`` (textnb's defaults);
* when scikit-learn is installed: ``CountVectorizer()`` + ``MultinomialNB(alpha=1)`` (the
  reference for the ratios), and as extra reference rows ``CountVectorizer()`` +
  ``ComplementNB(alpha=1)`` and ``TfidfVectorizer()`` + ``MultinomialNB(alpha=0.01)`` (the
  setting of scikit-learn's own text-classification example). scikit-learn reads the posts
  as latin-1 text, as its ``fetch_20newsgroups`` does.

Stages, timed separately: *read* (file bytes from disk; the same for every system and not
counted), *prepare* (scikit-learn: bytes → str; textnb takes the bytes as they are and parses
each post, header fields and all, where it tokenizes it, inside fit and predict), *fit* (parse,
tokenize, build the vocabulary, count, fit) on the training posts and *predict* on the test
posts. End-to-end time is prepare + fit + predict. Each system runs in its own subprocess, so its
peak memory is its own: the peak resident set size of that process (``resource.getrusage``
``ru_maxrss``), which includes the interpreter, the imports and the posts held in memory; "after
read" is the peak before the prepare stage, so the difference is what the system itself needed.
textnb runs with ``n_jobs=--jobs`` (default: its own default, every core for inputs this large;
``--jobs 1`` for one process); the peak RSS of its worker processes is shown separately.
CPU time (prepare + fit + predict, worker processes included) is shown beside the wall-clock
time: on a machine shared with other work it is the steadier figure. The model file's size is
that of ``save_model`` for textnb and of the pickled vectorizer and model for scikit-learn.

Run::

    python scripts/bench_20ng.py                       # unpacks ../shared/corpora/20news-bydate.tar.gz
    python scripts/bench_20ng.py --data corpora/full/20news-bydate --jobs 1
    python scripts/bench_20ng.py --json results.json   # also write the raw numbers

Without ``--data`` it uses ``corpora/full/20news-bydate`` (see scripts/fetch_corpora.py) if it
exists, else unpacks ``--archive`` (default ``../shared/corpora/20news-bydate.tar.gz``) into a
temporary directory that is removed afterwards. A run takes about a minute and a half on 2
cores (``--repeat 3``: four minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_ARCHIVE = ROOT.parent / "shared" / "corpora" / "20news-bydate.tar.gz"
DEFAULT_FULL = ROOT / "corpora" / "full" / "20news-bydate"

# name → (kind, description); kind says which worker function runs it.
SYSTEMS = {
    "textnb mnb a=1": ("textnb", "TextClassifier(model='multinomial', alpha=1.0, fit_prior=True, norm=None)"),
    "textnb default": ("textnb", "TextClassifier()"),
    "sklearn count+mnb": ("sklearn", "CountVectorizer() + MultinomialNB(alpha=1.0)"),
    "sklearn count+cnb": ("sklearn", "CountVectorizer() + ComplementNB(alpha=1.0)"),
    "sklearn tfidf+mnb": ("sklearn", "TfidfVectorizer() + MultinomialNB(alpha=0.01)"),
}
REFERENCE = "sklearn count+mnb"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench_20ng.py",
        description="Benchmark textnb against scikit-learn on 20 Newsgroups (bydate).")
    parser.add_argument("--data", type=Path,
                        help="directory holding 20news-bydate-train/ and 20news-bydate-test/")
    parser.add_argument("--archive", type=Path, default=DEFAULT_ARCHIVE,
                        help=f"20news-bydate.tar.gz to unpack when --data is not given "
                             f"(default: {DEFAULT_ARCHIVE})")
    parser.add_argument("--jobs", type=int,
                        help="textnb's processes (TextClassifier n_jobs; default: textnb's "
                             "default, every core)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run every system N times, in rotating order, and keep each "
                             "stage's fastest time (default 1; use 3 on a busy machine)")
    parser.add_argument("--systems", nargs="+", choices=list(SYSTEMS), metavar="NAME",
                        help=f"run only these systems ({'; '.join(SYSTEMS)})")
    parser.add_argument("--json", type=Path, help="also write the measurements to this file")
    parser.add_argument("--worker", choices=list(SYSTEMS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.jobs is not None and (args.jobs == 0 or args.jobs < -1):
        parser.error("--jobs must be a positive number of processes, or -1 for all cores")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    if args.worker:
        print(json.dumps(run_system(args.worker, args.data, args.jobs)))
        return 0
    try:
        return run(args)
    except BenchError as error:
        print(f"bench_20ng: error: {error}", file=sys.stderr)
        return 1


class BenchError(Exception):
    """A problem worth one line on stderr."""


def run(args: argparse.Namespace) -> int:
    names = args.systems or list(SYSTEMS)
    if not _has_sklearn():
        skipped = [n for n in names if SYSTEMS[n][0] == "sklearn"]
        if skipped:
            print(f"scikit-learn is not installed: skipping {', '.join(skipped)}", file=sys.stderr)
        names = [n for n in names if SYSTEMS[n][0] != "sklearn"]
    with tempfile.TemporaryDirectory(prefix="bench20ng-") as scratch:
        data = _data_dir(args, Path(scratch))
        print(f"20 Newsgroups bydate from {data}; textnb n_jobs={args.jobs or 'default'}; "
              f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}", flush=True)
        runs: dict[str, list[dict]] = {name: [] for name in names}
        start = time.perf_counter()
        for round_ in range(args.repeat):
            # Rotate the order, so no system always runs first (cold caches) or last.
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                print(f"  run {round_ + 1}/{args.repeat}: {name} ...", end="", flush=True)
                r = _run_worker(name, data, args.jobs)
                runs[name].append(r)
                print(f" {r['prepare_s'] + r['fit_s'] + r['predict_s']:.1f} s", flush=True)
        print(f"(all runs: {time.perf_counter() - start:.0f} s)\n")
    results = {name: _best(rs) for name, rs in runs.items()}
    print(report(results, args.repeat))
    if args.json:
        args.json.write_text(json.dumps({"jobs": args.jobs, "results": results}, indent=2) + "\n")
    return 0


def _data_dir(args: argparse.Namespace, scratch: Path) -> Path:
    if args.data is not None:
        data = args.data
    elif DEFAULT_FULL.is_dir():
        data = DEFAULT_FULL
    else:
        if not args.archive.is_file():
            raise BenchError(f"no --data given and no archive at '{args.archive}' "
                             f"(run scripts/fetch_corpora.py, or give --data or --archive)")
        sys.path.insert(0, str(HERE))
        import fetch_corpora
        print(f"unpacking {args.archive} into a temporary directory ...", flush=True)
        try:
            fetch_corpora.unpack(args.archive, scratch, {"20news-bydate-train", "20news-bydate-test"},
                                 lambda *a: None)
        except fetch_corpora.FetchError as error:
            raise BenchError(str(error)) from None
        data = scratch / "20news-bydate"
    for split in ("20news-bydate-train", "20news-bydate-test"):
        if not (data / split).is_dir():
            raise BenchError(f"'{data}' has no {split}/ directory")
    return data.resolve()


def _run_worker(name: str, data: Path, jobs: int | None) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name,
               "--data", str(data)] + ([] if jobs is None else ["--jobs", str(jobs)])
    # An installed textnb has compiled modules (pip writes .pyc files): PYTHONDONTWRITEBYTECODE,
    # set on some machines, would make its worker processes compile them at every start.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BenchError(f"{name} failed (exit {done.returncode}): {tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _best(runs: list[dict]) -> dict:
    """Each stage's fastest time and the largest peak memory over repeated runs."""
    best = dict(runs[0])
    for key in ("read_s", "prepare_s", "fit_s", "predict_s", "cpu_s"):
        best[key] = min(r[key] for r in runs)
    for key in ("rss_after_read_kib", "rss_peak_kib", "rss_workers_kib"):
        best[key] = max(r[key] for r in runs)
    best["runs"] = len(runs)
    return best


def _has_sklearn() -> bool:
    import importlib.util
    return importlib.util.find_spec("sklearn") is not None


# -- one system, in its own process ------------------------------------------------------------

def _files(split_dir: Path) -> tuple[list[Path], list[str]]:
    paths, labels = [], []
    for group in sorted(p for p in split_dir.iterdir() if p.is_dir()):
        for path in sorted(group.iterdir(), key=lambda p: p.name):
            if path.is_file():
                paths.append(path)
                labels.append(group.name)
    return paths, labels


def _children_cpu() -> float:
    """CPU seconds of the worker processes that have ended and been waited for."""
    times = os.times()
    return times.children_user + times.children_system


def _maxrss_kib(who: int = resource.RUSAGE_SELF) -> int:
    return resource.getrusage(who).ru_maxrss  # KiB on Linux (bytes on macOS)


def run_system(name: str, data: Path, jobs: int | None) -> dict:
    import numpy as np

    kind, _ = SYSTEMS[name]
    train_paths, y_train = _files(data / "20news-bydate-train")
    test_paths, y_test = _files(data / "20news-bydate-test")
    if kind == "textnb":
        # Imports are not timed, scikit-learn's (scipy's included) nor textnb's: textnb imports
        # scipy.sparse on first use, to score many documents at once, so it is imported here.
        import scipy.sparse  # noqa: F401
        import textnb  # noqa: F401
    else:
        from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
        from sklearn.naive_bayes import ComplementNB, MultinomialNB

    t0 = time.perf_counter()
    train_raw = [p.read_bytes() for p in train_paths]
    test_raw = [p.read_bytes() for p in test_paths]
    t_read = time.perf_counter() - t0
    rss_read = _maxrss_kib()

    t0, cpu0, children0 = time.perf_counter(), time.process_time(), _children_cpu()
    note = ""
    if kind == "textnb":  # bytes are parsed as mail/news where they are tokenized
        train, test = train_raw, test_raw
    else:  # scikit-learn's fetch_20newsgroups decodes the posts as latin-1
        train = [r.decode("latin-1") for r in train_raw]
        test = [r.decode("latin-1") for r in test_raw]
    t_prepare = time.perf_counter() - t0

    if kind == "textnb":
        from textnb import TextClassifier
        if name == "textnb default":
            model = TextClassifier(n_jobs=jobs)
        else:
            # scikit-learn's model, smoothing and priors; textnb's tokens (stop words included).
            model = TextClassifier(model="multinomial", alpha=1.0, fit_prior=True, norm=None,
                                   n_jobs=jobs)
        t0 = time.perf_counter()
        model.fit(train, y_train)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        predicted = model.predict(test)
        t_predict = time.perf_counter() - t0
        n_terms = len(model.vocabulary_)
        cpu = time.process_time() - cpu0
        with tempfile.TemporaryDirectory() as scratch:
            from textnb import save_model
            save_model(model, Path(scratch) / "20ng.model")
            model_bytes = (Path(scratch) / "20ng.model").stat().st_size
    else:
        vectorizer = TfidfVectorizer() if "tfidf" in name else CountVectorizer()
        nb = {"sklearn count+mnb": MultinomialNB(alpha=1.0),
              "sklearn count+cnb": ComplementNB(alpha=1.0),
              "sklearn tfidf+mnb": MultinomialNB(alpha=0.01)}[name]
        t0 = time.perf_counter()
        nb.fit(vectorizer.fit_transform(train), y_train)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        predicted = nb.predict(vectorizer.transform(test))
        t_predict = time.perf_counter() - t0
        n_terms = len(vectorizer.vocabulary_)
        cpu = time.process_time() - cpu0
        import pickle
        model_bytes = len(pickle.dumps((vectorizer, nb), protocol=pickle.HIGHEST_PROTOCOL))
    rss_children = 0
    if kind == "textnb" and jobs != 1:
        # Reap the worker processes so that RUSAGE_CHILDREN includes their peak and CPU.
        from textnb.workers import _shut_down
        _shut_down()
        rss_children = _maxrss_kib(resource.RUSAGE_CHILDREN)
        cpu += _children_cpu() - children0
    accuracy = float(np.mean(np.asarray(predicted) == np.asarray(y_test)))
    return {"system": name, "description": SYSTEMS[name][1], "note": note,
            "n_train": len(train), "n_test": len(test), "n_terms": n_terms,
            "read_s": t_read, "prepare_s": t_prepare, "fit_s": t_fit, "predict_s": t_predict,
            "cpu_s": cpu, "model_bytes": model_bytes,
            "accuracy": accuracy, "rss_after_read_kib": rss_read, "rss_peak_kib": _maxrss_kib(),
            "rss_workers_kib": rss_children}


# -- the table -------------------------------------------------------------------------------

def report(results: dict[str, dict], repeat: int = 1) -> str:
    rows = []
    header = ["system", "prepare doc/s", "fit doc/s", "predict doc/s", "end-to-end s",
              "CPU s", "peak RSS MiB", "Δ after read", "model MiB", "accuracy", "terms"]
    for name, r in results.items():
        n_all = r["n_train"] + r["n_test"]
        total = r["prepare_s"] + r["fit_s"] + r["predict_s"]
        prepare = f"{n_all / r['prepare_s']:,.0f}" if r["prepare_s"] > 1e-3 else "-"
        rows.append([name, prepare, f"{r['n_train'] / r['fit_s']:,.0f}",
                     f"{r['n_test'] / r['predict_s']:,.0f}", f"{total:.2f}", f"{r['cpu_s']:.2f}",
                     f"{r['rss_peak_kib'] / 1024:.0f}",
                     f"+{(r['rss_peak_kib'] - r['rss_after_read_kib']) / 1024:.0f}",
                     f"{r['model_bytes'] / 2**20:.1f}",
                     f"{r['accuracy']:.4f}", f"{r['n_terms']:,}"])
    lines = [_table(header, rows)]
    first = next(iter(results.values()))
    lines.append(f"\n{first['n_train']} training and {first['n_test']} test posts; reading the "
                 f"files took {first['read_s']:.2f} s (not counted). prepare = bytes → str "
                 f"(sklearn; textnb parses the bytes in fit and predict); fit = parse + tokenize "
                 f"+ vocabulary + count + fit; "
                 f"end-to-end = prepare + fit + predict."
                 + (f" Times: the fastest of {repeat} runs." if repeat > 1 else ""))
    lines.append("CPU s = processor time of prepare + fit + predict, the worker processes' "
                 "included: on a busy machine it says more than wall-clock time. Model = the "
                 "model file's size (textnb save_model; scikit-learn: the pickled vectorizer "
                 "and model).")
    lines.append("Peak RSS = ru_maxrss of the system's own subprocess (interpreter, imports and "
                 "posts included); Δ after read = peak minus the peak before the prepare stage.")
    workers = {n: r["rss_workers_kib"] for n, r in results.items() if r["rss_workers_kib"]}
    if workers:
        lines.append("textnb tokenizing workers' peak RSS (each): " + ", ".join(
            f"{n} {kib / 1024:.0f} MiB" for n, kib in workers.items()))
    notes = {r["note"] for r in results.values() if r["note"]}
    lines.extend(f"NOTE: {n}" for n in notes)
    for name, r in results.items():
        lines.append(f"  {name:18} {r['description']}")
    if REFERENCE in results:
        ref = results[REFERENCE]
        ratio_rows = []
        for name, r in results.items():
            if SYSTEMS[name][0] != "textnb":
                continue
            total = r["prepare_s"] + r["fit_s"] + r["predict_s"]
            ref_total = ref["prepare_s"] + ref["fit_s"] + ref["predict_s"]
            ratio_rows.append([name, f"{r['fit_s'] / ref['fit_s']:.2f}",
                               f"{r['predict_s'] / ref['predict_s']:.2f}",
                               f"{total / ref_total:.2f}", f"{r['cpu_s'] / ref['cpu_s']:.2f}",
                               f"{r['rss_peak_kib'] / ref['rss_peak_kib']:.2f}",
                               f"{r['accuracy'] - ref['accuracy']:+.4f}"])
        if ratio_rows:
            lines.append(f"\ntextnb / {REFERENCE} (time ratios > 1: textnb slower):")
            lines.append(_table(["system", "fit time", "predict time", "end-to-end time",
                                 "CPU time", "peak RSS", "accuracy diff"], ratio_rows))
    return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    fmt = lambda row: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                                for i, (c, w) in enumerate(zip(row, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


if __name__ == "__main__":
    sys.exit(main())
