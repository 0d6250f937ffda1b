#!/usr/bin/env python3
"""Model files of format 2 (dense counts and score weights) against format 3 (counts by term,
non-zero only): file size, ``load_model`` time and the mail filter's per-message cost, in one
run, with ratios.

What it measures
----------------
Two models, trained with ``textnb train`` as a user trains them:

* **20 Newsgroups**: the library's defaults on ``20news-bydate-train`` (20 classes);
* **SpamAssassin**: ``--spam-class spam`` on all 6,046 messages (what ``textnb filter`` uses).

Each is written in format 3 by ``save_model`` and in format 2 by the writer of then (kept
here, :func:`save_v2`), from the same counts. Then, for each file, alternating the two
formats so that both see the same machine load:

* **size** in bytes;
* **load_model**: the median of ``--repeat`` (default 5) loads, in this process;
* **Scorer**: what one ``textnb filter`` run pays for the model, ``Scorer(path)`` (open, read,
  check every CRC-32 and array) plus ``log_proba`` of one message, for ``--messages`` (default
  50) messages of the test part (a seeded sample): median and 90th percentile. The two formats'
  scores are checked to agree (to 1e-9);
* **filter**: wall time of one ``textnb filter -m FILE`` process per message (what procmail
  pays per delivery, Python's start-up included), for the first ``--processes`` (default 20)
  of those messages, for the SpamAssassin model only (the filter's use);
* **deflated**: the size format 3 would have with every member deflated (zlib level 6), and
  the time to inflate them all once, the least the fast path would add per message if the
  members were deflated (it reads and checks the whole file for every message).

Run::

    python -m bench.modelfile      # corpora/full/*, else ../shared/corpora/*.tar.gz
    python -m bench.modelfile --newsgroups DIR --spamassassin DIR
    python -m bench.modelfile --model-20ng M1 --model-spam M2    # models trained before

``--compare PYTHON`` also times the mail filter of another install of textnb (the textnb
console script beside PYTHON, e.g. the commit before a change, installed in its own virtual
environment) against this one's, on the SpamAssassin model in format 3, in one run: a
``textnb filter`` process per message (``--processes``, default 20, after one untimed), the
two taking turns, and each one's own cost of reading the model and scoring a message
(``Scorer(path).log_proba``, in a process of its own, median of the ``--messages``), as
python -m bench.filter measures them::

    python -m bench.modelfile --model-20ng M1 --model-spam M2 --compare ../ref/.venv/bin/python

``--newsgroups`` holds 20news-bydate-train/ and 20news-bydate-test/; ``--spamassassin`` holds
easy_ham/ easy_ham_2/ hard_ham/ spam/ spam_2/. Missing ones are unpacked from the archives in
../shared/corpora into a temporary directory. Training takes about a minute on 2 cores.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np

from bench.common import BenchError
from bench.common import args as options
from bench.common.corpora import list_spam, news_dir, spam_dir
from bench.common.report import table as _table

ROOT = Path(__file__).resolve().parents[1]
# As an installed textnb runs: its modules compiled once (with PYTHONDONTWRITEBYTECODE, set on
# some machines, every run would compile the changed ones again; bench.filter too).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def table(header: list[str], rows: list[list]) -> str:
    return _table(header, rows, indent="  ")


def save_v2(path: Path, classifier) -> None:
    """Write ``classifier`` in format 2, as save_model did before format 3."""
    from textnb.store import schema
    from textnb.store.text_model import saved_meta
    model = classifier.model_
    terms = "\n".join(classifier.vocabulary_.terms_).encode()
    ends = np.append(np.flatnonzero(np.frombuffer(terms, np.uint8) == ord("\n")), len(terms)) + 1
    bias, weights = model.decomposition()
    row = {label: i for i, label in enumerate(model.classes_.astype(str))}
    arrays = {"class_count": model.class_count_, "feature_count": model.feature_count_,
              "digests": classifier.digests_,
              "digest_classes": np.array([row[c] for c in classifier.digest_labels_], np.int64),
              "terms": np.frombuffer(terms, np.uint8), "term_ends": ends.astype(np.uint64),
              "score_bias": bias, "score_weights": np.ascontiguousarray(weights.T)}
    header = {"format": schema.FORMAT, "version": 2, "kind": schema.TEXT_CLASSIFIER,
              **saved_meta(classifier)}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("meta.json", json.dumps(header, ensure_ascii=False))
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
            archive.writestr(f"{name}.npy", buffer.getvalue())


def deflated(path: Path) -> tuple[int, float]:
    """(bytes of the file's members deflated at level 6, seconds to inflate them all once)."""
    with zipfile.ZipFile(path) as archive:
        members = [zlib.compress(archive.read(name), 6)[2:-4] for name in archive.namelist()]
    start = time.perf_counter()
    for data in members:
        zlib.decompress(data, -15)
    return sum(map(len, members)), time.perf_counter() - start


def textnb_train(model: Path, args: list[str]) -> None:
    textnb = Path(sys.executable).with_name("textnb")
    command = [str(textnb) if textnb.exists() else sys.executable] + \
        ([] if textnb.exists() else ["-m", "textnb"]) + ["train", "-m", str(model), *args]
    print("$", " ".join(command[:1] + command[1:6]), "...", flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"textnb train failed: {done.stderr.strip()[-300:]}")


def newsgroups_dir(given: Path | None) -> Path:
    data = news_dir(given)
    for split in ("20news-bydate-train", "20news-bydate-test"):
        if not (data / split).is_dir():
            raise BenchError(f"'{data}' has no {split}/ directory")
    return data.resolve()


def sample_messages(paths: list[str], n: int, seed: int) -> list:
    """n documents of ``paths`` (a seeded sample), read as the filter reads a message."""
    from textnb.documents.message import read_bytes
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(paths), size=min(n, len(paths)), replace=False)
    return [read_bytes(Path(paths[i]).read_bytes(), paths[i]) for i in chosen]


def measure(files: dict[str, Path], messages: list, repeat: int,
            processes: list[bytes]) -> dict[str, dict]:
    """Size, load_model, Scorer and filter timings of each file, the files taking turns."""
    from textnb import load_model
    from textnb.store.scorer import Scorer
    results = {name: {"size": path.stat().st_size, "load": [], "scorer": [], "rows": [],
                      "filter": []} for name, path in files.items()}
    textnb = Path(sys.executable).with_name("textnb")
    command = [str(textnb)] if textnb.exists() else [sys.executable, "-m", "textnb"]
    for i, raw in enumerate(processes[:1] + processes):    # the first run warms up
        for name in list(files)[::1 if i % 2 == 0 else -1]:
            start = time.perf_counter()
            done = subprocess.run(command + ["filter", "-m", str(files[name])], input=raw,
                                  capture_output=True, env=ENV)
            if done.returncode != 0 or done.stderr or b"X-TextNB-Status: " not in done.stdout:
                raise BenchError(f"textnb filter failed: {done.stderr.decode()[-300:]}")
            if i:
                results[name]["filter"].append(time.perf_counter() - start)
    for name, path in files.items():                     # warm-up: the page cache, imports
        load_model(path)
        Scorer(path).log_proba("warm up")
    for turn in range(repeat):
        for name in list(files)[::1 if turn % 2 == 0 else -1]:
            start = time.perf_counter()
            load_model(files[name])
            results[name]["load"].append(time.perf_counter() - start)
    for i, document in enumerate(messages):
        for name in list(files)[::1 if i % 2 == 0 else -1]:
            start = time.perf_counter()
            row = Scorer(files[name]).log_proba(document.text, document.fields)
            results[name]["scorer"].append(time.perf_counter() - start)
            results[name]["rows"].append(row)
    first, *others = results.values()
    for other in others:
        if not np.allclose(first["rows"], other["rows"], rtol=1e-9, atol=1e-9):
            raise BenchError("the two formats score the messages differently")
    return results


def report(title: str, shape: tuple[int, int], results: dict[str, dict],
           packed: tuple[int, float]) -> str:
    v2, v3 = results["format 2"], results["format 3"]
    ms = lambda seconds: f"{seconds * 1e3:.1f}"  # noqa: E731
    filtered = bool(v2["filter"])
    rows = []
    for name, r in results.items():
        rows.append([name, f"{r['size'] / 1e6:.2f} MB", ms(statistics.median(r["load"])),
                     ms(statistics.median(r["scorer"])),
                     ms(float(np.percentile(r["scorer"], 90)))]
                    + ([ms(statistics.median(r["filter"]))] if filtered else []))
    ratio = lambda key, f=statistics.median: f"{f(v3[key]) / f(v2[key]):.2f}x"  # noqa: E731
    p90 = lambda x: float(np.percentile(x, 90))  # noqa: E731
    rows.append(["3 / 2", f"{v3['size'] / v2['size']:.3f}x", ratio("load"), ratio("scorer"),
                 ratio("scorer", p90)] + ([ratio("filter")] if filtered else []))
    return (f"{title}: {shape[1]:,} terms x {shape[0]} classes, "
            f"{len(v2['scorer'])} messages\n"
            + table(["file", "size", "load_model ms", "Scorer+score ms (median)", "(p90)"]
                    + (["filter process ms (median)"] if filtered else []), rows)
            + f"\n  format 3 deflated (every member, zlib 6): {packed[0] / 1e6:.2f} MB, "
              f"{packed[1] * 1e3:.1f} ms to inflate it once\n")


def run_one(title: str, model: Path, test_paths: list[str], args, scratch: Path,
            processes: int = 0) -> str:
    from textnb import load_model, save_model
    classifier = load_model(model)
    files = {"format 2": scratch / f"{model.stem}.v2.model",
             "format 3": scratch / f"{model.stem}.v3.model"}
    save_v2(files["format 2"], classifier)
    save_model(classifier, files["format 3"])
    messages = sample_messages(test_paths, args.messages, args.seed)
    raw = [Path(document.source).read_bytes() for document in messages[:processes]]
    results = measure(files, messages, args.repeat, raw)
    return report(title, classifier.model_.feature_count_.shape, results,
                  deflated(files["format 3"]))


STAGES = """
import statistics, sys, time
from pathlib import Path
from textnb.documents.message import read_bytes
from textnb.store.scorer import Scorer
model, paths = sys.argv[1], sys.argv[2:]
documents = [read_bytes(Path(p).read_bytes(), p) for p in paths]
Scorer(model).log_proba("warm up")
times = []
for d in documents * 3:
    start = time.perf_counter()
    Scorer(model).log_proba(d.text, d.fields)
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def compare_filters(model: Path, paths: list[str], processes: int, pythons: dict[str, str]
                    ) -> str:
    """``textnb filter`` of each install, a process per message, taking turns; and each
    install's in-process cost of reading the model and scoring a message."""
    raws = [Path(p).read_bytes() for p in paths[:processes]]
    times: dict[str, list[float]] = {name: [] for name in pythons}
    for i, raw in enumerate(raws[:1] + raws):             # the first run warms up
        for name in list(pythons)[::1 if i % 2 == 0 else -1]:
            script = Path(pythons[name]).with_name("textnb")
            start = time.perf_counter()
            done = subprocess.run([str(script), "filter", "-m", str(model)], input=raw,
                                  capture_output=True, env=ENV)
            if done.returncode != 0 or done.stderr or b"X-TextNB-Status: " not in done.stdout:
                raise BenchError(f"{name}'s textnb filter failed: {done.stderr.decode()[-300:]}")
            if i:
                times[name].append(time.perf_counter() - start)
    stages = {}
    for name, python in pythons.items():
        done = subprocess.run([python, "-c", STAGES, str(model), *paths], capture_output=True,
                              text=True, cwd=tempfile.gettempdir(), env=ENV)
        if done.returncode != 0:
            raise BenchError(f"{name}'s scorer failed: {done.stderr[-300:]}")
        stages[name] = float(done.stdout.split()[-1])
    ms = lambda seconds: f"{seconds * 1e3:.1f}"  # noqa: E731
    rows = [[name, ms(statistics.median(t)), ms(float(np.percentile(t, 90))),
             ms(stages[name])] for name, t in times.items()]
    (first, a), (second, b) = times.items()
    rows.append([f"{second} / {first}", f"{statistics.median(b) / statistics.median(a):.3f}x",
                 f"{np.percentile(b, 90) / np.percentile(a, 90):.3f}x",
                 f"{stages[second] / stages[first]:.3f}x"])
    return (f"textnb filter, {model.name} ({model.stat().st_size / 1e6:.2f} MB), {len(raws)} "
            f"messages, a process each, the installs taking turns\n"
            + table(["install", "filter process ms (median)", "(p90)",
                     "reading the model + scoring ms (median)"], rows))


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--newsgroups", type=Path,
                        help="directory of 20news-bydate-train/ and -test/")
    parser.add_argument("--spamassassin", type=Path, help="directory of the SpamAssassin parts")
    parser.add_argument("--model-20ng", type=Path, help="a 20 Newsgroups model trained before")
    parser.add_argument("--model-spam", type=Path, help="a SpamAssassin model trained before")
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--processes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", metavar="PYTHON",
                        help="also time the textnb filter of the install of this Python")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="bench_modelfile.") as tmp:
            scratch = Path(tmp)
            news = newsgroups_dir(args.newsgroups)
            spam = spam_dir(args.spamassassin)
            ng_model = args.model_20ng or scratch / "20ng.model"
            if args.model_20ng is None:
                textnb_train(ng_model, [str(news / "20news-bydate-train")])
            spam_model = args.model_spam or scratch / "spam.model"
            paths, labels = list_spam(spam)
            if args.model_spam is None:
                tree = scratch / "spam-tree"
                for path, label in zip(paths, labels):
                    target = tree / label / f"{Path(path).parent.name}-{Path(path).name}"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.symlink_to(path)
                textnb_train(spam_model, ["--spam-class", "spam", str(tree / "spam"),
                                          str(tree / "ham")])
            ng_test = sorted(str(p) for p in (news / "20news-bydate-test").rglob("*")
                             if p.is_file())
            print()
            print(run_one("20 Newsgroups (default settings)", ng_model, ng_test, args, scratch))
            print(run_one("SpamAssassin (textnb train --spam-class spam)", spam_model, paths,
                          args, scratch, processes=args.processes))
            if args.compare:
                chosen = np.random.default_rng(args.seed).choice(
                    len(paths), size=min(args.messages, len(paths)), replace=False)
                v3 = scratch / f"{spam_model.stem}.v3.model"
                print(compare_filters(v3, [paths[i] for i in chosen], args.processes,
                                      {"reference": args.compare, "this": sys.executable}))
    except BenchError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
