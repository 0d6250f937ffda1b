"""Online, as a filter lives: every message in Date order classified, then learned with its
true class (every message, or on error: those called wrong or unsure), textnb beside
bogofilter in the same run — the measure the TREC spam track ranks filters by.

textnb starts from no model and learns in this process (``partial_fit`` of one message: the
row path of ``textnb.incremental``), classifying each message with its spam log-odds and its
spam status before learning it; a message before both classes were seen scores 0 (unsure).
bogofilter starts from an empty database (``-C -d DIR``): each message is classified
(``bogofilter -v``, its spamicity and Spam/Ham/Unsure) and then registered with its true class
(``-s`` / ``-n``), one process each, as a delivery and a user's correction run it (``-u``
registers bogofilter's own verdict, not the truth, so it is not the protocol here).

Printed per system and mode: 1 − AUC of the scores over all messages, the oracle (the least
share of spam a cutoff chosen on these scores leaves uncaught calling at most 0.1 % of the ham
spam), at the system's own decisions the ham called spam, the spam not caught (ham or unsure)
and the unsure, and the time a message to classify and to learn (median and mean, ms; textnb
in-process, bogofilter its process). Then textnb's learning through a model file,
``textnb.store.learning.learn`` (what ``textnb learn`` and TELL do: the file's journal), for
``--file-messages`` messages, beside bogofilter's ``-s``/``-n``.

    python -m bench.online                 # SpamAssassin, all 6,046 messages
    python -m bench.online --data corpora/spamassassin --limit 100
"""

from __future__ import annotations

import email.utils
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BenchError
from bench.common import args as options
from bench.common.corpora import list_spam, spam_dir
from bench.common.metrics import best_not_caught, rates, roc_auc
from bench.common.report import pct, table
from bench.common.systems import bogofilter_path
from textnb import TextClassifier
from textnb.store.learning import learn
from textnb.store.text_model import save_model

MAX_FPR = 0.001


def by_date(paths: list[str], labels: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The messages in the order of their Date fields (those without a readable one last, in
    the order given)."""
    def when(path: str) -> float:
        with open(path, "rb") as f:
            head = f.read(65536).split(b"\n\n", 1)[0]
        for line in head.decode("latin-1").splitlines():
            if line.lower().startswith("date:"):
                try:
                    return email.utils.parsedate_to_datetime(line[5:].strip()).timestamp()
                except (TypeError, ValueError, IndexError, OverflowError):
                    return float("inf")
        return float("inf")
    order = sorted(range(len(paths)), key=lambda i: (when(paths[i]), i))
    return [paths[i] for i in order], labels[order]


def textnb_online(raws: list[bytes], labels: np.ndarray, on_error: bool) -> dict:
    """(scores, statuses, classify times, learn times) of textnb learning online."""
    clf = TextClassifier(spam_class="spam", n_jobs=1)
    scores, status, seen = np.zeros(len(raws)), np.full(len(raws), "unsure", dtype=object), set()
    classify_t, learn_t = [], []
    for i, (raw, label) in enumerate(zip(raws, labels.tolist())):
        start = time.perf_counter()
        if len(seen) == 2:
            scores[i] = clf.decision_function([raw])[0] * (1 if clf.classes_[1] == "spam" else -1)
            status[i] = clf.spam_status([raw])[0]
        classify_t.append(time.perf_counter() - start)
        if on_error and status[i] == label:
            continue
        start = time.perf_counter()
        clf.partial_fit([raw], [label])
        learn_t.append(time.perf_counter() - start)
        seen.add(label)
    return {"scores": scores, "status": status.astype(str), "classify": classify_t,
            "learn": learn_t}


def bogofilter_online(bogofilter: str, paths: list[str], labels: np.ndarray, on_error: bool,
                      db: Path) -> dict:
    tags = {"Spam": "spam", "Ham": "ham", "Unsure": "unsure"}
    scores, status = np.zeros(len(paths)), []
    classify_t, learn_t = [], []
    for i, (path, label) in enumerate(zip(paths, labels.tolist())):
        if not (db / "wordlist.db").exists():  # nothing registered yet: it refuses to score
            status.append("unsure")
            scores[i] = 0.5
            done = None
        else:
            start = time.perf_counter()
            done = subprocess.run([bogofilter, "-C", "-d", str(db), "-v",
                                   "--spamicity-formats=%0.16f,%0.16f,%0.16f", "-I", path],
                                  capture_output=True, text=True, errors="replace")
            classify_t.append(time.perf_counter() - start)
        if done is None:
            pass
        elif done.returncode not in (0, 1, 2):
            raise BenchError(f"bogofilter failed (exit {done.returncode}): "
                             f"{done.stderr.strip()[-300:]}")
        else:  # "X-Bogosity: Spam, tests=bogofilter, spamicity=0.99..., version=1.2.5"
            rest = done.stdout.split("X-Bogosity: ", 1)[1]
            status.append(tags[rest.split(",", 1)[0]])
            scores[i] = float(rest.split("spamicity=", 1)[1].split(",", 1)[0])
        if on_error and status[-1] == label:
            continue
        start = time.perf_counter()
        done = subprocess.run([bogofilter, "-C", "-d", str(db),
                               "-s" if label == "spam" else "-n", "-I", path],
                              capture_output=True, text=True)
        learn_t.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise BenchError(f"bogofilter -s/-n failed (exit {done.returncode}): "
                             f"{done.stderr.strip()[-300:]}")
    return {"scores": scores, "status": np.array(status), "classify": classify_t,
            "learn": learn_t}


def ms(times: list[float]) -> str:
    if not times:
        return "-"
    return f"{statistics.median(times) * 1e3:.1f} / {statistics.mean(times) * 1e3:.1f}"


def row(name: str, result: dict, is_spam: np.ndarray) -> list:
    found = rates(is_spam, result["status"])
    return [name, pct(1 - roc_auc(is_spam, result["scores"]), 3),
            pct(best_not_caught(is_spam, result["scores"], MAX_FPR)),
            f"{found['fp']} of {int((~is_spam).sum())}",
            f"{found['missed']} ({pct(found['not_caught'])})",
            f"{int((result['status'] == 'unsure').sum())} ({pct(found['unsure'])})",
            len(result["learn"]), ms(result["classify"]), ms(result["learn"])]


def through_files(raws: list[bytes], labels: np.ndarray, n: int, bogofilter: str | None,
                  scratch: Path) -> list[list]:
    """Learning through a model file: textnb's ``learn`` (the journal) after a model of the
    messages before, beside bogofilter's ``-s``/``-n`` on a database of the same ones."""
    start_at = max(0, len(raws) - n)
    before = TextClassifier(spam_class="spam", n_jobs=1, training="full")
    model = scratch / "online.model"
    head = list(range(start_at))
    if len(set(labels[head].tolist())) < 2:
        raise BenchError("--file-messages leaves too few messages before them for a model")
    save_model(before.fit([raws[i] for i in head], labels[head].tolist()), model)
    times = []
    for i in range(start_at, len(raws)):
        start = time.perf_counter()
        learn(model, raws[i], labels[i], None)
        times.append(time.perf_counter() - start)
    rows = [["textnb learn() into the file", n, ms(times)]]
    if bogofilter:
        db = scratch / "bogo-files"
        db.mkdir()
        for flag, which in (("-s", "spam"), ("-n", "ham")):
            files = [str(scratch / "m" / str(i)) for i in head if labels[i] == which]
            for i in head:
                if labels[i] == which:
                    (scratch / "m").mkdir(exist_ok=True)
                    (scratch / "m" / str(i)).write_bytes(raws[i])
            for k in range(0, len(files), 1000):
                subprocess.run([bogofilter, "-C", "-d", str(db), flag, "-B", *files[k:k + 1000]],
                               check=True, capture_output=True)
        times = []
        for i in range(start_at, len(raws)):
            path = scratch / "m" / str(i)
            path.write_bytes(raws[i])
            start = time.perf_counter()
            subprocess.run([bogofilter, "-C", "-d", str(db),
                            "-s" if labels[i] == "spam" else "-n", "-I", str(path)],
                           check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        rows.append(["bogofilter -s/-n", n, ms(times)])
    return rows


def main() -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--limit", type=int, help="the first N messages by date only")
    parser.add_argument("--modes", default="all,error",
                        help="learning modes, comma-separated: all, error (default both)")
    parser.add_argument("--bogofilter", help="bogofilter's path (default: on PATH)")
    parser.add_argument("--no-bogofilter", action="store_true", help="textnb alone")
    parser.add_argument("--file-messages", type=int, default=200,
                        help="messages learned through a model file at the end (0: none)")
    args = parser.parse_args()

    def work() -> int:
        paths, labels = list_spam(spam_dir(args.data, args.archive))
        paths, labels = by_date(paths, labels)
        if args.limit:
            paths, labels = paths[:args.limit], labels[:args.limit]
        raws = [Path(p).read_bytes() for p in paths]
        is_spam = labels == "spam"
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        if not set(modes) <= {"all", "error"}:
            raise BenchError(f"--modes are all and error, not {args.modes!r}")
        bogofilter = None if args.no_bogofilter else bogofilter_path(args.bogofilter)
        if not args.no_bogofilter and bogofilter is None:
            raise BenchError("bogofilter is not installed (give --bogofilter PATH, or "
                             "--no-bogofilter)")
        print(f"{len(paths)} messages in Date order ({int(is_spam.sum())} spam, "
              f"{int((~is_spam).sum())} ham), each classified, then learned", flush=True)
        rows = []
        with tempfile.TemporaryDirectory(prefix="bench-online-") as scratch:
            for mode in modes:
                on_error = mode == "error"
                start = time.perf_counter()
                result = textnb_online(raws, labels, on_error)
                print(f"textnb, learning {mode} ... {time.perf_counter() - start:.0f} s",
                      flush=True)
                rows.append(row(f"textnb ({mode})", result, is_spam))
                if bogofilter:
                    db = Path(scratch) / f"bogo-{mode}"
                    db.mkdir()
                    start = time.perf_counter()
                    result = bogofilter_online(bogofilter, paths, labels, on_error, db)
                    print(f"bogofilter, learning {mode} ... "
                          f"{time.perf_counter() - start:.0f} s", flush=True)
                    rows.append(row(f"bogofilter ({mode})", result, is_spam))
            print()
            print(table(["system (learning)", "1 − AUC", f"oracle at {MAX_FPR:.1%} FPR",
                         "ham called spam", "spam not caught", "unsure", "learned",
                         "classify ms (median / mean)", "learn ms (median / mean)"], rows))
            if args.file_messages:
                n = min(args.file_messages, len(raws) // 2)
                print()
                print(table(["learning through a file", "messages", "ms a message (median / mean)"],
                            through_files(raws, labels, n, bogofilter, Path(scratch))))
        return 0

    return options.run("bench.online", work)


if __name__ == "__main__":
    raise SystemExit(main())
