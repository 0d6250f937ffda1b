"""What a procmail user pays per message: ``textnb filter`` against ``bogofilter -p``, and bulk
throughput of ``textnb train`` / ``textnb classify`` against bogofilter on the SpamAssassin corpus.

What it measures
----------------
1. **Per message, one process each** (what procmail does for every delivery). A model is trained
   with ``textnb train`` on the 70 % training part of the SpamAssassin corpus (the stratified
   split of bench.spam, ``--seed``, default 0), laid out as symlinks in
   ``train/spam/`` and ``train/ham/`` of a temporary directory; bogofilter is trained on the same
   files (fresh ``-d`` database, ``-s -B`` / ``-n -B``). Then ``--messages`` (default 50)
   different test messages, a seeded stratified sample of the 30 % test part, are each fed on
   standard input to separate processes of

   * ``python -c pass``                        — the start-up floor of the interpreter that runs
                                                 the textnb script (its #! line);
   * ``textnb filter -m MODEL``                 — must write the message back with X-TextNB-*
                                                  headers and nothing on stderr;
   * ``textnb classify -m MODEL --exit-code -`` — must exit 0/1/2, agreeing with the filter;
   * ``bogofilter -d DIR -p``                   — passthrough with an X-Bogosity header;

   the four in rotating order per message (after one untimed warm-up run of each), timed as wall
   time around ``subprocess.run``. Reported: median and 90th percentile per message, and ratios
   to bogofilter and to the Python floor.

2. **Throughput on the full corpus** (all 6046 messages, symlinked into two class directories
   ``full/spam`` and ``full/ham``): wall time of one ``textnb train`` process (also with
   ``--jobs 1``) and of one ``textnb classify`` process over all messages, in messages per
   second, against bogofilter registering the same files in bulk (``-s -B`` then ``-n -B``) and
   classifying them in bulk (``-B``). Process start-up and imports are included: it is what the
   command costs.

3. **Memory on a large message** (``--large MB``, default 130; 0 skips it): one test spam
   made a multipart message of that size by a base64 attachment, fed on standard input (from a
   file) to ``textnb filter`` and ``bogofilter -p``, each in a fresh process whose peak RSS
   (``ru_maxrss``) and wall time are reported; each output is checked to be the message, every
   byte of it, with only the filter's header lines added. ``--reference SCRIPT`` measures another
   textnb's console script beside them (a checkout of main, say).

``--importtime`` also prints the slowest imports of one ``textnb filter`` run
(``python -X importtime``). ``--instructions N`` counts the instructions of ``python -c pass``,
``textnb filter`` (and the ``--reference`` one) on the first N of the messages, each a fresh
process under ``valgrind --tool=callgrind`` (hash seed 0): a measure a busy machine does not
move, where wall time doubles.

Every textnb row is the command a user types, at its defaults.

Run (from the repository root)::

    python -m bench.filter                   # corpora/full/spamassassin, else the shared archive
    python -m bench.filter --data corpora/full/spamassassin
    python -m bench.filter --messages 20 --importtime
    python -m bench.filter --messages 5 --no-full --large 130 --reference ../main/.venv/bin/textnb

``--data DIR`` holds easy_ham/ easy_ham_2/ hard_ham/ spam/ spam_2/ (or spam/ and ham/); without
it, corpora/full/spamassassin, else ``--archive`` (default
``../shared/corpora/spamassassin-public.tar.gz``) unpacked once into the cache. The textnb
console script is the one next to sys.executable unless ``--textnb PATH`` says otherwise. A run
takes about a minute on 2 cores.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import BenchError, args as options, report
from bench.common.corpora import list_spam, spam_dir
from bench.common.measure import ENV, timed
from bench.common.splits import stratified_sample, stratified_split
from bench.common.systems import (bogofilter_classify, bogofilter_path, bogofilter_register,
                                  console_script, lay_out, script_python)

table = functools.partial(report.table, indent="  ")


# -- checks on one run's output ------------------------------------------------------------------

def check_filter(raw: bytes, done: subprocess.CompletedProcess) -> str | None:
    """The filter's status (Yes/No/Unsure), after checking it changed nothing but the headers."""
    if done.returncode != 0:
        raise BenchError(f"textnb filter exited {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}")
    if done.stderr.strip():
        raise BenchError(f"textnb filter wrote to stderr: {done.stderr.decode(errors='replace')[-300:]}")
    out = done.stdout
    added, status = [], None
    lines = out.split(b"\n")
    # The headers go at the top of the header block, after an mbox "From " line if any.
    start = 1 if raw.startswith(b"From ") else 0
    i = start
    while i < len(lines) and lines[i].startswith(b"X-TextNB-"):
        added.append(lines[i])
        if lines[i].startswith(b"X-TextNB-Status:"):
            status = lines[i].split(b":", 1)[1].strip().decode()
        i += 1
    rest = b"\n".join(lines[:start] + lines[i:])
    if not added or rest != raw:
        raise BenchError("textnb filter changed the message beyond adding X-TextNB-* headers "
                         f"(added {len(added)} header lines)")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--textnb", default=None, metavar="PATH",
                        help="textnb console script (default: next to sys.executable)")
    parser.add_argument("--bogofilter", metavar="PATH", help="bogofilter binary (default: on PATH)")
    parser.add_argument("--messages", type=int, default=50, help="test messages, one process each (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and the sample (default 0)")
    parser.add_argument("--no-full", action="store_true", help="skip the full-corpus throughput part")
    parser.add_argument("--importtime", action="store_true",
                        help="also show the slowest imports of one textnb filter run")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="also count the instructions (valgrind's callgrind) of the "
                             "filters and python -c pass on N of the messages (default 0)")
    parser.add_argument("--large", type=int, default=130, metavar="MB",
                        help="size of the large message whose filtering's peak memory is "
                             "measured (default 130; 0: none)")
    parser.add_argument("--reference", metavar="PATH",
                        help="another textnb console script (the code before a change), its "
                             "filter timed beside this one's in the same rounds and measured "
                             "on the large message")
    args = parser.parse_args(argv)
    if args.messages < 1:
        parser.error("--messages must be at least 1")
    bogofilter = bogofilter_path(args.bogofilter)
    start = time.perf_counter()

    def work() -> None:
        textnb = console_script(args.textnb)
        with tempfile.TemporaryDirectory(prefix="bench-filter-") as scratch:
            run(args, textnb, bogofilter, Path(scratch))
        print(f"\n(total {time.perf_counter() - start:.0f} s)")
    return options.run("bench.filter", work)


def run(args, textnb: str, bogofilter: str | None, scratch: Path) -> None:
    directory = spam_dir(args.data, args.archive)
    paths, y = list_spam(directory)
    train, test = stratified_split(y, 0.7, args.seed)
    print(f"data {directory}; textnb {textnb}; bogofilter {bogofilter or '(not found)'}; "
          f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}", flush=True)
    for f in paths:  # page cache: every system finds the files read
        Path(f).read_bytes()

    # -- 1. per message ----------------------------------------------------------------------
    lay_out(scratch / "train", {c: [Path(paths[i]) for i in train if y[i] == c] for c in ("spam", "ham")})
    model = scratch / "train.model"
    secs, done = timed([textnb, "train", "-q", "-m", str(model),
                        str(scratch / "train" / "spam"), str(scratch / "train" / "ham")])
    if done.returncode != 0:
        raise BenchError(f"textnb train failed: {done.stderr.decode(errors='replace')[-300:]}")
    print(f"textnb train on the 70 % part ({train.size} messages): {secs:.1f} s", flush=True)
    db = scratch / "bogo-train"
    if bogofilter:
        db.mkdir()
        t0 = time.perf_counter()
        bogofilter_register(bogofilter, db, [paths[i] for i in train if y[i] == "spam"],
                            [paths[i] for i in train if y[i] == "ham"])
        print(f"bogofilter registration of the same: {time.perf_counter() - t0:.1f} s", flush=True)

    chosen = stratified_sample(y, test, args.messages, args.seed)
    commands = {
        "python -c pass": [script_python(textnb), "-c", "pass"],
        "textnb filter": [textnb, "filter", "-m", str(model)],
        **({"textnb filter (reference)": [args.reference, "filter", "-m", str(model)]}
           if args.reference else {}),
        "textnb classify --exit-code": [textnb, "classify", "-m", str(model), "--exit-code", "-"],
    }
    if bogofilter:
        commands["bogofilter -p"] = [bogofilter, "-C", "-d", str(db), "-p"]
    names = list(commands)
    first = Path(paths[chosen[0]]).read_bytes()
    for name in names:  # warm-up, untimed
        timed(commands[name], first)
    times: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}  # user + system seconds of the process
    disagree, statuses, bogo_tags = [], [], []
    print(f"{len(chosen)} test messages ({int((y[chosen] == 'spam').sum())} spam), "
          f"{len(names)} commands each ...", flush=True)
    for k, i in enumerate(chosen):
        raw = Path(paths[i]).read_bytes()
        status = code = reference = None
        for name in names[k % len(names):] + names[:k % len(names)]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            secs, done = timed(commands[name], raw)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[name].append(secs)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if name == "textnb filter":
                status = check_filter(raw, done)
            elif name == "textnb filter (reference)":
                reference = check_filter(raw, done)
            elif name == "textnb classify --exit-code":
                code = done.returncode
                if code not in (0, 1, 2):
                    raise BenchError(f"textnb classify --exit-code exited {code} on {paths[i]}: "
                                     f"{done.stderr.decode(errors='replace')[-300:]}")
            elif name == "bogofilter -p":
                if done.returncode not in (0, 1, 2) or b"\nX-Bogosity: " not in done.stdout:
                    raise BenchError(f"bogofilter -p failed (exit {done.returncode}) on {paths[i]}")
                tag = done.stdout.split(b"\nX-Bogosity: ", 1)[1].split(b",", 1)[0].decode()
                bogo_tags.append((y[i], tag))
        if args.reference and reference != status:
            raise BenchError(f"the reference filter decided otherwise on {paths[i]}")
        statuses.append((y[i], status))
        if {"Yes": 0, "No": 1, "Unsure": 2}.get(status) != code:
            disagree.append((paths[i], status, code))

    floor = float(np.median(times["python -c pass"]))
    ref = float(np.median(times["bogofilter -p"])) if bogofilter else None
    cpu_floor = float(np.median(cpu["python -c pass"]))
    rows = []
    for name in names:
        t = np.array(times[name]) * 1000
        med = float(np.median(t)) / 1000
        rows.append([name, f"{np.median(t):.1f}", f"{np.percentile(t, 90):.1f}", f"{t.max():.1f}",
                     f"{med / ref:.1f}x" if ref else "-", f"{med / floor:.1f}x",
                     f"{1000 * (med - floor):+.1f}", f"{1000 * np.median(cpu[name]):.1f}",
                     f"{1000 * (np.median(cpu[name]) - cpu_floor):+.1f}"])
    print(f"\n== Per message, one process each ({len(chosen)} different test messages on stdin; "
          f"wall time in ms; CPU: the process's user + system time, which a busy machine "
          f"inflates less) ==")
    print(table(["command", "median", "p90", "max", "vs bogofilter", "vs python floor",
                 "above floor", "CPU median", "CPU above floor"], rows))
    wrong = sum(1 for label, s in statuses if (label == "spam") != (s == "Yes") and s != "Unsure")
    print("  textnb filter status on these: " + ", ".join(
        f"{label} {s}: {sum(1 for l, x in statuses if l == label and x == s)}"
        for label in ("spam", "ham") for s in ("Yes", "No", "Unsure")
        if any(l == label and x == s for l, x in statuses)) + f"  ({wrong} wrong)")
    if bogofilter:
        print("  bogofilter on these: " + ", ".join(
            f"{label} {s}: {sum(1 for l, x in bogo_tags if l == label and x == s)}"
            for label in ("spam", "ham") for s in ("Spam", "Ham", "Unsure")
            if any(l == label and x == s for l, x in bogo_tags)))
    print(f"  classify --exit-code agrees with filter's X-TextNB-Status on "
          f"{len(chosen) - len(disagree)}/{len(chosen)}" +
          (f"; disagreements: {disagree[:3]}" if disagree else ""))

    print(stages(model, [Path(paths[i]).read_bytes() for i in chosen]))
    print(cold_stages(script_python(textnb), model, [Path(paths[i]).read_bytes() for i in chosen]))
    if args.importtime:
        print_importtime(textnb, model, first)
    if args.instructions:
        print(instructions({name: commands[name] for name in names if name.startswith(
            ("python", "textnb filter"))}, [Path(paths[i]).read_bytes()
                                            for i in chosen[:args.instructions]]))
    if args.large:
        spam = next(paths[i] for i in chosen if y[i] == "spam")
        large_message_memory(args.large, Path(spam).read_bytes(), scratch, {
            "textnb filter": [textnb, "filter", "-m", str(model)],
            **({"reference textnb filter": [args.reference, "filter", "-m", str(model)]}
               if args.reference else {}),
            **({"bogofilter -p": [bogofilter, "-C", "-d", str(db), "-p"]} if bogofilter else {})})

    # -- 2. throughput on the full corpus ----------------------------------------------------
    if args.no_full:
        return
    n = len(paths)
    lay_out(scratch / "full", {c: [Path(p) for p, l in zip(paths, y) if l == c] for c in ("spam", "ham")})
    dirs = [str(scratch / "full" / "spam"), str(scratch / "full" / "ham")]
    rows = []
    print(f"\nfull corpus: {n} messages ...", flush=True)
    full_model = scratch / "full.model"
    results = {}
    for label, extra in (("textnb train", []), ("textnb train --jobs 1", ["--jobs", "1"])):
        secs, done = timed([textnb, "train", "-q", "-m", str(full_model), *extra, *dirs])
        if done.returncode != 0:
            raise BenchError(f"{label} failed: {done.stderr.decode(errors='replace')[-300:]}")
        results[label] = secs
    secs, done = timed([textnb, "classify", "-m", str(full_model), "--format", "tsv", *dirs])
    if done.returncode != 0:
        raise BenchError(f"textnb classify failed: {done.stderr.decode(errors='replace')[-300:]}")
    out = done.stdout.decode(errors="replace").splitlines()
    if len(out) != n:
        raise BenchError(f"textnb classify printed {len(out)} lines for {n} messages")
    results["textnb classify"] = secs
    resub = {}
    for line in out:
        source, label = line.split("\t")[:2]
        truth = Path(source).parent.name
        resub[(truth, label)] = resub.get((truth, label), 0) + 1
    if bogofilter:
        full_db = scratch / "bogo-full"
        full_db.mkdir()
        t0 = time.perf_counter()
        bogofilter_register(bogofilter, full_db, [p for p, l in zip(paths, y) if l == "spam"],
                            [p for p, l in zip(paths, y) if l == "ham"])
        results["bogofilter -s/-n -B"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        bogofilter_classify(bogofilter, full_db, paths)
        results["bogofilter -B"] = time.perf_counter() - t0
    pairs = {"textnb train": "bogofilter -s/-n -B", "textnb train --jobs 1": "bogofilter -s/-n -B",
             "textnb classify": "bogofilter -B"}
    for label, secs in results.items():
        ref_secs = results.get(pairs.get(label, ""))
        rows.append([label, f"{secs:.2f} s", f"{n / secs:.0f}",
                     f"{secs / ref_secs:.1f}x" if ref_secs else "-"])
    print(f"\n== Throughput on the full SpamAssassin corpus ({n} messages, one process per "
          f"command; bogofilter in chunks of 1000-2000 files per process) ==")
    print(table(["command", "wall time", "msg/s", "vs bogofilter"], rows))
    print("  textnb classify on its own training data (resubstitution): " + ", ".join(
        f"{t}->{l}: {c}" for (t, l), c in sorted(resub.items())))


# A fresh process a command: RUSAGE_CHILDREN is then the command's own peak RSS (KiB).
_PEAK = ("import json, resource, subprocess, sys, time\n"
         "with open(sys.argv[1], 'rb') as given, open(sys.argv[2], 'wb') as out:\n"
         "    t = time.perf_counter()\n"
         "    done = subprocess.run(sys.argv[3:], stdin=given, stdout=out, stderr=subprocess.PIPE)\n"
         "    wall = time.perf_counter() - t\n"
         "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
         "print(json.dumps([wall, r.ru_maxrss, done.returncode,"
         " done.stderr.decode(errors='replace')[-300:]]))\n")


def large(raw: bytes, mib: int) -> bytes:
    """``raw``'s header fields and body as the text part of a multipart message of ``mib`` MiB,
    the rest a base64 attachment (what a message that large holds)."""
    from textnb.documents.message import parse_message
    header = raw.split(b"\n\n", 1)[0]
    fields = [line for line in header.split(b"\n") if not line.lower().startswith(
        (b"from ", b"content-", b"mime-version"))]
    text = parse_message(raw).text.encode("utf-8", "replace")
    start = b"\n".join(fields + [b"MIME-Version: 1.0",
                                 b'Content-Type: multipart/mixed; boundary="=-large-="', b"",
                                 b"--=-large-=", b"Content-Type: text/plain; charset=utf-8", b"",
                                 text, b"--=-large-=",
                                 b"Content-Type: application/octet-stream",
                                 b"Content-Transfer-Encoding: base64", b"", b""])
    line = b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx\n"
    end = b"--=-large-=--\n"
    return start + line * ((mib * 2 ** 20 - len(start) - len(end)) // len(line)) + end


def delivered(out: Path, message: Path, added: bytes) -> int:
    """How many header lines starting with ``added`` the output holds in its first 64 kB,
    after checking that without them it is the message, byte for byte."""
    import hashlib
    with open(out, "rb") as o:
        head = o.read(1 << 16)
        lines = head.splitlines(keepends=True)
        ours = [line for line in lines if line.startswith(added)]
        digest = hashlib.sha256(b"".join(line for line in lines if not line.startswith(added)))
        while chunk := o.read(1 << 20):
            digest.update(chunk)
    with open(message, "rb") as m:
        expected = hashlib.sha256()
        while chunk := m.read(1 << 20):
            expected.update(chunk)
    if digest.digest() != expected.digest():
        raise BenchError(f"{out.name}: not the message with {added.decode()}* lines added")
    return len(ours)


def large_message_memory(mib: int, raw: bytes, scratch: Path,
                         commands: dict[str, list[str]]) -> None:
    message = scratch / "large.eml"
    message.write_bytes(large(raw, mib))
    size = message.stat().st_size
    rows = []
    for name, command in commands.items():
        out = scratch / f"large.{len(rows)}.out"
        done = subprocess.run([sys.executable, "-c", _PEAK, str(message), str(out), *command],
                              capture_output=True, text=True, env=ENV)
        if done.returncode != 0:
            raise BenchError(f"{name} on the large message: {done.stderr.strip()[-300:]}")
        wall, kib, code, stderr = json.loads(done.stdout)
        if code not in ((0, 1, 2) if name.startswith("bogofilter") else (0,)) or (
                stderr.strip() and not name.startswith("reference")):
            raise BenchError(f"{name} on the large message exited {code}: {stderr}")
        added = delivered(out, message, b"X-Bogosity: " if name.startswith("bogofilter")
                          else b"X-TextNB-")
        rows.append([name, f"{kib / 1024:.1f}", f"{wall:.2f}", f"{out.stat().st_size:,}",
                     f"{added} header lines"])
        out.unlink()
    print(f"\n== A large message: {size:,} bytes ({mib} MiB) on stdin, one fresh process each "
          f"(peak RSS: ru_maxrss) ==")
    print(table(["command", "peak RSS MiB", "wall s", "bytes out", "added (the rest: the "
                 "message, byte for byte)"], rows))


def stages(model: Path, raws: list[bytes]) -> str:
    """The filter's work after start-up, timed in this process (imports already done)."""
    from textnb.documents.message import parse_message
    from textnb.store.scorer import Scorer
    load, parse, score = [], [], []
    for raw in raws:
        t0 = time.perf_counter()
        scorer = Scorer(model)
        t1 = time.perf_counter()
        document = parse_message(raw)
        t2 = time.perf_counter()
        scorer.log_proba(document.text, document.fields)
        t3 = time.perf_counter()
        load.append(t1 - t0), parse.append(t2 - t1), score.append(t3 - t2)
    ms = lambda times: 1000 * float(np.median(times))  # noqa: E731
    return (f"  the filter's own work, median per message in one process: reading the model "
            f"{ms(load):.1f} ms, parsing {ms(parse):.1f} ms, scoring {ms(score):.1f} ms")


# One fresh process's stages of `textnb filter`, timed as cli.fast runs them: the interpreter
# (from its start, as Python's own clock for the process gives it), the imports, reading the
# model, parsing, scoring and deciding, writing the headers. Printed as "name seconds" lines.
_STAGES = """
import sys, time
start = time.perf_counter(); cpu = time.process_time()
from textnb.cli import fast
from textnb.mail import filter as mail
from textnb.documents.message import read_bytes
from textnb.store.scorer import Scorer
from textnb.decision.rules import decide, headers, spam_cutoffs
imported = time.perf_counter()
raw = sys.stdin.buffer.read()
scorer = Scorer(sys.argv[1])
read = time.perf_counter()
document = read_bytes(raw)
parsed = time.perf_counter()
row = scorer.log_proba(document.text, document.fields)
decision = decide(scorer.classes, row, "-", spam_cutoffs(scorer.classes, scorer.cutoffs,
                                                      learned_errors=scorer.learned_errors))
scored = time.perf_counter()
out = mail.add_headers(raw, headers(decision))
done = time.perf_counter()
print("start", cpu)  # the process's CPU time before this line: the interpreter's start-up
for name, a, b in (("imports", start, imported), ("reading the model", imported, read),
                   ("parsing", read, parsed), ("scoring and deciding", parsed, scored),
                   ("adding the headers", scored, done)):
    print(name, b - a)
"""


def cold_stages(python: str, model: Path, raws: list[bytes]) -> str:
    """:data:`_STAGES` in a fresh process a message, each twice (the first may write the
    model's verdict, :mod:`textnb.store.verdict`): medians of the second runs, in ms."""
    found: dict[str, list[float]] = {}
    for raw in raws:
        for _ in range(2):
            # From the model's directory: `python -c` puts its working directory first on
            # sys.path, and the repository's root would have it import this checkout's textnb
            # (uncompiled, where bytecode is not written) rather than the one measured.
            done = subprocess.run([python, "-c", _STAGES, str(model)], input=raw,
                                  capture_output=True, check=True, cwd=model.parent)
        for line in done.stdout.decode().splitlines():
            name, seconds = line.rsplit(" ", 1)
            found.setdefault(name, []).append(1000 * float(seconds))
    return ("  a fresh process's stages, median per message: " + ", ".join(
        f"{'interpreter start (CPU)' if name == 'start' else name} {np.median(ms):.2f} ms"
        for name, ms in found.items()))


def instructions(commands: dict[str, list[str]], raws: list[bytes]) -> str:
    """Instructions each command runs on each of ``raws`` (valgrind --tool=callgrind, hash
    seed 0), in millions above the first command's (python -c pass): their median and mean."""
    import shutil
    import statistics
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return "  instructions: valgrind not found"
    counts: dict[str, list[int]] = {name: [] for name in commands}
    for raw in raws:
        for name, command in commands.items():
            done = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                   *command], input=raw, capture_output=True,
                                  env={**ENV, "PYTHONHASHSEED": "0"})
            found = [line for line in done.stderr.decode(errors="replace").splitlines()
                     if "Collected :" in line]
            if done.returncode != 0 or not found:
                raise BenchError(f"{name} under callgrind failed: "
                                 f"{done.stderr.decode(errors='replace')[-300:]}")
            counts[name].append(int(found[-1].rsplit(":", 1)[1]))
    floor = counts[next(iter(commands))]
    return (f"  instructions above python -c pass (callgrind, {len(raws)} messages; millions, "
            "median / mean): " + ", ".join(
                f"{name} {statistics.median(a - b for a, b in zip(n, floor)) / 1e6:.1f} / "
                f"{statistics.fmean(a - b for a, b in zip(n, floor)) / 1e6:.1f}"
                for name, n in counts.items() if n is not floor))


def print_importtime(textnb: str, model: Path, raw: bytes) -> None:
    done = subprocess.run([script_python(textnb), "-X", "importtime", textnb, "filter", "-m",
                           str(model)],
                          input=raw, capture_output=True)
    rows = []
    for line in done.stderr.decode(errors="replace").splitlines():
        # "import time:  self [us] | cumulative | imported package"
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative, name = line[len("import time:"):].split("|", 2)
        rows.append((int(cumulative), int(self_us), name.rstrip()))
    rows.sort(reverse=True)
    print("\n== slowest imports of one `textnb filter` (python -X importtime; ms) ==")
    print(table(["module (indent = depth)", "cumulative", "self"],
                [[name[:60], f"{c / 1000:.1f}", f"{s / 1000:.1f}"] for c, s, name in rows[:15]]))


if __name__ == "__main__":
    sys.exit(main())
