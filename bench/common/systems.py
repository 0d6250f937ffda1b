"""The systems a study sets beside each other.

* **textnb, the command**: ``textnb train`` and ``textnb classify`` as a user types them, at
  their defaults, each in a fresh process (``python -m textnb`` with this tree first on the
  path), measured by bench.common.measure; the documents laid out as files, one directory a
  class, as a user's folders are.
* **textnb, the library**: documents read as ``textnb train`` reads them, and the spam log-odds
  of a fitted TextClassifier.
* **bogofilter**: a fresh database directory (``-d``, ``-C``: no config files), files
  registered and classified in bulk (``-B``).
* **scikit-learn**: whether it is installed; texts as it reads them (bytes decoded as latin-1,
  as its ``fetch_20newsgroups`` does: it never fails).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.common import BenchError
from bench.common.corpora import ROOT
from bench.common.measure import Usage, measure


# -- textnb, the command ----------------------------------------------------------------------

def textnb_command() -> list[str]:
    """The textnb command of the tree measured (see bench.common.measure.measure)."""
    return [sys.executable, "-m", "textnb"]


def console_script(given: str | None = None) -> str:
    """The ``textnb`` console script: ``given``, else the one next to sys.executable, else the
    one on PATH (what procmail and spamc users run)."""
    script = given or str(Path(sys.executable).parent / "textnb")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return script
    found = shutil.which("textnb")
    if given or not found:
        raise BenchError(f"no textnb console script at '{script}' (give --textnb)")
    return found


def script_python(script: str) -> str:
    """The interpreter a console script runs with (its #! line), else this one."""
    try:
        with open(script, "rb") as f:
            first = f.readline().decode().strip()
    except (OSError, UnicodeDecodeError):
        return sys.executable
    return first[2:].strip() if first.startswith("#!") and " " not in first[2:].strip() else sys.executable


def lay_out(top: Path, groups: dict[str, list]) -> list[Path]:
    """``top/<class>/<n>`` for each item of each class, in order: a symbolic link to the file
    of an item that is a Path, a file holding any other (bytes, or str written as UTF-8);
    returns the class directories."""
    dirs = []
    for label, items in groups.items():
        directory = top / label
        directory.mkdir(parents=True)
        width = max(6, len(str(len(items))))
        for i, item in enumerate(items):
            target = directory / f"{i:0{width}d}"
            if isinstance(item, Path):
                target.symlink_to(item.resolve())
            else:
                target.write_bytes(item if isinstance(item, bytes) else item.encode("utf-8"))
        dirs.append(directory)
    return dirs


def train(model: Path, sources: list, options: list[str] = (),
          tree: Path = ROOT) -> tuple[Usage, str]:
    """``textnb train -m MODEL [options] SOURCES...``: what it cost, and what it printed."""
    out = model.with_name(model.name + ".out")
    usage = measure([*textnb_command(), "train", "-m", str(model), *options,
                     *map(str, sources)], tree, out)
    return usage, out.read_text(errors="replace")


def classify(model: Path, paths: list, options: list[str] = (),
             tree: Path = ROOT) -> tuple[Usage, list[dict]]:
    """``textnb classify -m MODEL --format json [options] PATHS...``: what it cost, and its
    records (source, label, verdict, probability, log_odds, probabilities), as printed."""
    out = model.with_name(model.name + ".json")
    usage = measure([*textnb_command(), "classify", "-m", str(model), "--format", "json",
                     *options, *map(str, paths)], tree, out)
    return usage, [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


@dataclass
class CommandRun:
    """``textnb train`` on class directories, then ``textnb classify`` of the test documents:
    each test document's label, its log-odds ln P(label|x) − ln P(runner-up|x), its verdict
    (spam, ham or unsure where the model has a spam class, else the label), what each command
    cost, and what train printed."""
    labels: np.ndarray
    log_odds: np.ndarray
    verdicts: np.ndarray
    train: Usage
    classify: Usage
    printed: str
    model: Path
    records: list = field(default_factory=list)

    def positive_log_odds(self, positive: str) -> np.ndarray:
        """Two classes: ln P(positive|x) − ln P(other|x) of each test document."""
        return np.where(self.labels == positive, self.log_odds, -self.log_odds)


def command_run(scratch: Path, train_groups: dict[str, list], test_items: list,
                train_options: list[str] = (), classify_options: list[str] = (),
                tree: Path = ROOT) -> CommandRun:
    """The command at its defaults (or with ``train_options``) on documents held as files or
    texts: ``train_groups`` {class: items} laid out as one directory a class, ``test_items``
    as one directory classified at once (see :func:`lay_out`)."""
    top = Path(tempfile.mkdtemp(prefix="command-", dir=scratch))
    dirs = lay_out(top / "train", train_groups)
    test = lay_out(top / "test", {"documents": list(test_items)})[0]
    model = top / "textnb.model"
    train_usage, printed = train(model, dirs, list(train_options), tree)
    classify_usage, records = classify(model, [test], list(classify_options), tree)
    by_name = {Path(r["source"]).name: r for r in records}
    names = sorted(p.name for p in test.iterdir())
    missing = [n for n in names if n not in by_name]
    if missing:
        raise BenchError(f"textnb classify gave no line for {len(missing)} of {len(names)} "
                         f"documents (e.g. {missing[0]})")
    ordered = [by_name[n] for n in names]
    return CommandRun(labels=np.array([str(r["label"]) for r in ordered]),
                      log_odds=np.array([float(r.get("log_odds", np.nan)) for r in ordered]),
                      verdicts=np.array([str(r.get("verdict", r["label"])) for r in ordered]),
                      train=train_usage, classify=classify_usage, printed=printed, model=model,
                      records=ordered)


def command_info(model: Path, tree: Path = ROOT) -> dict:
    """``textnb info --format json -m MODEL``."""
    done = subprocess.run([*textnb_command(), "info", "--format", "json", "-m", str(model)],
                          capture_output=True, text=True, cwd=tree, env={**os.environ,
                                                                           "PYTHONPATH": str(tree)})
    if done.returncode != 0:
        raise BenchError(f"textnb info failed: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout)


# -- textnb, the library ----------------------------------------------------------------------

def documents(paths: list[str]) -> list:
    """The documents of the files, one a path, in order, as ``textnb train`` reads them (an
    mbox would give several: an error)."""
    from textnb.documents.sources import read_documents
    skipped: list[tuple[str, str]] = []
    docs = list(read_documents(paths, on_error=lambda source, reason: skipped.append((source, reason))))
    if skipped or len(docs) != len(paths) or any(d.source != p for d, p in zip(docs, paths)):
        raise BenchError(f"read_documents did not give one document per file: {len(docs)} "
                         f"documents for {len(paths)} files, skipped {skipped[:3]}")
    return docs


def warm_up(paths: list[str], y: np.ndarray) -> float:
    """Fit and score a tiny model, untimed in the results: the first fit pays one-time costs
    (imports, reading the stop words) that are not per-message work. Returns the seconds it
    took."""
    from textnb import TextClassifier
    t0 = time.perf_counter()
    pick = [int(np.flatnonzero(y == c)[0]) for c in np.unique(y)[:2]]
    docs = documents([paths[i] for i in pick])
    TextClassifier().fit(docs, y[pick]).predict_log_proba(docs)
    return time.perf_counter() - t0


def log_odds(classifier, log_proba: np.ndarray, positive: str) -> np.ndarray:
    """Two classes: ln P(positive|x) − ln P(other|x) from ``predict_log_proba``'s rows."""
    s = list(classifier.classes_).index(positive)
    return log_proba[:, s] - log_proba[:, 1 - s]


# -- bogofilter -----------------------------------------------------------------------------------

def bogofilter_path(given: str | None = None) -> str | None:
    if given:
        return given if shutil.which(given) else None
    return shutil.which("bogofilter")


def bogofilter_register(bogofilter: str, db: Path, spam: list[str], ham: list[str],
                        chunk: int = 1000) -> None:
    """Register files in bulk mode (-s/-n -B), ``chunk`` files a process."""
    for flag, files in (("-s", spam), ("-n", ham)):
        for i in range(0, len(files), chunk):
            done = subprocess.run([bogofilter, "-C", "-d", str(db), flag, "-B", *files[i:i + chunk]],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise BenchError(f"bogofilter {flag} failed (exit {done.returncode}): "
                                 f"{done.stderr.strip()[-300:]}")


def bogofilter_classify(bogofilter: str, db: Path, files: list[str],
                        chunk: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """(spamicity, status) of each file, classified in bulk mode with a 16-digit spamicity;
    status is its Spam/Ham/Unsure (cutoffs 0.99 / 0.45) as spam/ham/unsure."""
    tags = {"Spam": "spam", "Ham": "ham", "Unsure": "unsure"}
    scores, status = {}, {}
    for i in range(0, len(files), chunk):
        done = subprocess.run([bogofilter, "-C", "-d", str(db), "-v",
                               "--spamicity-formats=%0.16f,%0.16f,%0.16f", "-B", *files[i:i + chunk]],
                              capture_output=True, text=True, errors="replace")
        if done.returncode not in (0, 1, 2):
            raise BenchError(f"bogofilter -B failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        for line in done.stdout.splitlines():
            # "<path> X-Bogosity: Spam, tests=bogofilter, spamicity=0.99..., version=1.2.5"
            path, sep, rest = line.partition(" X-Bogosity: ")
            if not sep:
                continue
            tag = rest.split(",", 1)[0]
            value = rest.split("spamicity=", 1)[1].split(",", 1)[0]
            scores[path], status[path] = float(value), tags[tag]
    missing = [f for f in files if f not in scores]
    if missing:
        raise BenchError(f"bogofilter gave no verdict for {len(missing)} files, e.g. {missing[0]}")
    return np.array([scores[f] for f in files]), np.array([status[f] for f in files])


# -- scikit-learn --------------------------------------------------------------------------------

def has_sklearn() -> bool:
    import importlib.util
    return importlib.util.find_spec("sklearn") is not None


def latin1(texts: list) -> list[str]:
    """Texts as scikit-learn reads them: bytes decoded as latin-1 (which never fails)."""
    return [t.decode("latin-1") if isinstance(t, bytes) else t for t in texts]
