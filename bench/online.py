"""Online, as a filter lives: every message in Date order classified, then learned with its
true class (every message, or on error: those called wrong or unsure), textnb beside
bogofilter in the same run — the measure the TREC spam track ranks filters by.

textnb starts from no model and learns in this process as its learners learn (``textnb learn``,
TELL, ``textnb imap``: the row path of ``textnb.incremental``, each message weighed by
``textnb.online.learning_weight``, an error more the rarer errors are), classifying each
message with its spam log-odds and its spam status before learning it; both classes are named
at its first message (``partial_fit``'s ``classes``), as bogofilter's database has both, so it
scores from the second message on, a class of no documents yet scored by its smoothing alone
(the first message scores 0, unsure).
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
    python -m bench.online --shuffle 1 --file-messages 0   # another order than Date's
"""

from __future__ import annotations

import email.utils
import os
import random
import shutil
import statistics
import sys
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
from textnb import TextClassifier, incremental
from textnb.online import learning_weight
from textnb.store.learning import compact, learn
from textnb.store.text_model import load_model, save_model

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
        if seen:  # both classes named from the first message on, as bogofilter's database
            scores[i] = clf.decision_function([raw])[0] * (1 if clf.classes_[1] == "spam" else -1)
            status[i] = clf.spam_status([raw])[0]
        classify_t.append(time.perf_counter() - start)
        if on_error and status[i] == label:
            continue
        start = time.perf_counter()
        if seen:  # as textnb.store.learning.Update learns: weighed, then counted
            weight = learning_weight(clf, raw, label)
            incremental.apply(clf, incremental.rows(clf, [raw])[0],
                              list(clf.classes_).index(label), weight)
        else:
            clf.partial_fit([raw], [label], classes=["ham", "spam"])
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
                  scratch: Path, textnb: str) -> list[list]:
    """Learning through a model file, each message in turn by every way, interleaved (the
    machine's other load falls on each alike): ``textnb.store.learning.learn`` in this process,
    a ``textnb learn`` process (as a procmail recipe or a mutt macro runs it), TELL to a
    running ``textnb serve``, each into its own copy of a model of the messages before, and
    bogofilter's ``-s``/``-n`` process on a database of the same messages. Then what the
    journal costs the mail filter: its reading of the model (Scorer), by the journal's size."""
    from textnb.serve import client
    from textnb.store import journal

    start_at = max(0, len(raws) - n)
    head = list(range(start_at))
    if len(set(labels[head].tolist())) < 2:
        raise BenchError("--file-messages leaves too few messages before them for a model")
    before = TextClassifier(spam_class="spam", n_jobs=1, training="full")
    models = {name: scratch / f"{name}.model" for name in ("inproc", "process", "tell")}
    save_model(before.fit([raws[i] for i in head], labels[head].tolist()), models["inproc"])
    for name in ("process", "tell"):
        shutil.copy(models["inproc"], models[name])
    (scratch / "m").mkdir(exist_ok=True)
    for i in range(len(raws)):
        (scratch / "m" / str(i)).write_bytes(raws[i])
    db = scratch / "bogo-files"
    if bogofilter:
        db.mkdir()
        for flag, which in (("-s", "spam"), ("-n", "ham")):
            files = [str(scratch / "m" / str(i)) for i in head if labels[i] == which]
            for k in range(0, len(files), 1000):
                subprocess.run([bogofilter, "-C", "-d", str(db), flag, "-B", *files[k:k + 1000]],
                               check=True, capture_output=True)
    socket = scratch / "serve.sock"
    with open(scratch / "serve.log", "ab") as log:
        server = subprocess.Popen([textnb, "serve", "-m", str(models["tell"]), "--workers", "1", "--allow-tell",
                                   "--socket", str(socket)], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=log)
    times: dict[str, list[float]] = {name: [] for name in ("inproc", "process", "tell", "bogo",
                                                           "python")}
    # Python's own start, for the textnb learn process: the interpreter beside the command
    python = str(Path(textnb).parent / "python") if (Path(textnb).parent / "python").exists() \
        else sys.executable
    # The learns during which the journal shrank: they compacted it (over HARD_BYTES) or
    # waited for the update lock held by the compaction an earlier learn left behind.
    compactions: list[float] = []  # in this process
    compacted: list[float] = []  # textnb learn processes
    started = 0  # the learns in this process that left a compaction due
    try:
        deadline = time.monotonic() + 60
        while not _pong(client, socket):
            if server.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"textnb serve did not start: "
                                 f"{(scratch / 'serve.log').read_text()[-300:]}")
            time.sleep(0.05)
        for i in range(start_at, len(raws)):
            label, path = str(labels[i]), str(scratch / "m" / str(i))

            def inproc() -> None:
                nonlocal started
                size = _journal_size(journal.path_of(models["inproc"]))
                start = time.perf_counter()
                learn(models["inproc"], raws[i], label, None)
                times["inproc"].append(time.perf_counter() - start)
                after = _journal_size(journal.path_of(models["inproc"]))
                if after < size:
                    compactions.append(times["inproc"][-1])
                started += after > journal.COMPACT_BYTES >= size  # this learn made one due

            def process() -> None:
                size = _journal_size(journal.path_of(models["process"]))
                start = time.perf_counter()
                subprocess.run([textnb, "learn", "-q", "--class", label, "-m",
                                str(models["process"]), path], check=True, capture_output=True)
                times["process"].append(time.perf_counter() - start)
                if _journal_size(journal.path_of(models["process"])) < size:
                    compacted.append(times["process"][-1])

            def tell() -> None:
                start = time.perf_counter()
                if not client.tell(raws[i], label, socket_path=socket):
                    raise BenchError(f"TELL learned nothing of message {i}")
                times["tell"].append(time.perf_counter() - start)

            def python_start() -> None:
                start = time.perf_counter()
                subprocess.run([python, "-c", "pass"], check=True)
                times["python"].append(time.perf_counter() - start)

            def bogo() -> None:
                start = time.perf_counter()
                subprocess.run([bogofilter, "-C", "-d", str(db),
                                "-s" if label == "spam" else "-n", "-I", path],
                               check=True, capture_output=True)
                times["bogo"].append(time.perf_counter() - start)

            # Each way first in turn: the folds a learn leaves running in the background
            # (its own and the other copies') then fall on every way alike, not on the next.
            ways = [inproc, process, tell, python_start] + ([bogo] if bogofilter else [])
            k = i % len(ways)
            for way in ways[k:] + ways[:k]:
                way()
    finally:
        server.terminate()
        server.wait(timeout=60)
    rows = [["textnb.store.learning.learn(), in this process", n, ms(times["inproc"])],
            ["textnb learn, a process a message", n, ms(times["process"])],
            ["TELL to textnb serve --workers 1 --allow-tell", n, ms(times["tell"])],
            ["(Python's own start: python -c pass)", n, ms(times["python"])]]
    if bogofilter:
        rows.append(["bogofilter -s/-n, a process a message", n, ms(times["bogo"])])
    rows.append(["of which the journal shrank (a compaction made or waited for): "
                 "in this process", len(compactions), ms(compactions)])
    rows.append(["... and in a textnb learn process", len(compacted), ms(compacted)])
    folds = _fold_cost(models["inproc"], raws[start_at:], labels[start_at:])
    rows.append([f"a fold of the journal over {journal.COMPACT_BYTES >> 10} KiB "
                 f"(learning.compact, off the learner's path), one every "
                 f"{n / max(started, 1):.0f} messages above", len(folds), ms(folds)])
    return rows


def _fold_cost(model: Path, raws: list[bytes], labels: np.ndarray, rounds: int = 5
               ) -> list[float]:
    """The times of textnb.store.learning.compact of a journal just over COMPACT_BYTES,
    ``rounds`` times
    (made of the file's last messages moved to the other class and back): what each
    detached compaction costs, off the learner's path."""
    from textnb.store import journal
    deadline = time.monotonic() + 120
    while journal.size_of(model) > journal.COMPACT_BYTES and time.monotonic() < deadline:
        time.sleep(0.05)  # the last detached fold, if one is due
    times, i = [], 0
    for _ in range(rounds):
        while journal.size_of(model) <= journal.COMPACT_BYTES:
            k = i % len(raws)
            true, flipped = str(labels[k]), "ham" if labels[k] == "spam" else "spam"
            if (i // len(raws)) % 2 == 0:
                learn(model, raws[k], flipped, true, detach=False)
            else:
                learn(model, raws[k], true, flipped, detach=False)
            i += 1
        start = time.perf_counter()
        compact(model)
        times.append(time.perf_counter() - start)
    return times


def journal_costs(raws: list[bytes], labels: np.ndarray, scratch: Path, rounds: int = 7
                  ) -> list[list]:
    """What a journal of each size costs the mail filter: ``textnb filter``'s reading of the
    model (:class:`~textnb.store.scorer.Scorer`, the journal replayed) and the scoring of one
    message, on copies of the file learned into by ``learn()`` with no compaction, the sizes
    timed in turn, ``rounds`` times (ms: median / mean)."""
    from textnb.store.scorer import Scorer
    from textnb.documents.message import read_bytes
    from textnb.store import journal

    base = scratch / "inproc.model"
    sizes, copies = (0, 64, 128, 256, 512), {}
    saved = journal.COMPACT_BYTES, journal.HARD_BYTES
    journal.COMPACT_BYTES = journal.HARD_BYTES = 1 << 30
    try:
        for kib in sizes:
            copy = copies[kib] = scratch / f"journal-{kib}.model"
            save_model(load_model(base), copy)
            i = 0
            while _journal_size(journal.path_of(copy)) < kib << 10:
                # the messages again, each made another by a word of its own
                k = i % len(raws)
                learn(copy, raws[k] + b"\nbenchonline%d\n" % i, str(labels[k]), None)
                i += 1
    finally:
        journal.COMPACT_BYTES, journal.HARD_BYTES = saved
    time.sleep(1.5)  # settled: the filter reads each file as vouched for (textnb.store.verdict)
    probe = read_bytes(raws[-1])
    times: dict[int, list[float]] = {kib: [] for kib in sizes}
    for _ in range(rounds):
        for kib in sizes:
            start = time.perf_counter()
            Scorer(copies[kib]).log_proba(probe.text, probe.fields)
            times[kib].append(time.perf_counter() - start)
    return [[f"{kib} KiB (the first record past it: "
             f"{_journal_size(journal.path_of(copies[kib])) >> 10} KiB)", rounds,
             ms(times[kib])] for kib in sizes]


def _pong(client, socket: Path) -> bool:
    try:
        return client.ping(socket_path=socket, timeout=5)
    except OSError:
        return False


def _journal_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def main() -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--limit", type=int, help="the first N messages by date only")
    parser.add_argument("--shuffle", type=int, metavar="SEED",
                        help="the messages in an order shuffled by SEED, not by Date (after "
                             "--limit)")
    parser.add_argument("--modes", default="all,error",
                        help="learning modes, comma-separated: all, error (default both)")
    parser.add_argument("--bogofilter", help="bogofilter's path (default: on PATH)")
    parser.add_argument("--no-bogofilter", action="store_true", help="textnb alone")
    parser.add_argument("--file-messages", type=int, default=200,
                        help="messages learned through a model file at the end (0: none)")
    parser.add_argument("--textnb", default=str(Path(sys.executable).parent / "textnb"),
                        help="the textnb command learning through the file (default: beside "
                             "this Python)")
    args = parser.parse_args()

    def work() -> int:
        paths, labels = list_spam(spam_dir(args.data, args.archive))
        paths, labels = by_date(paths, labels)
        if args.limit:
            paths, labels = paths[:args.limit], labels[:args.limit]
        order = "Date order"
        if args.shuffle is not None:
            shuffled = list(range(len(paths)))
            random.Random(args.shuffle).shuffle(shuffled)
            paths, labels = [paths[i] for i in shuffled], labels[shuffled]
            order = f"an order shuffled by seed {args.shuffle}"
        raws = [Path(p).read_bytes() for p in paths]
        is_spam = labels == "spam"
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        if not set(modes) <= {"all", "error"}:
            raise BenchError(f"--modes are all and error, not {args.modes!r}")
        bogofilter = None if args.no_bogofilter else bogofilter_path(args.bogofilter)
        if not args.no_bogofilter and bogofilter is None:
            raise BenchError("bogofilter is not installed (give --bogofilter PATH, or "
                             "--no-bogofilter)")
        print(f"{len(paths)} messages in {order} ({int(is_spam.sum())} spam, "
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
                            through_files(raws, labels, n, bogofilter, Path(scratch),
                                          args.textnb)))
                print()
                print(table(["the mail filter's reading of the model and scoring, a journal of",
                             "rounds", "ms (median / mean)"],
                            journal_costs(raws, labels, Path(scratch))))
        return 0

    return options.run("bench.online", work)


if __name__ == "__main__":
    raise SystemExit(main())
