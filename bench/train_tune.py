"""What ``textnb train --tune`` costs against a plain ``textnb train``, and what it gives.

On each corpus, in one run: ``textnb train`` and ``textnb train --tune`` on the training part
(``--repeat`` rounds, the two commands in turn, a fresh process each, the files in the page
cache), the best (least) wall time, CPU time (user + system, worker processes included) and
peak RSS of the rounds, the ratio of the two commands' times against issue #47's goals (and
each round's ratios, with the load average before and after each round), the
settings ``--tune`` chose with their cross-validated score (``textnb info``), and both models'
accuracy on the test part (``textnb classify``; for mail also 1 − ROC AUC of the spam
log-odds, in %). Both are the command as a user types it: ``textnb train`` at its defaults is
the reference. The corpora (``--corpus``, one or more):

* ``20news``: 20 Newsgroups bydate, 20news-bydate-train/ and -test/; goal ≤ 5× and ≤ 300 MB.
* ``spamassassin``: the SpamAssassin public corpus, a stratified 70/30 split (seed 0, as the
  spam studies draw it); goal ≤ 3× and ≤ 200 MB.
* ``rare``: a proxy of a corpus with classes of one or two training documents (Reuters-21578
  single-label, which we do not have): 20 Newsgroups bydate, with ``--threads`` threads (posts
  sharing a Subject, "Re:" stripped) of one or two training posts and at least one test post
  taken out of their newsgroups, each thread a class of its own (train and test). Accuracy on
  the whole test part and on the threads' posts.

scikit-learn's TF-IDF + LogisticRegression is in bench.sentiment; the grid of settings behind
the defaults is bench.tune's.

Run (from the repository root)::

    python -m bench.train_tune                               # 20 Newsgroups, best of 3
    python -m bench.train_tune --corpus 20news spamassassin rare --repeat 3
    python -m bench.train_tune --news-data corpora/full/20news-bydate --repeat 1

A round of 20 Newsgroups takes about 40 s on 2 cores.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.common import BenchError, args as options
from bench.common.corpora import list_spam, news_files, spam_dir
from bench.common.measure import measure, warm
from bench.common.metrics import roc_auc
from bench.common.report import table as _table
from bench.common.splits import stratified_split
from bench.common.systems import classify, command_info, lay_out, textnb_command
from bench.train import news_dirs

# Issue #47's goals: --tune's wall time at most this many plain trainings, its peak RSS (MB).
GOALS = {"20news": (5.0, 300), "spamassassin": (3.0, 200), "rare": (5.0, 300)}
CORPORA = tuple(GOALS)


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--corpus", nargs="+", choices=CORPORA, default=["20news"],
                        help="the corpora (default: 20news)")
    parser.add_argument("--news-data", type=Path, help="the 20 Newsgroups bydate directory")
    parser.add_argument("--spam-data", type=Path, help="the SpamAssassin directory")
    parser.add_argument("--threads", type=int, default=30,
                        help="rare: threads made classes of their own (default 30)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each command (best)")
    parser.add_argument("--seed", type=int, default=0, help="the split's and threads' seed")
    args = parser.parse_args(argv)

    def work() -> None:
        with tempfile.TemporaryDirectory(prefix="bench-tune-") as scratch:
            for corpus in dict.fromkeys(args.corpus):
                top = Path(scratch) / corpus
                train, test, truth, rare = _layout(corpus, args, top)
                print(report(corpus, train, test, truth, rare, top, args.repeat) + "\n",
                      flush=True)
    return options.run("bench.train_tune", work)


def _layout(corpus: str, args, top: Path) -> tuple[list[Path], Path, dict, set]:
    """(training class directories, the test directory, each test file's class, the rare
    classes): links to the corpus's files under ``top``."""
    if corpus == "spamassassin":
        paths, y = list_spam(spam_dir(args.spam_data))
        train, test = stratified_split(y, 0.7, args.seed)
        groups = {c: [Path(paths[i]) for i in train if y[i] == c] for c in ("spam", "ham")}
        tests = [(Path(paths[i]), str(y[i])) for i in test]
        rare: set = set()
    else:
        train_dir, test_dir = news_dirs(args.news_data)
        (train_paths, train_y), (test_paths, test_y) = news_files(train_dir), news_files(test_dir)
        if corpus == "rare":
            train_y, test_y, rare = rare_threads(train_paths, train_y, test_paths, test_y,
                                                 args.threads, args.seed)
        else:
            rare = set()
        groups: dict[str, list] = {}
        for path, label in zip(train_paths, train_y):
            groups.setdefault(label, []).append(path)
        tests = list(zip(test_paths, test_y))
    dirs = lay_out(top / "train", groups)
    test_dir = lay_out(top / "test", {"documents": [path for path, _ in tests]})[0]
    names = sorted(p.name for p in test_dir.iterdir())  # lay_out numbers them in order
    truth = {name: label for name, (_, label) in zip(names, tests)}
    warm([p for d in dirs for p in d.iterdir()] + list(test_dir.iterdir()))
    return dirs, test_dir, truth, rare


_RE = re.compile(r"^(re|fwd?)\s*:\s*", re.IGNORECASE)


def subject(path: Path) -> str:
    """A post's Subject, lower case, its "Re:"s stripped, blanks folded ("" if none)."""
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                break
            if line[:8].lower() == b"subject:":
                text = line[8:].decode("latin-1").strip().lower()
                while _RE.match(text):
                    text = _RE.sub("", text, count=1)
                return " ".join(text.split())
    return ""


def rare_threads(train_paths: list[Path], train_y: list[str], test_paths: list[Path],
                 test_y: list[str], n: int, seed: int) -> tuple[list[str], list[str], set]:
    """The labels with ``n`` threads (one Subject) of 1-2 training posts and a test post or
    more, drawn at random (``seed``) of those whose Subject has three words or more, each its
    own class ("thread-NN") in both parts; and the threads' class names."""
    train_s, test_s = [subject(p) for p in train_paths], [subject(p) for p in test_paths]
    in_train: dict[str, int] = {}
    for s in train_s:
        in_train[s] = in_train.get(s, 0) + 1
    in_test = set(test_s)
    candidates = sorted(s for s, count in in_train.items()
                        if count <= 2 and s in in_test and len(s.split()) >= 3)
    rng = np.random.default_rng(seed)
    chosen = [candidates[i] for i in sorted(rng.choice(len(candidates), min(n, len(candidates)),
                                                       replace=False))]
    name = {s: f"thread-{i:02d}" for i, s in enumerate(chosen)}
    relabel = lambda subjects, labels: [name.get(s, label) for s, label in zip(subjects, labels)]
    return relabel(train_s, train_y), relabel(test_s, test_y), set(name.values())


def report(corpus: str, train: list[Path], test: Path, truth: dict, rare: set, scratch: Path,
           repeat: int) -> str:
    textnb = textnb_command()
    runs: dict[str, list] = {"train": [], "train --tune": []}
    models = {name: scratch / f"{name.replace(' --', '-')}.model" for name in runs}
    load = [os.getloadavg()[0]]
    for _ in range(repeat):   # the two commands in turn: both see the same machine
        for name, flags in (("train", []), ("train --tune", ["--tune"])):
            runs[name].append(measure([*textnb, "train", "-q", "--model", str(models[name]),
                                       *flags, *map(str, train)]))
        load.append(os.getloadavg()[0])
    best = {name: [min(column) for column in zip(*usage)] for name, usage in runs.items()}
    rows = []
    for name, (wall, cpu, rss) in best.items():
        scores = _scores(models[name], test, truth, rare if corpus == "rare" else None,
                         corpus == "spamassassin")
        rows.append([f"textnb {name}", f"{wall:.2f}", f"{cpu:.2f}", f"{rss:.0f}", *scores])
    header = ["command", "wall s", "CPU s", "peak RSS MiB", "test accuracy"]
    header += (["1 - AUC %"] if corpus == "spamassassin" else
               [f"accuracy on {len(rare)} threads"] if corpus == "rare" else [])
    (plain_wall, plain_cpu, _), (tune_wall, tune_cpu, tune_rss) = best.values()
    times, megabytes = GOALS[corpus]
    tuning = command_info(models["train --tune"]).get("tuning", {})
    chosen = tuning.get("best", {})
    classes = len(train)
    lines = [f"{corpus}: {classes} classes, {sum(len(list(d.iterdir())) for d in train)} "
             f"training and {len(truth)} test documents; best of {repeat} round"
             f"{'s' if repeat > 1 else ''} each:",
             _table(header, rows),
             f"--tune / plain: wall {tune_wall / plain_wall:.1f}x, CPU {tune_cpu / plain_cpu:.1f}x, "
             f"peak {tune_rss:.0f} MiB (goal <= {times:.0f}x and {megabytes} MB)",
             "each round: wall " + ", ".join(
                 f"{t.wall / p.wall:.1f}x" for p, t in zip(*runs.values())) + "; CPU " + ", ".join(
                 f"{t.cpu / p.cpu:.1f}x" for p, t in zip(*runs.values())) + "; peak " + ", ".join(
                 f"{t.rss:.0f}" for t in runs["train --tune"]) + " MiB; load average (1 min) "
             + " / ".join(f"{x:.1f}" for x in load) + " before and after each round",
             "chosen: " + ", ".join(f"{key} {chosen[key]}" for key in
                                    ("model", "alpha", "ngram_range", "stop_words", "tf", "norm")
                                    if key in chosen)
             + (f"; CV {tuning['metric']} {chosen['mean']:.4f} +- {chosen['sd']:.4f}"
                if "mean" in chosen else "")
             + (f"\n{tuning['note']}" if tuning.get("note") else "")]
    return "\n".join(lines)


def _scores(model: Path, test: Path, truth: dict, rare: set | None, mail: bool) -> list[str]:
    """Accuracy on the test part; for mail 1 − AUC (%), for rare classes their accuracy."""
    _, records = classify(model, [test])
    if len(records) != len(truth):
        raise BenchError(f"textnb classify gave {len(records)} lines for {len(truth)} documents")
    by_name = {Path(r["source"]).name: r for r in records}
    names = sorted(truth)
    predicted = np.array([str(by_name[n]["label"]) for n in names])
    actual = np.array([truth[n] for n in names])
    scores = [f"{np.mean(predicted == actual):.4f}"]
    if mail:
        log_odds = np.array([float(by_name[n]["log_odds"]) for n in names])
        spam_odds = np.where(predicted == "spam", log_odds, -log_odds)
        scores.append(f"{100 * (1 - roc_auc(actual == 'spam', spam_odds)):.4f}")
    elif rare is not None:
        mine = np.isin(actual, list(rare))
        scores.append(f"{np.mean(predicted[mine] == actual[mine]):.4f}" if mine.any() else "-")
    return scores


if __name__ == "__main__":
    sys.exit(main())
