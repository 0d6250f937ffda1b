"""What ``textnb serve`` costs: per message through spamc against ``bogofilter -p`` and against
spamc's own floor, where a request's time goes, messages per second with concurrent clients,
and the daemon's memory, on the SpamAssassin corpus.

What it measures
----------------
A model is trained with ``textnb train`` (default settings) on the 70 % training part of the
corpus (the stratified split of bench.spam, ``--seed``, default 0); bogofilter is
trained on the same files. Three servers run on temporary sockets for the whole run:
``textnb serve --workers 1``, ``textnb serve --workers N`` (N = cores: the command at its
defaults), and a do-nothing server (this module, ``--do-nothing-server``: one blocking loop that answers every
request at once, the message back unchanged), which shows what spamc and the clients cost
without textnb; with ``--baseline DIR``, a fourth: another version's ``textnb serve --workers
N`` from the source tree DIR, so that before and after are measured in the same minutes.

0. **Stages** in this process, on the test messages (each timed 5 times, the fastest kept):
   parsing (textnb.documents.message.read_bytes), tokenizing, scoring (textnb.serve.model.Weights; again
   right after the message's parsing and tokenizing, untimed, as in the daemon, whose caches
   the other stages fill), and the decision with its answer (PROCESS's bytes), the median
   and the mean message. The decision is composed here of the daemon's public parts, as
   textnb.serve.server composes it.
1. **Per message, one process each** (what procmail does for every delivery): ``--messages``
   (default 200) test messages, a seeded stratified sample of the 30 % test part, are each fed
   to a fresh ``spamc -U SOCKET`` (PROCESS: the message back with X-TextNB-* fields) for each
   server and to a fresh ``bogofilter -p``, in rotating order, timed as wall time around
   ``subprocess.run``. Every output is checked (spamc's must be the message with fields
   added). textnb's share is spamc's time with textnb less its time with the do-nothing
   server. CPU time (user + system of the command, and of its server's processes over the
   call) is summed too: on a loaded machine it varies less than wall time.
2. **Throughput**: 1, 8 and 32 concurrent clients (connections kept open at once by one
   loop over raw sockets in this module, a connection per message, CHECK) send the test
   messages for ``--seconds`` (default 5) each, in three parts, the servers taking turns:
   messages per second over all clients, the median latency, the server's CPU time per
   message (user + system over all its processes) and the client's. The clients run on the
   same cores as the server: what the server alone could answer on this machine is at most
   (the cores its processes can use) × 1000 / (its CPU ms a message), printed below the
   table.
3. **Memory**: each server's peak RSS (VmHWM) summed over its processes (pages the forked
   workers share with their parent are counted in each) and of the largest, and the sum of
   their PSS now (a shared page counted once: the memory the daemon really holds).

Run (from the repository root)::

    python -m bench.serve                   # corpora/full/spamassassin, else the shared archive
    python -m bench.serve --data corpora/full/spamassassin --messages 100 --seconds 3
    git archive OLD textnb | tar -x -C /tmp/old && python -m bench.serve --baseline /tmp/old

A run takes about two minutes on 2 cores. The machine's other load shows in the figures: run
it on a quiet machine, and read the ratios, measured in the same minutes.
"""

from __future__ import annotations

import argparse
import functools
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import BenchError, args as options, report
from bench.common.corpora import ROOT, list_spam, spam_dir
from bench.common.measure import ENV, children, children_cpu, cpu_seconds, memory, timed
from bench.common.splits import stratified_sample, stratified_split
from bench.common.systems import bogofilter_path, bogofilter_register, lay_out
from textnb.serve import client
from textnb.serve.model import decide_message

table = functools.partial(report.table, indent="  ")
CONCURRENCY = (1, 8, 32)
ROUNDS = 3  # parts of each throughput cell, the servers taking turns
DO_NOTHING = "do-nothing server"


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--textnb", default=str(Path(sys.executable).parent / "textnb"),
                        metavar="PATH", help="textnb console script (default: next to sys.executable)")
    parser.add_argument("--spamc", default=shutil.which("spamc"), metavar="PATH")
    parser.add_argument("--bogofilter", metavar="PATH", help="bogofilter binary (default: on PATH)")
    parser.add_argument("--messages", type=int, default=200, help="test messages (default 200)")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="seconds per throughput run (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="a source tree of textnb (the directory holding textnb/, e.g. from "
                             "git archive OLD textnb) whose daemon runs too, for before/after "
                             "figures in the same minutes")
    parser.add_argument("--do-nothing-server", metavar="SOCKET",
                        help=argparse.SUPPRESS)  # the floor, run by this script
    args = parser.parse_args(argv)
    if args.do_nothing_server:
        return do_nothing_server(args.do_nothing_server)

    def work() -> None:
        if not args.spamc:
            raise BenchError("spamc is not installed (Debian package spamc)")
        with tempfile.TemporaryDirectory(prefix="bench-serve-", dir="/tmp") as scratch:
            run(args, Path(scratch))
    return options.run("bench.serve", work)


def run(args, scratch: Path) -> None:
    started = time.perf_counter()
    directory = spam_dir(args.data, args.archive)
    paths, y = list_spam(directory)
    train, test = stratified_split(y, 0.7, args.seed)
    bogofilter = bogofilter_path(args.bogofilter)
    cores = os.cpu_count() or 1
    print(f"data {directory}; {cores} CPUs; Python {sys.version.split()[0]}; "
          f"spamc {args.spamc}; bogofilter {bogofilter or '(not found)'}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    lay_out(scratch / "train", {c: [Path(paths[i]) for i in train if y[i] == c] for c in ("spam", "ham")})
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
    chosen = stratified_sample(y, test, args.messages, args.seed)
    messages = [Path(paths[i]).read_bytes() for i in chosen]

    print(f"\n== Stages of one message in this process ({len(messages)} test messages; "
          f"ms, the fastest of 5) ==")
    print(table(["stage", "median message", "mean"], stages(model, messages)), flush=True)

    servers = {DO_NOTHING: Server([sys.executable, "-m", "bench.serve", "--do-nothing-server"],
                                  scratch, "none", 1, env={**ENV, "PYTHONPATH": str(ROOT)},
                                  cwd=ROOT)}
    for n in sorted({1, cores}):
        servers[f"textnb, --workers {n}{' (default)' if n == cores else ''}"] = Server(
            [args.textnb, "serve", "-m", str(model), "--workers", str(n), "--socket"], scratch,
            f"w{n}", n)
    if args.baseline:
        # Another version's daemon on the same messages in the same minutes: on a loaded
        # machine, before and after compare only so.
        servers[f"baseline, --workers {cores}"] = Server(
            [sys.executable, "-m", "textnb", "serve", "-m", str(model), "--workers", str(cores),
             "--socket"], scratch, "baseline", cores,
            env={**ENV, "PYTHONPATH": str(args.baseline.resolve())}, cwd=args.baseline)
    try:
        for server in servers.values():
            server.start()
        per_message(args, servers, bogofilter, db, messages)
        # Each cell in ROUNDS parts, the servers taking turns: the machine's other load,
        # which changes by the minute, falls on every server alike.
        tallies = {(name, clients): Tally() for name in servers for clients in CONCURRENCY}
        for clients in CONCURRENCY:
            for k in range(ROUNDS):
                names = list(servers)[k % len(servers):] + list(servers)[:k % len(servers)]
                for name in names:
                    tallies[name, clients].add(servers[name], messages, args.seconds / ROUNDS,
                                               clients)
        rows, bounds = [], []
        for name, server in servers.items():
            cells = [tallies[name, clients] for clients in CONCURRENCY]
            rows.append([name] + [cell.text() for cell in cells])
            ms = statistics.median(cell.server_ms() for cell in cells)
            usable = min(cores, server.processes)
            bounds.append(f"  {name}: {usable} × 1000 / {ms:.2f} = {usable * 1000 / ms:.0f}")
        print(f"\n== Throughput: CHECK, a connection per message, {args.seconds:g} s per cell: "
              f"messages/s (median ms; CPU ms a message: server, clients) ==")
        print(table(["server"] + [f"{c} client{'s' if c > 1 else ''}" for c in CONCURRENCY], rows))
        print("At most, the server alone, every core its own: the cores its processes can use "
              "× 1000 / its CPU ms a message (the median cell's)")
        print("\n".join(bounds))

        print("\n== Memory after the runs (MB) ==")
        memory = {name: server.memory() for name, server in servers.items() if name != DO_NOTHING}
        print(table(["server", "processes", "Σ peak RSS", "largest peak RSS", "Σ PSS now"],
                    [[name, str(m[0]), f"{m[1]:.0f}", f"{m[3]:.0f}", f"{m[2]:.0f}"]
                     for name, m in memory.items()]))
    finally:
        for server in servers.values():
            server.stop()
    print(f"\n(total {time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f})")


def stages(model: Path, messages: list[bytes]) -> list[list[str]]:
    """Each stage's time on the median message and the mean, as textnb.serve.server runs them."""
    from textnb.decision.rules import headers
    from textnb.documents.message import read_bytes
    from textnb.mail.filter import add_headers
    from textnb.serve.model import Model

    version = Model(model).version
    documents = [read_bytes(raw) for raw in messages]
    tokens = [version.classifier.tokenize([document])[0] for document in documents]
    decisions = [decide_message(version, raw) for raw in messages]
    steps = {
        "parse (documents.read_bytes)": (read_bytes, messages),
        "tokenize (classifier.tokenize)": (lambda d: version.classifier.tokenize([d]), documents),
        "score (serve.Weights.log_proba)": (version.weights.log_proba, tokens),
        # As in the daemon: the other stages have just filled the caches with their data.
        "score, its parse and tokenizing just done": (
            version.weights.log_proba, messages,
            lambda raw: version.classifier.tokenize([read_bytes(raw)])[0]),
        "decide + PROCESS's bytes": (lambda k: add_headers(messages[k], headers(decisions[k])),
                                     range(len(messages))),
        "all (the verdict + PROCESS's bytes)": (
            lambda raw: add_headers(raw, headers(decide_message(version, raw))), messages),
        # The daemon sleeps while spamc starts: the same, each time after a 3 ms sleep.
        "all, each after a 3 ms sleep": (
            lambda raw: add_headers(raw, headers(decide_message(version, raw))), messages,
            lambda raw: time.sleep(0.003) or raw),
    }
    rows = []
    for name, (step, inputs, *untimed) in steps.items():
        fastest = []
        for item in inputs:
            times = []
            for _ in range(5):
                argument = untimed[0](item) if untimed else item
                t0 = time.perf_counter()
                step(argument)
                times.append(time.perf_counter() - t0)
            fastest.append(1000 * min(times))
        rows.append([name, f"{statistics.median(fastest):.3f}", f"{statistics.mean(fastest):.3f}"])
    return rows


def per_message(args, servers: dict, bogofilter: str | None, db: Path,
                messages: list[bytes]) -> None:
    commands = {f"spamc → {name}": ([args.spamc, "-U", str(server.socket)], server.pids())
                for name, server in servers.items()}
    if bogofilter:
        commands["bogofilter -p"] = ([bogofilter, "-C", "-d", str(db), "-p"], [])
    names = list(commands)
    for name in names:
        timed(commands[name][0], messages[0])  # warm-up, untimed
    times = {name: [] for name in names}
    cpu = dict.fromkeys(names, 0.0)
    for k, raw in enumerate(messages):
        for name in names[k % len(names):] + names[:k % len(names)]:
            command, pids = commands[name]
            before = children_cpu() + cpu_seconds(pids)
            secs, done = timed(command, raw)
            cpu[name] += children_cpu() + cpu_seconds(pids) - before
            times[name].append(secs * 1000)
            check(name, raw, done)
    ref = statistics.median(times["bogofilter -p"]) if bogofilter else None
    floor = statistics.median(times[f"spamc → {DO_NOTHING}"])
    ref_cpu = cpu["bogofilter -p"] if bogofilter else None
    rows = [[name, f"{statistics.median(t):.2f}", f"{sorted(t)[len(t) // 10]:.2f}",
             f"{sorted(t)[len(t) * 9 // 10]:.2f}",
             f"{statistics.median(t) / ref:.2f}x" if ref else "-",
             f"{statistics.median(t) - floor:+.2f}" if name.startswith("spamc") else "-",
             f"{1000 * cpu[name] / len(t):.2f}", f"{cpu[name] / ref_cpu:.2f}x" if ref_cpu else "-"]
            for name, t in times.items()]
    print(f"\n== Per message, a fresh process each ({len(messages)} test messages; wall ms, "
          f"and CPU ms: the command's and its server's) ==")
    print(table(["command", "median", "p10", "p90", "vs bogofilter", "over spamc's floor",
                 "CPU", "CPU vs bogofilter"], rows), flush=True)



def check(name: str, raw: bytes, done: subprocess.CompletedProcess) -> None:
    if name.startswith("spamc"):
        out = done.stdout
        if done.returncode != 0:
            raise BenchError(f"{name} exited {done.returncode}: {done.stderr.decode(errors='replace')[-200:]}")
        if DO_NOTHING in name:
            if out != raw:
                raise BenchError("spamc did not get the message back from the do-nothing server")
            return
        if b"X-TextNB-Status: " not in out:
            raise BenchError(f"{name} gave no verdict: {done.stderr.decode(errors='replace')[-200:]}")
        kept = b"".join(line for line in out.splitlines(keepends=True)
                        if not line.startswith(b"X-TextNB-"))
        if kept != raw:
            raise BenchError("spamc's output is not the message with X-TextNB-* fields added")
    elif done.returncode not in (0, 1, 2) or b"\nX-Bogosity: " not in done.stdout:
        raise BenchError(f"bogofilter -p failed (exit {done.returncode})")


class Tally:
    """One throughput cell, summed over its rounds: latencies, seconds, the server's and the
    clients' CPU seconds."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.elapsed = self.cpu = self.mine = 0.0

    def add(self, server: "Server", messages: list[bytes], seconds: float, clients: int) -> None:
        pids = server.pids()
        cpu0, mine0, t0 = cpu_seconds(pids), time.process_time(), time.perf_counter()
        self.latencies += hammer(server.socket, messages, seconds, clients)
        self.elapsed += time.perf_counter() - t0
        self.cpu += cpu_seconds(pids) - cpu0
        self.mine += time.process_time() - mine0

    def server_ms(self) -> float:
        return 1000 * self.cpu / len(self.latencies)

    def text(self) -> str:
        """messages/s (median latency ms; CPU ms a message of the server, of the clients)"""
        n = len(self.latencies)
        return (f"{n / self.elapsed:.0f} ({1000 * statistics.median(self.latencies):.1f}; "
                f"{self.server_ms():.2f}, {1000 * self.mine / n:.2f})")


def hammer(path: Path, messages: list[bytes], seconds: float, clients: int) -> list[float]:
    """Latencies of the CHECKs that ``clients`` connections, kept open at once, sent for
    ``seconds`` (a new connection for each message, as spamc makes); every answer checked.

    One loop over raw sockets, few system calls a message (connect, one send, the answer's
    recv until the end, close): 0.08–0.10 ms of CPU a message, where a coroutine a client
    with asyncio's sock_* calls took 0.27–0.33, a third of what the do-nothing server let it
    answer and a sixth of textnb's CPU, on the same 2 cores."""
    requests = [b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n%s" % (len(raw), raw)
                for raw in messages]
    selector = selectors.DefaultSelector()
    latencies: list[float] = []
    sent = 0
    stop = time.monotonic() + seconds

    def start() -> None:
        nonlocal sent
        t0 = time.perf_counter()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(path))
        s.sendall(requests[sent % len(requests)])  # CHECK's answer is short: no deadlock
        sent += 1
        selector.register(s, selectors.EVENT_READ, (t0, []))

    for _ in range(clients):
        start()
    while selector.get_map():
        for key, _ in selector.select():
            s, (t0, chunks) = key.fileobj, key.data
            try:
                while chunk := s.recv(65536, socket.MSG_DONTWAIT):
                    chunks.append(chunk)
            except BlockingIOError:
                continue  # the rest of the answer, or its end, is still to come
            selector.unregister(s)
            s.close()
            answer = b"".join(chunks)
            if not answer.startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: "):
                raise BenchError(f"a client got {answer[:80]!r}")
            latencies.append(time.perf_counter() - t0)
            if time.monotonic() < stop:
                start()
    selector.close()
    return latencies



class Server:
    """A server started by ``command`` + its socket, on a temporary socket, ready when it
    answers PING; ``processes`` of it answer."""

    def __init__(self, command: list[str], scratch: Path, name: str, processes: int,
                 env: dict[str, str] = ENV, cwd: Path | None = None) -> None:
        # python -m puts the working directory first on sys.path: a baseline's runs in its tree.
        self.processes, self.env, self.cwd = processes, env, cwd
        self.socket = scratch / f"{name}.sock"
        self.command = command + [str(self.socket)]
        self.log = scratch / f"{name}.log"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=log, env=self.env,
                                            cwd=self.cwd)
        deadline = time.monotonic() + 60
        while True:
            try:
                if client.ping(socket_path=self.socket, timeout=5):
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"server did not start: {self.log.read_text()[-300:]}")
            time.sleep(0.05)

    def pids(self) -> list[int]:
        return [self.process.pid] + children(self.process.pid)

    def memory(self) -> tuple[int, float, float, float]:
        return memory(self.pids())

    def stop(self) -> None:
        if getattr(self, "process", None) is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        if self.process.wait(timeout=60) != 0:
            raise BenchError(f"{self.command[:3]} exited {self.process.returncode}: "
                             f"{self.log.read_text()[-300:]}")




def do_nothing_server(path: str) -> int:
    """Answer every request at once, one connection after another: PING with PONG, PROCESS
    with the message unchanged, anything else as CHECK of a ham. What spamc and the clients
    cost with a server that costs almost nothing; not for use."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(socket.SOMAXCONN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            connection, _ = listener.accept()
            with connection:
                data = b""  # spamc and the clients here end their fields with a blank line
                while b"\r\n\r\n" not in data and (chunk := connection.recv(65536)):
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                if head.startswith(b"PING"):
                    connection.sendall(b"SPAMD/1.5 0 PONG\r\n")
                    continue
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length and (chunk := connection.recv(65536)):
                    body += chunk
                spam = b"Spam: False ; 0.0 / 5.0\r\n"
                if head.startswith(b"PROCESS"):
                    connection.sendall(b"SPAMD/1.1 0 EX_OK\r\nContent-length: %d\r\n%s\r\n%s"
                                       % (len(body), spam, body))
                else:
                    connection.sendall(b"SPAMD/1.1 0 EX_OK\r\n" + spam + b"\r\n")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
