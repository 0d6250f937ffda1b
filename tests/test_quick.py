"""textnb.cli.fast: filter and classify --exit-code without click or numpy, as the full commands."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import textnb.documents.html
import textnb.documents.message
from textnb import TextClassifier, save_model
from textnb.decision.rules import Exit

def test_quick_options_take_the_usual_ones_and_leave_the_rest_to_click(monkeypatch):
    from textnb.cli.fast import options
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
    from textnb.cli.app import main
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
    from textnb.cli.app import main
    (tmp_path / "msg.eml").write_bytes(raw)
    for target in ("-", str(tmp_path / "msg.eml")):
        args = ["classify", "--exit-code", "-m", str(spam_model), *cutoffs, target]
        quick = _run(args, raw)
        full = CliRunner().invoke(main, args, input=raw)
        assert quick.returncode == full.exit_code == code
        assert quick.stdout == full.stdout_bytes and quick.stderr == b""


def test_quick_classify_leaves_the_unusual_to_the_full_command(spam_model, tmp_path):
    three = tmp_path / "three.model"
    save_model(TextClassifier().fit(["aa bb", "cc dd", "ee ff"], ["x", "y", "z"]), three)
    empty = _run(["classify", "--exit-code", "-m", str(spam_model), "-"], b"")
    assert empty.returncode == Exit.ERROR and empty.stderr.count(b"\n") == 2  # skipped + error
    no_spam = _run(["classify", "--exit-code", "-m", str(three)], b"a b")
    assert no_spam.returncode == Exit.ERROR and b"--spam-class" in no_spam.stderr
    json = _run(["classify", "--exit-code", "--format", "json", "-m", str(spam_model)], b"cheap")
    assert json.returncode in (0, 1, 2) and json.stdout.startswith(b'{"source": "-"')


# -- the wall-clock budget ------------------------------------------------------------------------

RAW = b"Subject: cheap pills\n\nwin cheap money\n"


def _slow(*args, **kwargs):
    time.sleep(30)  # interrupted by the budget's SIGALRM


def _quick(monkeypatch, args, raw=RAW):
    """quick.run in this process on ``raw``: (exit code, stdout bytes, stderr text)."""
    from textnb.cli import fast as quick
    stdout, stderr = io.BytesIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(stdout))
    monkeypatch.setattr(sys, "stderr", stderr)
    code = quick.run(args)
    sys.stdout.flush()
    return code, stdout.getvalue(), stderr.getvalue()


def test_quick_filter_passes_a_message_through_when_its_time_runs_out(spam_model, monkeypatch):
    import textnb.mail.filter
    monkeypatch.setattr(textnb.mail.filter, "filter_message", _slow)
    start = time.monotonic()
    code, out, err = _quick(monkeypatch, ["filter", "-m", str(spam_model), "--timeout", "0.3"])
    assert time.monotonic() - start < 5
    assert (code, out, err) == (0, RAW, "textnb filter: message passed through unchanged: "
                                        "timed out after 0.3 s\n")


def test_quick_classify_times_out_with_one_error_line(spam_model, monkeypatch):
    import textnb.store.scorer
    monkeypatch.setattr(textnb.store.scorer, "score", _slow)
    code, out, err = _quick(monkeypatch, ["classify", "--exit-code", "--timeout=0.25",
                                          "-m", str(spam_model), "-"])
    assert (code, out, err) == (Exit.ERROR, b"", "Error: timed out after 0.25 s\n")


def test_full_filter_and_classify_time_out(spam_model, monkeypatch):
    from click.testing import CliRunner
    import textnb.cli.app
    import textnb.cli.classify
    monkeypatch.setattr(textnb.cli.classify, "filter_message", _slow)
    monkeypatch.setattr(textnb.cli.classify, "load_classifier", _slow)
    runner = CliRunner()
    filtered = runner.invoke(textnb.cli.app.main, ["filter", "--timeout", "0.2"], input=RAW)
    assert (filtered.exit_code, filtered.stdout_bytes, filtered.stderr) == (
        0, RAW, "textnb filter: message passed through unchanged: timed out after 0.2 s\n")
    for exit_code, code in (([], 1), (["--exit-code"], Exit.ERROR)):
        classified = runner.invoke(textnb.cli.app.main, ["classify", *exit_code, "--timeout", "0.2",
                                                     "-"], input=RAW)
        assert (classified.exit_code, classified.stdout, classified.stderr) == (
            code, "", "Error: timed out after 0.2 s\n")


def test_filter_has_a_budget_by_default_and_classify_none(spam_model, monkeypatch):
    from click.testing import CliRunner
    from textnb.cli import fast as quick
    from textnb.cli.app import main
    asked = []
    original = quick.signal.setitimer
    monkeypatch.setattr(quick.signal, "setitimer", lambda which, seconds, *rest: (
        asked.append(seconds), original(which, seconds, *rest))[1])
    assert CliRunner().invoke(main, ["filter", "-m", str(spam_model)], input=RAW).exit_code == 0
    assert asked[0] == pytest.approx(quick.FILTER_TIMEOUT, abs=0.1) and asked[-1] == 0
    assert quick.FILTER_TIMEOUT == 10
    asked.clear()
    assert CliRunner().invoke(main, ["classify", "-m", str(spam_model)], input=RAW).exit_code == 0
    assert asked == []


def test_a_command_handed_over_keeps_what_is_left_of_its_budget():
    from textnb.errors import TimedOut
    from textnb.cli.fast import budget, hand_over
    hand_over(time.monotonic() + 0.2)
    start = time.monotonic()
    with pytest.raises(TimedOut, match="timed out after 30 s"):
        with budget(30):
            time.sleep(10)
    assert time.monotonic() - start < 3
    with budget(30) as deadline:   # handed over once only
        assert deadline > time.monotonic() + 25


def test_a_slow_message_is_passed_through_by_the_installed_command(tmp_path):
    """End to end, a really slow step: the word 10-grams of a 400 KB message of distinct words
    take most of a second here, a dozen times the budget (a repeated word's grams are quicker)."""
    model = tmp_path / "ngrams.model"
    save_model(TextClassifier(ngram_range=(1, 10)).fit(
        ["cheap pills now", "win money", "meeting at noon", "lunch notes"],
        ["spam", "spam", "ham", "ham"]), model)
    raw = b"Subject: long\n\n" + b" ".join(b"w%d" % i for i in range(60_000)) + b"\n"
    for args in (["filter"], ["filter", "--spam-class", "spam"]):
        start = time.monotonic()
        done = _run([*args, "-m", str(model), "--timeout", "0.05"], raw)
        assert done.returncode == 0 and done.stdout == raw
        assert done.stderr == b"textnb filter: message passed through unchanged: timed out after 0.05 s\n"
        assert time.monotonic() - start < 10


# -- errors ---------------------------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_on_stdout_is_one_line_and_filter_exits_75(spam_model):
    for args, code, message in (
            (["filter"], 75, b"textnb filter: cannot write the message: No space left on device\n"),
            (["filter", "--bogus"], 75, None),
            (["classify", "--exit-code", "-"], Exit.ERROR,
             b"Error: cannot write the result: No space left on device\n"),
            (["classify", "--format", "tsv", "-"], 1,
             b"Error: cannot write to standard output: No space left on device\n")):
        with open("/dev/full", "wb") as full:
            done = subprocess.run([sys.executable, "-m", "textnb", *args, "-m", str(spam_model)],
                                  input=RAW, stdout=full, stderr=subprocess.PIPE)
        assert done.returncode == code, (args, done.stderr)
        assert b"Traceback" not in done.stderr and done.stderr.endswith(
            b"textnb filter: cannot write the message: No space left on device\n"
            if message is None else message), (args, done.stderr)


@pytest.mark.parametrize("error, reason", [(RecursionError, "too deeply nested"),
                                           (MemoryError, "out of memory")])
def test_recursion_and_memory_errors_get_their_own_message(spam_model, monkeypatch, error, reason):
    from click.testing import CliRunner
    import textnb.cli.app
    import textnb.cli.classify

    def fail(*args, **kwargs):
        raise error()

    monkeypatch.setattr(textnb.cli.classify, "filter_message", fail)
    monkeypatch.setattr(textnb.cli.classify, "load_classifier", fail)
    runner = CliRunner()
    filtered = runner.invoke(textnb.cli.app.main, ["filter", "-m", str(spam_model)], input=RAW)
    assert (filtered.exit_code, filtered.stdout_bytes) == (0, RAW)
    assert filtered.stderr == f"textnb filter: message passed through unchanged: " \
                              f"{'message ' if error is RecursionError else ''}{reason}\n"
    classified = runner.invoke(textnb.cli.app.main, ["classify", "--exit-code", "-m", str(spam_model),
                                                 "-"], input=RAW)
    assert classified.exit_code == Exit.ERROR
    assert classified.stderr == f"Error: {'input ' if error is RecursionError else ''}{reason}\n"


# -- a message of any size: its first MiB classified, its rest copied through --------------------

def _spam_model(tmp_path: Path) -> Path:
    model = tmp_path / "m.model"
    save_model(TextClassifier().fit(["cheap pills now", "win money", "meeting at noon",
                                     "lunch notes"], ["spam", "spam", "ham", "ham"]), model)
    return model


def _large(body_mib: int, eol: bytes = b"\n") -> bytes:
    """A message with a forged X-TextNB field and a body of ``body_mib`` MiB of base64 lines."""
    head = eol.join([b"From: a@b.c", b"X-TextNB-Status: No", b"Subject: cheap pills", b"",
                     b"win cheap money", b""])
    line = b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAx" + eol
    return head + line * (body_mib * 2 ** 20 // len(line))


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_a_large_message_is_tagged_and_passed_through_whole(tmp_path, eol):
    """Beyond its first MiB a message is copied through as read: every byte delivered, the
    headers those of its first MiB (what every command classifies), the forged field gone,
    on the quick path and the full command alike."""
    from click.testing import CliRunner
    from textnb.cli.app import main
    model = _spam_model(tmp_path)
    raw = _large(5, eol)
    quick = _run_filter(["-m", str(model)], raw)
    assert quick.returncode == 0 and quick.stderr == b""
    added, _, rest = quick.stdout.partition(b"From: a@b.c" + eol)
    assert [line.split(b":")[0] for line in added.split(eol)[:-1]] == [
        b"X-TextNB-Class", b"X-TextNB-Status", b"X-TextNB-Spam-Probability",
        b"X-TextNB-Spam-Log-Odds"]
    assert b"From: a@b.c" + eol + rest == raw.replace(b"X-TextNB-Status: No" + eol, b"")
    small = _run_filter(["-m", str(model)], raw[:raw.index(b"win cheap money") + 16])
    assert added == small.stdout.partition(b"From: a@b.c" + eol)[0]
    full = CliRunner().invoke(main, ["filter", "-m", str(model)], input=raw)
    assert full.exit_code == 0 and full.stdout_bytes == quick.stdout


def test_the_filter_writes_before_the_message_has_all_come(tmp_path):
    """It holds a message's first MiB, not the message: the tagged head and more are out while
    the rest is still to be sent (a filter that read it all first would wait for its end)."""
    import threading
    model = _spam_model(tmp_path)
    raw = _large(3)
    process = subprocess.Popen([sys.executable, "-m", "textnb", "filter", "-m", str(model)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    out, arrived = bytearray(), threading.Condition()

    def drain() -> None:
        while chunk := process.stdout.read1(1 << 16):
            with arrived:
                out.extend(chunk)
                arrived.notify_all()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        process.stdin.write(raw[:2 * 2 ** 20])  # two MiB of three; stdin stays open
        process.stdin.flush()
        with arrived:
            assert arrived.wait_for(lambda: len(out) > 2 ** 20, timeout=60), bytes(out[:80])
        assert out.startswith(b"X-TextNB-Class: spam\n")
        process.stdin.write(raw[2 * 2 ** 20:])
        process.stdin.close()
        assert process.wait(60) == 0
        reader.join(60)
    finally:
        process.kill()
    assert bytes(out).endswith(raw.replace(b"X-TextNB-Status: No\n", b""))


def test_a_large_message_the_filter_cannot_tag_is_still_delivered_whole(tmp_path):
    """The fail-safe holds past the first MiB: no model (the quick path hands the message,
    head and unread rest, to the full command), a header block that does not end in the first
    MiB (a field cut there could be a forged X-TextNB one), a first MiB without a line end."""
    model = _spam_model(tmp_path)
    long_header = b"From: a@b.c\nX-Long: " + b"x" * (2 ** 20) + b"\n\nbody\n" + b"y\n" * 10 ** 6
    one_line = b"z" * (3 * 2 ** 20)
    for args, raw, reason in (
            (["-m", str(tmp_path / "none.model")], _large(3), b"does not exist"),
            (["-m", str(model)], long_header, b"its header block does not end in its first MiB"),
            (["-m", str(model)], one_line, b"its header block does not end in its first MiB")):
        done = _run_filter(args, raw)
        assert done.returncode == 0, done.stderr
        assert done.stdout == raw
        assert done.stderr.startswith(b"textnb filter: message passed through unchanged: ")
        assert reason in done.stderr


def test_add_headers_of_a_head_rewrites_only_a_header_block_that_ends_in_it():
    from textnb.mail.filter import add_headers
    ours = [("X-TextNB-Class", "spam")]
    raw = b"From: a\nX-TextNB-Status: No\n continued\nSubject: s\n\nbody line cut he"
    assert add_headers(raw, ours, whole=False) == add_headers(raw, ours)
    assert add_headers(raw, ours, whole=False) == b"X-TextNB-Class: spam\nFrom: a\nSubject: s\n\nbody line cut he"
    for cut in (b"From: a\nX-TextNB-Sta", b"From: a\nSubject: s\n", b"From: a\nSubject: s\n\r"):
        with pytest.raises(ValueError, match="header block does not end in its first MiB"):
            add_headers(cut, ours, whole=False)
    assert add_headers(b"From: a\r\n\r\nbody", ours, whole=False) == \
        b"X-TextNB-Class: spam\r\nFrom: a\r\n\r\nbody"

# What a fresh filter imports to answer a message, and no more (issue #47): its own modules,
# the C parts it scores with, and of the standard library beyond `import os` only math, json's C
# scanner and three built in (no regular expression engine, enum, functools or collections:
# with them a delivery cost 4.8 ms more, python -X importtime).
FILTER_MODULES = {
    "textnb", "textnb.__main__", "textnb._modelfile", "textnb._scores", "textnb._tokens",
    "textnb.cli", "textnb.cli.fast", "textnb.decision", "textnb.decision.rules", "textnb.decoding",
    "textnb.documents", "textnb.documents.envelope", "textnb.documents.message", "textnb.errors",
    "textnb.mail", "textnb.mail.filter", "textnb.store.scorer", "textnb.store",
    "textnb.store.plain", "textnb.store.verdict", "textnb.text", "textnb.text.tokens"}
FILTER_STDLIB = {"math", "_json", "__future__", "gc", "itertools"}
# An HTML message, with the links most are made of, and a text part with a "<" (no HTML sent
# as text): the same modules, and the HTML reader's.
HTML_MAIL = (b"From: a@example.com\nSubject: cheap pills\nMIME-Version: 1.0\n"
             b"Content-Type: multipart/alternative; boundary=\"b\"\n\n--b\n"
             b"Content-Type: text/plain; charset=us-ascii\n\nwin <cheap> money, a < b\n--b\n"
             b"Content-Type: text/html\n\n<html><body><p>win <a href=\"http://x.example/p\">cheap"
             b"</a> <a href='mailto:s@x.example'>money</a> <a href=\"#top\">&nbsp;now</a>"
             b"<img src=/i.gif></body></html>\n--b--\n")


@pytest.mark.parametrize("mail, extra", [
    (b"Received: from relay.example.com ([192.0.2.1]) by mx.example.org\n"
     b"Message-ID: <123.abc@example.com>\nSubject: cheap pills\n\nwin cheap money\n", set()),
    (HTML_MAIL, {"textnb.documents.html", "textnb._markup"})])
def test_the_filter_starts_without_what_it_need_not_import_or_compile(spam_model, monkeypatch,
                                                                      mail, extra):
    """What a delivery costs beyond Python's start and os: the modules above alone (no regular
    expression engine, enum, functools, collections, json module, signal, typing, contextlib,
    importlib, struct, zlib, email parser, html, urllib, numpy; the rules' schema, settings,
    container and journal only for a file without a verdict or with a journal). Run as the
    textnb script runs it, without site (-S), whose editable-install hooks import the engine
    themselves."""
    if textnb.documents.html._fast is None or textnb.documents.message._fast is None:
        pytest.skip("textnb's C parts are not built: their Python twins compile patterns")
    code = ("import sys; sys.argv = ['textnb', 'filter', '-m', "
            f"{str(spam_model)!r}]\nimport textnb.__main__ as script\n"
            "def end(code):\n    raise SystemExit(code)  # not os._exit: the modules are listed\n"
            "script._exit = end\ntry:\n    script.main()\n"
            "except SystemExit as done:\n    code = done.code\nsys.stdout.flush()\n"
            "print(code, *sorted(sys.modules), file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(Path(textnb.__file__).parent.parent)}
    floor = set(subprocess.run([sys.executable, "-S", "-c", "import sys, os; print(*sys.modules)"],
                               capture_output=True, text=True, check=True, env=env).stdout.split())
    from textnb.store.scorer import Scorer
    from textnb.store import verdict
    monkeypatch.setattr(verdict, "SETTLED", 0.0)
    Scorer(spam_model)  # checks the model and records its verdict, as a first delivery would
    runs = [subprocess.run([sys.executable, "-S", "-c", code], input=mail, capture_output=True,
                           check=True, env=env) for _ in range(2)]
    for done in runs:
        assert done.stdout.startswith(b"X-TextNB-") and done.stdout.endswith(mail)
    code, *loaded = runs[-1].stderr.decode().split()
    assert code == "0"
    assert {m for m in loaded if m.startswith("textnb")} == FILTER_MODULES | extra
    assert set(loaded) - floor - FILTER_MODULES - extra == FILTER_STDLIB


@pytest.mark.parametrize("args, raw, code", [
    (["filter"], RAW, 0), (["classify", "--exit-code", "-"], RAW, Exit.SPAM),
    (["classify", "--exit-code", "-"], b"Subject: lunch\n\nmeeting notes at noon\n", Exit.HAM)])
def test_a_quick_command_ends_without_the_interpreters_teardown(spam_model, args, raw, code):
    """Its output written and flushed, its exit code kept, and no teardown (atexit's handlers,
    freeing every module) after it: procmail waits for that at each delivery."""
    probe = ("import atexit, sys\natexit.register(lambda: sys.stderr.write('torn down'))\n"
             "from textnb.__main__ import main\nsys.argv[0] = 'textnb'\nmain()")
    done = subprocess.run([sys.executable, "-c", probe, *args, "-m", str(spam_model)], input=raw,
                          capture_output=True)
    assert (done.returncode, done.stderr) == (code, b"")
    if args == ["filter"]:
        assert done.stdout.startswith(b"X-TextNB-Class: spam\n") and done.stdout.endswith(raw)
    else:
        assert done.stdout.startswith(b"-  spam  " if code == Exit.SPAM else b"-  ham  ")
    full = subprocess.run([sys.executable, "-c", probe, "info", "-m", str(spam_model)],
                          capture_output=True)
    assert full.returncode == 0 and full.stderr == b"torn down"  # the full command line's end


def test_classify_exit_code_reads_stdin_without_the_regular_expression_engine(spam_model,
                                                                              monkeypatch):
    """classify --exit-code on a message on stdin, as procmail runs it: no re, enum or
    collections (an mbox separator's pattern is compiled only for a file starting "From ")."""
    from textnb.store.scorer import Scorer
    from textnb.store import verdict
    monkeypatch.setattr(verdict, "SETTLED", 0.0)
    Scorer(spam_model)  # the model's verdict recorded, as a first delivery would
    code = ("import sys; sys.argv = ['textnb', 'classify', '--exit-code', '-m', "
            f"{str(spam_model)!r}, '-']\nimport textnb.__main__ as script\n"
            "def end(code):\n    raise SystemExit(code)\nscript._exit = end\ntry:\n"
            "    script.main()\nexcept SystemExit as done:\n    code = done.code\n"
            "sys.stdout.flush()\n"
            "print(code, *sorted({'re', 'enum', 'collections', 'click'} & set(sys.modules)), "
            "file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(Path(textnb.__file__).parent.parent)}
    done = subprocess.run([sys.executable, "-S", "-c", code], input=RAW, capture_output=True,
                          env=env)
    assert done.stdout.startswith(b"-  spam  ")
    assert done.stderr.decode().split() == [str(Exit.SPAM)]
