"""contrib/sieve, run as an administrator would set it up, in a real Dovecot with Pigeonhole:
delivery (dovecot-lda) files mail by textnb's verdict, through textnb filter or through spamc
to textnb serve; IMAPSieve tells textnb serve when a user moves mail into or out of Junk.
Skipped where Dovecot, Pigeonhole or spamc is absent."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from textnb.imap.dovecot import LDA, Dovecot, free_port, missing
from textnb.store.learning import learn
from imapfixtures import corpus, digest, tagged, trained, where  # noqa: F401

CONTRIB = Path(__file__).resolve().parent.parent / "contrib" / "sieve"
SPAMC = shutil.which("spamc")
try:
    import imapclient  # noqa: F401
    _REASON = missing(sieve=True)
except ModuleNotFoundError:
    _REASON = "IMAPClient is not installed (pip install 'textnb[imap]')"
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")
needs_spamc = pytest.mark.skipif(SPAMC is None, reason="spamc is not installed (Debian package spamc)")


def textnb() -> str:
    script = Path(sys.executable).with_name("textnb")
    if not script.exists():
        pytest.skip("the textnb console script is not installed beside this Python")
    return str(script)


def mail_user_runs_textnb() -> str | None:
    """Why Dovecot's mail user (nobody under root, else the caller) cannot run this textnb
    through sh as textnb-filter does, or None: a Python under /root (pyenv's) is closed to
    nobody (setpriv's own exec found it where sh did not: the probe runs sh)."""
    user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    probe = subprocess.run([*(user if os.getuid() == 0 else []), "/bin/sh", "-c",
                            f"exec {textnb()} --version"], capture_output=True, text=True,
                           cwd="/")
    return None if probe.returncode == 0 else (
        f"the mail user cannot run {textnb()}: {probe.stderr.strip()[:200]}")


def install(directory: Path, model: Path, port: int) -> str:
    """contrib/sieve's files into ``directory``, as the README says, with this machine's paths
    in place of the README's: the programs' directory, spamc, textnb, the model, the port.
    The scripts compiled with sievec; the configuration snippet returned."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)
    places = {"/usr/local/lib/textnb/sieve": str(directory), "/usr/bin/spamc": SPAMC or "spamc",
              "/usr/local/bin/textnb": textnb(), "/var/lib/textnb/textnb.model": str(model),
              "-p 783": f"-p {port}"}
    for source in CONTRIB.iterdir():
        if source.name == "README.md":
            continue
        text = source.read_text()
        for old, new in places.items():
            text = text.replace(old, new)
        target = directory / source.name
        target.write_text(text)
        target.chmod(source.stat().st_mode & 0o777)
    text = (directory / "90-textnb.conf").read_text()
    return text


@pytest.fixture
def setup(trained):
    """(Dovecot with contrib/sieve, its programs' directory, textnb serve's TCP port, the
    model), all in a directory the mail user (nobody, under root) may pass through: a
    tmp_path is closed to it."""
    port = free_port()
    root = Path(tempfile.mkdtemp(prefix="textnb-sieve-"))
    root.chmod(0o711)
    model = root / "model" / "spam.model"
    model.parent.mkdir(mode=0o755)
    shutil.copy(trained, model)
    model.chmod(0o644)
    programs = root / "sieve"
    server = Dovecot(root, extra=install(programs, model, port))
    for script in programs.glob("*.sieve"):  # as the README says: compiled once, by root
        subprocess.run(["sievec", "-c", str(server.config), str(script)], check=True,
                       capture_output=True)
    server.start()
    yield server, programs, port, model
    server.kill()
    shutil.rmtree(root, ignore_errors=True)


class Serve:
    """textnb serve --allow-tell on a loopback TCP port (and a socket of its own)."""

    def __init__(self, model: Path, port: int, directory: Path) -> None:
        self.log = directory / "serve.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [textnb(), "serve", "-m", str(model), "--socket", str(directory / "t.sock"),
                 "--listen", f"127.0.0.1:{port}", "--allow-tell", "--workers", "1"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True)
        deadline = time.monotonic() + 30
        while "on " not in self.log.read_text():
            assert self.process.poll() is None and time.monotonic() < deadline, \
                self.log.read_text()
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(20)


def deliver(server: Dovecot, raw: bytes) -> None:
    """Deliver a message as the MTA would, through dovecot-lda (which runs the Sieve)."""
    result = subprocess.run([LDA, "-c", str(server.config), "-d", server.user,
                             "-f", "sender@example.org"], input=raw, capture_output=True)
    assert result.returncode == 0, result.stderr.decode() + server.log()[-2000:]


@pytest.mark.parametrize("program", ["textnb-filter", pytest.param("textnb-spamc",
                                                                    marks=needs_spamc)])
def test_delivery_files_mail_by_textnbs_verdict(setup, tmp_path, program):
    server, programs, port, model = setup
    if program == "textnb-filter":
        if reason := mail_user_runs_textnb():
            pytest.skip(reason)
        script = programs / "textnb-file.sieve"
        script.write_text(script.read_text().replace('filter "textnb-spamc"',
                                                     'filter "textnb-filter"'))
        subprocess.run(["sievec", "-c", str(server.config), str(script)], check=True)
    daemon = Serve(model, port, tmp_path) if program == "textnb-spamc" else None
    try:
        spam, ham = tagged(corpus("spam")[0], program), tagged(corpus("ham")[0], program)
        deliver(server, spam)
        deliver(server, ham)
    finally:
        if daemon:
            daemon.stop()
    folders = server.folders()
    assert len(folders["Junk"]) == 1 and len(folders["INBOX"]) == 1
    assert b"X-TextNB-Status: Yes" in folders["Junk"][0]
    assert b"X-TextNB-Status: No" in folders["INBOX"][0]
    # Nothing else changed: the message is the one sent, its X-TextNB-* fields aside.
    delivered = b"".join(line for line in folders["INBOX"][0].splitlines(keepends=True)
                         if not line.startswith(b"X-TextNB-"))
    assert delivered.endswith(ham.split(b"\n", 1)[1])


@needs_spamc
def test_imapsieve_teaches_textnb_serve_a_move_into_junk_within_a_second(setup, tmp_path):
    server, _, port, model = setup
    spam = corpus("spam")[60] + b"\nA line no trained message has: zyxwvut-sieve.\n"
    server.deliver([spam])  # straight into INBOX, as if textnb had let it through
    daemon = Serve(model, port, tmp_path)
    try:
        client = server.client()
        client.select_folder("INBOX")
        client.create_folder("Junk")
        client.create_folder("Trash")
        journal = Path(f"{model}.journal")

        def state() -> tuple:  # the model's and its journal's (textnb.store.journal)
            return (model.stat().st_mtime_ns,
                    journal.stat().st_mtime_ns if journal.exists() else None)

        def copy() -> None:
            probe.write_bytes(model.read_bytes())
            Path(f"{probe}.journal").write_bytes(journal.read_bytes() if journal.exists()
                                                 else b"")

        before = state()
        start = time.monotonic()
        client.move(client.search("ALL"), "Junk")
        while state() == before:
            assert time.monotonic() - start < 5, daemon.log.read_text()
            time.sleep(0.01)
        took = time.monotonic() - start
        raw = spam.replace(b"\n", b"\r\n")
        probe = tmp_path / "probe.model"
        copy()
        assert learn(probe, raw, "spam", "ham") is False  # learned as spam already
        # Out of Junk again, into INBOX: ham, unlearned as spam.
        before = state()
        client.select_folder("Junk")
        client.move(client.search("ALL"), "INBOX")
        deadline = time.monotonic() + 5
        while state() == before:
            assert time.monotonic() < deadline, daemon.log.read_text()
            time.sleep(0.01)
        copy()
        assert learn(probe, raw, "ham", "spam") is False
        # Into Junk and then the Trash: only the move into Junk is told.
        client.select_folder("INBOX")
        client.move(client.search("ALL"), "Junk")
        time.sleep(1)
        before = state()
        client.select_folder("Junk")
        client.move(client.search("ALL"), "Trash")
        time.sleep(1)
        assert state() == before
        client.logout()
    finally:
        daemon.stop()
    assert took < 1.0, f"learned {took:.3f} s after the move"
    assert digest(spam) in where(server)["Trash"]
