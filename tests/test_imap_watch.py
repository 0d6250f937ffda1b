"""textnb imap filter --watch: new mail filed as it arrives (IDLE), a restarted server
reconnected to, the user's moves learned at the next pass."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from textnb.imap.account import Account
from textnb.imap.connection import ImapError
from textnb.imap.watch import MAX_DELAY, watch
from imapfixtures import (account, corpus, digest, model, needs_dovecot, server,  # noqa: F401
                          tagged, trained, where)


class FakeClient:
    """Just enough of an IMAPClient for watch(): IDLE that reports new mail at once."""

    def has_capability(self, name: str) -> bool:
        return name == "IDLE"

    def select_folder(self, folder: str, readonly: bool = False) -> dict:
        return {b"UIDNEXT": 1}

    def idle(self) -> None:
        pass

    def idle_check(self, timeout: float) -> list:
        return [(1, b"EXISTS")]

    def idle_done(self) -> None:
        pass

    def shutdown(self) -> None:
        pass


def test_connecting_again_waits_twice_as_long_each_time_up_to_a_limit():
    pytest.importorskip("imapclient")  # waiting turns its errors into ImapError
    delays, logged, passes = [], [], []

    class Stop(Exception):
        pass

    def sleep(seconds: float) -> None:
        delays.append(seconds)
        if len(delays) == 14:
            raise Stop

    def connect():
        if len(delays) == 3:  # the server answers once, then is gone again
            return FakeClient()
        raise ImapError("imap.example.org: Connection refused")

    def one_pass(client):
        passes.append(client)
        if len(passes) == 2:
            raise ImapError("imap.example.org: socket error: EOF")

    with pytest.raises(Stop):
        watch(None, connect, one_pass, Account("imap.example.org", "u"), logged.append, sleep)
    assert delays == [1, 2, 4, 1, 2, 4, 8, 16, 32, 64, 128, 256, MAX_DELAY, MAX_DELAY]
    assert MAX_DELAY == 300
    assert logged[:4] == ["imap.example.org: Connection refused; connecting again in 1 s",
                          "imap.example.org: Connection refused; connecting again in 2 s",
                          "imap.example.org: Connection refused; connecting again in 4 s",
                          "connected again"]
    assert logged[4] == "imap.example.org: socket error: EOF; connecting again in 1 s"
    assert len(passes) == 2


def wait_for(condition, seconds: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s")


@needs_dovecot
def test_watch_files_new_mail_and_survives_a_server_restart(server, model, tmp_path):
    script = Path(sys.executable).with_name("textnb")
    if not script.exists():
        pytest.skip("the textnb console script is not installed beside this Python")
    env = {**os.environ, "TEXTNB_IMAP_PASSWORD": server.password,
           "XDG_CONFIG_HOME": str(model.parent)}
    log = (tmp_path / "watch.err").open("w+")
    watcher = subprocess.Popen([str(script), "imap", "filter", "--watch", "--interval", "60",
                                "-v", *account(server, model)], env=env,
                               stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_for(lambda: "first look" in Path(log.name).read_text(), 20)
        spam = tagged(corpus("spam")[0], "watched")  # a spam the model is sure of
        server.deliver([spam])
        took = wait_for(lambda: digest(spam) in where(server)["Junk"], 10)
        assert took < 5  # IDLE woke it: no pass was due for a minute
        server.kill()
        wait_for(lambda: "connecting again in 1 s" in Path(log.name).read_text(), 10)
        server.start()
        again = tagged(corpus("spam")[1], "after the restart")
        server.deliver([again])
        wait_for(lambda: digest(again) in where(server)["Junk"], 30)
        wait_for(lambda: "connected again" in Path(log.name).read_text(), 5)
        # The user takes one out of Junk into INBOX: IDLE wakes it, it is learned as ham.
        def learned() -> bytes:  # the model and its journal (textnb.store.journal)
            journal = Path(f"{model}.journal")
            return model.read_bytes() + (journal.read_bytes() if journal.exists() else b"")

        weights = learned()
        client = server.client()
        client.select_folder("Junk")
        client.move(client.search("ALL")[:1], "INBOX")
        client.logout()
        wait_for(lambda: learned() != weights, 10)
        assert watcher.poll() is None
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(10)
        log.close()
