"""textnb imap against a real Dovecot on loopback (textnb.imap.dovecot), issue #45's goals:

1. **10,000 messages** filtered in one run, each moved once, none lost; a rerun moves nothing.
2. **Kills**: a run killed (SIGKILL) at a random point of its work, the client or the whole
   server in turn, N times (200): every message in exactly one folder after each, the state
   consistent (no move left), the next run completes.
3. **Cost per message**: fetch + classify + move by ``textnb imap`` (one pass,
   textnb.imap.filtering.run, in process; its batches classified by a worker process, and in
   sequence) beside a plain IMAPClient fetch + move of the same messages to the same
   folders, in the same batches, without classifying; interleaved (each first in turn),
   fresh copies of the mailbox each time. Goal: at most 2x.
4. **IMAPSieve**: a message moved into Junk over IMAP, learned by ``textnb serve`` through
   contrib/sieve (spamc -L spam): seconds from the MOVE to the model file replaced.

    python -m bench.imap                       # all, on the shared SpamAssassin archive
    python -m bench.imap --messages 2000 --trials 20

Messages: the SpamAssassin public corpus (../shared/corpora/spamassassin-public.tar.gz, 6,046),
else the bundled 300 of corpora/spamassassin, each repeated with an X-Bench field to make
distinct messages; the model is trained (textnb train) on the bundled 300.
"""

from __future__ import annotations

import re
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from hashlib import sha256
from pathlib import Path

from click.testing import CliRunner

from textnb import load_model
from textnb.cli.app import main
from textnb.imap import filtering, mailbox
from textnb.imap.account import Account
from textnb.imap.dovecot import Dovecot, free_port, missing
from textnb.imap.session import Report, Session
from textnb.imap.state import open_state, state_path
from textnb.imap.verdicts import Verdicts
from textnb.store.journal import signature

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "spamassassin"
ARCHIVE = ROOT.parent / "shared" / "corpora" / "spamassassin-public.tar.gz"
PLACES = {"spam": "Junk", "unsure": "Unsure", "ham": "INBOX"}


def corpus_messages() -> list[bytes]:
    """The archive's messages (spam and ham, no cmds files), else the bundled sample's."""
    if ARCHIVE.is_file():
        with tarfile.open(ARCHIVE) as tar:
            return [tar.extractfile(m).read() for m in tar
                    if m.isfile() and not m.name.endswith("cmds")]
    return [p.read_bytes() for label in ("spam", "ham") for p in sorted((CORPUS / label).iterdir())]


def distinct(messages: list[bytes], n: int, tag: str) -> list[bytes]:
    """n messages cycling through ``messages``, each with an X-Bench field of its own (after
    an mbox From line): distinct bytes, sizes and digests."""
    found = []
    for i in range(n):
        raw = messages[i % len(messages)]
        field = f"X-Bench: {tag} {i}\n".encode()
        if raw.startswith(b"From "):
            first, _, rest = raw.partition(b"\n")
            found.append(first + b"\n" + field + rest)
        else:
            found.append(field + raw)
    return found


def digest(raw: bytes) -> str:
    """A message's digest, its line ends as Dovecot stores them: LF (CRs before an LF go,
    as the delivery writes a CRLF as LF, and a CR CR LF as CR LF, and so on)."""
    return sha256(re.sub(rb"\r+\n", b"\n", raw)).hexdigest()


def check_filed(server: Dovecot, messages: list[bytes], statuses: list[str]) -> None:
    """Each message once, in its status's folder; nothing else anywhere."""
    found: dict[str, str] = {}
    for folder, raws in server.folders().items():
        for raw in raws:
            d = digest(raw)
            assert d not in found, f"a message twice: {folder} and {found[d]}"
            found[d] = folder
    assert set(found) == {digest(m) for m in messages}, "a message lost or added"
    wrong = sum(found[digest(m)] != PLACES[s] for m, s in zip(messages, statuses))
    assert not wrong, f"{wrong} messages in the wrong folder"


def maildir_files(server: Dovecot) -> set:
    return {(p.parent.parent.name, p.name.split(":")[0].split(",")[0])
            for p in server.home.rglob("*") if p.is_file() and p.parent.name in ("cur", "new")}


def textnb() -> str:
    return str(Path(sys.executable).with_name("textnb"))


def options(server: Dovecot, model: Path) -> list[str]:
    return ["--host", "127.0.0.1", "--port", str(server.port), "--user", server.user,
            "--ca-file", str(server.cert), "-m", str(model)]


def environment(server: Dovecot, model: Path) -> dict:
    return {**os.environ, "TEXTNB_IMAP_PASSWORD": server.password,
            "XDG_CONFIG_HOME": str(model.parent)}


def fresh_model(trained: Path, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "spam.model"
    shutil.copy(trained, path)
    for old in directory.glob("spam.model.imap.*"):
        old.unlink()
    return path


# -- 1. 10,000 messages ------------------------------------------------------------------------

def ten_thousand(trained: Path, pool: list[bytes], n: int, work: Path) -> None:
    messages = distinct(pool, n, "many")
    model = fresh_model(trained, work / "many")
    statuses = [str(s) for s in load_model(model).spam_status(messages)]
    with Dovecot() as server:
        server.deliver(messages)
        start = time.perf_counter()
        run = subprocess.run([textnb(), "imap", "filter", "--all", *options(server, model)],
                             env=environment(server, model), capture_output=True, text=True)
        took = time.perf_counter() - start
        assert run.returncode == 0, run.stderr
        check_filed(server, messages, statuses)
        files = maildir_files(server)
        start = time.perf_counter()
        again = subprocess.run([textnb(), "imap", "filter", "--all", *options(server, model)],
                               env=environment(server, model), capture_output=True, text=True)
        rerun = time.perf_counter() - start
        assert again.returncode == 0 and maildir_files(server) == files, again.stderr
    counts = Counter(statuses)
    print(f"1. {n:,} messages in INBOX, one run of textnb imap filter --all: {took:.1f} s "
          f"({took / n * 1e3:.2f} ms a message, the process's start included); moved "
          f"{counts['spam']:,} to Junk and {counts['unsure']:,} to Unsure, left "
          f"{counts['ham']:,}: each in its folder once, none lost")
    print(f"   summary: {run.stdout.strip()}")
    print(f"   rerun: {again.stdout.strip()} in {rerun:.1f} s; every message file where it was")


# -- 2. kills ----------------------------------------------------------------------------------

def kills(trained: Path, pool: list[bytes], trials: int, per_trial: int, work: Path) -> None:
    """Runs killed at random moments; a fresh server, model and state every 20 runs (the
    check reads every message of the mailbox after each run)."""
    rng = random.Random(45)
    killed: Counter = Counter()
    resumed = runs = checked = 0
    busy = []
    server = None
    try:
        while sum(killed.values()) < trials and runs < 3 * trials:
            if runs % 20 == 0:
                if server is not None:
                    server.close()
                server = Dovecot().start()
                model = fresh_model(trained, work / f"kills{runs}")
                classifier = load_model(model)
                env = environment(server, model)
                command = [textnb(), "imap", "filter", "--all", "-q", *options(server, model)]
                everything, statuses = [], []
            batch = distinct(pool[runs % len(pool):], per_trial, f"trial {runs}")
            everything += batch
            statuses += [str(s) for s in classifier.spam_status(batch)]
            server.deliver(batch)
            before = server.log().count("Login: user=<alice>")
            run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            while server.log().count("Login: user=<alice>") == before and run.poll() is None:
                time.sleep(0.005)
            logged_in = time.monotonic()
            if runs % 20 == 0:  # the first of a mailbox, not killed: how long its work takes
                assert run.wait(120) == 0
                busy.append(time.monotonic() - logged_in)
            else:
                time.sleep(rng.uniform(0, busy[-1]))
                if run.poll() is None:
                    if sum(killed.values()) % 2:
                        server.kill()
                        killed["server"] += 1
                    else:
                        run.send_signal(signal.SIGKILL)
                        killed["client"] += 1
                run.wait(60)
            if server.process is None:
                server.start()
            with sqlite3.connect(next(model.parent.glob("*.sqlite"))) as db:
                resumed += db.execute("SELECT COUNT(*) FROM moves").fetchone()[0]
            finish = subprocess.run(command, env=env, capture_output=True, text=True)
            assert finish.returncode == 0, f"run {runs}: {finish.stderr}"
            check_filed(server, everything, statuses)
            with sqlite3.connect(next(model.parent.glob("*.sqlite"))) as db:
                assert db.execute("SELECT COUNT(*) FROM moves").fetchone() == (0,)
            checked += len(everything)
            runs += 1
    finally:
        if server is not None:
            server.close()
    print(f"2. {sum(killed.values())} runs killed (SIGKILL) at a random moment of their work "
          f"(0 to {statistics.median(busy):.2f} s after their login, the median time a run of "
          f"{per_trial} new messages works; {runs} runs in all, {-(-runs // 20)} mailboxes, "
          f"the others ended first or were timed): {killed['client']} clients and "
          f"{killed['server']} whole Dovecot servers; {resumed} moves were left in flight for "
          f"the next run; after each the next run completed, and every message was in its "
          f"folder once ({checked:,} checks), no move left in the state")


# -- 3. cost per message -------------------------------------------------------------------------

def cost(trained: Path, pool: list[bytes], n: int, rounds: int, work: Path) -> None:
    messages = distinct(pool, n, "cost")
    classifier = load_model(trained)
    statuses = [str(s) for s in classifier.spam_status(messages)]
    kinds = ("plain", "textnb", "serial")
    times: dict[str, list[float]] = {kind: [] for kind in (*kinds, "classify")}
    for r in range(rounds):
        start = time.perf_counter()
        for i in range(0, n, 200):  # the classifying alone, on the bytes IMAP gives
            classifier.spam_status([m.replace(b"\n", b"\r\n") for m in messages[i:i + 200]])
        times["classify"].append(time.perf_counter() - start)
        for kind in kinds[r % 3:] + kinds[:r % 3]:  # each first in turn
            with Dovecot() as server:
                server.deliver(messages)
                client = server.client()
                client.select_folder("INBOX")  # Dovecot indexes the new files: not timed
                for folder in ("Junk", "Unsure"):
                    client.create_folder(folder)
                if kind == "plain":
                    times[kind].append(_plain(client, statuses))
                else:
                    times[kind].append(_textnb(client, server, trained, work / f"cost{r}",
                                               pipelined=kind == "textnb"))
                client.logout()
                if kind != "plain":
                    check_filed(server, messages, statuses)
    median = {kind: statistics.median(found) for kind, found in times.items()}
    print(f"3. per message, {n:,} messages, median of {rounds} interleaved rounds "
          f"(IMAPS on loopback; load {os.getloadavg()[0]:.1f} at the end):")
    for kind, name in (("plain", "plain IMAPClient fetch + move, batches of 200"),
                       ("textnb", "textnb imap fetch + classify + move (batches of 200, "
                                  "classified by a worker process)"),
                       ("serial", "the same, classified in sequence (no worker)"),
                       ("classify", "textnb's classifying alone (spam_status, batches of 200)")):
        print(f"   {name}: {median[kind] / n * 1e3:.3f} ms "
              f"({', '.join(f'{t:.2f}' for t in times[kind])} s)")
    print(f"   ratio {median['textnb'] / median['plain']:.2f}x the plain fetch + move (goal: at "
          f"most 2x); in sequence {median['serial'] / median['plain']:.2f}x; the classifying "
          f"alone {median['classify'] / median['plain']:.2f}x")


def one_pass(trained: Path, pool: list[bytes], n: int, kind: str, work: Path) -> None:
    """One pass of ``kind`` over the cost part's messages, untimed, for
    ``valgrind --tool=callgrind`` (this process's instructions; a forked worker writes its
    own file): plain, textnb (with the worker), serial (without), or none (the setup alone,
    to subtract)."""
    messages = distinct(pool, n, "cost")
    statuses = [str(s) for s in load_model(trained).spam_status(messages)]
    with Dovecot() as server:
        server.deliver(messages)
        client = server.client()
        client.select_folder("INBOX")
        for folder in ("Junk", "Unsure"):
            client.create_folder(folder)
        if kind == "plain":
            _plain(client, statuses)
        elif kind != "none":
            _textnb(client, server, trained, work / "pass", pipelined=kind == "textnb")
        client.logout()


def _plain(client, statuses: list[str], batch: int = 200) -> float:
    """Fetch every message (BODY.PEEK[]) ``batch`` at a time and move each batch's spam and
    unsure ones as textnb would: the I/O of a filter that does not classify."""
    start = time.perf_counter()
    uids = sorted(client.search("ALL"))
    status = dict(zip(uids, statuses))
    for i in range(0, len(uids), batch):
        batch_uids = uids[i:i + batch]
        client.fetch(batch_uids, ["BODY.PEEK[]"])
        for kind, folder in (("spam", "Junk"), ("unsure", "Unsure")):
            chosen = [uid for uid in batch_uids if status[uid] == kind]
            if chosen:
                client.move(chosen, folder)
    return time.perf_counter() - start


def _textnb(client, server: Dovecot, trained: Path, directory: Path, pipelined: bool) -> float:
    """One pass of textnb imap filter --all on the same client, timed (the model loaded
    before, as a running --watch has it); not ``pipelined``: no worker process."""
    filtering.PIPELINED_FROM = mailbox.BATCH + 1 if pipelined else sys.maxsize
    model = fresh_model(trained, directory)
    account = Account(host="127.0.0.1", user=server.user, port=server.port)
    verdicts = Verdicts(model)
    with open_state(state_path(model, account.name)) as state:
        session = Session(client, account, state, verdicts, Report())
        start = time.perf_counter()
        filtering.run(session, filter_all=True)
        return time.perf_counter() - start


# -- 4. IMAPSieve ----------------------------------------------------------------------------------

def imapsieve(trained: Path, pool: list[bytes], moves: int, work: Path) -> None:
    spamc = shutil.which("spamc")
    if missing(sieve=True) or spamc is None:
        print(f"4. skipped: {missing(sieve=True) or 'spamc is not installed'}")
        return
    root = Path(tempfile.mkdtemp(prefix="textnb-bench-sieve-"))
    model = fresh_model(trained, root / "model")
    model.parent.chmod(0o755)
    model.chmod(0o644)
    port = free_port()
    programs = root / "sieve"
    programs.mkdir()
    for source in (ROOT / "contrib" / "sieve").iterdir():
        if source.name == "README.md":
            continue
        text = source.read_text().replace("/usr/local/lib/textnb/sieve", str(programs))
        text = text.replace("/usr/bin/spamc", spamc).replace("-p 783", f"-p {port}")
        (programs / source.name).write_text(text)
        (programs / source.name).chmod(source.stat().st_mode & 0o777)
    server = Dovecot(root, extra=(programs / "90-textnb.conf").read_text())
    for script in programs.glob("*.sieve"):
        subprocess.run(["sievec", "-c", str(server.config), str(script)], check=True)
    server.start()
    log = open(root / "serve.log", "wb")
    daemon = subprocess.Popen([textnb(), "serve", "-m", str(model), "--socket",
                               str(root / "t.sock"), "--listen", f"127.0.0.1:{port}",
                               "--allow-tell", "--workers", "1"], stderr=log,
                              stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        while b" on " not in (root / "serve.log").read_bytes():
            time.sleep(0.05)
        messages = [m + f"\nA line of its own: bench-sieve-{i}-{random.random()}\n".encode()
                    for i, m in enumerate(pool[:moves])]
        server.deliver(messages)
        client = server.client()
        client.create_folder("Junk")
        client.select_folder("INBOX")
        took = []
        for uid in sorted(client.search("ALL")):
            before = signature(model)  # learned into the journal (or the file, folded)
            start = time.monotonic()
            client.move([uid], "Junk")
            while signature(model) == before:
                if time.monotonic() - start > 10:
                    raise AssertionError("not learned within 10 s")
                time.sleep(0.002)
            took.append(time.monotonic() - start)
        client.logout()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(20)
        log.close()
        server.close()
        shutil.rmtree(root, ignore_errors=True)
    print(f"4. IMAPSieve (contrib/sieve), {moves} messages moved into Junk one at a time: "
          f"learned by textnb serve {statistics.median(took) * 1e3:.0f} ms after the MOVE "
          f"(median), {max(took) * 1e3:.0f} ms at most (goal: within 1 s)")


def main_() -> None:
    from bench.common import args as options
    parser = options.parser(__name__, __doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--per-trial", type=int, default=300)
    parser.add_argument("--cost-messages", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--only", choices=["many", "kills", "cost", "sieve"])
    parser.add_argument("--one-pass", choices=["none", "plain", "serial", "textnb"],
                        help="only one untimed pass of the cost part (--cost-messages), to "
                             "count its instructions: valgrind --tool=callgrind python -m "
                             "bench.imap --one-pass textnb, less --one-pass none")
    args = parser.parse_args()
    if reason := missing():
        sys.exit(f"bench.imap: {reason}")
    work = Path(tempfile.mkdtemp(prefix="textnb-bench-imap-"))
    try:
        trained = work / "trained.model"
        result = CliRunner().invoke(main, ["train", "-q", "-m", str(trained), str(CORPUS / "spam"),
                                           str(CORPUS / "ham")])
        assert result.exit_code == 0, result.output
        pool = corpus_messages()
        random.Random(0).shuffle(pool)
        print(f"messages drawn from {len(pool):,} ({ARCHIVE.name if ARCHIVE.is_file() else CORPUS}); "
              f"model: textnb train on corpora/spamassassin (300); {os.cpu_count()} cores")
        if args.one_pass:
            one_pass(trained, pool, args.cost_messages, args.one_pass, work)
            return
        if args.only in (None, "many"):
            ten_thousand(trained, pool, args.messages, work)
        if args.only in (None, "cost"):
            cost(trained, pool, args.cost_messages, args.rounds, work)
        if args.only in (None, "sieve"):
            imapsieve(trained, pool, args.moves, work)
        if args.only in (None, "kills"):
            kills(trained, pool, args.trials, args.per_trial, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main_()
