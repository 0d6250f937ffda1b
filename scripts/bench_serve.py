#!/usr/bin/env python3
"""What ``textnb serve`` costs: per message through spamc against ``bogofilter -p``, messages per
second with concurrent clients, and the daemon's memory, on the SpamAssassin corpus.

What it measures
----------------
A model is trained with ``textnb train`` on the 70 % training part of the corpus (the
stratified split of scripts/bench_spam.py, ``--seed``, default 0); bogofilter is trained on the
same files. ``textnb serve`` is started on a temporary socket (its log lines go to a file).

1. **Per message, one process each** (what procmail does for every delivery): ``--messages``
   (default 200) test messages, a seeded stratified sample of the 30 % test part, are each fed
   to a fresh ``spamc -U SOCKET`` (the message back with X-TextNB-* fields), ``spamc -K`` (a
   PING: spamc's start-up and a connection, the floor) and a fresh ``bogofilter -p``, in
   rotating order, timed as wall time around ``subprocess.run``.
   Both outputs are checked (spamc's must be the message with fields added).
2. **Throughput**: 1, 8 and 32 concurrent clients (threads of this process using
   textnb.client.check, one connection per message) send the test messages for
   ``--seconds`` (default 5) each; messages per second over all clients, and the median
   latency, and the server's CPU time per message (user + system, all its processes). The
   clients run on the same cores as the server. Run for each concurrency model: ``--workers 1`` (one asyncio process),
   ``--workers N`` (N = cores, the default: pre-forked asyncio processes), and, for comparison
   only, a thread-per-connection server (``socketserver.ThreadingUnixStreamServer`` in one
   process, scoring with textnb.serve's own verdict function; CHECK only).
3. **Memory**: the daemon's peak RSS (VmHWM), summed over its processes and of the largest,
   and their PSS (proportional set size: a page shared by the forked workers counted once,
   the memory the daemon really holds), after the throughput runs.

Run::

    python scripts/bench_serve.py                    # unpacks ../shared/corpora/spamassassin-public.tar.gz
    python scripts/bench_serve.py --data corpora/full/spamassassin --messages 100 --seconds 3

A run takes about two minutes on 2 cores. The machine's other load shows in the figures: run
it on a quiet machine, and read the ratio to bogofilter, measured in the same minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_filter import ENV, sample, symlink_tree, timed  # noqa: E402
from bench_spam import (DEFAULT_ARCHIVE, BenchError, bogofilter_path, bogofilter_register,  # noqa: E402
                        corpus_dir, list_corpus, stratified_split, table)

from textnb import client  # noqa: E402

CONCURRENCY = (1, 8, 32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_serve.py", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path,
                        help="directory holding easy_ham/ easy_ham_2/ hard_ham/ spam/ spam_2/")
    parser.add_argument("--archive", type=Path, default=DEFAULT_ARCHIVE,
                        help=f"archive unpacked when --data is not given (default {DEFAULT_ARCHIVE})")
    parser.add_argument("--textnb", default=str(Path(sys.executable).parent / "textnb"),
                        metavar="PATH", help="textnb console script (default: next to sys.executable)")
    parser.add_argument("--spamc", default=shutil.which("spamc"), metavar="PATH")
    parser.add_argument("--bogofilter", metavar="PATH", help="bogofilter binary (default: on PATH)")
    parser.add_argument("--messages", type=int, default=200, help="test messages (default 200)")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="seconds per throughput run (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threaded-server", nargs=2, metavar=("SOCKET", "MODEL"),
                        help=argparse.SUPPRESS)  # the thread-per-connection comparison, run by this script
    args = parser.parse_args(argv)
    if args.threaded_server:
        return threaded_server(*args.threaded_server)
    if not args.spamc:
        print("bench_serve: error: spamc is not installed (Debian package spamc)", file=sys.stderr)
        return 1
    try:
        with tempfile.TemporaryDirectory(prefix="bench-serve-", dir="/tmp") as scratch:
            run(args, Path(scratch))
    except BenchError as error:
        print(f"bench_serve: error: {error}", file=sys.stderr)
        return 1
    return 0


def run(args, scratch: Path) -> None:
    started = time.perf_counter()
    directory = corpus_dir(args.data, args.archive, scratch)
    paths, y = list_corpus(directory)
    train, test = stratified_split(y, 0.7, args.seed)
    bogofilter = bogofilter_path(args.bogofilter)
    print(f"data {directory}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}; "
          f"spamc {args.spamc}; bogofilter {bogofilter or '(not found)'}", flush=True)
    symlink_tree(scratch / "train", {c: [paths[i] for i in train if y[i] == c] for c in ("spam", "ham")})
    model = scratch / "train.model"
    secs, done = timed([args.textnb, "train", "-q", "-m", str(model),
                        str(scratch / "train" / "spam"), str(scratch / "train" / "ham")])
    if done.returncode != 0:
        raise BenchError(f"textnb train failed: {done.stderr.decode(errors='replace')[-300:]}")
    print(f"textnb train on {train.size} messages: {secs:.1f} s; model {model.stat().st_size / 1e6:.1f} MB")
    db = scratch / "bogo"
    if bogofilter:
        db.mkdir()
        bogofilter_register(bogofilter, db, [paths[i] for i in train if y[i] == "spam"],
                            [paths[i] for i in train if y[i] == "ham"])
    chosen = sample(y, test, args.messages, args.seed)
    messages = [Path(paths[i]).read_bytes() for i in chosen]
    workers = os.cpu_count() or 1

    # -- 1. per message ----------------------------------------------------------------
    with Daemon(args.textnb, model, scratch, workers) as daemon:
        commands = {"spamc -U SOCKET": [args.spamc, "-U", str(daemon.socket)],
                    # The floor: spamc's start-up and a connection, no message scored.
                    "spamc -K (PING only)": [args.spamc, "-U", str(daemon.socket), "-K"]}
        if bogofilter:
            commands["bogofilter -p"] = [bogofilter, "-C", "-d", str(db), "-p"]
        names = list(commands)
        for name in names:
            timed(commands[name], messages[0])  # warm-up, untimed
        times = {name: [] for name in names}
        for k, raw in enumerate(messages):
            for name in names[k % len(names):] + names[:k % len(names)]:
                secs, done = timed(commands[name], raw)
                times[name].append(secs * 1000)
                check(name, raw, done)
        ref = statistics.median(times["bogofilter -p"]) if bogofilter else None
        rows = [[name, f"{statistics.median(t):.2f}", f"{np.percentile(t, 90):.2f}",
                 f"{max(t):.1f}", f"{statistics.median(t) / ref:.2f}x" if ref else "-"]
                for name, t in times.items()]
        print(f"\n== Per message, a fresh process each ({len(messages)} test messages; wall ms) ==")
        print(table(["command", "median", "p90", "max", "vs bogofilter"], rows), flush=True)

    # -- 2. throughput ------------------------------------------------------------------
    rows, memory = [], {}
    servers = [(f"asyncio, --workers 1", 1), (f"asyncio, --workers {workers} (default)", workers)]
    for label, n in servers:
        with Daemon(args.textnb, model, scratch, n) as daemon:
            rows.append([label] + throughput(daemon.socket, messages, args.seconds, daemon.pids()))
            memory[label] = daemon.memory()
    with Threaded(model, scratch) as server:
        rows.append(["threads, 1 process (comparison)"]
                    + throughput(server.socket, messages, args.seconds, server.pids()))
        memory["threads, 1 process (comparison)"] = server.memory()
    print(f"\n== Throughput: CHECK by textnb.client, one connection per message, "
          f"{args.seconds:g} s per cell: messages/s (median ms, server CPU ms a message) ==")
    print(table(["server"] + [f"{c} client{'s' if c > 1 else ''}" for c in CONCURRENCY], rows))

    # -- 3. memory ----------------------------------------------------------------------
    print("\n== Memory after the throughput runs (MB, summed over the server's processes) ==")
    print(table(["server", "processes", "Σ peak RSS", "largest peak RSS", "Σ PSS now"],
                [[label, str(m[0]), f"{m[1]:.0f}", f"{m[3]:.0f}", f"{m[2]:.0f}"]
                 for label, m in memory.items()]))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


def check(name: str, raw: bytes, done: subprocess.CompletedProcess) -> None:
    if name.startswith("spamc -K"):
        if done.returncode != 0:
            raise BenchError(f"spamc -K exited {done.returncode}")
    elif name.startswith("spamc"):
        out = done.stdout
        if done.returncode != 0 or b"X-TextNB-Status: " not in out:
            raise BenchError(f"spamc did not get a verdict (exit {done.returncode}): "
                             f"{done.stderr.decode(errors='replace')[-200:]}")
        kept = b"".join(line for line in out.splitlines(keepends=True)
                        if not line.startswith(b"X-TextNB-"))
        if kept != raw:
            raise BenchError("spamc's output is not the message with X-TextNB-* fields added")
    elif done.returncode not in (0, 1, 2) or b"\nX-Bogosity: " not in done.stdout:
        raise BenchError(f"bogofilter -p failed (exit {done.returncode})")


def throughput(path: Path, messages: list[bytes], seconds: float, pids: list[int]) -> list[str]:
    """Per concurrency: messages/s, median latency, and the server's CPU ms per message (its
    processes' user + system time over the run: what the machine's cores allow, k cores
    answering at most k × 1000 / that many messages a second)."""
    cells = []
    for clients in CONCURRENCY:
        stop = time.monotonic() + seconds
        latencies: list[list[float]] = [[] for _ in range(clients)]
        errors: list[BaseException] = []

        def work(i: int) -> None:
            k = i
            try:
                while time.monotonic() < stop:
                    t0 = time.perf_counter()
                    client.check(messages[k % len(messages)], socket_path=path)
                    latencies[i].append(time.perf_counter() - t0)
                    k += clients
            except BaseException as error:  # noqa: BLE001 — reported below
                errors.append(error)

        t0, cpu0 = time.perf_counter(), cpu_seconds(pids)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pids) - cpu0
        if errors:
            raise BenchError(f"a client failed with {clients} clients: {errors[0]!r}")
        done = [x for per in latencies for x in per]
        cells.append(f"{len(done) / elapsed:.0f} ({1000 * statistics.median(done):.1f}, "
                     f"{1000 * cpu / len(done):.2f})")
    return cells


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far, from /proc/<pid>/stat."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


class Daemon:
    """``textnb serve`` on a temporary socket, for the length of a ``with``."""

    def __init__(self, textnb: str, model: Path, scratch: Path, workers: int) -> None:
        self.socket = scratch / "serve.sock"
        self.command = [textnb, "serve", "-m", str(model), "--socket", str(self.socket),
                        "--workers", str(workers)]
        self.log = scratch / f"serve-{workers}.log"

    def __enter__(self) -> "Daemon":
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=log, env=ENV)
        wait_ready(self.socket, self.process, self.log)
        return self

    def pids(self) -> list[int]:
        return [self.process.pid] + children(self.process.pid)

    def memory(self) -> tuple[int, float, float, float]:
        return memory(self.pids())

    def __exit__(self, *_) -> None:
        self.process.send_signal(signal.SIGTERM)
        if self.process.wait(timeout=60) != 0:
            raise BenchError(f"textnb serve exited {self.process.returncode}: "
                             f"{self.log.read_text()[-300:]}")


class Threaded(Daemon):
    """The thread-per-connection comparison server (this script, --threaded-server)."""

    def __init__(self, model: Path, scratch: Path) -> None:
        self.socket = scratch / "threads.sock"
        self.command = [sys.executable, __file__, "--threaded-server", str(self.socket), str(model)]
        self.log = scratch / "threads.log"


def wait_ready(path: Path, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if client.ping(socket_path=path, timeout=5):
                return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise BenchError(f"server did not start: {log.read_text()[-300:]}")
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def memory(pids: list[int]) -> tuple[int, float, float, float]:
    """(processes, Σ peak RSS, Σ PSS now, largest peak RSS) in MB, from /proc."""
    peaks, pss = [], 0.0
    for pid in pids:
        with open(f"/proc/{pid}/status") as f:
            peaks.append(next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024)
        with open(f"/proc/{pid}/smaps_rollup") as f:
            pss += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) / 1024
    return len(pids), sum(peaks), pss, max(peaks)


def threaded_server(path: str, model_path: str) -> int:
    """A thread per connection, one process: CHECK and PING only, scored by textnb.serve's
    verdict function on the model in memory. For the comparison, not for use."""
    from textnb.serve import Model, _spam_field, _verdict

    model = Model(model_path)  # read-only once loaded: the threads share it unguarded

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            method = self.rfile.readline().split(b" ", 1)[0]
            fields = {}
            while (line := self.rfile.readline().rstrip(b"\r\n")):
                name, _, value = line.partition(b":")
                fields[name.strip().lower()] = value.strip()
            if method == b"PING":
                self.wfile.write(b"SPAMD/1.5 0 PONG\r\n")
                return
            body = self.rfile.read(int(fields[b"content-length"]))
            decision = _verdict(model, body)
            self.wfile.write(f"SPAMD/1.1 0 EX_OK\r\nSpam: {_spam_field(decision, 'CHECK')}\r\n\r\n".encode())

    class Server(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True
        request_queue_size = socket.SOMAXCONN

    with Server(path, Handler) as server:
        signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
        server.serve_forever()
    os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
