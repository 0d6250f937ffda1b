"""textnb imap filter's worker process (textnb.imap.worker), against a real Dovecot: a pass
whose batches a child classifies while the next is fetched files exactly what a pass in
sequence does; a child that dies leaves its batch where it is, reported, for the next run;
a small pass starts no child."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from textnb import load_model
from textnb.imap import filtering, mailbox
from textnb.imap.dovecot import Dovecot
from textnb.imap.verdicts import Verdicts
from textnb.imap.worker import Worker
from imapfixtures import (assert_each_once, corpus, digest, imap, model,  # noqa: F401
                          needs_dovecot, server, statuses, tagged, trained, where)

pytestmark = needs_dovecot

PLACES = {"spam": "Junk", "unsure": "Unsure", "ham": "INBOX"}


@pytest.fixture
def starts(monkeypatch) -> list[int]:
    """Batches of 16 (every message taken as large), and the children started, counted."""
    monkeypatch.setattr(mailbox, "LARGE", 0)
    monkeypatch.setattr(mailbox, "LARGE_BATCH", 16)
    started: list[int] = []
    real = Worker._start

    def counted(self):
        real(self)
        started.append(self._pid)

    monkeypatch.setattr(Worker, "_start", counted)
    return started


def state_of(model: Path) -> dict[str, list]:
    """The state's tables, less what differs between two servers (UIDVALIDITY) and runs
    (times)."""
    with sqlite3.connect(next(model.parent.glob("*.sqlite"))) as db:
        return {"folders": db.execute("SELECT name, seen FROM folders ORDER BY name").fetchall(),
                "messages": db.execute("SELECT identity, size, digest, place, learned FROM "
                                       "messages ORDER BY identity, size, digest").fetchall(),
                "moves": db.execute("SELECT * FROM moves").fetchall(),
                "failures": db.execute("SELECT uid, tries FROM failures").fetchall()}


def passes(server: Dovecot, model: Path, first: list[bytes], later: list[bytes]) -> list[str]:
    """Filter ``first`` (--all); the user takes two messages out of Junk and puts two of
    INBOX's into it; filter ``later`` with them. Each pass's output."""
    server.deliver(first)
    outputs = [imap(server, model, "filter", "--all", "-v")]
    client = server.client()
    client.select_folder("Junk")
    client.move(sorted(client.search("ALL"))[:2], "INBOX")
    client.select_folder("INBOX")
    client.move(sorted(client.search("ALL"))[:2], "Junk")
    client.logout()
    server.deliver(later)
    outputs.append(imap(server, model, "filter", "-v"))
    assert all(result.exit_code == 0 for result in outputs), [r.output for r in outputs]
    return [result.output for result in outputs]


def test_a_pass_with_a_worker_files_exactly_what_one_in_sequence_does(trained, tmp_path,
                                                                     monkeypatch, starts):
    first = [tagged(m, f"first {i}") for i, m in enumerate(corpus("spam") + corpus("ham"))]
    later = [tagged(m, f"later {i}")
             for i, m in enumerate(corpus("ham")[:40] + corpus("spam")[:40])]
    found = {}
    for kind, pipelined_from in (("serial", sys.maxsize), ("worker", 1)):
        monkeypatch.setattr(filtering, "PIPELINED_FROM", pipelined_from)
        path = tmp_path / kind / "spam.model"
        path.parent.mkdir()
        path.write_bytes(trained.read_bytes())
        with Dovecot() as server:
            outputs = passes(server, path, first, later)
            found[kind] = (outputs, where(server), state_of(path))
        learned = load_model(path)
        found[kind] += (learned.model_.class_count_.tolist(),
                        [str(s) for s in learned.spam_status(first + later)])
        assert bool(starts) == (kind == "worker")  # a child classified, or none
    assert found["worker"] == found["serial"]
    outputs, folders, state, counts, _ = found["serial"]
    assert outputs[1].count(" as ham: ") == 2 and outputs[1].count(" as spam: ") == 2
    assert len(starts) == 2  # one a pass: 300 messages, then 82 (80 and 2 taken out of Junk)
    spam = statuses(trained, first).count("spam")
    assert f"moved {spam} to Junk" in outputs[0]
    assert not state["moves"] and not state["failures"]
    assert counts != load_model(trained).model_.class_count_.tolist()  # the moves learned


def test_a_small_pass_starts_no_worker(server, model, starts):
    messages = [tagged(m, f"small {i}") for i, m in enumerate(corpus("spam")[:20])]
    server.deliver(messages)
    assert imap(server, model, "filter", "--all").exit_code == 0
    assert not starts
    found = assert_each_once(server, messages)
    assert [found[digest(m)] for m in messages] == [PLACES[s] for s in statuses(model, messages)]


def test_a_worker_that_dies_leaves_its_batch_where_it_is_and_the_next_run_files_it(
        server, model, monkeypatch, starts):
    messages = [tagged(m, f"dies {i}")
                for i, m in enumerate(corpus("spam")[:40] + corpus("ham")[:40])]
    server.deliver(messages)
    monkeypatch.setattr(filtering, "PIPELINED_FROM", 2)
    parent, real = os.getpid(), Verdicts.statuses

    def dies_on_the_third_batch(self, raws):
        if os.getpid() != parent and any(b"X-Test: dies 40\r\n" in raw for raw in raws):
            os.kill(os.getpid(), signal.SIGKILL)  # the batch of UIDs 33 to 48
        return real(self, raws)

    monkeypatch.setattr(Verdicts, "statuses", dies_on_the_third_batch)
    result = imap(server, model, "filter", "--all")
    assert result.exit_code == 1
    problems = [line for line in result.stderr.splitlines() if " UID " in line]
    assert problems == [f"textnb imap: INBOX UID {uid}: the process classifying it was killed "
                        f"by signal 9; left where it is, tried again next run"
                        for uid in range(33, 49)]
    assert len(starts) == 2  # a new child for the batches after
    found = assert_each_once(server, messages)
    expected = [PLACES[s] for s in statuses(model, messages)]
    assert [found[digest(m)] for m in messages[32:48]] == ["INBOX"] * 16
    assert [found[digest(m)] for m in messages[:32] + messages[48:]] == \
        expected[:32] + expected[48:]
    monkeypatch.setattr(Verdicts, "statuses", real)
    result = imap(server, model, "filter")
    assert result.exit_code == 0, result.output
    found = assert_each_once(server, messages)
    assert [found[digest(m)] for m in messages] == expected
    assert not state_of(model)["failures"]


def test_where_no_worker_can_be_started_the_batches_are_classified_in_sequence(
        server, model, monkeypatch, starts):
    messages = [tagged(m, f"no fork {i}")
                for i, m in enumerate(corpus("spam")[:20] + corpus("ham")[:20])]
    server.deliver(messages)
    monkeypatch.setattr(filtering, "PIPELINED_FROM", 2)
    forks = []

    def refused():
        forks.append(1)
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    result = imap(server, model, "filter", "--all")
    assert result.exit_code == 0, result.output
    assert len(forks) == 3 and not starts  # tried for each of the 3 batches
    found = assert_each_once(server, messages)
    assert [found[digest(m)] for m in messages] == [PLACES[s] for s in statuses(model, messages)]
