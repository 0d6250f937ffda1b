"""Real delivery: procmail runs the README's recipes on corpus messages (skipped without procmail)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from textnb.cli import main
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "spamassassin"
MESSAGES = {"spam": ROOT / "corpora" / "messages" / "spam.eml",
            "ham": ROOT / "corpora" / "messages" / "ham.eml"}

pytestmark = pytest.mark.skipif(shutil.which("procmail") is None,
                                reason="procmail is not installed (Debian package procmail)")


def textnb() -> str:
    script = Path(sys.executable).with_name("textnb")
    return str(script) if script.exists() else f"{sys.executable} -m textnb"


FILTER_RECIPE = """\
:0fw
| {textnb} filter -m {model} --spam-cutoff 0.9

:0
* ^X-TextNB-Status: Yes
spam/
"""

# The README's recipes, with the spam cutoff a model of the 300-message sample needs (the
# default, 0.99, was chosen by cross-validation on the full corpus; see tests/test_cli.py).
EXIT_CODE_RECIPE = """\
:0
* ? {textnb} classify --exit-code -m {model} --spam-cutoff 0.9 -
spam/
"""


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("procmail") / "spam.model"
    result = CliRunner().invoke(main, ["train", "-q", "-m", str(path), str(CORPUS / "spam"),
                                       str(CORPUS / "ham")])
    assert result.exit_code == 0, result.output
    return path


def deliver(tmp_path: Path, recipe: str, model: Path, message: Path) -> dict[str, list[bytes]]:
    """Run procmail on ``message`` with ``recipe``; return the bytes delivered per folder."""
    mail = tmp_path / "mail"
    mail.mkdir()
    rc = tmp_path / "procmailrc"
    rc.write_text(f"SHELL=/bin/sh\nMAILDIR={mail}\nDEFAULT={mail}/inbox/\nLOGFILE={tmp_path}/log\n"
                  + recipe.format(textnb=textnb(), model=model))
    with open(message, "rb") as stdin:
        done = subprocess.run(["procmail", "-m", str(rc)], stdin=stdin, capture_output=True,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    return {folder: [f.read_bytes() for f in sorted((mail / folder / "new").glob("*"))]
            for folder in ("spam", "inbox") if (mail / folder / "new").is_dir()}


def original_without_from_line(message: Path) -> bytes:
    # procmail drops the mbox "From " line when it delivers into a Maildir.
    raw = message.read_bytes()
    return raw.split(b"\n", 1)[1] if raw.startswith(b"From ") else raw


def strip_added(delivered: bytes) -> tuple[bytes, list[bytes]]:
    lines = delivered.splitlines(keepends=True)
    added = [line for line in lines if line.startswith(b"X-TextNB-")]
    assert lines[:len(added)] == added, "the headers are added at the top"
    return b"".join(lines[len(added):]), added


@pytest.mark.parametrize("kind, folder", [("spam", "spam"), ("ham", "inbox")])
def test_filter_recipe_files_spam_and_keeps_every_byte(tmp_path, model, kind, folder):
    delivered = deliver(tmp_path, FILTER_RECIPE, model, MESSAGES[kind])
    assert list(delivered) == [folder] and len(delivered[folder]) == 1
    body, added = strip_added(delivered[folder][0])
    assert body == original_without_from_line(MESSAGES[kind])
    status = {"spam": b"Yes", "ham": b"No"}[kind]
    assert f"X-TextNB-Status: {status.decode()}\n".encode() in added
    assert any(line.startswith(b"X-TextNB-Log-Odds: ") for line in added)


def test_filter_recipe_without_a_model_delivers_the_message_unchanged(tmp_path):
    delivered = deliver(tmp_path, FILTER_RECIPE, tmp_path / "no-such.model", MESSAGES["spam"])
    assert delivered == {"inbox": [original_without_from_line(MESSAGES["spam"])]}
    assert b"passed through unchanged" in (tmp_path / "log").read_bytes()


@pytest.mark.parametrize("kind, folder", [("spam", "spam"), ("ham", "inbox")])
def test_exit_code_recipe(tmp_path, model, kind, folder):
    delivered = deliver(tmp_path, EXIT_CODE_RECIPE, model, MESSAGES[kind])
    assert delivered == {folder: [original_without_from_line(MESSAGES[kind])]}
