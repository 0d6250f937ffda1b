"""What textnb imap's tests share: a real Dovecot (textnb.imap.dovecot) on loopback, a model
trained on the bundled SpamAssassin sample, the CLI run in process, and what each folder
really holds, read from the server's Maildir."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from textnb.cli.app import main
from textnb.imap.dovecot import Dovecot, missing

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "spamassassin"

try:
    import imapclient  # noqa: F401
    _REASON = missing()
except ModuleNotFoundError:
    _REASON = "IMAPClient is not installed (pip install 'textnb[imap]')"

needs_dovecot = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


def corpus(label: str) -> list[bytes]:
    """The bundled sample's spam or ham, as bytes, in file order."""
    return [p.read_bytes() for p in sorted((CORPUS / label).iterdir())]


def tagged(raw: bytes, tag: str) -> bytes:
    """raw with an X-Test field first in its header (after an mbox "From " line): a distinct
    message (digest and size) of the same text."""
    field = f"X-Test: {tag}\n".encode()
    if raw.startswith(b"From "):
        first, _, rest = raw.partition(b"\n")
        return first + b"\n" + field + rest
    return field + raw


def digest(raw: bytes) -> str:
    """A message's digest, its line ends as Dovecot stores them: LF (CRs before an LF go: the
    delivery writes a CRLF as LF, a CR CR LF as CR LF, and IMAP gives CRLF)."""
    return hashlib.sha256(re.sub(rb"\r+\n", b"\n", raw)).hexdigest()


def where(server: Dovecot) -> dict[str, Counter]:
    """Folder → Counter of the digests of the messages it holds on disk."""
    return {folder: Counter(map(digest, found)) for folder, found in server.folders().items()}


def assert_each_once(server: Dovecot, messages: list[bytes]) -> dict[str, str]:
    """Every message is in exactly one folder, once, and nothing else is there; digest → its
    folder."""
    found: dict[str, str] = {}
    for folder, counts in where(server).items():
        for d, n in counts.items():
            assert n == 1 and d not in found, f"a message twice ({folder}, {found.get(d)})"
            found[d] = folder
    assert set(found) == {digest(m) for m in messages}, "a message lost or one added"
    return found


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> Path:
    """A model trained (textnb train) on the bundled sample: 150 spam, 150 ham."""
    path = tmp_path_factory.mktemp("imap-model") / "spam.model"
    result = CliRunner().invoke(main, ["train", "-q", "-m", str(path), str(CORPUS / "spam"),
                                       str(CORPUS / "ham")])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def model(trained, tmp_path) -> Path:
    """A copy of the trained model of the test's own: learning changes it, and the state file
    lives beside it."""
    path = tmp_path / "model" / "spam.model"
    path.parent.mkdir()
    shutil.copy(trained, path)
    return path


@pytest.fixture
def server():
    with Dovecot() as found:
        yield found


def account(server: Dovecot, model: Path, port: int | None = None) -> list[str]:
    """The options that point textnb imap at the test server and model."""
    return ["--host", "127.0.0.1", "--port", str(port or server.port), "--user", server.user,
            "--ca-file", str(server.cert), "-m", str(model)]


def imap(server: Dovecot, model: Path, command: str, *args: str, port: int | None = None,
         env: dict | None = None):
    """``textnb imap COMMAND`` with the test account, in process; the click Result."""
    env = {"TEXTNB_IMAP_PASSWORD": server.password, "XDG_CONFIG_HOME": str(model.parent),
           **(env or {})}
    return CliRunner().invoke(main, ["imap", command, *account(server, model, port), *args],
                              env=env)


def statuses(model: Path, messages: list[bytes]) -> list[str]:
    """Each message's status by the model, as textnb classify decides it."""
    from textnb import load_model
    return [str(s) for s in load_model(model).spam_status(messages)]
