import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textnb.mail.filter import HEADER_PREFIX, add_headers

H = [("X-TextNB-Class", "spam"), ("X-TextNB-Probability", "0.9990")]
NEW = b"X-TextNB-Class: spam\nX-TextNB-Probability: 0.9990\n"


def test_prefix():
    assert HEADER_PREFIX == "X-TextNB-"


def test_lf_message():
    msg = b"Subject: hi\nTo: a@example.com\n\nbody\n"
    assert add_headers(msg, H) == NEW + msg


def test_crlf_message_gets_crlf_lines():
    msg = b"Subject: hi\r\n folded\r\nTo: a@example.com\r\n\r\nbody\r\nmore\r\n"
    assert add_headers(msg, H) == NEW.replace(b"\n", b"\r\n") + msg


def test_eight_bit_body_and_malformed_mime_are_untouched():
    msg = (b"Subject: caf\xe9\nContent-Type: multipart/mixed; boundary=\"nowhere\n"
           b"Content-Transfer-Encoding: base64\n\n\xe9t\xe9 \x00\xff ==!!\n--wrong--\nX-TextNB-Class: ham\n")
    # The X-TextNB line in the body is body: kept.
    assert add_headers(msg, H) == NEW + msg


def test_leading_from_line():
    msg = b"From a@example.com  Thu Aug 22 13:17:22 2002\nSubject: hi\n\nbody\n"
    first, rest = msg.split(b"\n", 1)
    assert add_headers(msg, H) == first + b"\n" + NEW + rest


def test_existing_headers_are_replaced_with_their_continuation_lines():
    msg = (b"X-TextNB-Class: ham\r\n"
           b"Subject: hi\r\n"
           b"x-textnb-explain: one\r\n"
           b"\ttwo\r\n"
           b"  three\r\n"
           b"To: a@example.com\r\n"
           b" folded to\r\n"
           b"X-TextNB-Probability: 0.1\r\n"
           b"\r\n"
           b"X-TextNB-Class: body text\r\n")
    assert add_headers(msg, H) == (
        b"X-TextNB-Class: spam\r\nX-TextNB-Probability: 0.9990\r\n"
        b"Subject: hi\r\nTo: a@example.com\r\n folded to\r\n\r\nX-TextNB-Class: body text\r\n")


def test_idempotent():
    msg = b"From x Mon Jan  6 10:00:00 2003\nSubject: hi\n\nbody\n"
    once = add_headers(msg, H)
    assert add_headers(once, H) == once


def test_no_blank_line_and_no_body():
    assert add_headers(b"Subject: hi\nX-TextNB-Class: ham", H) == NEW + b"Subject: hi\n"
    assert add_headers(b"Subject: hi", H) == NEW + b"Subject: hi"


def test_empty_input():
    assert add_headers(b"", H) == NEW
    assert add_headers(b"", []) == b""


def test_no_header_block_gets_a_separating_blank_line():
    assert add_headers(b"just text\nmore\n", H) == NEW + b"\njust text\nmore\n"
    # An indented first line would otherwise continue the last new header.
    assert add_headers(b"  indented\r\n", H) == NEW.replace(b"\n", b"\r\n") + b"\r\n  indented\r\n"
    # An empty header block already has its blank line.
    assert add_headers(b"\nbody\n", H) == NEW + b"\nbody\n"


def test_values_are_made_one_line():
    out = add_headers(b"Subject: hi\n\n", [("X-TextNB-Explain", "a\r\nSubject: forged\rb\n")])
    assert out == b"X-TextNB-Explain: a Subject: forged b\nSubject: hi\n\n"


@pytest.mark.parametrize("name", ["Subject", "X-TextNB-", "X-TextNB-A B", "X-TextNB-A:", "X-TextNB-\n"])
def test_bad_names_raise(name):
    with pytest.raises(ValueError):
        add_headers(b"", [(name, "v")])


_NAMES = st.from_regex(rb"\A[A-WYZa-wyz][!-9;-~]{0,15}\Z")  # not starting with X: never ours
_VALUES = st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))


@st.composite
def messages(draw):
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    from_line = draw(st.sampled_from([b"", b"From a@example.com Mon Jan  6 10:00:00 2003" + eol]))
    fields = draw(st.lists(st.tuples(_NAMES, _VALUES, st.booleans()), max_size=8))
    header = b"".join(name + b": " + value + eol + (b"\t" + value + eol if folded else b"")
                      for name, value, folded in fields)
    body = draw(st.binary(max_size=300))
    return eol, from_line, from_line + header + eol + body


@settings(max_examples=300, deadline=None)
@given(messages(), st.lists(st.tuples(st.sampled_from(["X-TextNB-Class", "X-TextNB-Score"]),
                                      st.text(max_size=20)), max_size=3))
def test_only_the_new_lines_are_added(message, headers):
    eol, from_line, msg = message
    out = add_headers(msg, headers)
    added = b"".join(f"{n}: {' '.join(v.split())}".encode() + eol for n, v in headers)
    assert out == from_line + added + msg[len(from_line):]
    assert add_headers(out, headers) == out


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=500).filter(lambda raw: b"x-textnb-" not in raw.lower()))
def test_any_bytes_only_gain_the_new_lines(raw):
    # Lines end as the first line break does: CRLF, LF, or a CR alone (then lines end at CR).
    first = re.search(rb"\r\n|\r|\n", raw)
    eol = first[0] if first else b"\n"
    sep = b"\r" if eol == b"\r" else b"\n"
    start = raw.index(sep) + 1 if raw.startswith(b"From ") and sep in raw else 0
    block = NEW.replace(b"\n", eol)
    out = add_headers(raw, H)
    assert out[:start] == raw[:start] and out[start:start + len(block)] == block
    assert out[start + len(block):] in (raw[start:], eol + raw[start:])


def test_cr_only_messages_keep_their_line_ends_and_lose_forged_fields():
    # Old Mac mail: CR alone ends each line. A forged X-TextNB-Status must go, and the new
    # lines end with CR as the message's do.
    raw = b"From: a@example.com\rX-TextNB-Status: No\r\tfolded\rSubject: hi\r\rbody\r"
    out = add_headers(raw, [("X-TextNB-Status", "Yes")])
    assert out == b"X-TextNB-Status: Yes\rFrom: a@example.com\rSubject: hi\r\rbody\r"
