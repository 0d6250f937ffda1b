"""Hostile input (issue #10): linear time on adversarial messages, the same Document from the
same bytes on every path, NUL and CR bytes, 100,000 files, and a fuzz of parser and tokenizer."""


import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textnb import TextClassifier
from textnb.documents.message import read_bytes
from textnb.documents.sources import read_documents
from textnb.documents.sources import read_raw
from textnb.mail.filter import add_headers, filter_message
from textnb.text.tokens import MAX_TOKEN_LENGTH, Tokenizer

ROOT = Path(__file__).resolve().parents[1]
import bench.hostile as bench  # noqa: E402

# Timer noise on a shared machine (a 1 MB run of a 5 ms family measured 19x): a family faster
# than this at 100 kB is compared with it.
FLOOR = 0.01
# Before issue #10 the slowest families took an hour or more at 1 MB; the run is cut here.
TIMEOUT = 120

_TIME_ALL = """
import json
import bench.hostile as b
for name in b.FAMILIES:
    small = b.time_family(name, b.KB, repeat=3)
    large = b.time_family(name, b.MB, repeat=2)
    print(json.dumps([name, small, large]), flush=True)
"""


@pytest.fixture(scope="module")
def family_times():
    """{family: (seconds at 100 kB, seconds at 1 MB)}, measured in one child process that is
    killed after TIMEOUT seconds (a quadratic family would run for hours)."""
    try:
        done = subprocess.run([sys.executable, "-c", _TIME_ALL],
                              capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
        output, error = done.stdout, done.stderr
    except subprocess.TimeoutExpired as timeout:
        output, error = timeout.stdout or "", f"timed out after {TIMEOUT} s"
        output = output.decode() if isinstance(output, bytes) else output
    times = {}
    for line in output.splitlines():
        name, small, large = json.loads(line)
        times[name] = (small, large)
    return times, error


@pytest.mark.parametrize("family", list(bench.FAMILIES))
def test_adversarial_family_is_linear(family, family_times):
    times, error = family_times
    assert family in times, f"{family} did not finish: {error[-500:]}"
    small, large = times[family]
    if large >= 20 * max(small, FLOOR):
        # Once more, best of more runs: another process on a 2-core machine can slow one
        # measurement; a quadratic family stays quadratic (it took under TIMEOUT seconds above).
        small = bench.time_family(family, bench.KB, repeat=5)
        large = bench.time_family(family, bench.MB, repeat=3)
    # Linear is 10x; the bar of issue #10 is 20x. Absolute: "well under 1 s" is the goal, 3 s
    # leaves room for a loaded CI machine.
    assert large < 20 * max(small, FLOOR), f"{family}: {small:.4f} s at 100 kB, {large:.4f} s at 1 MB"
    assert large < 3.0


@pytest.mark.parametrize("family", list(bench.FAMILIES))
def test_adversarial_family_under_the_header_limit_is_linear(family):
    """The families at 6 and 60 kB: under the 64 kB a header block may hold, so their header
    constructs are read as mail's (at 100 kB and 1 MB they are text). A Subject of "=?a?q?x"
    repeated took the email package's pattern quadratic time here: 60 kB, 2.2 s."""
    small, large = bench.time_family(family, 6_000), bench.time_family(family, 60_000)
    assert large < 20 * max(small, FLOOR), f"{family}: {small:.4f} s at 6 kB, {large:.4f} s at 60 kB"


# -- the same bytes, the same Document --------------------------------------------------------

MESSAGE = (b"From: Pill Shop <shop@spam.example>\nSubject: cheap pills now\n"
           b"Content-Type: text/plain; charset=us-ascii\n\n"
           b"Buy cheap pills today!!! Visit www.spam.example for $50 off.\nLast line\n")


def _variants(raw: bytes) -> dict[str, bytes]:
    return {
        "lf": raw,
        "nul leading, inner, trailing": b"\0" + raw.replace(b"pills", b"pi\0lls", 1)
                                          .replace(b"\n\n", b"\n\0\n") + b"\0\0",
        "nul in every line": raw.replace(b"\n", b"\0\n"),
        "cr only": raw.replace(b"\n", b"\r"),
        "crlf": raw.replace(b"\n", b"\r\n"),
        "cr only with nul": b"\0" + raw.replace(b"\n", b"\r") + b"\0",
    }


@pytest.fixture(scope="module")
def spam_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.model"
    from textnb import save_model
    clf = TextClassifier(stop_words="none").fit(
        [MESSAGE, b"Subject: lunch\n\nmeeting at noon about the report\n", "cheap pills offer",
         "quarterly report meeting notes"], ["spam", "ham", "spam", "ham"])
    save_model(clf, path)
    return clf, path


@pytest.mark.parametrize("name, raw", list(_variants(MESSAGE).items()))
def test_nul_and_cr_give_the_same_document_on_every_path(name, raw, tmp_path, spam_model):
    clf, model = spam_model
    expected = read_bytes(MESSAGE, "m")
    assert expected.fields[:2] == (("from", "Pill Shop <shop@spam.example>"),
                                   ("subject", "cheap pills now"))
    # classify, train, learn: read_raw then read_bytes (in TextClassifier's workers).
    (tmp_path / "m").write_bytes(raw)
    (source, got), = read_raw([str(tmp_path / "m")])
    assert got == raw
    assert read_bytes(got, "m") == expected
    assert list(read_documents([str(tmp_path / "m")])) == [expected._replace(source=str(tmp_path / "m"))]
    # The Python API with bytes.
    assert clf.tokenize([raw]) == clf.tokenize([MESSAGE])
    assert (clf.predict_log_proba([raw]) == clf.predict_log_proba([MESSAGE])).all()
    # filter: the same headers as for the LF message, added to these bytes.
    lines = filter_message(MESSAGE, model).decode().split("\n")
    headers = [tuple(line.split(": ", 1)) for line in lines if line.startswith("X-TextNB-")]
    assert [name for name, _ in headers] == ["X-TextNB-Class", "X-TextNB-Status",
                                             "X-TextNB-Spam-Probability", "X-TextNB-Spam-Log-Odds"]
    assert filter_message(raw, model) == add_headers(raw, headers)


def test_classify_exit_code_answers_a_message_starting_with_nul(tmp_path, spam_model):
    from click.testing import CliRunner
    from textnb.cli.app import main
    _, model = spam_model
    codes = {}
    for name, raw in _variants(MESSAGE).items():
        (tmp_path / "m").write_bytes(raw)
        result = CliRunner().invoke(main, ["classify", "-m", str(model), "--exit-code", str(tmp_path / "m")])
        codes[name] = result.exit_code
    assert set(codes.values()) == {codes["lf"]} and codes["lf"] != 3, codes


# -- many files -------------------------------------------------------------------------------

def _maps() -> int:
    with open("/proc/self/maps") as maps:
        return sum(1 for _ in maps)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc/self/maps")
def test_100000_small_files_are_read_and_trained_with_bounded_maps(tmp_path):
    """Each file read with a 1 MB buffer kept one memory map (5,000 files: 5,000 more maps):
    100,000 passed the kernel's 65,530 (vm.max_map_count) and training failed."""
    n = 100_000
    if os.access("/dev/shm", os.W_OK):  # tmpfs: creating 100,000 files on disk took 7-40 s
        tmp_path = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="textnb-test-"))
    try:
        for d in range(10):
            folder = tmp_path / ("spam" if d % 2 else "ham") / str(d)
            folder.mkdir(parents=True)
            for i in range(n // 10):
                fd = os.open(folder / str(i), os.O_WRONLY | os.O_CREAT, 0o644)
                os.write(fd, b"Subject: s%d\n\nword%d %s\n" % (i, i % 97, folder.parent.name.encode()))
                os.close(fd)
        before = _maps()
        read = list(read_raw([str(tmp_path / "ham"), str(tmp_path / "spam")]))
        assert len(read) == n and read[0][1] == b"Subject: s0\n\nword0 ham\n"
        assert _maps() - before < 1000
        labels = ["ham"] * (n // 2) + ["spam"] * (n // 2)
        clf = TextClassifier(n_jobs=1, stop_words="none").fit([raw for _, raw in read], labels)
        assert clf.predict([b"Subject: x\n\nword3 spam\n"])[0] == "spam"
        assert _maps() - before < 1000
    finally:  # 100,000 files are 400 MB of disk blocks: not left for pytest's rotation
        shutil.rmtree(tmp_path, ignore_errors=True)


# -- fuzz ---------------------------------------------------------------------------------------

_TOKENIZER = Tokenizer()

_PIECES = st.sampled_from([
    b"From: a@example.com\n", b"Subject: =?utf-8?q?caf=C3=A9?= win\n", b"To: <b@x>,\n c@y\n",
    b"Content-Type: multipart/mixed; boundary=b\n", b"Content-Type: text/html; charset=x-bad\n",
    b"Content-Type: message/rfc822\n", b"Content-Transfer-Encoding: base64\n",
    b"Content-Transfer-Encoding: quoted-printable\n", b"Content-Type: text/plain" + b" " * 50 + b"\n",
    b"\n", b"--b\n", b"--b--\n", b"QUJD\n", b"=E9=\n", b"<html><!-- x", b"-->", b"<a href='http://[x'>",
    b"<a href=\"http://h.example/\">l</a>", b"<script>", b"&amp;&#x", b"begin 644 f\n", b"end\n",
    b"\0", b"\r", b"\r\n", b"\xff\xfe", b"\xe9", b"From x Mon Jan  6 10:00:00 2003\n", b"a'b'c.d,1 ",
    b"!!!! $1,000.00 ", b"X-TextNB-Class: ham\n",
])


def _check(raw: bytes) -> None:
    document = read_bytes(raw)
    assert isinstance(document.text, str)
    assert all(isinstance(n, str) and isinstance(v, str) for n, v in document.fields)
    tokens = _TOKENIZER.document(document.text, document.fields)
    assert all(0 < len(t.partition(":")[2] or t) <= MAX_TOKEN_LENGTH for t in tokens)
    assert read_bytes(raw) == document  # deterministic
    if not raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 text keeps its bytes
        # NULs are no text, and CR-only line ends are line ends.
        assert read_bytes(raw.replace(b"\n", b"\0\n\0")) == document
        if b"\r" not in raw:
            assert read_bytes(raw.replace(b"\n", b"\r")) == document


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_fuzz_random_bytes(raw):
    _check(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=60))
def test_fuzz_mail_like_structures(pieces):
    _check(b"".join(pieces))
