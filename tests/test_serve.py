"""textnb serve: the real daemon in a subprocess, driven by the real spamc and by raw bytes.

spamc (Debian package spamc) is SpamAssassin's own client: its tests skip without it; the
others speak the protocol with sockets and textnb.serve.client.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from textnb.serve import client
from textnb.classifier import TextClassifier
from textnb import incremental
from textnb.store.text_model import load_model, save_model
from textnb.decision.rules import decide, logit as _logit, spam_cutoffs
from textnb.mail.filter import filter_message
from textnb.store.scorer import score
from textnb.documents.message import read_bytes
from textnb.serve.server import _WARM_UP, _allowed
from textnb.serve.protocol import THRESHOLD, spamc_score
from textnb.serve.model import Labels, Model, Weights

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "spamassassin"
SPAM, HAM = ROOT / "corpora" / "messages" / "spam.eml", ROOT / "corpora" / "messages" / "ham.eml"
# The cutoff tests/test_procmail.py gives a model of the 300-message sample (0.99, the
# default, was chosen on the full corpus): spam.eml is spam by it, ham.eml ham.
CUTOFF = ["--spam-cutoff", "0.9", "--ham-cutoff", "0.5"]
SPAMC = shutil.which("spamc")
needs_spamc = pytest.mark.skipif(SPAMC is None, reason="spamc is not installed (Debian package spamc)")
# Held out of the trained model, so that TELL has something new to learn.
HELD_OUT = 4


def files(label: str) -> list[Path]:
    return sorted((CORPUS / label).iterdir())


def textnb() -> list[str]:
    script = Path(sys.executable).with_name("textnb")
    return [str(script)] if script.exists() else [sys.executable, "-m", "textnb"]


def train(path: Path, spam: list[Path], ham: list[Path]) -> Path:
    raws = [f.read_bytes() for f in spam + ham]
    labels = ["spam"] * len(spam) + ["ham"] * len(ham)
    save_model(TextClassifier(n_jobs=1, spam_class="spam", training="full").fit(raws, labels), path)
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    return train(tmp_path_factory.mktemp("serve") / "spam.model",
                 files("spam")[:-HELD_OUT], files("ham")[:-HELD_OUT])


@pytest.fixture
def model(trained, tmp_path) -> Path:
    """A copy of the trained model that a test may change."""
    path = tmp_path / "spam.model"
    shutil.copy(trained, path)
    return path


@pytest.fixture
def short_dir():
    # A Unix socket path has at most 107 bytes: pytest's tmp_path can be longer.
    path = Path(tempfile.mkdtemp(prefix="tnb", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Daemon:
    """``textnb serve`` in a subprocess (its own session), ready when it answers PING."""

    def __init__(self, directory: Path, model: Path, *args: str, workers: int = 2,
                 command: list[str] | None = None) -> None:
        self.socket = directory / "t.sock"
        self.pidfile = directory / "serve.pid"
        self.log = directory / "serve.log"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [*(command or textnb()), "serve", "-m", str(model), "--socket", str(self.socket),
                 "--pidfile", str(self.pidfile), "--workers", str(workers), *args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.ping(socket_path=self.socket, timeout=5):
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"textnb serve did not start: {self.log.read_text()}")
            time.sleep(0.05)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=20)

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=20)

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()


@pytest.fixture(scope="module")
def daemon(trained):
    """One daemon for the tests that change nothing: TCP too, TELL refused."""
    directory = Path(tempfile.mkdtemp(prefix="tnb", dir="/tmp"))
    port = free_port()
    server = Daemon(directory, trained, *CUTOFF, "--listen", f"127.0.0.1:{port}")
    server.port = port
    yield server
    assert server.stop() == 0
    shutil.rmtree(directory, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exchange(path: Path, data: bytes, shutdown: bool = True, timeout: float = 20) -> bytes:
    """Send raw bytes on a new connection; return everything the daemon answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(path))
        s.sendall(data)
        if shutdown:
            s.shutdown(socket.SHUT_WR)
        return receive(s)


def receive(s: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := s.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def spamc(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([SPAMC, *args], input=stdin, capture_output=True, timeout=60)


def expected(model_path: Path, raw: bytes, spam_cutoff: float | None = 0.9,
             ham_cutoff: float | None = 0.5):
    """The decision and the spamc score of a message, by textnb.store.scorer (the filter's path,
    without numpy): an independent reckoning of what the daemon must answer. Cutoffs of None
    are the model's learned ones."""
    document = read_bytes(raw)
    classes, row, learned, counted = score(model_path, document.text, document.fields)
    cutoffs = spam_cutoffs(classes, learned, "spam", spam_cutoff, ham_cutoff,
                           learned_errors=counted)
    decision = decide(classes, row, "-", cutoffs)
    shown = round(spamc_score(decision["spam_log_odds"], cutoffs[1], cutoffs[2]), 1)
    if decision["status"] != "spam" and shown >= THRESHOLD:
        shown = THRESHOLD - 0.1
    return decision, shown


# -- the score scale -----------------------------------------------------------------------

def test_score_maps_the_cutoffs_to_0_and_the_threshold():
    spam, ham = _logit(0.99), _logit(0.5)
    assert spamc_score(ham, spam, ham) == pytest.approx(0.0)
    assert spamc_score(spam, spam, ham) == pytest.approx(5.0)
    assert spamc_score(2 * spam, spam, ham) == pytest.approx(10.0)
    # One point is (spam − ham)/5 nats.
    assert spamc_score(-spam, spam, ham) == pytest.approx(-5.0)
    # Equal cutoffs: one nat a point, the cutoff still at 5.
    assert spamc_score(3.0, 1.0, 1.0) == pytest.approx(7.0)
    # Infinite cutoffs (--spam-cutoff 1, --ham-cutoff 0) give a finite, printable score.
    assert spamc_score(12.0, _logit(1.0), _logit(0.5)) == -999.9
    assert spamc_score(12.0, _logit(0.99), _logit(0.0)) == pytest.approx(5.0 + 12.0 - _logit(0.99))


def test_allow_lists_networks():
    import ipaddress
    loopback = [ipaddress.ip_network(n) for n in ("127.0.0.0/8", "::1/128")]
    assert _allowed("127.0.0.1", loopback) and _allowed("::1", loopback)
    assert _allowed("::ffff:127.0.0.1", loopback)
    assert not _allowed("10.1.2.3", loopback)
    assert _allowed("10.1.2.3", loopback + [ipaddress.ip_network("10.0.0.0/8")])
    assert not _allowed("not an address", loopback)


@pytest.mark.parametrize("settings", [
    {},  # the default: complement, raw counts of unit length
    {"model": "multinomial", "alpha": 1.0, "norm": None, "fit_prior": True},
    {"model": "multinomial", "tf": "log"},
    {"model": "complement", "tf": "binary", "norm": None},
    {"model": "complement", "tf": "binary"},  # presence of unit length
    {"model": "bernoulli"},
    {"hash_bits": 18},  # keyed by column: a hashed vocabulary keeps no terms
    {"hash_bits": 6, "tf": "log"},  # terms sharing a column counted in it together
    {"unseen": "score"},  # words outside the vocabulary scored, in the unit length too
    {"unseen": "score", "model": "multinomial", "tf": "log", "norm": None},
    {"unseen": "score", "model": "bernoulli"},  # each distinct one
], ids=["default", "multinomial", "log-tf", "binary-tf", "binary-tf-l2", "bernoulli", "hashed",
        "hashed-shared-columns", "unseen", "unseen-log-tf", "unseen-bernoulli"])
def test_the_in_memory_weights_score_as_the_classifier(settings):
    """Weights (what the daemon scores with) equals predict_log_proba to rounding, for each
    model and weighting, on messages it learned and messages it did not."""
    spam, ham = files("spam"), files("ham")
    classifier = TextClassifier(n_jobs=1, **settings).fit(
        [f.read_bytes() for f in spam[:30] + ham[:30]], ["spam"] * 30 + ["ham"] * 30)
    weights = Weights(classifier)
    raws = [f.read_bytes() for f in spam[25:45] + ham[25:45]] + [b"", b"no known term zzqx"]
    documents = [read_bytes(raw) for raw in raws]
    got = np.array([weights.log_proba(classifier.tokenize([d])[0]) for d in documents])
    assert np.allclose(got, classifier.predict_log_proba(documents), rtol=0, atol=1e-9)


def test_the_warm_up_message_takes_the_lazy_paths():
    """The message scored before serving reaches MIME parts, both legacy charsets, base64,
    quoted-printable and HTML: what the workers would otherwise each import on a message."""
    document = read_bytes(_WARM_UP)
    # café in windows-1252, quoted-printable; Café in iso-8859-15, base64, in HTML stripped.
    assert "café" in document.text and "Café offer" in document.text
    assert "<" not in document.text and "html" in dict(document.fields)
    assert dict(document.fields)["subject"] == "café"


def test_the_in_memory_weights_score_two_classes_only():
    texts = [b"cheap pills now", b"meeting at noon", b"lunch menu today"]
    classifier = TextClassifier(n_jobs=1).fit(texts, ["spam", "ham", "lunch"])
    with pytest.raises(ValueError, match="two classes, not 3"):
        Weights(classifier)


# -- every method, by raw bytes -----------------------------------------------------------

def request(method: str, body: bytes, *fields: str, version: str = "1.5") -> bytes:
    head = f"{method} SPAMC/{version}\r\n" + "".join(f"{f}\r\n" for f in fields)
    return head.encode() + f"Content-length: {len(body)}\r\n\r\n".encode() + body


def test_ping_and_skip(daemon):
    assert exchange(daemon.socket, b"PING SPAMC/1.5\r\n\r\n") == b"SPAMD/1.5 0 PONG\r\n"
    assert exchange(daemon.socket, b"PING SPAMC/1.2\r\n") == b"SPAMD/1.5 0 PONG\r\n"
    assert exchange(daemon.socket, b"SKIP SPAMC/1.5\r\n\r\n") == b""


@pytest.mark.parametrize("message", [SPAM, HAM], ids=["spam", "ham"])
def test_check_symbols_report(daemon, trained, message):
    raw = message.read_bytes()
    decision, shown = expected(trained, raw)
    is_spam = decision["status"] == "spam"
    assert is_spam == (message == SPAM)
    spam = f"Spam: {'True' if is_spam else 'False'} ; {shown:.1f} / 5.0"
    assert exchange(daemon.socket, request("CHECK", raw)) == f"SPAMD/1.1 0 EX_OK\r\n{spam}\r\n\r\n".encode()
    symbol = f"TEXTNB_{decision['status'].upper()}".encode()
    assert exchange(daemon.socket, request("SYMBOLS", raw)) == (
        f"SPAMD/1.1 0 EX_OK\r\nContent-length: {len(symbol)}\r\n{spam}\r\n\r\n".encode() + symbol)
    report = exchange(daemon.socket, request("REPORT", raw))
    head, body = report.split(b"\r\n\r\n", 1)
    assert head == f"SPAMD/1.1 0 EX_OK\r\nContent-length: {len(body)}\r\n{spam}".encode()
    assert body.startswith(f"textnb: {decision['verdict']} (spam-probability "
                           f"{decision['spam_probability']:.6f}, spam-log-odds "
                           f"{decision['spam_log_odds']:+.2f}, ".encode())
    # Explained as spam over ham, whatever the verdict, as classify and explain explain mail.
    assert b"\nwhy spam over ham (log-odds, natural logs):\n" in body
    ifspam = exchange(daemon.socket, request("REPORT_IFSPAM", raw))
    yes = spam.replace("True", "Yes").replace("False", "No")
    if is_spam:
        assert ifspam == f"SPAMD/1.1 0 EX_OK\r\nContent-length: {len(body)}\r\n{yes}\r\n\r\n".encode() + body
    else:
        assert ifspam == f"SPAMD/1.1 0 EX_OK\r\nContent-length: 0\r\n{yes}\r\n\r\n".encode()


@pytest.mark.parametrize("message", [SPAM, HAM], ids=["spam", "ham"])
def test_process_and_headers_give_the_filters_bytes(daemon, trained, message):
    raw = message.read_bytes()
    filtered = filter_message(raw, trained, spam_cutoff=0.9, ham_cutoff=0.5)  # `textnb filter`
    _, shown = expected(trained, raw)
    answer = exchange(daemon.socket, request("PROCESS", raw))
    head, body = answer.split(b"\r\n\r\n", 1)
    assert body == filtered
    assert head.startswith(f"SPAMD/1.1 0 EX_OK\r\nContent-length: {len(filtered)}\r\nSpam: ".encode())
    assert head.endswith(f" ; {shown:.1f} / 5.0".encode())
    headers_only = exchange(daemon.socket, request("HEADERS", raw)).split(b"\r\n\r\n", 1)[1]
    assert filtered.startswith(headers_only) and headers_only.endswith(b"\n\n")
    assert raw.endswith(filtered[len(headers_only):])


def test_zlib_compressed_request(daemon):
    raw = SPAM.read_bytes()
    plain = exchange(daemon.socket, request("CHECK", raw))
    assert exchange(daemon.socket, request("CHECK", zlib.compress(raw), "Compress: zlib")) == plain
    assert exchange(daemon.socket, request("CHECK", b"not zlib", "Compress: zlib")).startswith(
        b"SPAMD/1.0 69 Service Unavailable: zlib: ")
    assert exchange(daemon.socket, request("CHECK", zlib.compress(raw)[:-10], "Compress: zlib")) == (
        b"SPAMD/1.0 69 Service Unavailable: zlib: the compressed message is cut short\r\n")
    assert exchange(daemon.socket, request("CHECK", raw, "Compress: gzip")).startswith(
        b"SPAMD/1.0 76 Bad header line: (compression type not supported: gzip)")


def test_tell_is_refused_without_allow_tell(daemon):
    answer = exchange(daemon.socket, request("TELL", HAM.read_bytes(), "Message-class: ham", "Set: local"))
    assert answer == (b"SPAMD/1.0 69 Service Unavailable: TELL commands are not enabled, "
                      b"set the --allow-tell switch.\r\n")


# -- bad requests ----------------------------------------------------------------------------

BAD = {
    "unknown method": (b"FROB SPAMC/1.5\r\n\r\n", b"SPAMD/1.0 76 Bad header line: (unknown method FROB)\r\n"),
    "bad version": (b"CHECK SPAMC/2.0\r\nContent-length: 2\r\n\r\nhi",
                    b"SPAMD/1.0 76 Bad header line: (unsupported protocol version SPAMC/2.0; this is 1.x)\r\n"),
    "not a version": (b"CHECK SPAMC/one\r\n\r\n",
                      b"SPAMD/1.0 76 Bad header line: (unsupported protocol version SPAMC/one; this is 1.x)\r\n"),
    "lying length": (b"CHECK SPAMC/1.5\r\nContent-length: 100\r\n\r\nonly 12 byte",
                     b"SPAMD/1.0 76 Bad header line: (Content-Length mismatch: Expected 100 bytes, got 12 bytes)\r\n"),
    "length not a number": (b"CHECK SPAMC/1.5\r\nContent-length: 1e3\r\n\r\n",
                            b"SPAMD/1.0 76 Bad header line: (Content-Length contains non-numeric bytes)\r\n"),
    # The first line is bytes 0 to 10 (a line feed); the answer shows them as "?".
    "binary garbage": (bytes(range(256)) * 4,
                       b"SPAMD/1.0 76 Bad header line: (not a spamc request: " + b"?" * 11 + b")\r\n"),
    "no newline, 10 KB": (b"A" * 10_000, b"SPAMD/1.0 76 Bad header line: (header line longer than 8192 bytes)\r\n"),
    "empty request": (b"", b"SPAMD/1.0 76 Bad header line: (closed before headers)\r\n"),
    "field without colon": (b"CHECK SPAMC/1.5\r\nContent-length 5\r\n\r\nhello",
                            b"SPAMD/1.0 76 Bad header line: (header not in 'Name: value' format)\r\n"),
    "too many fields": (b"CHECK SPAMC/1.5\r\n" + b"X: y\r\n" * 300 + b"\r\n",
                        b"SPAMD/1.0 76 Bad header line: (too many headers)\r\n"),
    "end in the fields": (b"CHECK SPAMC/1.5\r\nContent-length: 5\r\n",
                          b"SPAMD/1.0 76 Bad header line: (EOF during headers)\r\n"),
    "oversize": (b"CHECK SPAMC/1.5\r\nContent-length: 512001\r\n\r\n" + b"x" * 512001,
                 b"SPAMD/1.0 98 Message too big: 512001 bytes, the limit is 512000\r\n"),
    "oversize without a length": (b"CHECK SPAMC/1.5\r\n\r\n" + b"x" * 600_000,
                                  b"SPAMD/1.0 98 Message too big: more than 512000 bytes, the limit is 512000\r\n"),
    "oversize once inflated": (b"CHECK SPAMC/1.5\r\nCompress: zlib\r\nContent-length: 604\r\n\r\n"
                               + zlib.compress(b"x" * 600_000),
                               b"SPAMD/1.0 98 Message too big: more than 512000 bytes, the limit is 512000\r\n"),
}


@pytest.mark.parametrize("data, answer", BAD.values(), ids=BAD.keys())
def test_bad_requests_get_spamds_error_lines(daemon, data, answer):
    assert exchange(daemon.socket, data) == answer
    assert client.ping(socket_path=daemon.socket)


def test_missing_length_reads_to_the_end_as_spamd_does(daemon):
    raw = HAM.read_bytes()
    with_length = exchange(daemon.socket, request("CHECK", raw))
    assert exchange(daemon.socket, b"CHECK SPAMC/1.5\r\n\r\n" + raw) == with_length


# -- the daemon under load ---------------------------------------------------------------------

def test_a_slow_client_stalls_no_one(model, short_dir):
    """One worker: a client sending a byte a second holds a coroutine, not the loop; it is
    answered EX_TIMEOUT when --timeout expires, while the others are answered at once."""
    server = Daemon(short_dir, model, "--timeout", "3", workers=1)
    try:
        data = request("CHECK", HAM.read_bytes())
        answers = []

        def slow() -> None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(server.socket))
                started = time.monotonic()
                for byte in data[:10]:  # a byte a second until the daemon answers
                    s.send(bytes([byte]))
                    if select.select([s], [], [], 1.0)[0]:
                        break
                took = time.monotonic() - started
                answers.append((receive(s), took))

        thread = threading.Thread(target=slow)
        thread.start()
        time.sleep(0.5)
        for _ in range(5):
            started = time.monotonic()
            verdict = client.check(HAM.read_bytes(), socket_path=server.socket)
            assert time.monotonic() - started < 1.0 and not verdict.spam
        thread.join()
        (answer, took), = answers
        assert answer == b"SPAMD/1.0 79 Timeout: (3 second timeout reading from client)\r\n"
        assert 2.5 < took < 6
    finally:
        assert server.stop() == 0


def test_connections_are_bounded_and_the_slowest_is_shed(model, short_dir):
    """--max-connections 2, one worker: two clients hold the slots, one sending its header
    block a few bytes at a time, one silent since it connected (after the other). A whole
    request is still answered at once (in the turn that accepts it); a third client whose
    request is not whole takes a slot from the silent one, the slowest, which is told so,
    while the one sending keeps its slot and is answered when its request ends."""
    server = Daemon(short_dir, model, "--max-connections", "2", "--timeout", "20", workers=1)
    data = request("CHECK", HAM.read_bytes(), *[f"X-Pad-{i}: {'x' * 30}" for i in range(10)])
    try:
        sending, silent, third = (socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                                  for _ in range(3))
        sending.connect(str(server.socket))
        time.sleep(0.1)
        silent.connect(str(server.socket))
        for at in range(0, 400, 40):  # 400 bytes in half a second
            time.sleep(0.05)
            sending.send(data[at:at + 40])
        started = time.monotonic()
        assert not client.check(HAM.read_bytes(), socket_path=server.socket).spam
        assert time.monotonic() - started < 1.0
        third.connect(str(server.socket))
        third.send(data[:10])
        silent.settimeout(5)
        assert receive(silent) == (b"SPAMD/1.0 69 Service Unavailable: too many connections, "
                                   b"this one the slowest\r\n")
        sending.sendall(data[400:])
        third.sendall(data[10:])
        for s in (sending, third):
            s.shutdown(socket.SHUT_WR)
            s.settimeout(5)
            assert receive(s).startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: False ; ")
        for s in (silent, sending, third):
            s.close()
    finally:
        assert server.stop() == 0
    assert any(re.search(r" - shed after 0\.\d s, 0 bytes \(every connection slot held\) ", line)
               for line in server.lines())


def test_eight_concurrent_tells_end_with_exact_counts(model, short_dir):
    before = load_model(model)
    server = Daemon(short_dir, model, "--allow-tell", workers=2)
    try:
        messages = ([(f.read_bytes(), "spam") for f in files("spam")[-HELD_OUT:]]
                    + [(f.read_bytes(), "ham") for f in files("ham")[-HELD_OUT:]])
        results = [None] * len(messages)

        def tell(i: int) -> None:
            results[i] = client.tell(messages[i][0], messages[i][1], socket_path=server.socket)

        threads = [threading.Thread(target=tell, args=(i,)) for i in range(len(messages))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [True] * 8
        # Told again: already learned, nothing changes (spamc: "already un/learned").
        assert client.tell(messages[0][0], "spam", socket_path=server.socket) is False
    finally:
        assert server.stop() == 0
    after = load_model(model)
    assert len(after.digests_) == len(before.digests_) + 8
    counted_once(before, after, messages)


def test_every_worker_scores_with_the_model_a_tell_wrote(model, short_dir):
    """Two workers: a TELL answered by one rewrites the file; then every CHECK, from 4
    clients at once (so both workers answer), gives the new model's score, none the old."""
    raw = files("spam")[-1].read_bytes()  # held out of the model
    server = Daemon(short_dir, model, *CUTOFF, "--allow-tell", workers=2)
    try:
        old = expected(model, raw)[1]
        assert client.tell(raw, "ham", socket_path=server.socket) is True
        new = expected(model, raw)[1]
        assert new < old
        scores = []

        def ask() -> None:
            for _ in range(10):
                scores.append(client.check(raw, socket_path=server.socket).score)

        askers = [threading.Thread(target=ask) for _ in range(4)]
        for t in askers:
            t.start()
        for t in askers:
            t.join()
    finally:
        assert server.stop() == 0
    assert scores == [new] * 40


def test_a_client_that_reads_slowly_stalls_no_one(model, short_dir):
    """One worker, an answer larger than the socket's buffer: a client that reads it late
    (within --timeout) gets every byte, one that never reads is dropped at --timeout, and
    the others are answered meanwhile."""
    server = Daemon(short_dir, model, *CUTOFF, "--timeout", "2", workers=1)
    raw = SPAM.read_bytes()
    # 450 KB in lines of one over-long token each: scored in ≈20 ms, where as many short
    # words took 250, so that scoring it does not hold up the clients timed below.
    big = raw + b"\n" + (b"x" * 999 + b"\n") * 450
    try:
        full = exchange(server.socket, request("PROCESS", big))
        assert full.startswith(b"SPAMD/1.1 0 EX_OK\r\n") and full.endswith(big[-1000:])
        late, never = (socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2))
        for s in (late, never):
            s.connect(str(server.socket))
            s.sendall(request("PROCESS", big))
        for _ in range(3):
            started = time.monotonic()
            assert client.check(raw, socket_path=server.socket).spam
            assert time.monotonic() - started < 1.0
        assert receive(late) == full
        time.sleep(2.5)
        assert 0 < len(receive(never)) < len(full)
        late.close()
        never.close()
        assert client.check(raw, socket_path=server.socket).spam
    finally:
        assert server.stop() == 0


def test_the_model_replaced_mid_traffic(trained, tmp_path, short_dir):
    """Versions A and B replace each other every 20 ms while 4 clients ask: every answer is
    exactly A's or B's (the log-odds to 4 decimals), and both are seen."""
    spam, ham = files("spam"), files("ham")
    a = train(tmp_path / "a.model", spam[::2], ham[::2])
    b = train(tmp_path / "b.model", spam[1::2], ham[1::2])
    live = tmp_path / "live.model"
    shutil.copy(a, live)
    messages = [f.read_bytes() for f in spam[:6] + ham[:6]]
    versions = {}
    for name, path in (("a", a), ("b", b)):
        versions[name] = [f"{expected(path, raw)[0]['spam_log_odds']:.4f}" for raw in messages]
    assert all(x != y for x, y in zip(versions["a"], versions["b"]))
    server = Daemon(short_dir, live, *CUTOFF)
    stop = threading.Event()
    seen, wrong = [], []

    def replace() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            staged = tmp_path / f"staged{i}.model"
            shutil.copy(b if i % 2 else a, staged)
            os.replace(staged, live)
            time.sleep(0.02)

    def ask() -> None:
        for _ in range(8):
            for i, raw in enumerate(messages):
                _, body = client.process(raw, socket_path=server.socket)
                got = re.search(rb"X-TextNB-Spam-Log-Odds: (\S+)", body)[1].decode()
                if got == versions["a"][i]:
                    seen.append("a")
                elif got == versions["b"][i]:
                    seen.append("b")
                else:
                    wrong.append((i, got))

    try:
        replacer = threading.Thread(target=replace)
        replacer.start()
        askers = [threading.Thread(target=ask) for _ in range(4)]
        for t in askers:
            t.start()
        for t in askers:
            t.join()
        stop.set()
        replacer.join()
    finally:
        assert server.stop() == 0
    assert wrong == [] and len(seen) == 4 * 8 * len(messages)
    assert {"a", "b"} <= set(seen)


def test_kill_9_during_tell_leaves_a_whole_model(model, short_dir, tmp_path):
    """SIGKILL to every process of the daemon while four TELLs rewrite the model in turn (the
    first time as soon as a new version is being written): the file loads, and holds the
    model before the TELLs or after some of them (its documents and counts agree)."""
    raws = [f.read_bytes() for f in files("spam")[-HELD_OUT:]]
    pristine = shutil.copy(model, tmp_path / "pristine.model")
    base = len(load_model(model).digests_)
    for delay in (None, 0.1, 0.25):
        server = Daemon(short_dir, model, "--allow-tell", workers=1)
        threads = [threading.Thread(target=_tell_quietly, args=(raw, server.socket)) for raw in raws]
        try:
            for t in threads:
                t.start()
            if delay is None:  # until modelfile.save's temporary file appears
                deadline = time.monotonic() + 10
                while not list(model.parent.glob(".spam.model.*.tmp")) and time.monotonic() < deadline:
                    time.sleep(0.0005)
            else:
                time.sleep(delay)
        finally:
            server.kill()
        for t in threads:
            t.join()
        learned = load_model(model)
        assert base <= len(learned.digests_) <= base + HELD_OUT
        assert np.isclose(learned.model_.class_count_.sum(), learned.digest_weights_.sum())
        for stale in model.parent.glob(".spam.model.*.tmp"):
            stale.unlink()  # what a save killed half-way leaves; the model is untouched
        shutil.copy(pristine, model)


def _tell_quietly(raw: bytes, path: Path) -> None:
    try:
        client.tell(raw, "spam", socket_path=path, timeout=10)
    except (OSError, client.SpamdError):
        pass  # killed under it


# -- spamc, the real client -----------------------------------------------------------------------

@needs_spamc
def test_spamc_check_and_exit_codes(daemon, trained):
    for message, code in ((SPAM, 1), (HAM, 0)):
        raw = message.read_bytes()
        _, shown = expected(trained, raw)
        done = spamc("-U", str(daemon.socket), "-c", stdin=raw)
        assert (done.returncode, done.stdout) == (code, f"{shown:.1f}/5.0\n".encode())
        done = spamc("-U", str(daemon.socket), "-E", stdin=raw)
        assert (done.returncode, done.stdout) == \
            (code, filter_message(raw, trained, spam_cutoff=0.9, ham_cutoff=0.5))
        done = spamc("-d", "127.0.0.1", "-p", str(daemon.port), "-c", stdin=raw)
        assert (done.returncode, done.stdout) == (code, f"{shown:.1f}/5.0\n".encode())


@needs_spamc
def test_spamc_filter_headers_symbols_report_ping(daemon, trained):
    raw = SPAM.read_bytes()
    filtered = filter_message(raw, trained, spam_cutoff=0.9, ham_cutoff=0.5)
    sock = str(daemon.socket)
    assert spamc("-U", sock, stdin=raw).stdout == filtered
    assert spamc("-U", sock, "--headers", stdin=raw).stdout == filtered
    assert spamc("-U", sock, "-y", stdin=raw).stdout == b"TEXTNB_SPAM"
    report = spamc("-U", sock, "-R", stdin=raw).stdout.decode()
    _, shown = expected(trained, raw)
    assert report.startswith(f"{shown:.1f}/5.0\ntextnb: spam (spam-probability ")
    assert spamc("-U", sock, "-r", stdin=HAM.read_bytes()).stdout == b""  # -r: spam only
    assert spamc("-U", sock, "-K").returncode == 0


@needs_spamc
def test_spamc_learns_and_forgets(model, short_dir):
    server = Daemon(short_dir, model, "--allow-tell", *CUTOFF)
    raw = files("ham")[-1].read_bytes()
    sock = str(server.socket)
    try:
        before = spamc("-U", sock, "-c", stdin=raw).stdout
        said = [spamc("-U", sock, "-L", kind, stdin=raw) for kind in ("ham", "ham", "forget", "forget")]
        assert [d.returncode for d in said] == [0, 0, 0, 0]
        assert [d.stdout for d in said] == [b"Message successfully un/learned\n",
                                           b"Message was already un/learned\n",
                                           b"Message successfully un/learned\n",
                                           b"Message was already un/learned\n"]
        assert spamc("-U", sock, "-c", stdin=raw).stdout == before
    finally:
        assert server.stop() == 0
    assert [c for c in server.lines() if " TELL " in c][1].endswith("ms")


@needs_spamc
def test_spamc_passes_mail_through_with_no_daemon(short_dir):
    raw = SPAM.read_bytes()
    missing = str(short_dir / "none.sock")
    done = spamc("-U", missing, stdin=raw)
    assert (done.returncode, done.stdout) == (0, raw)
    done = spamc("-U", missing, "-E", stdin=raw)
    assert (done.returncode, done.stdout) == (0, raw)
    done = spamc("-U", missing, "-c", stdin=raw)
    assert (done.returncode, done.stdout) == (0, b"0/0\n")
    # -x (no safe fallback): an exit code for the MTA to retry, and no message.
    done = spamc("-U", missing, "-x", stdin=raw)
    assert done.returncode != 0 and done.stdout == b""


@needs_spamc
def test_spamc_passes_an_oversize_message_through(daemon):
    raw = SPAM.read_bytes()
    big = raw + b"x" * 600_000 + b"\n"
    done = spamc("-U", str(daemon.socket), "-s", "1000000", stdin=big)
    assert (done.returncode, done.stdout) == (0, big)


# -- operations ---------------------------------------------------------------------------

def test_socket_log_pidfile_sighup_sigterm(model, short_dir):
    server = Daemon(short_dir, model, *CUTOFF, "--spamassassin-headers")
    try:
        assert oct(os.stat(server.socket).st_mode & 0o777) == "0o600"
        pid = int(server.pidfile.read_text())
        assert pid == server.process.pid
        forged = b"X-Spam-Status: No, forged\n\tcontinued\nX-Spam-Flag: NO\n" + SPAM.read_bytes().split(b"\n", 1)[1]
        _, body = client.process(forged, socket_path=server.socket)
        head = body.split(b"\n\n", 1)[0]
        assert head.startswith(b"X-Spam-Flag: YES\nX-Spam-Status: Yes, score=")
        assert b"forged" not in head and b"continued" not in head and b"Flag: NO" not in head
        # A request in hand when SIGTERM comes is answered before the daemon exits.
        data = request("CHECK", HAM.read_bytes())
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(server.socket))
            s.sendall(data[:20])
            time.sleep(0.3)
            os.kill(pid, signal.SIGHUP)
            time.sleep(0.5)
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            s.sendall(data[20:])
            answer = receive(s)
        assert answer.startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: False ; ")
        assert server.process.wait(timeout=20) == 0
    finally:
        if server.process.poll() is None:
            server.kill()
    assert not server.socket.exists() and not server.pidfile.exists()
    lines = server.lines()
    assert sum(line.endswith(f"model reloaded: {model}") for line in lines) == 2  # two workers
    logged = [line for line in lines if " PROCESS " in line or " CHECK " in line]
    assert len(logged) == 2
    for line in logged:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d (PROCESS|CHECK) (spam|ham|unsure) "
                            r"-?\d+\.\d/5\.0 \d+ bytes \d+\.\d ms", line), line


def test_start_up_errors_are_one_line(model, short_dir, tmp_path):
    def serve(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*textnb(), "serve", *args], capture_output=True, timeout=60)

    done = serve("-m", str(tmp_path / "none.model"), "--socket", str(short_dir / "a.sock"))
    assert done.returncode == 1
    assert done.stderr.decode() == f"Error: model file '{tmp_path / 'none.model'}' does not exist\n"
    (short_dir / "file").write_text("mine")
    done = serve("-m", str(model), "--socket", str(short_dir / "file"))
    assert done.returncode == 1
    assert done.stderr.decode() == f"Error: '{short_dir / 'file'}' exists and is not a socket; give another --socket\n"
    assert (short_dir / "file").read_text() == "mine"
    done = serve("-m", str(model), "--socket", str(short_dir / "b.sock"), "--listen", "nohostport")
    assert done.returncode == 1 and done.stderr.decode() == "Error: --listen wants HOST:PORT, got 'nohostport'\n"
    assert not (short_dir / "b.sock").exists()
    server = Daemon(short_dir, model)
    try:
        done = serve("-m", str(model), "--socket", str(server.socket))
        assert done.returncode == 1
        assert done.stderr.decode() == f"Error: '{server.socket}' is in use: another daemon listens on it\n"
    finally:
        assert server.stop() == 0


def test_python_client(daemon):
    verdict = client.check(SPAM.read_bytes(), socket_path=daemon.socket)
    assert verdict.spam and verdict.threshold == 5.0 and verdict.score >= 5.0
    tcp = client.check(SPAM.read_bytes(), host="127.0.0.1", port=daemon.port)
    assert tcp == verdict
    with pytest.raises(client.SpamdError, match="answered 69") as error:
        client.tell(HAM.read_bytes(), "ham", socket_path=daemon.socket)
    assert error.value.code == 69
    with pytest.raises(ValueError, match="spam, ham or forget"):
        client.tell(b"x", "eggs", socket_path=daemon.socket)
    with pytest.raises(OSError):
        client.check(b"x", socket_path="/nonexistent/textnb.sock")


def test_systemd_socket_activation(model, short_dir):
    """With $LISTEN_PID and $LISTEN_FDS (as systemd sets them), the daemon serves the socket
    it is given on fd 3, and leaves the socket file, which is systemd's, in place."""
    path = short_dir / "activated.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    fd = listener.fileno()
    command = [*textnb(), "serve", "-q", "-m", str(model)]
    # What systemd does before it runs the service: the socket on fd 3, then exec.
    exec_as_systemd = (f"import os; os.dup2({fd}, 3); os.environ.update(LISTEN_PID=str(os.getpid()), "
                       f"LISTEN_FDS='1'); os.execv({command[0]!r}, {command!r})")
    process = subprocess.Popen(
        [sys.executable, "-c", exec_as_systemd], pass_fds=(fd,), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    listener.close()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                verdict = client.check(HAM.read_bytes(), socket_path=path)
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
                time.sleep(0.05)
        assert not verdict.spam
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    assert path.exists()
    assert b"(systemd)" in process.stderr.read()


RECIPES = {
    # The README's: spamc adds the fields, procmail files by them ...
    "fields": ":0fw\n| spamc -U {sock} -t 5\n\n:0\n* ^X-TextNB-Status: Yes\nspam/\n",
    # ... or by spamc -c's exit code (1: spam), the message left as it is.
    "exit code": ":0\n* ! ? spamc -U {sock} -t 5 -c > /dev/null\nspam/\n",
}


@needs_spamc
@pytest.mark.skipif(shutil.which("procmail") is None, reason="procmail is not installed")
def test_procmail_recipes_with_spamc_and_the_fail_safe_chain(model, short_dir, tmp_path):
    """The README's recipes, run by procmail: spam is filed by the daemon's fields or by spamc
    -c's exit code; with the daemon stopped, both deliver every message unchanged."""

    def deliver(recipe: str, message: Path) -> dict[str, list[bytes]]:
        mail = Path(tempfile.mkdtemp(dir=tmp_path))
        rc = mail / "procmailrc"
        rc.write_text(f"SHELL=/bin/sh\nMAILDIR={mail}\nDEFAULT={mail}/inbox/\n"
                      + RECIPES[recipe].format(sock=short_dir / "t.sock"))
        with open(message, "rb") as stdin:
            done = subprocess.run(["procmail", "-m", str(rc)], stdin=stdin, capture_output=True,
                                  timeout=60)
        assert done.returncode == 0, done.stderr
        return {folder.name: [f.read_bytes() for f in (folder / "new").iterdir()]
                for folder in mail.iterdir() if (folder / "new").is_dir()}

    def unchanged(message: Path) -> bytes:  # procmail drops the From_ line in a Maildir
        return message.read_bytes().split(b"\n", 1)[1]

    server = Daemon(short_dir, model, *CUTOFF)
    try:
        up = {(recipe, message): deliver(recipe, message) for recipe in RECIPES for message in (SPAM, HAM)}
    finally:
        assert server.stop() == 0
    assert up[("fields", SPAM)]["spam"][0].startswith(b"X-TextNB-Class: spam\n")
    assert up[("fields", HAM)]["inbox"][0].startswith(b"X-TextNB-Class: ham\n")
    assert up[("fields", HAM)]["inbox"][0].endswith(unchanged(HAM))
    assert up[("exit code", SPAM)] == {"spam": [unchanged(SPAM)]}
    assert up[("exit code", HAM)] == {"inbox": [unchanged(HAM)]}
    for recipe in RECIPES:
        for message in (SPAM, HAM):
            assert deliver(recipe, message) == {"inbox": [unchanged(message)]}


@needs_spamc
def test_spamc_passes_mail_through_when_the_daemon_does_not_answer(model, short_dir):
    """The daemon stopped (SIGSTOP: it accepts nothing, answers nothing): spamc -t 1 waits a
    second in the listen queue, then delivers the message unchanged, exit 0; continued, the
    daemon answers again."""
    server = Daemon(short_dir, model, *CUTOFF, workers=1)
    raw = SPAM.read_bytes()
    try:
        os.killpg(server.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            done = spamc("-U", str(server.socket), "-t", "1", stdin=raw)
            assert (done.returncode, done.stdout) == (0, raw)
            assert 0.9 < time.monotonic() - started < 5
        finally:
            os.killpg(server.process.pid, signal.SIGCONT)
        done = spamc("-U", str(server.socket), "-t", "5", "-c", stdin=raw)
        assert done.returncode == 1 and done.stdout.endswith(b"/5.0\n")
    finally:
        assert server.stop() == 0


def test_default_socket_path(monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1234")
    assert client.default_socket_path() == Path("/run/user/1234/textnb.sock")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert client.default_socket_path() == Path(f"/tmp/textnb-{os.getuid()}/textnb.sock")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/dir")  # not a runtime directory: ignored
    assert client.default_socket_path() == Path(f"/tmp/textnb-{os.getuid()}/textnb.sock")


def test_a_bad_model_file_leaves_the_old_model_serving(model, short_dir):
    """The model file replaced by garbage: CHECK goes on with the model in memory (reported
    once in the log), TELL answers EX_UNAVAILABLE naming the file, and nothing is written."""
    server = Daemon(short_dir, model, *CUTOFF, "--allow-tell", workers=1)
    try:
        before = client.check(SPAM.read_bytes(), socket_path=server.socket)
        broken = model.with_suffix(".new")
        broken.write_bytes(b"PK\x03\x04 not a model")
        os.replace(broken, model)
        for _ in range(3):
            assert client.check(SPAM.read_bytes(), socket_path=server.socket) == before
        with pytest.raises(client.SpamdError, match=f"answered 69: Service Unavailable: model file "
                                                     f"'{model}' is truncated or corrupt"):
            client.tell(HAM.read_bytes(), "ham", socket_path=server.socket)
        assert model.read_bytes() == b"PK\x03\x04 not a model"
    finally:
        assert server.stop() == 0
    assert sum("model not reloaded, the old one serves: model file" in line
               for line in server.lines()) == 1


@needs_spamc
def test_without_options_the_model_s_learned_cutoffs_decide(model, short_dir):
    """The daemon decides as `textnb filter` does: by the cutoffs the model learned."""
    classifier = load_model(model)
    assert classifier.cutoffs_ is not None
    server = Daemon(short_dir, model)
    try:
        for message in (SPAM, HAM):
            raw = message.read_bytes()
            decision, shown = expected(model, raw, None, None)
            answer = exchange(server.socket, request("PROCESS", raw))
            head, body = answer.split(b"\r\n\r\n", 1)
            assert body == filter_message(raw, model)
            assert head.endswith(f" ; {shown:.1f} / 5.0".encode())
            assert (b"Spam: True" in head) == (decision["status"] == "spam")
    finally:
        assert server.stop() == 0


def tell_past_compact_bytes(model: Path, server: Daemon, start: int = 0) -> int:
    """TELL new spam until a TELL's commit leaves the journal over COMPACT_BYTES (checked
    after its answer, before any fold could have read it); how many were told."""
    from textnb.store import journal
    for i, f in enumerate(files("spam") * 2):
        # a new message each time: the sample's own, with a word of its own
        raw = f.read_bytes() + f"\nzqxcompact{start + i}word\n".encode()
        assert client.tell(raw, "spam", socket_path=server.socket) is True
        if journal.size_of(model) > journal.COMPACT_BYTES:
            return i + 1
    pytest.fail("the journal never outgrew COMPACT_BYTES after a TELL")


def folds(model: Path) -> list[int]:
    """The pids of the fold processes of ``model`` (python -m textnb.serve.fold MODEL)."""
    found = []
    for entry in os.scandir("/proc"):
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                arguments = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        if arguments[1:4] == [b"-m", b"textnb.serve.fold", os.fsencode(model)]:
            found.append(int(entry.name))
    return found


def the_fold(model: Path) -> int:
    """The one fold process of ``model``, waited for (at most 30 s)."""
    deadline = time.monotonic() + 30
    while not (found := folds(model)):
        if time.monotonic() > deadline:
            pytest.fail("no fold process started")
        time.sleep(0.01)
    assert len(found) == 1
    return found[0]


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def wait_folded(model: Path) -> None:
    from textnb.store import journal
    deadline = time.monotonic() + 60
    while journal.size_of(model) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert journal.size_of(model) == 0


def learned_spam(before: TextClassifier, path: Path) -> tuple[int, int]:
    """(the spam documents gained over ``before``, the documents gained), of the file and its
    journal as every reader reads them; each counted once with the weight it was learned
    with."""
    after = load_model(path)
    new = ~np.isin(after.digests_, before.digests_)
    weights = after.digest_weights_[new]
    gained = after.model_.class_count_ - before.model_.class_count_
    spam = list(after.classes_).index("spam")
    assert np.isclose(gained[spam], weights[after.digest_labels_[new] == "spam"].sum())
    return int((after.digest_labels_[new] == "spam").sum()), int(new.sum())


def counted_once(before: TextClassifier, after: TextClassifier,
                 messages: list[tuple[bytes, str]]) -> None:
    """``after`` is ``before`` with each of ``messages`` learned once as its label, with the
    weight it records (textnb.online.learning_weight's): its class counts and the totals of
    its term counts gained what those weighted rows hold."""
    classes = list(after.classes_)
    class_gain, term_gain = np.zeros(len(classes)), np.zeros(len(classes))
    for raw, label in messages:
        row = incremental.rows(after, [raw])[0]
        at = np.flatnonzero(after.digests_ == np.uint64(row.digest))
        assert at.size == 1 and after.digest_labels_[at[0]] == label
        weight = after.digest_weights_[at[0]]
        class_gain[classes.index(label)] += weight
        term_gain[classes.index(label)] += weight * row.values.sum()
    assert np.allclose(after.model_.class_count_ - before.model_.class_count_, class_gain)
    assert np.allclose(after.model_.feature_count_.sum(axis=1)
                       - before.model_.feature_count_.sum(axis=1), term_gain)


def test_a_tell_past_compact_bytes_is_answered_then_a_process_of_its_own_folds_the_journal(
        model, short_dir):
    """The TELL whose commit leaves the journal over COMPACT_BYTES is answered with the
    journal as it left it; then a process of the worker's, in its own session, folds it (not a
    thread of the daemon), one at a time: the TELLs answered while it runs start no other.
    The counts are exact after."""
    from textnb.store.container import locked
    before = load_model(model)
    server = Daemon(short_dir, model, "--allow-tell", workers=1)
    try:
        told = tell_past_compact_bytes(model, server)
        with locked(model):  # the fold, started after that answer, waits here for the lock
            fold = the_fold(model)
            worker = parent(fold)  # --workers 1: the daemon's process serves
            assert worker == server.process.pid != fold
            assert os.getsid(fold) == fold  # its own session: it outlives the daemon
            os.kill(fold, signal.SIGSTOP)  # stopped, it cannot take the lock once released
        try:
            for f in files("spam")[-HELD_OUT:-1]:  # held out of the model, not told yet
                # the journal still over COMPACT_BYTES, the fold running
                raw = f.read_bytes()
                assert client.tell(raw, "spam", socket_path=server.socket) is True
                told += 1
            assert folds(model) == [fold]
        finally:
            os.kill(fold, signal.SIGCONT)
        wait_folded(model)
        assert not [line for line in server.lines() if "not compacted" in line]
        assert client.check(SPAM.read_bytes(), socket_path=server.socket)  # still serving
    finally:
        assert server.stop() == 0
    assert learned_spam(before, model) == (told, told)


def test_a_fold_process_killed_loses_nothing_and_the_next_tell_folds_again(model, short_dir):
    """SIGKILL of the fold process, while it waits for the lock and again while it writes:
    no TELL's count is lost or counted twice, the log says the fold failed, and a TELL after
    starts another fold, which folds."""
    from textnb.store.container import locked
    before = load_model(model)
    server = Daemon(short_dir, model, "--allow-tell", workers=1)
    try:
        told = tell_past_compact_bytes(model, server)
        with locked(model):
            fold = the_fold(model)
            os.kill(fold, signal.SIGKILL)
        assert learned_spam(before, model) == (told, told)
        said = f"journal not compacted: the fold process {fold} was killed by signal 9"
        deadline = time.monotonic() + 30
        while said not in server.log.read_text():  # its end heard: the next TELL may fold
            assert time.monotonic() < deadline, server.log.read_text()
            time.sleep(0.05)
        raw = files("spam")[-1].read_bytes()  # held out of the model, not told yet
        assert client.tell(raw, "spam", socket_path=server.socket) is True
        told += 1
        with locked(model):
            again = the_fold(model)
            assert again != fold
        time.sleep(0.05)  # its writing begun (or not yet, or done): any moment loses nothing
        try:
            os.kill(again, signal.SIGKILL)
        except ProcessLookupError:
            pass
        assert learned_spam(before, model) == (told, told)
        raw = files("spam")[-2].read_bytes()
        assert client.tell(raw, "spam", socket_path=server.socket) is True
        told += 1
        assert learned_spam(before, model) == (told, told)
    finally:
        assert server.stop() == 0


def test_a_fold_that_fails_is_logged_and_the_model_in_memory_serves(model, short_dir):
    """The file replaced by garbage while the fold waits for the lock: the fold fails, the
    log says why in one line, and the daemon goes on serving."""
    from textnb.store.container import locked
    server = Daemon(short_dir, model, *CUTOFF, "--allow-tell", workers=1)
    try:
        tell_past_compact_bytes(model, server)
        expected_answer = client.check(SPAM.read_bytes(), socket_path=server.socket)
        with locked(model):
            fold = the_fold(model)
            broken = model.with_suffix(".new")
            broken.write_bytes(b"PK\x03\x04 not a model")
            os.replace(broken, model)
        deadline = time.monotonic() + 60
        while folds(model) == [fold] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # its end heard by the worker's loop
        assert client.check(SPAM.read_bytes(), socket_path=server.socket) == expected_answer
    finally:
        assert server.stop() == 0
    failed = [line for line in server.lines() if "journal not compacted" in line]
    assert len(failed) == 1
    assert (f"journal not compacted: ModelFileError: model file '{model}' is truncated or "
            f"corrupt") in failed[0]


def test_a_tell_after_the_file_is_replaced_reads_its_classes_not_the_whole_model(model, tmp_path):
    """A TELL needs the classes alone: once the file is replaced (a fold, a new training),
    for_tell answers the new file's classes and spam class from its meta.json, the version in
    memory left for the next CHECK to reload; a file naming no spam model is loaded whole,
    which reports it, and the old version's classes serve."""
    served = Model(model)
    old = served.version
    assert served.for_tell() == Labels(["ham", "spam"], "spam")
    # A model of other classes, its cutoffs learned for "junk": "spam" is no longer one.
    raws = [f.read_bytes() for f in files("spam")[:20] + files("ham")[:20]]
    fresh = tmp_path / "fresh.model"
    save_model(TextClassifier(n_jobs=1, spam_class="junk", training="full").fit(
        raws, ["junk"] * 20 + ["good"] * 20), fresh)
    os.replace(fresh, model)
    labels = served.for_tell()
    assert labels == Labels(["good", "junk"], "junk") and labels.ham_class == "good"
    assert served.version is old  # not loaded: the next CHECK does
    assert served.refresh().classes == ["good", "junk"] and served.version is not old
    said: list[str] = []
    broken = model.with_suffix(".new")
    broken.write_bytes(b"PK\x03\x04 not a model")
    os.replace(broken, model)
    assert served.for_tell(said.append) == Labels(["good", "junk"], "junk")
    assert len(said) == 1 and "model not reloaded, the old one serves" in said[0]



def test_a_fold_that_ends_leaves_the_replaced_file_read_for_the_next_tell(model):
    """When its fold process has replaced the file, the worker reads it at once
    (store.appending.prepare), so the next TELL's learner reopens it without reading."""
    import asyncio

    from textnb.serve.fold import Fold
    from textnb.store import appending, journal, learning
    for i, f in enumerate(files("spam") * 2):
        raw = f.read_bytes() + f"\nzqxprepare{i}word\n".encode()
        learning.learn(model, raw, "spam", None, detach=False)
        if journal.size_of(model) > journal.COMPACT_BYTES:
            break
    key = os.path.realpath(model)
    appending._written.pop(key, None)
    loop = asyncio.new_event_loop()
    try:
        fold, why = Fold(str(model)), []
        fold.start(loop, why.append)
        assert fold.process is not None
        deadline = time.monotonic() + 60
        while fold.process is not None and time.monotonic() < deadline:
            loop.run_until_complete(asyncio.sleep(0.02))
    finally:
        loop.close()
    assert why == [] and journal.size_of(model) == 0  # folded, the journal gone
    signature, prepared = appending._written[key]
    assert signature == journal.signature(model)
    assert appending.reopen(model) is prepared
