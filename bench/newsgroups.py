"""Benchmark textnb against scikit-learn on 20 Newsgroups (bydate split): speed, memory, accuracy.

Systems, each trained on 20news-bydate-train (11314 posts) and tested on 20news-bydate-test
(7532 posts):

* ``textnb command``  — what a user types, at its defaults: ``textnb train -m MODEL
  20news-bydate-train/`` and ``textnb classify -m MODEL --format json 20news-bydate-test/``,
  fresh processes (start-up, imports and reading the files included: its fit and predict are
  the two commands' wall times, its peak RSS the larger of theirs, worker processes included);
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

Run (from the repository root)::

    python -m bench.newsgroups                         # corpora/full/20news-bydate, else the shared archive
    python -m bench.newsgroups --data corpora/full/20news-bydate --jobs 1
    python -m bench.newsgroups --json results.json     # also write the raw numbers

Without ``--data`` it uses ``corpora/full/20news-bydate`` (python -m bench.fetch_corpora) if it
exists, else ``--archive`` (default ``../shared/corpora/20news-bydate.tar.gz``) unpacked once
into the cache (bench.common.corpora). A run takes about 25 s on 2 cores (``--repeat 3``:
about a minute and a half).
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
from bench.common.measure import ENV, Stopwatch, maxrss_kib, workers
from bench.common.report import table as _table
from bench.common.systems import command_info, classify, has_sklearn, train

# name → (kind, description); kind says which function runs it.
SYSTEMS = {
    "textnb command": ("command", "textnb train / textnb classify, defaults, fresh processes"),
    "textnb mnb a=1": ("textnb", "TextClassifier(model='multinomial', alpha=1.0, fit_prior=True, norm=None)"),
    "textnb default": ("textnb", "TextClassifier()"),
    "sklearn count+mnb": ("sklearn", "CountVectorizer() + MultinomialNB(alpha=1.0)"),
    "sklearn count+cnb": ("sklearn", "CountVectorizer() + ComplementNB(alpha=1.0)"),
    "sklearn tfidf+mnb": ("sklearn", "TfidfVectorizer() + MultinomialNB(alpha=0.01)"),
}
REFERENCE = "sklearn count+mnb"


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.news_data(parser)
    parser.add_argument("--jobs", type=int,
                        help="textnb's processes (TextClassifier n_jobs; default: textnb's "
                             "default, every core)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run every system N times, in rotating order, and keep each "
                             "stage's fastest time (default 1; use 3 on a busy machine)")
    parser.add_argument("--systems", nargs="+", choices=list(SYSTEMS), metavar="NAME",
                        help=f"run only these systems ({'; '.join(SYSTEMS)})")
    options.no_command(parser)
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
    return options.run("bench.newsgroups", lambda: run(args))


def run(args: argparse.Namespace) -> int:
    names = args.systems or [n for n in SYSTEMS if args.command or SYSTEMS[n][0] != "command"]
    if not has_sklearn():
        skipped = [n for n in names if SYSTEMS[n][0] == "sklearn"]
        if skipped:
            print(f"scikit-learn is not installed: skipping {', '.join(skipped)}", file=sys.stderr)
        names = [n for n in names if SYSTEMS[n][0] != "sklearn"]
    with tempfile.TemporaryDirectory(prefix="bench20ng-") as scratch:
        data = news_dir(args.data, args.archive)
        print(f"20 Newsgroups bydate from {data}; textnb n_jobs={args.jobs or 'default'}; "
              f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}", flush=True)
        runs: dict[str, list[dict]] = {name: [] for name in names}
        start = time.perf_counter()
        for round_ in range(args.repeat):
            # Rotate the order, so no system always runs first (cold caches) or last.
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                print(f"  run {round_ + 1}/{args.repeat}: {name} ...", end="", flush=True)
                r = (run_command(data, args.jobs, Path(scratch)) if SYSTEMS[name][0] == "command"
                     else _run_worker(name, data, args.jobs))
                runs[name].append(r)
                print(f" {r['prepare_s'] + r['fit_s'] + r['predict_s']:.1f} s", flush=True)
        print(f"(all runs: {time.perf_counter() - start:.0f} s)\n")
    results = {name: _best(rs) for name, rs in runs.items()}
    print(report(results, args.repeat))
    if args.json:
        args.json.write_text(json.dumps({"jobs": args.jobs, "results": results}, indent=2) + "\n")
    return 0


def _run_worker(name: str, data: Path, jobs: int | None) -> dict:
    command = [sys.executable, "-m", "bench.newsgroups", "--worker", name,
               "--data", str(data)] + ([] if jobs is None else ["--jobs", str(jobs)])
    # ENV: without PYTHONDONTWRITEBYTECODE, which would make the worker processes compile
    # textnb's modules at every start.
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                          env={**ENV, "PYTHONPATH": str(ROOT)})
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
        best[key] = None if best[key] is None else max(r[key] for r in runs)
    best["runs"] = len(runs)
    return best


# -- one system, in its own process ------------------------------------------------------------

def run_system(name: str, data: Path, jobs: int | None) -> dict:
    import numpy as np

    kind, _ = SYSTEMS[name]
    train_paths, y_train = news_files(data / "20news-bydate-train")
    test_paths, y_test = news_files(data / "20news-bydate-test")
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
    rss_read = maxrss_kib()

    t0, cpu0 = time.perf_counter(), time.process_time()
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
        with Stopwatch() as fit:
            model.fit(train, y_train)
        with Stopwatch() as predict:
            predicted = model.predict(test)
        t_fit, t_predict = fit.wall, predict.wall
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
        with Stopwatch() as fit:
            nb.fit(vectorizer.fit_transform(train), y_train)
        with Stopwatch() as predict:
            predicted = nb.predict(vectorizer.transform(test))
        t_fit, t_predict = fit.wall, predict.wall
        n_terms = len(vectorizer.vocabulary_)
        cpu = time.process_time() - cpu0
        import pickle
        model_bytes = len(pickle.dumps((vectorizer, nb), protocol=pickle.HIGHEST_PROTOCOL))
    rss_children = 0
    if kind == "textnb" and jobs != 1:
        # The worker processes textnb keeps for the next call: their peak and CPU so far.
        rss_children, workers_cpu = workers()
        cpu += workers_cpu
    accuracy = float(np.mean(np.asarray(predicted) == np.asarray(y_test)))
    return {"system": name, "description": SYSTEMS[name][1], "note": note,
            "n_train": len(train), "n_test": len(test), "n_terms": n_terms,
            "read_s": t_read, "prepare_s": t_prepare, "fit_s": t_fit, "predict_s": t_predict,
            "cpu_s": cpu, "model_bytes": model_bytes,
            "accuracy": accuracy, "rss_after_read_kib": rss_read, "rss_peak_kib": maxrss_kib(),
            "rss_workers_kib": rss_children}


def run_command(data: Path, jobs: int | None, scratch: Path) -> dict:
    """The command at its defaults (``-j`` with ``--jobs``): ``textnb train`` of the training
    directory, ``textnb classify`` of the test one; each a fresh process, measured with the
    worker processes it waited for."""
    jobs_option = [] if jobs is None else ["--jobs", str(jobs)]
    model = scratch / "command.model"
    trained, _ = train(model, [data / "20news-bydate-train"], ["-q", *jobs_option])
    classified, records = classify(model, [data / "20news-bydate-test"])
    truth = {str(p): label for p, label in zip(*news_files(data / "20news-bydate-test"))}
    if len(records) != len(truth):
        raise BenchError(f"textnb classify labelled {len(records)} of {len(truth)} test posts")
    return {"system": "textnb command", "description": SYSTEMS["textnb command"][1], "note": "",
            "n_train": len(news_files(data / "20news-bydate-train")[0]), "n_test": len(truth),
            "n_terms": command_info(model)["terms"], "read_s": 0.0, "prepare_s": 0.0,
            "fit_s": trained.wall, "predict_s": classified.wall,
            "cpu_s": trained.cpu + classified.cpu, "model_bytes": model.stat().st_size,
            "accuracy": sum(truth[r["source"]] == r["label"] for r in records) / len(truth),
            "rss_after_read_kib": None,
            "rss_peak_kib": 1024 * max(trained.rss, classified.rss), "rss_workers_kib": 0}


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
                     "-" if r["rss_after_read_kib"] is None else
                     f"+{(r['rss_peak_kib'] - r['rss_after_read_kib']) / 1024:.0f}",
                     f"{r['model_bytes'] / 2**20:.1f}",
                     f"{r['accuracy']:.4f}", f"{r['n_terms']:,}"])
    lines = [_table(header, rows)]
    first = next((r for n, r in results.items() if SYSTEMS[n][0] != "command"),
                 next(iter(results.values())))
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
    if any(SYSTEMS[n][0] == "command" for n in results):
        lines.append("textnb command: fit = `textnb train`, predict = `textnb classify`, each a "
                     "fresh process, wall time (start-up, imports and reading the files "
                     "included); peak RSS: the larger of the two, of the textnb process or of a "
                     "worker process it waited for.")
    pools = {n: r["rss_workers_kib"] for n, r in results.items() if r["rss_workers_kib"]}
    if pools:
        lines.append("textnb tokenizing workers' peak RSS (each): " + ", ".join(
            f"{n} {kib / 1024:.0f} MiB" for n, kib in pools.items()))
    notes = {r["note"] for r in results.values() if r["note"]}
    lines.extend(f"NOTE: {n}" for n in notes)
    for name, r in results.items():
        lines.append(f"  {name:18} {r['description']}")
    if REFERENCE in results:
        ref = results[REFERENCE]
        ratio_rows = []
        for name, r in results.items():
            if SYSTEMS[name][0] == "sklearn":
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


if __name__ == "__main__":
    sys.exit(main())
