"""textnb imap when things break, against a real Dovecot: the server killed mid-move (MOVE,
and COPY then EXPUNGE), the connection cut mid-fetch, a message the server cannot read,
runs killed at random points, a folder renamed, a 20 MB message, malformed messages. After
each: every message in exactly one folder, and the next run finishes the work."""

from __future__ import annotations

import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from textnb.imap import filtering, mailbox
from textnb.imap.dovecot import Dovecot
from imapfixtures import (account, assert_each_once, corpus, digest, imap, model,  # noqa: F401
                          needs_dovecot, server, statuses, tagged, trained, where)

pytestmark = needs_dovecot

PLACES = {"spam": "Junk", "unsure": "Unsure", "ham": "INBOX"}
# Dovecot's capabilities less MOVE: textnb then moves by COPY, \Deleted and UID EXPUNGE.
WITHOUT_MOVE = ("imap_capability = IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ "
                "UIDPLUS NAMESPACE UNSELECT CHILDREN\n")


def mixed(tag: str, n: int = 30) -> list[bytes]:
    return [tagged(m, f"{tag} {i}") for i, m in enumerate(corpus("spam")[:n] + corpus("ham")[:n])]


def assert_filed(server: Dovecot, model: Path, messages: list[bytes]) -> None:
    """Each message once, in the folder its status sends it to; no move left in the state."""
    found = assert_each_once(server, messages)
    assert [found[digest(m)] for m in messages] == [PLACES[s] for s in statuses(model, messages)]
    state = next(model.parent.glob("*.sqlite"))
    with sqlite3.connect(state) as db:
        assert db.execute("SELECT COUNT(*) FROM moves").fetchone() == (0,)


def state_rows(model: Path, table: str) -> int:
    with sqlite3.connect(next(model.parent.glob("*.sqlite"))) as db:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


@pytest.fixture(params=["in sequence", "by a worker"])
def pipelined(request, monkeypatch) -> None:
    """The pass in sequence, or in batches of 16 classified by a worker process while the
    next is fetched (textnb.imap.worker)."""
    if request.param == "by a worker":
        monkeypatch.setattr(filtering, "PIPELINED_FROM", 2)
        monkeypatch.setattr(mailbox, "LARGE", 0)  # every message large: batches of LARGE_BATCH
        monkeypatch.setattr(mailbox, "LARGE_BATCH", 16)


# -- the server killed mid-move ---------------------------------------------------------------

def test_server_killed_as_it_was_to_move(server, model, monkeypatch, pipelined):
    messages = mixed("before")
    server.deliver(messages)
    real = mailbox.move

    def kill_first(client, uids, target):
        server.kill()
        return real(client, uids, target)

    monkeypatch.setattr(mailbox, "move", kill_first)
    result = imap(server, model, "filter", "--all")
    assert result.exit_code == 1 and result.stderr.startswith("Error: 127.0.0.1: ")
    assert len(result.stderr.splitlines()) == 1
    assert state_rows(model, "moves") > 0  # written before the server was asked
    monkeypatch.setattr(mailbox, "move", real)
    server.start()
    result = imap(server, model, "filter")
    assert result.exit_code == 0, result.output
    assert "finished" in result.stdout and "moves an interrupted run left" in result.stdout
    assert_filed(server, model, messages)


def test_run_stopped_after_the_server_moved(server, model, monkeypatch, pipelined):
    messages = mixed("after")
    server.deliver(messages)
    real = mailbox.move

    def stop_after(client, uids, target):
        real(client, uids, target)
        raise KeyboardInterrupt  # the run ends (Ctrl-C) before it records the move done

    monkeypatch.setattr(mailbox, "move", stop_after)
    result = imap(server, model, "filter", "--all")
    assert (result.exit_code, result.stderr.strip()) == (1, "Error: aborted")
    monkeypatch.setattr(mailbox, "move", real)
    assert state_rows(model, "moves") > 0
    result = imap(server, model, "filter", "-v")
    assert result.exit_code == 0, result.output
    assert "move again" not in result.stdout and "expunge" not in result.stdout
    assert_filed(server, model, messages)


@pytest.fixture
def copy_server():
    with Dovecot(extra=WITHOUT_MOVE) as found:
        yield found


def test_copy_then_expunge_killed_between_leaves_copies_the_next_run_removes(
        copy_server, model, monkeypatch, pipelined):
    server = copy_server
    messages = mixed("copy")
    server.deliver(messages)
    real = mailbox.expunge

    def kill_first(client, uids):
        server.kill()
        return real(client, uids)

    monkeypatch.setattr(mailbox, "expunge", kill_first)
    assert imap(server, model, "filter", "--all").exit_code == 1
    monkeypatch.setattr(mailbox, "expunge", real)
    # The copies were made, the originals not removed: the fault is real.
    held = where(server)
    doubled = [m for m in messages if held["INBOX"][digest(m)] and held["Junk"][digest(m)]]
    assert doubled
    server.start()
    result = imap(server, model, "filter", "-v")
    assert result.exit_code == 0, result.output
    assert f"expunge {len(doubled)} message(s) of INBOX already copied" in result.stdout
    assert_filed(server, model, messages)
    more = mixed("copy again", 10)
    server.deliver(more)
    assert imap(server, model, "filter").exit_code == 0  # COPY, \Deleted, UID EXPUNGE
    assert_filed(server, model, messages + more)


# -- the connection cut mid-fetch -------------------------------------------------------------

class CuttingProxy:
    """A TCP proxy to a port that cuts its first connection after ``cut`` bytes from the
    server, as a network failure would; later connections pass whole."""

    def __init__(self, port: int, cut: int) -> None:
        self.upstream, self.cut, self.cuts = port, cut, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            for s in (client, server):  # no Nagle delay on each relayed write
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            limit = self.cut if self.cuts == 0 else None
            self.cuts += 1
            threading.Thread(target=self._pipe, args=(server, client, limit), daemon=True).start()
            threading.Thread(target=self._pipe, args=(client, server, None), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, limit: int | None) -> None:
        sent = 0
        try:
            while data := source.recv(65536):
                if limit is not None and sent + len(data) >= limit:
                    sink.sendall(data[:limit - sent])
                    break
                sink.sendall(data)
                sent += len(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.listener.close()


def test_connection_cut_mid_fetch(server, model):
    messages = mixed("cut", 75)  # 150 messages, about 1 MB: one batch
    server.deliver(messages)
    proxy = CuttingProxy(server.port, cut=400_000)
    try:
        result = imap(server, model, "filter", "--all", port=proxy.port)
        assert result.exit_code == 1 and result.stderr.startswith("Error: 127.0.0.1: ")
        assert len(result.stderr.splitlines()) == 1
        assert len(where(server)["INBOX"]) == len(messages)  # nothing moved
        assert state_rows(model, "failures") == len(messages)  # the batch counted as tried
        result = imap(server, model, "filter", port=proxy.port)
        assert result.exit_code == 0, result.output
    finally:
        proxy.close()
    assert_filed(server, model, messages)
    assert state_rows(model, "failures") == 0


# -- a message the server cannot read ---------------------------------------------------------

def test_a_message_that_drops_every_fetch_is_left_after_three_tries(server, model):
    messages = mixed("unreadable", 10)
    server.deliver(messages)
    assert imap(server, model, "filter").exit_code == 0  # INBOX seen: the mail there is old
    bad = tagged(corpus("spam")[50], "unreadable one")
    later = mixed("later", 10)
    server.deliver([bad])
    server.deliver(later)
    name = next(p.name for p in (server.home / "Maildir" / "new").iterdir()
                if digest(p.read_bytes()) == digest(bad))
    (server.home / "Maildir" / "new" / name).chmod(0)  # Dovecot answers a FETCH with BYE
    codes = []
    for _ in range(4):
        result = imap(server, model, "filter")
        codes.append(result.exit_code)
    assert codes == [1, 1, 1, 1]
    assert "not tried again (3 tries)" in result.stderr
    assert result.stderr.count("\n") == 1  # that message alone, one line
    next((server.home / "Maildir").glob(f"*/{name}*")).chmod(0o600)
    result = imap(server, model, "filter")
    assert result.exit_code == 0 and state_rows(model, "failures") == 0
    found = assert_each_once(server, messages + [bad] + later)
    assert found[digest(bad)] == "INBOX"  # left where it was
    assert [found[digest(m)] for m in later] == [PLACES[s] for s in statuses(model, later)]


# -- runs killed at random points -------------------------------------------------------------

def textnb() -> str:
    script = Path(sys.executable).with_name("textnb")
    if not script.exists():
        pytest.skip("the textnb console script is not installed beside this Python")
    return str(script)


def test_runs_killed_at_random_points(server, model):
    """20 runs killed (SIGKILL) at a random moment of their work (after their login), the
    client or the whole server in turn, each followed by a run to the end: every message in
    one folder, by its status, each time. A run that ended before its moment came is checked
    too, and does not count (at most 40 runs)."""
    rng = random.Random(45)
    env = {**os.environ, "TEXTNB_IMAP_PASSWORD": server.password,
           "XDG_CONFIG_HOME": str(model.parent)}
    command = [textnb(), "imap", "filter", "--all", "-q", *account(server, model)]

    def logins() -> int:
        return server.log().count("Login: user=<alice>")

    def timed() -> float:  # from the login to the end
        before = logins()
        run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        while logins() == before and run.poll() is None:
            time.sleep(0.005)
        start = time.monotonic()
        assert run.wait(120) == 0
        return time.monotonic() - start

    timed()  # the first run: Junk and Unsure made
    everything = mixed("calibration", 30)
    server.deliver(everything)
    work = timed()
    killed = trial = 0
    while killed < 20 and trial < 40:
        batch = mixed(f"trial {trial}", 30)
        everything += batch
        server.deliver(batch)
        before = logins()
        run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        while logins() == before and run.poll() is None:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, work))
        if run.poll() is None:
            if killed % 2:
                server.kill()
            else:
                run.send_signal(signal.SIGKILL)
            killed += 1
        run.wait(60)
        if server.process is None:
            server.start()
        finish = imap(server, model, "filter", "-q")
        assert finish.exit_code == 0, finish.output + server.log()[-3000:]
        assert_filed(server, model, everything)
        trial += 1
    assert killed == 20, f"only {killed} of {trial} runs were still at work when killed"


# -- a folder renamed -------------------------------------------------------------------------

def test_a_filtered_folder_renamed_and_made_again(server, model):
    first = mixed("lists", 5)
    server.deliver(first, "Lists")
    assert imap(server, model, "filter", "--folder", "INBOX", "--folder", "Lists",
                "--all").exit_code == 0
    client = server.client()
    client.rename_folder("Lists", "Lists-2019")
    client.create_folder("Lists")
    client.logout()
    waiting = mixed("lists waiting", 5)
    server.deliver(waiting, "Lists")  # in the new folder before textnb looks
    result = imap(server, model, "filter", "--folder", "INBOX", "--folder", "Lists", "-v")
    assert result.exit_code == 0, result.output
    assert "Lists: UIDVALIDITY changed (recreated or renamed)" in result.stderr
    assert "learn" not in result.stdout and "move" not in result.stdout
    later = mixed("lists later", 5)
    server.deliver(later, "Lists")
    assert imap(server, model, "filter", "--folder", "INBOX", "--folder", "Lists").exit_code == 0
    found = assert_each_once(server, first + waiting + later)
    assert all(found[digest(m)] == "Lists" for m in waiting)
    assert [found[digest(m)] for m in later] == [
        {"spam": "Junk", "unsure": "Unsure", "ham": "Lists"}[s] for s in statuses(model, later)]


def test_junk_renamed_is_no_mail_taken_out_of_it(server, model):
    messages = mixed("junk renamed", 10)
    server.deliver(messages)
    assert imap(server, model, "filter", "--all").exit_code == 0
    client = server.client()
    client.rename_folder("Junk", "Junk-old")
    client.logout()
    weights = model.read_bytes()
    result = imap(server, model, "filter", "-v")
    assert result.exit_code == 0, result.output
    assert "created the folder Junk" in result.stderr and "learn" not in result.stdout
    assert model.read_bytes() == weights
    assert_each_once(server, messages)
    assert not where(server)["Junk"]


# -- large and malformed messages -------------------------------------------------------------

def test_a_20_mb_message_is_classified_from_its_first_megabyte(server, model):
    import base64
    spam = corpus("spam")[3]
    big = (b"From: winner@example.com\nTo: you@example.org\nSubject: You have WON\n"
           b"Message-ID: <big@example.com>\nMIME-Version: 1.0\n"
           b"Content-Type: multipart/mixed; boundary=XX\n\n--XX\nContent-Type: text/plain\n\n"
           + spam.split(b"\n\n", 1)[1] + b"\n--XX\nContent-Type: application/octet-stream\n"
           b"Content-Transfer-Encoding: base64\n\n"
           + base64.encodebytes(os.urandom(15 << 20)) + b"--XX--\n")
    assert len(big) > 20 << 20
    small = mixed("beside the big one", 5)
    server.deliver([big] + small)
    result = imap(server, model, "filter", "--all")
    assert result.exit_code == 0, result.output
    found = assert_each_once(server, [big] + small)
    expected = statuses(model, [big[:1 << 20]])[0]
    assert found[digest(big)] == PLACES[expected]
    # Its first megabyte fetched, not 20: the server's count of bytes sent in that session.
    sent = [int(line.split(" out=")[1].split()[0]) for line in server.log().splitlines()
            if "Logged out" in line]
    assert max(sent) < 3 << 20


MALFORMED = [
    b"",  # nothing at all
    b"\x00\x01\x02 binary \xff\xfe garbage \x00" * 100,
    b"no header at all, just words about free money and cheap pills\n" * 20,
    b"Subject: =?utf-8?B?broken base64?= =?x-unknown?Q?=FF?=\nFrom: \xff\xfe\n\nbody\n",
    b"Content-Type: multipart/mixed; boundary=\"never\"\nSubject: no parts\n\npreamble only\n",
    b"Content-Type: text/html\nContent-Transfer-Encoding: base64\n\n!!!not base64!!!\n",
    b"Subject: a very long line\n\n" + b"x" * 300_000 + b"\n",
    b"Content-Type: message/rfc822\n\n" * 200 + b"Subject: nested\n\ndeep\n",
]


def test_malformed_messages_are_classified_and_filed_once(server, model):
    messages = [tagged(m, f"malformed {i}") for i, m in enumerate(MALFORMED)]
    server.deliver(messages)
    result = imap(server, model, "filter", "--all")
    assert result.exit_code == 0, result.output
    assert f"{len(messages)} new messages classified" in result.stdout
    assert_filed(server, model, messages)
