"""Benchmark the command line's reading pipeline: `textnb train` and `textnb classify` as a user
runs them, timed, with each process's peak memory, against bogofilter in the same run.

* **SpamAssassin training**: ``textnb train --label spam=spam/ --label spam=spam_2/ --label
  ham=easy_ham/ ...`` on the whole public corpus (1896 spam, 4150 ham), once with the CLI's
  default ``--training auto`` (cross-validation for the cutoffs and for on-error training) and
  once with ``--training full``; against ``bogofilter -s -B`` / ``-n -B`` bulk registration of
  the same files into a fresh database (1,000 files per process, as bench.spam does).
* **20 Newsgroups**: ``textnb train`` on 20news-bydate-train/ (the default model) and ``textnb
  classify`` of 20news-bydate-test/ with it: time and peak RSS (``ru_maxrss`` of the textnb
  process; its worker processes are shown apart), and the model file's size.

Every file is read once before timing, so every system finds the files in the page cache.
textnb runs with ``--jobs`` (default: its own default, every core; ``--jobs 1``: one process).
textnb is this tree's (``python -m textnb`` with this tree first on the path). With
``--baseline DIR`` (another version's source tree) the commands run for both, interleaved,
``--repeat`` times (medians shown; for SpamAssassin, bogofilter too each time, and the wall
times' range): 20 Newsgroups training with the default jobs and with ``--jobs 1``, its two
versions' model files and classify outputs compared byte for byte.

Run (from the repository root)::

    python -m bench.train            # corpora/full, else the archives of ../shared/corpora (cached)
    python -m bench.train --spam-data DIR --news-data DIR --jobs 1
    git archive OLD | tar -x -C /tmp/old && \
        python -m bench.train --skip spam --news-data DIR --baseline /tmp/old --repeat 3
    python -m bench.train --skip news --spam-data DIR --baseline /tmp/old --repeat 3

``--spam-data`` holds easy_ham/ easy_ham_2/ hard_ham/ spam/ spam_2/ (or spam/ and ham/);
``--news-data`` holds 20news-bydate-train/ and 20news-bydate-test/. A run takes about a minute
on 2 cores.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import args as options
from bench.common.corpora import ROOT, SPAM_PARTS, list_spam, news_dir, spam_dir
from bench.common.measure import measure, warm
from bench.common.report import table as _table
from bench.common.systems import bogofilter_path, bogofilter_register, textnb_command


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--spam-data", type=Path, help="the SpamAssassin parts' directory")
    parser.add_argument("--news-data", type=Path, help="the 20 Newsgroups bydate directory")
    parser.add_argument("--jobs", type=int, help="textnb --jobs (default: textnb's default)")
    parser.add_argument("--skip", nargs="+", choices=["spam", "news"], default=[],
                        help="leave out a corpus")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="another textnb source tree, measured beside this one")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command")
    args = parser.parse_args(argv)
    return options.run("bench.train", lambda: run_all(args))


def run_all(args) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-train-") as scratch:
        if "spam" not in args.skip:
            print(spam_report(args.spam_data, Path(scratch), args.jobs, args.baseline,
                              args.repeat), flush=True)
        if "news" not in args.skip:
            print(news_report(args.news_data, Path(scratch), args.jobs, args.baseline,
                              args.repeat), flush=True)


def run(command: list[str], tree: Path = ROOT, out: Path | None = None) -> tuple[float, float]:
    """Run ``command``; its wall time (s) and its peak RSS (MiB), alone in a child process."""
    wall, _, rss = measure(command, tree, out)
    return wall, rss


def spam_report(data: Path | None, scratch: Path, jobs: int | None,
                baseline: Path | None = None, repeat: int = 1) -> str:
    """SpamAssassin: ``textnb train`` (auto, full) and bogofilter's registration, ``repeat``
    times (medians and ranges of wall time); with ``baseline``, that tree's textnb too,
    interleaved with this one's."""
    directory = spam_dir(data)
    paths, labels = list_spam(directory)
    warm(paths)
    n_spam, n_ham = int((labels == "spam").sum()), int((labels == "ham").sum())
    jobs_option = [] if jobs is None else ["--jobs", str(jobs)]
    label_options = [f"--label={label}={directory / part}" for part, label in SPAM_PARTS.items()
                     if (directory / part).is_dir()]
    trees = {"": ROOT} if baseline is None else {" (this tree)": ROOT,
                                                 " (baseline)": baseline.resolve()}
    bogofilter = bogofilter_path(None)
    found: dict[str, list[tuple[float, float, float, float]]] = {}
    for turn in range(repeat):
        for training in ("auto", "full"):
            for name, tree in trees.items():
                model = scratch / "spam.model"
                wall, cpu, rss = measure([*textnb_command(), "train", "-q", "--model", str(model),
                                          f"--training={training}", "--spam-class=spam",
                                          *jobs_option, *label_options], tree)
                found.setdefault(f"textnb train --training {training}{name}", []).append(
                    (wall, cpu, rss, model.stat().st_size / 2**20))
        if bogofilter:
            db = scratch / f"bogofilter-{turn}"
            db.mkdir()
            spam = [p for p, y in zip(paths, labels) if y == "spam"]
            ham = [p for p, y in zip(paths, labels) if y == "ham"]
            t0 = time.perf_counter()
            bogofilter_register(bogofilter, db, spam, ham)
            size = sum(f.stat().st_size for f in db.iterdir()) / 2**20
            found.setdefault("bogofilter -s/-n -B", []).append(
                (time.perf_counter() - t0, float("nan"), float("nan"), size))
    reference = (statistics.median(r[0] for r in found["bogofilter -s/-n -B"])
                 if bogofilter else None)
    lines = [f"SpamAssassin public corpus, {n_spam} spam + {n_ham} ham, all trained on; "
             f"textnb --jobs {jobs or 'default'}"
             + (f"; this tree ({ROOT}) and {baseline}, interleaved" if baseline else "")
             + (f"; median of {repeat} runs (range)" if repeat > 1 else "")
             + "; CPU: user + system, worker processes included:"]
    header = ["system", "train s", "msg/s", "vs bogofilter", "CPU s", "peak RSS MiB", "model MiB"]
    table = []
    for name, runs in found.items():
        wall, cpu, rss, size = (statistics.median(r[i] for r in runs) for i in range(4))
        spread = f" ({min(r[0] for r in runs):.2f}-{max(r[0] for r in runs):.2f})" if repeat > 1 else ""
        table.append([name, f"{wall:.2f}{spread}", f"{len(paths) / wall:,.0f}",
                      f"{wall / reference:.2f}x" if reference else "-",
                      "-" if cpu != cpu else f"{cpu:.2f}", "-" if rss != rss else f"{rss:.0f}",
                      f"{size:.1f}"])
    lines.append(_table(header, table))
    return "\n".join(lines) + "\n"


def news_report(data: Path | None, scratch: Path, jobs: int | None,
                baseline: Path | None = None, repeat: int = 1) -> str:
    train, test = news_dirs(data)
    files = [str(p) for p in sorted(train.rglob("*")) + sorted(test.rglob("*")) if p.is_file()]
    warm(files)
    if baseline is not None:
        return compare_report(train, test, scratch, baseline.resolve(), repeat)
    jobs_option = [] if jobs is None else ["--jobs", str(jobs)]
    model = scratch / "news.model"
    train_s, train_rss = run([*textnb_command(), "train", "-q", "--model", str(model),
                              *jobs_option, str(train)])
    size = model.stat().st_size / 2**20
    classify_s, classify_rss = run([*textnb_command(), "classify", "--model", str(model),
                                    "--format", "tsv", str(test)])
    header = ["command", "time s", "peak RSS MiB", "goal MiB"]
    rows = [["textnb train 20news-bydate-train/", f"{train_s:.2f}", f"{train_rss:.0f}", "100"],
            ["textnb classify 20news-bydate-test/", f"{classify_s:.2f}", f"{classify_rss:.0f}",
             "80"]]
    return (f"20 Newsgroups bydate, default model ({size:.1f} MiB file); textnb --jobs "
            f"{jobs or 'default'} (classify: its own default); peak RSS: the largest of the "
            f"textnb process and the worker processes it waited for:\n"
            + _table(header, rows) + "\n")


def news_dirs(data: Path | None) -> tuple[Path, Path]:
    """20news-bydate-train/ and 20news-bydate-test/ of ``data``, else of corpora/full, else of
    the shared archive unpacked into the cache."""
    data = news_dir(data)
    return data / "20news-bydate-train", data / "20news-bydate-test"


def compare_report(train: Path, test: Path, scratch: Path, baseline: Path, repeat: int) -> str:
    """This tree's and ``baseline``'s train (default jobs, --jobs 1) and classify, interleaved:
    median wall, CPU and peak RSS of ``repeat`` runs each, and whether their outputs agree."""
    trees = {"this tree": ROOT, "baseline": baseline}
    # classify runs with the model of the default jobs (the model file keeps n_jobs).
    commands = {"train --jobs 1": lambda m: ["train", "-q", "--jobs", "1", "--model", str(m),
                                             str(train)],
                "train": lambda m: ["train", "-q", "--model", str(m), str(train)],
                "classify": lambda m: ["classify", "--model", str(m), "--format", "tsv",
                                       str(test)]}
    found: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for _ in range(repeat):
        for what, args in commands.items():
            for name, tree in trees.items():
                model = scratch / f"{name.replace(' ', '_')}.model"
                out = scratch / f"{name.replace(' ', '_')}.tsv" if what == "classify" else None
                found.setdefault((what, name), []).append(
                    measure([*textnb_command(), *args(model)], tree, out))
    same_model = (scratch / "this_tree.model").read_bytes() == (scratch / "baseline.model").read_bytes()
    same_output = (scratch / "this_tree.tsv").read_bytes() == (scratch / "baseline.tsv").read_bytes()
    rows = []
    for (what, name), runs in found.items():
        wall, cpu, rss = (statistics.median(r[i] for r in runs) for i in range(3))
        rows.append([f"textnb {what}", name, f"{wall:.2f}", f"{cpu:.2f}", f"{rss:.0f}",
                     f"{min(r[2] for r in runs):.0f}-{max(r[2] for r in runs):.0f}"])
    return (f"20 Newsgroups bydate, this tree ({ROOT}) against {baseline}, interleaved, median of "
            f"{repeat}; peak RSS: the largest of the textnb process and the worker processes it "
            f"waited for (goals: train 100, classify 80); CPU: user + system, workers included:\n"
            + _table(["command", "textnb", "wall s", "CPU s", "peak RSS MiB", "RSS range"], rows)
            + f"\nmodel files identical: {same_model}; classify outputs identical: {same_output}\n")

if __name__ == "__main__":
    sys.exit(main())
