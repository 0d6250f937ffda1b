"""textnb.quick: filter and classify --exit-code without click or numpy, as the full commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from textnb import TextClassifier, save_model
from textnb.decision import Exit

def test_quick_options_take_the_usual_ones_and_leave_the_rest_to_click(monkeypatch):
    from textnb.quick import options
    monkeypatch.setenv("TEXTNB_MODEL", "/m/default.model")
    assert options([]) == ({"model": Path("/m/default.model")}, [])
    assert options(["-m", "a.model", "--spam-class=junk", "--spam-cutoff", "0.9",
                    "--ham-cutoff=0.1", "-"]) == (
        {"model": "a.model", "spam_class": "junk", "spam_cutoff": 0.9, "ham_cutoff": 0.1}, ["-"])
    assert options(["--model", "a", "extra"]) == ({"model": "a"}, ["extra"])
    for args in (["--help"], ["-m"], ["-m=a"], ["--spam-cutoff", "1.5"], ["--spam-cutoff", "x"],
                 ["--ham-cutoff", "0.9", "--spam-cutoff", "0.5"], ["--format", "json"],
                 ["--spam-cutoff", "nan"]):
        assert options(args) is None, args


def _run_filter(args, raw, **env):
    import subprocess
    return subprocess.run([sys.executable, "-m", "textnb", "filter", *args], input=raw,
                          capture_output=True, env={**os.environ, **env})


def test_quick_filter_gives_what_the_full_command_gives(tmp_path):
    from click.testing import CliRunner
    from textnb import TextClassifier, save_model
    from textnb.cli import main
    model = tmp_path / "m.model"
    save_model(TextClassifier().fit(["cheap pills now", "win money", "meeting at noon",
                                     "lunch notes"], ["spam", "spam", "ham", "ham"]), model)
    raw = b"From: a@b.c\nSubject: cheap pills\n\nwin cheap money\n"
    quick = _run_filter(["-m", str(model)], raw)
    full = CliRunner().invoke(main, ["filter", "-m", str(model)], input=raw)
    assert quick.returncode == 0 and quick.stderr == b""
    assert quick.stdout == full.stdout_bytes
    assert quick.stdout.startswith(b"X-TextNB-Class: spam\nX-TextNB-Status: ")
    assert quick.stdout.endswith(raw)


def test_quick_filter_failures_still_deliver_the_message_unchanged(tmp_path):
    raw = b"Subject: hello\n\nbody \xff\n"
    broken = tmp_path / "broken.model"
    broken.write_bytes(b"PK\x03\x04 not really")
    for args in (["-m", str(broken)], ["-m", str(tmp_path / "none.model")],
                 ["-m", str(broken), "--bogus"], ["--spam-cutoff", "2"]):
        done = _run_filter(args, raw, TEXTNB_MODEL=str(broken))
        assert done.returncode == 0, args
        assert done.stdout == raw, args
        assert b"passed through unchanged" in done.stderr, args


@pytest.fixture
def spam_model(tmp_path):
    model = tmp_path / "m.model"
    save_model(TextClassifier().fit(["cheap pills now", "win money", "meeting at noon",
                                     "lunch notes"], ["spam", "spam", "ham", "ham"]), model)
    return model


def _run(args, raw=b"", **env):
    return subprocess.run([sys.executable, "-m", "textnb", *args], input=raw,
                          capture_output=True, env={**os.environ, **env})


@pytest.mark.parametrize("raw, cutoffs, code", [
    (b"Subject: cheap pills\n\nwin cheap money\n", [], Exit.SPAM),
    (b"Subject: lunch\n\nmeeting notes at noon\n", [], Exit.HAM),
    (b"Subject: x\n\nzebra\n", ["--ham-cutoff", "0", "--spam-cutoff=1"], Exit.UNSURE),
    (b"Subject: x\n\nzebra\n", ["--threshold", "0"], Exit.SPAM)])
def test_quick_classify_exit_code_gives_what_the_full_command_gives(spam_model, tmp_path, raw,
                                                                   cutoffs, code):
    from click.testing import CliRunner
    from textnb.cli import main
    (tmp_path / "msg.eml").write_bytes(raw)
    for target in ("-", str(tmp_path / "msg.eml")):
        args = ["classify", "--exit-code", "-m", str(spam_model), *cutoffs, target]
        quick = _run(args, raw)
        full = CliRunner().invoke(main, args, input=raw)
        assert quick.returncode == full.exit_code == code
        assert quick.stdout == full.stdout_bytes and quick.stderr == b""


def test_quick_classify_leaves_the_unusual_to_the_full_command(spam_model, tmp_path):
    three = tmp_path / "three.model"
    save_model(TextClassifier().fit(["a b", "c d", "e f"], ["x", "y", "z"]), three)
    empty = _run(["classify", "--exit-code", "-m", str(spam_model), "-"], b"")
    assert empty.returncode == Exit.ERROR and empty.stderr.count(b"\n") == 2  # skipped + error
    no_spam = _run(["classify", "--exit-code", "-m", str(three)], b"a b")
    assert no_spam.returncode == Exit.ERROR and b"--spam-class" in no_spam.stderr
    json = _run(["classify", "--exit-code", "--format", "json", "-m", str(spam_model)], b"cheap")
    assert json.returncode in (0, 1, 2) and json.stdout.startswith(b'{"source": "-"')
