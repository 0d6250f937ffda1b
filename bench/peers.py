"""textnb against the strongest peers: scikit-learn, Vowpal Wabbit and fastText, every system
trained and classifying as processes, on 20 Newsgroups and SpamAssassin.

What it measures
----------------
Each system trains on the training part in one process and classifies the test part in
another, both from the files on disk (reading, parsing and tokenizing counted), best of
``--rounds`` rounds (default 3), the systems' order rotated each round:

* **textnb** at its defaults, the command a user types: ``textnb train -q -m MODEL DIRS`` (one
  directory of links a class) and ``textnb classify -m MODEL --format tsv TEST`` (``--format
  json`` on SpamAssassin, whose spam log-odds rank the messages: the tsv line's log-odds is its
  verdict's, and "unsure" names no class); and ``textnb train --tune``. The textnb on PATH,
  else beside this Python, or ``--textnb CMD``.
* **scikit-learn** ``CountVectorizer()`` + ``MultinomialNB()``, both at their defaults.
* **scikit-learn SGD**: ``TfidfVectorizer(ngram_range=(1, 2))`` (words and word pairs) +
  ``SGDClassifier(loss="modified_huber", random_state=0)``.
* **NB-weighted logistic regression** (Wang & Manning, "Baselines and bigrams", 2012: the
  log-count-ratio scaling of NBSVM): binary words and pairs (``CountVectorizer(ngram_range=(1,
  2), binary=True)``) scaled by r = log((p/‖p‖₁)/(q/‖q‖₁)), p and q the class's and the rest's
  feature counts plus 1, and ``LogisticRegression(solver="liblinear", dual=True)`` (C = 1) on
  them, one a class (one for two classes).
* **Vowpal Wabbit** (its Python API driving its own parser: ``-d FILE``), logistic loss,
  ``--oaa K`` for K > 2 classes, two classes ranked by the raw score (``-r``: ``-p`` clips it
  to ±50); **fastText** (``train_supervised``, every core). Both tuned on
  a validation split of the training part only (80/20, stratified, ``--seed``): Vowpal Wabbit
  over passes, learning rate, n-grams and bits, fastText over epochs, learning rate, word
  n-grams and hash buckets; the setting with the best validation accuracy (SpamAssassin: 1 −
  AUC, then accuracy; ties: the first in the grid) then trains on the whole training part.
  The search is timed once, apart ("tune s"); textnb ``--tune`` searches inside its train s.

The peers run in a Python of their own: a virtual environment under the bench cache
(``$TEXTNB_BENCH_CACHE``, else ``~/.cache/textnb-bench``) that this study makes and fills once
with ``pip install numpy scikit-learn fasttext-wheel vowpalwabbit`` (a package at a time), or
``--peers-python PYTHON``. They run bench/_peers_runner.py, which imports numpy and the peer's
package only. A peer that does not install or import is skipped, with one line saying why.

Corpora: 20 Newsgroups bydate, trained on 20news-bydate-train/ and tested on
20news-bydate-test/ as published; SpamAssassin (all 6,046 messages), the stratified 70/30
split of ``--seed`` (default 0) that bench.spam makes. Every system reads the same files,
first read once so that all find them in the page cache; the peers get the training documents
in an order shuffled by the seed (the online learners learn in the order given).

Reported per system: test accuracy (of the most probable class, the largest score: on
SpamAssassin textnb's by its spam log-odds, not its label at the cutoffs it learned for an FPR
of 0.1 %); on SpamAssassin also 1 − AUC (the share of (spam, ham) pairs ranked the wrong way by
each system's spam margin) and the spam caught by the best spam cutoff that calls at most 0.1 %
of the test ham spam (chosen on the test scores: what the ranking allows); train and classify
wall seconds of the processes (the fastest round); train peak RSS in MiB (the largest round; of
the process or of the largest worker process it waited for); the model's size on disk in MiB;
and each figure's ratio to textnb at its defaults. Accuracies that differ between rounds
(fastText on two threads) are given as their range.

Run (from the repository root)::

    python -m bench.peers                          # both corpora, every system, 3 rounds
    python -m bench.peers --corpus newsgroups --only textnb,textnb-tune,vw
    python -m bench.peers --quick --rounds 1       # a subsample of each corpus: a few minutes
    python -m bench.peers --markdown               # the tables as Markdown (docs/design/peers.md)

``--newsgroups DIR`` (holding 20news-bydate-train/ and -test/) and ``--spamassassin DIR``
default to corpora/full/..., else the archives in ../shared/corpora unpacked into the cache.
The whole run takes about 40 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.common import BenchError, args as options
from bench.common.corpora import cache_dir, list_spam, news_dir, news_files, spam_dir
from bench.common.measure import ENV, Usage, warm
from bench.common.metrics import best_not_caught, roc_auc
from bench.common.report import table
from bench.common.splits import stratified_sample, stratified_split
from bench.common.systems import console_script, lay_out

RUNNER = Path(__file__).with_name("_peers_runner.py")
SYSTEMS = {
    "textnb": "textnb train -m MODEL DIRS; textnb classify -m MODEL (defaults)",
    "textnb-tune": "textnb train --tune -m MODEL DIRS; textnb classify -m MODEL",
    "sklearn-nb": "scikit-learn CountVectorizer + MultinomialNB (defaults)",
    "sklearn-sgd": "scikit-learn TF-IDF words + pairs + SGDClassifier (modified Huber)",
    "nblr": "NB-weighted logistic regression (NBSVM-style), binary words + pairs",
    "vw": "Vowpal Wabbit, tuned (passes, learning rate, n-grams, bits)",
    "fasttext": "fastText, tuned (epochs, learning rate, word n-grams, buckets)",
}
REFERENCE = "textnb"
# What each peer needs in its environment, installed a package at a time, in this order.
PACKAGES = ["numpy", "scikit-learn", "fasttext-wheel", "vowpalwabbit"]
NEEDS = {"sklearn-nb": "scikit-learn", "sklearn-sgd": "scikit-learn", "nblr": "scikit-learn",
         "fasttext": "fasttext-wheel", "vw": "vowpalwabbit"}


def grid(**axes) -> list[dict]:
    """Every combination of the axes' values, the first axis varying slowest."""
    settings = [{}]
    for name, values in axes.items():
        settings = [{**s, name: v} for s in settings for v in values]
    return settings


# A first grid (passes 3, 10; bits 18, 20; epochs 5, 25; learning rates 0.25, 1) chose its
# largest passes, bits, epochs and rates on both corpora: these reach past them.
GRIDS = {
    "vw": grid(passes=[5, 20], learning_rate=[0.5, 1.0], ngrams=[1, 2], bits=[20, 22]),
    # Buckets hold the word pairs' vectors only: with single words fastText allocates none.
    "fasttext": [s for s in grid(epochs=[10, 25, 50], learning_rate=[0.5, 1.0], ngrams=[1, 2],
                                 buckets=[200_000, 2_000_000])
                 if s["ngrams"] > 1 or s["buckets"] == 2_000_000],
}
QUICK_GRIDS = {
    "vw": grid(passes=[1, 3], learning_rate=[0.5], ngrams=[2], bits=[18]),
    "fasttext": grid(epochs=[5], learning_rate=[0.25, 1.0], ngrams=[2], buckets=[20_000]),
}
QUICK = (1000, 500)        # --quick: at most this many training and test documents
VALIDATION = 0.2           # the share of the training part that tunes the peers
MAX_FPR = 0.001


@dataclass
class Corpus:
    name: str
    train: list[Path]
    y_train: np.ndarray
    test: list[Path]
    y_test: np.ndarray
    positive: str | None = None        # the spam class, whose margin ranks the messages


@dataclass
class Round:
    """One round of a system: what training and classifying cost, and the test predictions."""
    train: Usage
    classify: Usage
    model_mib: float
    labels: np.ndarray
    scores: np.ndarray | None          # the positive class's margin (two classes)


@dataclass
class Runs:
    system: str
    rounds: list[Round] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    tune_s: float | None = None


# -- processes -------------------------------------------------------------------------------

# A fresh process measures one command: RUSAGE_CHILDREN then holds the peak RSS of the command
# or of the largest process it waited for. (bench.common.measure.measure runs a source tree's
# textnb; here the command is the textnb given and the peers' Python.)
_PROBE = ("import json, resource, subprocess, sys, time\n"
          "t = time.perf_counter()\n"
          "done = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], 'wb'), "
          "stderr=subprocess.PIPE)\n"
          "wall = time.perf_counter() - t\n"
          "if done.returncode: sys.exit(done.stderr.decode(errors='replace')[-400:])\n"
          "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
          "print(json.dumps([wall, r.ru_utime + r.ru_stime, r.ru_maxrss]))\n")


def measured(command: list, out: Path, cwd: Path) -> Usage:
    """Wall seconds, CPU seconds and peak RSS (MiB) of ``command``, its stdout into ``out``."""
    done = subprocess.run([sys.executable, "-c", _PROBE, str(out), *map(str, command)],
                          capture_output=True, text=True, cwd=cwd, env=ENV)
    if done.returncode != 0:
        raise BenchError(f"{' '.join(map(str, command[:4]))} ... failed: "
                         f"{' '.join(done.stderr.split())[-300:]}")
    wall, cpu, kib = json.loads(done.stdout)
    return Usage(wall, cpu, kib / 1024)


def size_mib(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 2**20


# -- the peers' environment ------------------------------------------------------------------

def peers_python(given: str | None, wanted: list[str]) -> tuple[str, dict[str, str], dict]:
    """The peers' Python (``given``, else the bench cache's virtual environment, made and filled
    once), the wanted peers it cannot run and why, and the versions of those it can."""
    peers = [s for s in wanted if s in NEEDS]
    if not peers:
        return sys.executable, {}, {}
    failed: dict[str, str] = {}
    if given:
        python = shutil.which(given) or given
    else:
        python, failed = install([NEEDS[s] for s in peers])
    skipped, versions = {}, {}
    for system in peers:
        if NEEDS[system] in failed:
            skipped[system] = f"pip install {NEEDS[system]} failed: {failed[NEEDS[system]]}"
            continue
        try:
            done = subprocess.run([python, str(RUNNER), "check", system], capture_output=True,
                                  text=True, env=ENV, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as error:
            skipped[system] = f"{python} does not run ({error})"
            continue
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            skipped[system] = f"{NEEDS[system]} does not import in {python}: {last}"
        else:
            versions[NEEDS[system]] = done.stdout.strip()
    return python, skipped, versions


def install(packages: list[str]) -> tuple[str, dict[str, str]]:
    """The cache's peers environment with ``packages`` (and numpy) installed, each tried once a
    run until it installs: its Python, and the packages pip could not install and why."""
    venv = cache_dir() / f"peers-py{sys.version_info.major}.{sys.version_info.minor}"
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    failed = {}
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:   # one install at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not python.exists():
            print(f"making the peers' environment {venv} (once) ...", flush=True)
            done = subprocess.run([sys.executable, "-m", "venv", str(venv)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                reason = " ".join(done.stderr.split())[-200:]
                return str(python), {p: f"python -m venv failed: {reason}" for p in PACKAGES}
        stamp = venv / "installed.txt"
        have = set(stamp.read_text().split()) if stamp.exists() else set()
        for package in [p for p in PACKAGES if p in packages or p == "numpy"]:
            if package in have:
                continue
            print(f"pip install {package} into {venv} ...", flush=True)
            done = subprocess.run([str(python), "-m", "pip", "install", "-q", package],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
                failed[package] = " ".join((errors or done.stderr.splitlines() or ["?"])[-1]
                                           .split())[:200]
            else:
                have.add(package)
                stamp.write_text("\n".join(sorted(have)) + "\n")
    return str(python), failed


# -- corpora ---------------------------------------------------------------------------------

def newsgroups(data: Path | None) -> Corpus:
    root = news_dir(data)
    train, y_train = news_files(root / "20news-bydate-train")
    test, y_test = news_files(root / "20news-bydate-test")
    return Corpus("20 Newsgroups", train, np.array(y_train), test, np.array(y_test))


def spamassassin(data: Path | None, seed: int) -> Corpus:
    paths, y = list_spam(spam_dir(data))
    train, test = stratified_split(y, 0.7, seed)
    return Corpus("SpamAssassin", [Path(paths[i]) for i in train], y[train],
                  [Path(paths[i]) for i in test], y[test], positive="spam")


def quick(corpus: Corpus, seed: int) -> Corpus:
    """At most QUICK documents of each part, stratified, in their order."""
    def part(paths, y, n):
        keep = np.sort(stratified_sample(y, np.arange(y.size), n, seed)) if y.size > n \
            else np.arange(y.size)
        return [paths[i] for i in keep], y[keep]
    return Corpus(corpus.name, *part(corpus.train, corpus.y_train, QUICK[0]),
                  *part(corpus.test, corpus.y_test, QUICK[1]), positive=corpus.positive)


def listing(path: Path, paths: list[Path], labels) -> Path:
    path.write_text("".join(f"{label}\t{p}\n" for p, label in zip(paths, labels)))
    return path


# -- one round of a system -------------------------------------------------------------------

def textnb_round(textnb: str, corpus: Corpus, work: Path, tune: bool) -> Round:
    """``textnb train [--tune]`` on one directory of links a class, ``textnb classify`` of one
    directory of links to the test documents (laid out once, in ``work``)."""
    classes = sorted(p for p in (work / "train").iterdir())
    test = work / "test" / "documents"
    model = work / ("textnb-tune.model" if tune else "textnb.model")
    trained = measured([textnb, "train", "-q", "-m", model, *(["--tune"] if tune else []),
                        *classes], work / "train.out", work)
    form = "json" if corpus.positive else "tsv"
    out = work / f"classify.{form}"
    classified = measured([textnb, "classify", "-m", model, "--format", form, test], out, work)
    rows = {}
    other = next((p.name for p in classes if p.name != corpus.positive), None)
    for line in out.read_text().splitlines():
        if form == "json":   # the most probable class, not the label at the learned cutoffs
            record = json.loads(line)
            margin = record["spam_log_odds"]
            rows[Path(record["source"]).name] = (corpus.positive if margin > 0 else other, margin)
        elif line:
            source, verdict, _, _ = line.split("\t")
            rows[Path(source).name] = (verdict, None)
    names = sorted(p.name for p in test.iterdir())
    if set(rows) != set(names):
        raise BenchError(f"textnb classify labelled {len(rows)} of {len(names)} test documents")
    labels = np.array([rows[n][0] for n in names])
    scores = np.array([rows[n][1] for n in names], dtype=float) if corpus.positive else None
    return Round(trained, classified, size_mib(model), labels, scores)


def peer_round(system: str, python: str, settings: dict, work: Path) -> Round:
    """The runner's train and classify steps, each a process of the peers' Python."""
    model = work / f"{system}.model"
    shutil.rmtree(model, ignore_errors=True)
    trained = measured([python, RUNNER, "train", system, json.dumps(settings),
                        work / "train.tsv", model], work / f"{system}.train.out", work)
    out = work / f"{system}.predictions"
    classified = measured([python, RUNNER, "classify", system, model, work / "test.tsv", out],
                          work / f"{system}.classify.out", work)
    labels, scores = read_predictions(out.read_text())
    return Round(trained, classified, size_mib(model), labels, scores)


def read_predictions(text: str) -> tuple[np.ndarray, np.ndarray | None]:
    rows = [line.split("\t") for line in text.splitlines()]
    labels = np.array([r[0] for r in rows])
    if rows and all(r[1] for r in rows):
        return labels, np.array([float(r[1]) for r in rows])
    return labels, None


def tune(system: str, python: str, corpus: Corpus, work: Path, seed: int,
         settings_grid: list[dict]) -> tuple[dict, float, list[list]]:
    """The runner's search on a validation split of the training part: the best setting, the
    search's wall seconds and a row a setting (its figures on the validation documents)."""
    fit, held = stratified_split(corpus.y_train, 1 - VALIDATION, seed)
    fit = np.random.default_rng(seed).permutation(fit)     # a random order, as train.tsv
    listing(work / "tune-train.tsv", [corpus.train[i] for i in fit], corpus.y_train[fit])
    listing(work / "tune-valid.tsv", [corpus.train[i] for i in held], corpus.y_train[held])
    out = work / f"{system}.tune"
    t0 = time.perf_counter()
    done = subprocess.run([python, str(RUNNER), "tune", system, json.dumps(settings_grid),
                           str(work / "tune-train.tsv"), str(work / "tune-valid.tsv"), str(out)],
                          capture_output=True, text=True, cwd=work, env=ENV)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise BenchError(f"tuning {system} failed: {' '.join(done.stderr.split())[-300:]}")
    truth = corpus.y_train[held]
    rows, best, best_key = [], None, None
    for line in out.read_text().splitlines():
        result = json.loads(line)
        setting = ", ".join(f"{k} {v}" for k, v in result["settings"].items())
        if "error" in result:
            rows.append([setting, "failed", "", " ".join(result["error"].split())[:60]])
            continue
        accuracy = float(np.mean(np.array(result["labels"]) == truth))
        miss = (1 - roc_auc(truth == corpus.positive, np.array(result["scores"]))
                if corpus.positive else None)
        key = (-miss, accuracy) if corpus.positive else (accuracy,)
        rows.append([setting, f"{accuracy:.4f}",
                     "" if miss is None else f"{100 * miss:.4f} %", f"{result['seconds']:.1f}"])
        if best_key is None or key > best_key:
            best, best_key = result["settings"], key
    if best is None:
        raise BenchError(f"no setting of {system} trained on the validation split")
    return best, seconds, rows


# -- a corpus --------------------------------------------------------------------------------

def run_corpus(corpus: Corpus, systems: list[str], textnb: str, python: str, args,
               scratch: Path) -> dict[str, Runs]:
    work = Path(tempfile.mkdtemp(prefix=corpus.name.split()[0].lower() + "-", dir=scratch))
    lay_out(work / "train", {c: [p for p, y in zip(corpus.train, corpus.y_train) if y == c]
                             for c in np.unique(corpus.y_train)})
    lay_out(work / "test", {"documents": corpus.test})
    # In a seeded random order: the online learners (Vowpal Wabbit, fastText, SGD) learn in
    # the order given, and a corpus listed class by class would teach them its last class.
    order = np.random.default_rng(args.seed).permutation(len(corpus.train))
    listing(work / "train.tsv", [corpus.train[i] for i in order], corpus.y_train[order])
    listing(work / "test.tsv", corpus.test, ["?"] * len(corpus.test))
    warm(corpus.train + corpus.test)
    print(f"\n{corpus.name}: {len(corpus.train):,} training and {len(corpus.test):,} test "
          f"documents, {np.unique(corpus.y_train).size} classes", flush=True)
    runs = {s: Runs(s) for s in systems}
    for system in [s for s in systems if s in GRIDS]:
        print(f"  tuning {system} on {1 - VALIDATION:.0%} of the training part, scored on the "
              f"rest ...", flush=True)
        settings_grid = (QUICK_GRIDS if args.quick else GRIDS)[system]
        best, seconds, rows = tune(system, python, corpus, work, args.seed, settings_grid)
        runs[system].settings, runs[system].tune_s = best, seconds
        print(table(["setting", "accuracy", "1 - AUC" if corpus.positive else "", "s"], rows,
                    indent="    "))
        print(f"    chosen: {', '.join(f'{k} {v}' for k, v in best.items())} "
              f"({seconds:.0f} s in all)", flush=True)
    for round_ in range(args.rounds):
        shift = round_ % len(systems)
        for system in systems[shift:] + systems[:shift]:
            if system.startswith("textnb"):
                r = textnb_round(textnb, corpus, work, tune=system == "textnb-tune")
            else:
                r = peer_round(system, python, runs[system].settings, work)
            runs[system].rounds.append(r)
            print(f"  round {round_ + 1}/{args.rounds} {system}: train {r.train.wall:.1f} s, "
                  f"classify {r.classify.wall:.1f} s, accuracy "
                  f"{np.mean(r.labels == corpus.y_test):.4f}", flush=True)
    return runs


# -- the report ------------------------------------------------------------------------------

def figures(runs: Runs, corpus: Corpus) -> dict:
    """The best round's times, the largest peak, and each round's accuracy (and ranking)."""
    rounds = runs.rounds
    result = {"train_s": min(r.train.wall for r in rounds),
              "train_cpu_s": min(r.train.cpu for r in rounds),
              "train_peak_mib": max(r.train.rss for r in rounds),
              "classify_s": min(r.classify.wall for r in rounds),
              "classify_peak_mib": max(r.classify.rss for r in rounds),
              "model_mib": max(r.model_mib for r in rounds),
              "accuracy": [float(np.mean(r.labels == corpus.y_test)) for r in rounds],
              "settings": runs.settings, "tune_s": runs.tune_s,
              "rounds": [{"train": r.train._asdict(), "classify": r.classify._asdict()}
                         for r in rounds]}
    if corpus.positive:
        is_spam = corpus.y_test == corpus.positive
        result["one_minus_auc"] = [1 - roc_auc(is_spam, r.scores) for r in rounds]
        result["caught"] = [1 - best_not_caught(is_spam, r.scores, MAX_FPR) for r in rounds]
    return result


def span(values: list[float], form) -> str:
    low, high = min(values), max(values)
    return form(low) if form(low) == form(high) else f"{form(low)}–{form(high)}"


def times(value: float, reference: float | None) -> str:
    return f"{value / reference:.2f}×" if reference else "-"


def report(corpus: Corpus, results: dict[str, dict], markdown: bool) -> str:
    ref = results.get(REFERENCE)
    header = ["system", "accuracy"]
    if corpus.positive:
        header += ["1 − AUC", f"caught at FPR ≤ {100 * MAX_FPR:g} %"]
    header += ["train s", "×", "train peak MiB", "×", "classify s", "×", "model MiB", "×",
               "tune s"]
    rows = []
    for system, r in results.items():
        row = [system, span(r["accuracy"], lambda v: f"{v:.4f}")]
        if corpus.positive:
            row += [span(r["one_minus_auc"], lambda v: f"{100 * v:.3f} %"),
                    span(r["caught"], lambda v: f"{100 * v:.1f} %")]
        for key in ("train_s", "train_peak_mib", "classify_s", "model_mib"):
            row += [f"{r[key]:.2f}" if key.endswith("_s") else f"{r[key]:,.1f}",
                    times(r[key], ref and ref[key])]
        row.append("-" if r["tune_s"] is None else f"{r['tune_s']:.0f}")
        rows.append(row)
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    return table(header, rows, indent="  ")


def machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
                 platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}",
            "load": [round(x, 2) for x in os.getloadavg()],
            "date": time.strftime("%Y-%m-%d")}


# -- the study -------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--corpus", choices=["newsgroups", "spamassassin", "both"],
                        default="both", help="the corpora (default both)")
    parser.add_argument("--rounds", type=int, default=3, metavar="N",
                        help="train and classify every system N times, keep the fastest "
                             "(default 3)")
    parser.add_argument("--quick", action="store_true",
                        help=f"at most {QUICK[0]} training and {QUICK[1]} test documents a "
                             f"corpus, and two settings in each peer's search")
    parser.add_argument("--only", metavar="SYSTEM,...",
                        help=f"run only these systems ({', '.join(SYSTEMS)})")
    parser.add_argument("--textnb", metavar="CMD",
                        help="the textnb command under test (default: the one on PATH, else "
                             "beside this Python)")
    parser.add_argument("--peers-python", metavar="PYTHON",
                        help="run the peers with this Python (with scikit-learn, fasttext-wheel "
                             "and vowpalwabbit, as it has them) instead of the cache's "
                             "environment")
    parser.add_argument("--newsgroups", type=Path, metavar="DIR",
                        help="the directory of 20news-bydate-train/ and 20news-bydate-test/")
    parser.add_argument("--spamassassin", type=Path, metavar="DIR",
                        help="the SpamAssassin directory (spam/ spam_2/ easy_ham/ ...)")
    parser.add_argument("--seed", type=int, default=0,
                        help="the SpamAssassin split's and the validation splits' (default 0)")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write every measurement to FILE")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    systems = list(SYSTEMS)
    if args.only:
        systems = [s.strip() for s in args.only.split(",") if s.strip()]
        unknown = [s for s in systems if s not in SYSTEMS]
        if unknown or not systems:
            parser.error(f"--only: unknown system {', '.join(unknown) or '(none)'} "
                         f"(choose from {', '.join(SYSTEMS)})")
    return options.run("bench.peers", lambda: run(args, systems))


def textnb_command(given: str | None) -> str:
    if given:
        found = shutil.which(given)
        if not found:
            raise BenchError(f"no textnb command '{given}'")
        return found
    return shutil.which("textnb") or console_script()


def run(args: argparse.Namespace, systems: list[str]) -> int:
    textnb = textnb_command(args.textnb) if any(s.startswith("textnb") for s in systems) else ""
    python, skipped, versions = peers_python(args.peers_python, systems)
    for system, reason in skipped.items():
        print(f"{system} skipped: {reason}", file=sys.stderr, flush=True)
    systems = [s for s in systems if s not in skipped]
    if not systems:
        raise BenchError("no system left to run")
    corpora = []
    if args.corpus in ("newsgroups", "both"):
        corpora.append(newsgroups(args.newsgroups))
    if args.corpus in ("spamassassin", "both"):
        corpora.append(spamassassin(args.spamassassin, args.seed))
    if args.quick:
        corpora = [quick(c, args.seed) for c in corpora]
    host = machine()
    if textnb:
        host["textnb"] = subprocess.run([textnb, "--version"], capture_output=True,
                                        text=True).stdout.strip()
    print(f"{host['cpu']}, {host['cores']} cores, {host['system']}, Python {host['python']}, "
          f"load {host['load']}; {host.get('textnb', '')} ({textnb or '-'}); peers: "
          + (", ".join(f"{k} {v}" for k, v in versions.items()) or "-") + f" ({python})",
          flush=True)
    measurements = {"machine": host, "textnb": textnb, "peers_python": python,
                    "versions": versions, "skipped": skipped, "rounds": args.rounds,
                    "quick": args.quick, "corpora": {}}
    tables = []
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as scratch:
        for corpus in corpora:
            runs = run_corpus(corpus, systems, textnb, python, args, Path(scratch))
            results = {s: figures(runs[s], corpus) for s in systems}
            measurements["corpora"][corpus.name] = {
                "n_train": len(corpus.train), "n_test": len(corpus.test), "systems": results}
            tables.append(f"{corpus.name} ({len(corpus.train):,} training, {len(corpus.test):,} "
                          f"test documents; best of {args.rounds} round"
                          f"{'s' if args.rounds > 1 else ''}; × = against textnb at its "
                          f"defaults):\n\n" + report(corpus, results, args.markdown))
            for system in systems:
                if runs[system].settings:
                    tables.append(f"{system}: " + ", ".join(
                        f"{k} {v}" for k, v in runs[system].settings.items()))
    measurements["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print("\n" + "\n\n".join(tables))
    if args.json:
        args.json.write_text(json.dumps(measurements, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
