import io
import mailbox
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textnb.documents import message, sources
from textnb.documents.message import Document, parse_message, read_bytes
from textnb.documents.sources import read_documents
from textnb.documents.sources import iter_files
from textnb.errors import DocumentError

DATA = Path(__file__).parent / "data" / "documents"


def read(*paths):
    """(documents, errors) of read_documents over paths."""
    errors = []
    docs = list(read_documents([str(p) for p in paths], on_error=lambda s, r: errors.append((s, r))))
    return docs, errors


def test_mime_message():
    # QP latin-1 part, base64 UTF-8 part, HTML part, PDF attachment, RFC 2047 headers, From_ line.
    path = str(DATA / "mime.eml")
    assert list(read_documents([path])) == [Document(
        source=path,
        text="Crème brûlée for a soft line break.\nFünf Euro – gratis!\nOffer\nClick here & win\ncheap",
        fields=(
            ("from", "René Dupont <rene@example.com>"),
            ("to", "you@example.org"),
            ("subject", "Grüße and café for you"),
            ("x-mailer", "Bulk Mailer 3.0"),
            ("content-type", "multipart/mixed"),
            # The envelope (textnb/headers.py): relays, domains, zone, Message-ID, encodings.
            ("return-path-domain", "example.com"), ("return-path-tld", "com"),
            ("ip", "192.0 192.0.2 192.0.2.1"),
            ("received", "mx.example.com mail.example.org example.com example.org"),
            ("date-zone", "+0100"),
            ("message-id-shape", "9"), ("message-id-domain", "example.com"),
            ("mime-version", "1.0"),
            ("attachment", "application/pdf invoice.pdf"),
            ("html", "html head title style script body p a b table tr td img"),
            ("url", "spam.example.com images.example.net"),
        ),
    )]


def test_hostile_message():
    # Bad base64 is kept as written, unknown charsets and 8-bit headers fall back to cp1252,
    # a nested message's text is read, "<![foo]>" (which html.parser rejects) is skipped.
    doc = read_bytes((DATA / "hostile.eml").read_bytes(), "h")
    assert doc == Document("h", "!!!not base64***\nnaïve résumé\ninner text", (
        ("from", "Björn <b@example.com>"),
        ("subject", "café au lait"),
        ("content-type", "multipart/mixed"),
        ("attachment", "application/octet-stream résumé.exe"),
        ("html", "p"),
    ))


def test_news_article_leaves_out_the_answer():
    doc = read_bytes((DATA / "news.txt").read_bytes(), "n")
    assert doc.text == ("In article <1993Apr1.123@example.edu> someone writes:\n"
                        ">Which library should I use?\n\nTry Mesa; it is free.")
    assert doc.fields == (
        ("from", "jdoe@cs.example.edu (John Doe)"),
        ("subject", "Re: Best 3D graphics library?"),
        ("organization", "Example University"),
        ("keywords", "OpenGL, rendering"),
    )


def test_multipart_without_its_boundary_is_read_as_text():
    doc = read_bytes((DATA / "missing-boundary.eml").read_bytes())
    assert "cheap pills" in doc.text.splitlines()
    assert ("content-type", "multipart/alternative") in doc.fields


def test_plain_text_files():
    docs, errors = read(DATA / "note.txt", DATA / "latin1.txt", DATA / "utf16.txt")
    assert errors == []
    # "Note:" looks like a header field but no mail field follows: plain text.
    assert [(d.text, d.fields) for d in docs] == [
        ("Note: this is plain text.\nSecond line.\n", ()),
        ("Déjà vu, naïve café\n", ()),
        ("Hello Wörld\n", ()),
    ]


@pytest.mark.parametrize("c", [True, False], ids=["C", "python"])
def test_a_line_that_begins_like_a_mail_field_is_text(c, monkeypatch):
    import textnb.documents.message
    if not c:
        monkeypatch.setattr(textnb.documents.message, "_fast", None)
    elif textnb.documents.message._fast is None:
        pytest.skip("textnb._tokens not built")
    # An SMS or a note whose one line begins "Date:" or "To:" is text: read as a header block
    # without a body it lost its words (Date's are no tokens, To's only prefixed ones).
    for line in (b"Date: tomorrow at 5? Let me know", b"To: all, meeting at 5\n",
                 b"From: mum. Call me when u get home", b"Subject: lunch at noon"):
        assert read_bytes(line) == Document("-", line.decode())
    # A header field and a blank line, or two fields, are a message as before.
    assert read_bytes(b"Subject: lunch\n\nat noon") == Document("-", "at noon", (("subject", "lunch"),))
    assert read_bytes(b"Subject: lunch\n\n") == Document("-", "", (("subject", "lunch"),))
    assert read_bytes(b"From: a@example.com\nSubject: lunch\n").fields == (
        ("from", "a@example.com"), ("subject", "lunch"))


def test_empty_and_missing_files_are_reported_binary_files_read():
    missing = DATA / "no-such-file"
    docs, errors = read(DATA / "empty.txt", DATA / "binary.bin", missing)
    assert errors == [(str(DATA / "empty.txt"), "empty file"),
                      (str(missing), "no such file or directory")]
    # A binary file is a document of what its bytes decode to, NULs dropped (issue #10).
    raw = (DATA / "binary.bin").read_bytes()
    assert b"\0" in raw[:16] and docs == [read_bytes(raw, str(DATA / "binary.bin"))]
    assert docs[0].text.startswith("‰PNG\n\x1a\n\nIHDR\x01\x02") and "\0" not in docs[0].text
    with pytest.raises(DocumentError, match="empty.txt: empty file"):
        list(read_documents([str(DATA / "empty.txt")]))


def test_mail_with_nul_bytes_is_mail(tmp_path):
    (tmp_path / "m").write_bytes(b"\0From: a@example.com\nSubject: n\0ul\n\nbody \x00 here\n\0")
    docs, errors = read(tmp_path / "m")
    assert errors == [] and docs == [Document(str(tmp_path / "m"), "body  here", (
        ("from", "a@example.com"), ("subject", "nul")))]


def test_cr_and_crlf_line_ends_read_as_lf():
    lf = b"Subject: mac\nFrom: a@example.com\n\nline one\nline two\n"
    for raw in (lf.replace(b"\n", b"\r"), lf.replace(b"\n", b"\r\n")):
        assert read_bytes(raw) == parse_message(raw) == read_bytes(lf)
    assert read_bytes(b"plain\rtext\r") == Document("-", "plain\ntext\n")


def test_mbox_yields_each_message():
    path = str(DATA / "three.mbox")
    docs = list(read_documents([path]))
    assert [(d.source, d.text, d.fields) for d in docs] == [
        (f"{path}:1", "first body", (("from", "alice@example.com"), ("subject", "one"))),
        (f"{path}:2", ">From the desk of Bob\nsecond body",
         (("from", "bob@example.com"), ("subject", "two"))),
        (f"{path}:3", "third body", (("from", "carol@example.com"), ("subject", "three"))),
    ]


def test_single_message_with_from_line_in_body_is_not_an_mbox():
    path = str(DATA / "single-from.eml")
    assert list(read_documents([path])) == [Document(
        path, "From the desk of Dr. Smith\nI need your help.",
        (("from", "dr.smith@example.com"), ("subject", "urgent business")))]


def test_mbox_whose_first_message_is_longer_than_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(message, "MAX_BYTES", 256)
    path = tmp_path / "big.mbox"
    path.write_text("From a@example.com Mon Jan  6 10:00:00 2003\nSubject: big\n\n"
                    + "filler line\n" * 100
                    + "\nFrom b@example.com Mon Jan  6 11:00:00 2003\nSubject: small\n\nhi\n")
    docs = list(read_documents([str(path)]))
    assert [d.source for d in docs] == [f"{path}:1", f"{path}:2"]
    assert set(docs[0].text.split("\n")) == {"filler line"}  # cut at a line end
    assert docs[0].text.count("filler") < 100
    assert docs[1] == Document(f"{path}:2", "hi", (("subject", "small"),))


def _mailbox_messages(path) -> list[bytes]:
    """What the standard library's mailbox.mbox gives: each message without its "From " line."""
    box = mailbox.mbox(path, create=False)
    try:
        return [box.get_file(key).read() for key in box.iterkeys()]
    finally:
        box.close()


_MBOX_LINES = [b"From a@example.com Mon Jan  6 10:00:00 2003\n", b"From \n", b"From x", b"\n",
               b"\r\n", b"Subject: s\n", b"body\n", b">From quoted\n", b"From", b"x", b" From y\n"]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(_MBOX_LINES), max_size=14),
       chunk=st.integers(min_value=1, max_value=12))
def test_an_mbox_splits_where_the_standard_library_splits_it(lines, chunk):
    """Messages found by bytes.find over chunks (of any size) are mailbox.mbox's, byte for byte,
    whatever the empty lines, unfinished lines and "From " lines inside; so is a "From " line
    longer than a chunk, skipped a chunk at a time (a 50 MB one reads no 50 MB at once)."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".mbox") as file:
        file.write(b"".join(lines))
        file.flush()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sources, "_MBOX_CHUNK", chunk)
            patch.setattr(sources, "_READ_CHUNK", chunk)  # a "From " line read in pieces
            patch.setattr(message, "MAX_BYTES", 2 * chunk)  # a text longer than a read
            found = [raw for _, raw in sources._read_mbox(file.name, None)]
        assert found == [raw[:2 * chunk + 1] for raw in _mailbox_messages(file.name)]


def test_a_large_mbox_splits_as_the_standard_library_splits_it(tmp_path):
    path = tmp_path / "large.mbox"
    path.write_bytes(b"".join(b"From a Mon Jan  6 10:00:00 2003\nSubject: %d\n\n%s\n%s"
                              % (i, b"line\n" * (i % 7), b"\n" * (i % 3)) for i in range(3000)))
    found = [raw for _, raw in sources._read_mbox(str(path), None)]
    assert len(found) == 3000 and found == _mailbox_messages(path)


def test_maildir(tmp_path):
    box = mailbox.Maildir(tmp_path / "Mail", create=True)
    keys = sorted(box.add(f"Subject: m\n\nbody {i}\n".encode()) for i in range(3))
    (tmp_path / "Mail" / "cur" / ".hidden").write_text("x")
    path = str(tmp_path / "Mail")
    docs, errors = read(path)
    assert errors == []
    assert [d.source for d in docs] == [f"{path}:{key}" for key in keys]
    assert sorted(d.text for d in docs) == ["body 0", "body 1", "body 2"]
    assert sorted(iter_files(path)) == [os.path.join(path, "new", key) for key in keys]
    # A Maildir inside a directory tree is read as one too.
    docs, errors = read(tmp_path)
    assert [d.source for d in docs] == [f"{path}:{key}" for key in keys]


def test_directory_is_read_recursively_sorted_without_hidden(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.txt").write_text("two")
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "c.txt").write_text("three")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("hidden")
    (tmp_path / ".hidden.txt").write_text("hidden")
    (tmp_path / "b" / "loop").symlink_to(tmp_path)  # a loop: reported, walked once
    docs, errors = read(tmp_path)
    assert errors == [(str(tmp_path / "b" / "loop"), "symbolic link loop")]
    assert [d.text for d in docs] == ["one", "two", "three"]
    assert list(iter_files(str(tmp_path), on_error=lambda *_: None)) == [str(tmp_path / "a.txt"), str(tmp_path / "b" / "2.txt"),
                                             str(tmp_path / "c.txt")]
    assert list(iter_files(str(tmp_path / "a.txt"))) == [str(tmp_path / "a.txt")]


def test_empty_and_unreadable_directories(tmp_path):
    (tmp_path / "empty").mkdir()
    docs, errors = read(tmp_path / "empty")
    assert docs == [] and errors == [(str(tmp_path / "empty"), "no files")]
    with pytest.raises(DocumentError, match="no files"):
        list(iter_files(str(tmp_path / "empty")))
    if os.geteuid() != 0:  # root reads everything
        locked = tmp_path / "locked"
        locked.mkdir(mode=0)
        assert read(locked) == ([], [(str(locked), "permission denied")])


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Subject: hi\n\nbody\n")))
    assert list(read_documents(["-"])) == [Document("-", "body", (("subject", "hi"),))]


def test_cap_cuts_at_a_line_end(monkeypatch):
    monkeypatch.setattr(message, "MAX_BYTES", 20)
    # A cut inside "é" would make the whole text fail UTF-8 and decode as cp1252.
    assert read_bytes("été line\nété again and more\n".encode()).text == "été line\n"
    assert parse_message(b"Subject: s\n\nword\n" + b"more " * 10).text == "word"
    assert read_bytes(b"x" * 30).text == "x" * 20  # no line end to cut at


def test_deeply_nested_multiparts_fall_back_to_plain_body():
    # email.feedparser recurses per level: this makes it raise RecursionError.
    nesting = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (i, i)
                       for i in range(3000))
    doc = parse_message(b"Subject: deep\n" + nesting + b"Content-Type: text/plain\n\nhello\n")
    assert doc.fields[0] == ("subject", "deep")
    assert doc.text.endswith("hello\n")


def test_header_edge_cases():
    raw = (b"Subject: =?utf-8?b?A?= plain\nFrom: =?x-unknown?q?caf=E9?= <c@example.com>\n"
           b"To: \nContent-Type: text/html; charset=\"utf8mb4\"\n\n<b>bold</b> &amp; <i>it</i>")
    doc = parse_message(raw)
    assert doc.fields == (
        ("subject", "=?utf-8?b?A?= plain"),  # undecodable base64 word: kept as written
        ("from", "café <c@example.com>"),
        ("content-type", "text/html utf8mb4"),
        ("html", "b i"),
    )
    assert doc.text == "bold & it"


def test_html_sent_as_plain_text_and_unclosed_script():
    doc = parse_message(b"Subject: x\n\n  <HTML><body><a href='http://[bad'>a</a>"
                        b"<a href=//cdn.example.com/>b</a><script>hide")
    assert doc.text == "ab"
    assert doc.fields == (("subject", "x"), ("html", "html body a script"), ("url", "cdn.example.com"))


def test_message_without_text_parts():
    raw = (b"Subject: pic\nContent-Type: multipart/mixed; boundary=x\n\n--x\n"
           b"Content-Type: image/gif\n\nR0lGOD\n--x--\n")
    assert parse_message(raw, "p") == Document("p", "", (
        ("subject", "pic"), ("content-type", "multipart/mixed"), ("attachment", "image/gif")))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(raw):
    for doc in (parse_message(raw), read_bytes(raw)):
        assert isinstance(doc.text, str)
        assert all(isinstance(n, str) and isinstance(v, str) for n, v in doc.fields)


_MIME_LINES = st.sampled_from([
    b"Content-Type: multipart/mixed; boundary=b", b"Content-Type: text/html; charset=x-bad",
    b"Content-Type: message/rfc822", b"Content-Transfer-Encoding: base64",
    b"Content-Transfer-Encoding: quoted-printable", b"Subject: =?utf-8?q?a=FF?=", b"--b", b"--b--",
    b"", b"<html><![x", b"=E9=", b"QUJD=", b"\xff\xfe", b"From: =?bad?b?@@?=", b"\tcont",
    b"Content-Disposition: attachment; filename*=bogus''%FF", b"<a href='http://[x'>",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_MIME_LINES, max_size=40))
def test_mime_soup_never_raises(lines):
    doc = parse_message(b"\n".join(lines))
    assert isinstance(doc.text, str)


def test_iso_2022_jp_text_is_decoded_by_its_declared_charset():
    """7-bit ISO-2022-JP is valid ASCII: decoding it as UTF-8 would leave escape codes as text."""
    from textnb.decoding import decode
    raw = "伊東様".encode("iso-2022-jp")
    assert decode(raw, "iso-2022-jp") == "伊東様"
    message = b"Subject: x\nContent-Type: text/plain; charset=iso-2022-jp\n\n" + raw + b"\n"
    assert parse_message(message).text == "伊東様"


def test_a_uuencoded_file_in_a_body_stands_by_its_name():
    body = b"see the dump:\n\nbegin 644 oops1.dat\nM9F]O8F%R\n`\nend\n\nthanks\n"
    text = parse_message(b"Subject: bug\n\n" + body).text
    assert text == "see the dump:\n\nuuencoded oops1.dat\n\nthanks"
    # At the text's start too; a "begin " inside a line starts none.
    assert parse_message(b"Subject: bug\n\nbegin 644 a.dat\nM9F]O\n`\nend\nok\n").text == \
        "uuencoded a.dat\nok"
    assert parse_message(b"Subject: x\n\nwe begin 644 a.dat\nM9F]O\nend\n").text == \
        "we begin 644 a.dat\nM9F]O\nend"


def test_html_sent_as_text_plain_is_recognised_without_an_html_tag():
    raw = b"Subject: x\n\n<head><title>Hi</title></head>\n<body>Cheap <br> <a href='http://x.example.com/'>pills</a></body>\n"
    document = parse_message(raw)
    assert "<" not in document.text and "pills" in document.text
    assert ("url", "x.example.com") in document.fields


# -- the fast path for plain one-part messages agrees with the email package ----------------

def _by_email_package(raw: bytes, source: str = "-") -> Document:
    from textnb.documents.message import _body, _header_fields, _parse
    message = _parse(raw)
    fields = _header_fields(message)
    texts = _body(message, fields)
    return Document(source, "\n".join(texts), tuple(fields))


def test_plain_messages_take_the_fast_path_with_the_same_result():
    from textnb.documents.message import _simple_message
    plain = (b"From jo Thu Aug 22 13:17:22 2002\nFrom: Jo <jo@example.com>\n"
             b"Subject: =?iso-8859-1?q?Gr=FC=DFe?= and\n\tmore  words\n"
             b"Content-Type: TEXT/plain; charset=\"ISO-8859-1\"\nX-Mailer: mutt\n"
             b"Content-Transfer-Encoding: 8bit\n\nK\xf6ln <b>caf\xe9</b>\n"
             b"begin 644 x.exe\nM9V]O\nend\n")
    fast = _simple_message(plain, "p")
    assert fast == _by_email_package(plain, "p")
    assert fast.fields == (("from", "Jo <jo@example.com>"), ("subject", "Grüße and more words"),
                           ("content-type", "text/plain iso-8859-1"), ("x-mailer", "mutt"),
                           ("content-transfer-encoding", "8bit"))
    assert fast.text == "Köln <b>café</b>\nuuencoded x.exe"
    html = b"Subject: x\n\n<html><body><a href='http://spam.example/'>buy</a></body></html>\n"
    assert _simple_message(html, "-") == _by_email_package(html) != Document("-", "")
    assert _simple_message(b"Subject: only a header\n", "-") == \
        _by_email_package(b"Subject: only a header\n")


_MIXED = (b"Subject: x\nContent-Type: multipart/mixed; boundary=\"=_b 1\"\n\npreamble\n"
          b"--=_b 1\nContent-Type: multipart/alternative; boundary=in\n\n"
          b"--in\nContent-Type: text/plain; charset=\"ISO-8859-1\"\n"
          b"Content-Transfer-Encoding: quoted-printable\n\ncaf=E9\n\n"
          b"--in\nContent-Type: text/html\nContent-Transfer-Encoding: base64\n\n"
          b"PHA+aGk8L3A+\nPGEgaHJlZj0iaHR0cDovL3guZXhhbXBsZS8iPmE8L2E+\n--in--\nepilogue\n"
          b"--=_b 1\nContent-Type: application/pdf; name=a.pdf\n"
          b"Content-Disposition: attachment;\n\tfilename=\"=?utf-8?q?r=C3=A9sum=C3=A9?=.pdf\"\n\n"
          b"%PDF\n--=_b 1  \n\nno fields\n\n--=_b 1--\nafter\n--=_b 1\n\nnot a part\n")


@pytest.mark.parametrize("raw, fields, text", [
    (_MIXED, (("subject", "x"), ("content-type", "multipart/mixed"),
              ("attachment", "application/pdf résumé .pdf"), ("html", "p a"),
              ("url", "x.example")), "caf\xe9\nhi\na\nno fields"),
    # no closing boundary: the last part runs to the end; its last line end is dropped
    (b"Content-Type: multipart/alternative; boundary=b\n\n--b\n\none\n--b\n\ntwo\n\n",
     (("content-type", "multipart/alternative"),), "one\ntwo"),
    (b"Subject: x\nContent-Type: application/pdf\n\n%PDF\n",            # one part, not text
     (("subject", "x"), ("content-type", "application/pdf"),
      ("attachment", "application/pdf")), ""),
    (b"Subject: x\nContent-Transfer-Encoding: base64\n\naGk=\n",         # encoded body
     (("subject", "x"), ("content-transfer-encoding", "base64")), "hi"),
    (b"Subject: x\nTo: a@b.example", (("subject", "x"), ("to", "a@b.example")), ""),
])
def test_fast_path_reads_multiparts_attachments_and_base64(raw, fields, text):
    from textnb.documents.message import _simple_message
    fast = _simple_message(raw, "-")
    assert fast == _by_email_package(raw)
    assert fast.fields == fields and fast.text == text


@pytest.mark.parametrize("raw", [
    b"Subject: crlf\r\n\r\nbody\r\n",                                   # CR in the header
    b"Subject: caf\xe9\n\nbody\n",                                      # 8-bit header
    b"Subject: x\nContent-Type: text/plain; charset*=utf-8''x\n\nbody\n",  # RFC 2231
    b"Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: message/rfc822\n\n"
    b"Subject: inner\n\nx\n--b--\n",                                   # a message in a part
    b"Content-Type: multipart/digest; boundary=b\n\n--b\n\nSubject: y\n\nx\n--b--\n",
    b"Content-Type: multipart/mixed; boundary=b\n\n--b\n--b\n\nx\n--b--\n",  # two in a row
    b"Content-Type: multipart/mixed; boundary=b\n\nno boundary line\n",
    b"Content-Type: multipart/mixed; boundary=b\n\n--b--\n",              # closed at once
    b"Content-Type: multipart/mixed; boundary=b\n\n--b\r\n\r\nx\r\n--b--\r\n",  # CR
    b"Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: image/gif;"
    b" name*=utf-8''x.gif\n\nGIF\n--b--\n",                             # RFC 2231 name
    b"Content-Type: multipart/mixed; boundary=b\n\n--b\nX: caf\xe9\n\nx\n--b--\n",
    b"Content-Type: multipart/mixed; boundary=\"<b>\"\n\n--b\n\nx\n--b--\n",  # <> stripped
    b"Subject: x\nnot a header line\n\nbody\n",
    b"Subject: x\nContent-Type: text/plain; name\n\nbody\n",            # a bare parameter
    b"Subject: x\nContent-Type: text/plain; charset=\"a;b\"\n\nbody\n",  # quoted ";"
    b"Subject: x\nContent-Transfer-Encoding: x-uuencode\n\nbody\n",
])
def test_other_messages_are_left_to_the_email_package(raw):
    from textnb.documents.message import _simple_message
    assert _simple_message(raw, "-") is None
    assert parse_message(raw) == _by_email_package(raw)


@pytest.mark.parametrize("raw, fields, text", [
    # HTML, its charset parameter folded onto a second line and quoted
    (b"Subject: x\nContent-Type: text/HTML;\n\tcharset=\"ISO-8859-1\"\n\n<p>caf\xe9</p><b>b</b>\n",
     (("subject", "x"), ("content-type", "text/html iso-8859-1"), ("html", "p b")), "caf\xe9\nb"),
    # quoted-printable: soft line breaks joined, =E9 decoded in the declared charset
    (b"Content-Type: text/plain; charset=iso-8859-1; format=flowed\n"
     b"Content-Transfer-Encoding: Quoted-Printable\n\ncaf=E9 wo=\nrd\n",
     (("content-type", "text/plain iso-8859-1"),
      ("content-transfer-encoding", "quoted-printable")), "caf\xe9 word"),
    # encoded words in a folded Subject, the first charset parameter wins
    (b"Subject: =?utf-8?q?caf=C3=A9?=\n =?utf-8?b?w6k=?= x\n"
     b"Content-Type: text/plain; Charset=UTF-8 ; charset=latin-1;\n\nbody\n",
     (("subject", "caf\xe9\xe9 x"), ("content-type", "text/plain utf-8")), "body"),
])
def test_fast_path_reads_html_quoted_printable_and_parameters(raw, fields, text):
    from textnb.documents.message import _simple_message
    fast = _simple_message(raw, "-")
    assert fast == _by_email_package(raw) == Document("-", text, fields)
    # CRLF line ends and NUL bytes are gone before the fast path sees the bytes.
    assert parse_message(raw.replace(b"\n", b"\0\r\n")) == fast


@pytest.mark.parametrize("raw, fast", [
    (b"Subject: a\n\tb\n c:\nTo:\t \n more\n\nbody", True),   # folded lines, blank values
    (b"From jo Thu Aug 22 13:17:22 2002\nSubject: s\n\nbody", True),
    (b"\tSubject: continues nothing\n\nbody", False),
    (b"From jo\n\tcontinued From line\n\nbody", False),
    (b"Subject: s\nBad Field: x\n\nbody", False),
])
def test_fast_path_splits_the_header_block_as_the_email_package(raw, fast):
    from textnb.documents.message import _simple_message
    document = _simple_message(raw, "-")
    assert (document is not None) == fast
    assert parse_message(raw) == _by_email_package(raw)
    if fast:
        assert document == _by_email_package(raw)


_PLAIN_LINES = st.sampled_from([
    b"Subject: a b", b"Subject: =?utf-8?b?w6k=?=", b"From: x@y.z", b"To: <a@b>,\n c@d",
    b"Content-Type: text/plain", b"Content-Type: text/plain; charset=utf-8",
    b"content-type: Text/Plain;charset=\"latin-1\";", b"Content-Type: text/plain; format=flowed",
    b"Content-Transfer-Encoding: 7BIT", b"Content-Transfer-Encoding: quoted-printable",
    b"Content-Type: text/html;\n charset=\"us-ascii\"", b"Content-Type: text/html; charset=",
    b"Content-Type: text/plain; charset=x; charset=\"y\" ;", b"Content-Type: text/html  ;  ",
    b"\t continued", b"Lines: 3", b"Organization:", b"X-Mailer:  spaced  out  ",
])
_BODY_LINES = st.sampled_from([b"", b"caf\xc3\xa9", b"caf\xe9", b"<html>", b"<p>x</p>",
                               b"begin 644 f", b"end", b"From me", b"=E9", b"\r", b"!!! $5",
                               b"=", b"a=\t", b"=3D=\r", b"<a href=3D\"http://x.example/\">"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PLAIN_LINES, max_size=8), st.lists(_BODY_LINES, max_size=8))
def test_fast_path_agrees_with_the_email_package(header, body):
    from textnb.documents.message import _simple_message
    raw = b"\n".join(header) + b"\n\n" + b"\n".join(body)
    fast = _simple_message(raw, "-")
    if fast is not None:
        assert fast == _by_email_package(raw)


_PART_FIELDS = st.sampled_from([
    b"Content-Type: text/plain", b"Content-Type: text/html; charset=\"utf-8\"",
    b"Content-Type: TEXT/enriched; charset=latin-1", b"Content-Type: application/pdf; name=a.pdf",
    b"Content-Type: image/gif;\n name=\"b c.gif\"", b"Content-Disposition: attachment; filename=d",
    b"Content-Disposition: inline", b"Content-Transfer-Encoding: base64",
    b"Content-Transfer-Encoding: quoted-printable", b"Content-Transfer-Encoding: 7bit",
    b"Content-Type: multipart/alternative; boundary=in", b"Content-Type: message/rfc822",
    b"Content-Type: text/plain; name*=x", b"X-Other: y", b"\tcontinued", b"not a field",
])
_PART_LINES = st.sampled_from([
    b"", b"aGk=", b"PGI+aGk8L2I+", b"caf=E9 =", b"<b>x</b>", b"caf\xe9", b"--b", b"--b--",
    b"--b  ", b"--bx", b"--b--x", b"--in", b"--in--", b"Subject: inner", b"begin 644 f", b"end",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(_PART_LINES, max_size=4), max_size=3),
       st.lists(st.tuples(st.lists(_PART_FIELDS, max_size=3), st.booleans(),
                          st.lists(_PART_LINES, max_size=5)), max_size=4),
       st.sampled_from([b"multipart/mixed", b"multipart/alternative", b"text/plain"]))
def test_fast_path_agrees_with_the_email_package_on_multiparts(around, parts, kind):
    from textnb.documents.message import _simple_message
    preamble, epilogue = (b"\n".join(lines) for lines in (around + [[], []])[:2])
    body = [preamble]
    for fields, blank, lines in parts:
        body += [b"--b", *fields] + ([b""] if blank else []) + lines
    raw = (b"Subject: s\nContent-Type: " + kind + b"; boundary=\"b\"\n\n" +
           b"\n".join(body + [b"--b--", epilogue]))
    fast = _simple_message(raw, "-")
    if fast is not None:
        assert fast == _by_email_package(raw)


_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


@pytest.mark.parametrize("archive", ["spamassassin-public.tar.gz", "20news-bydate.tar.gz"])
def test_fast_path_agrees_on_every_message_of_the_corpora(archive):
    import tarfile
    from textnb.documents.message import _is_message, _simple_message
    if not (_SHARED / archive).is_file():
        pytest.skip(f"{_SHARED / archive} is absent (the shared corpora)")
    fast = 0
    with tarfile.open(_SHARED / archive) as tar:
        for member in tar:
            if not member.isfile():
                continue
            raw = tar.extractfile(member).read()
            if _is_message(raw):
                document = _simple_message(raw, member.name)
                if document is not None:
                    fast += 1
                    assert document == _by_email_package(raw, member.name), member.name
    assert fast > {"spamassassin-public.tar.gz": 5400, "20news-bydate.tar.gz": 18000}[archive]


def test_html_reader_edge_cases():
    from textnb.documents.html import html_text
    tags, hosts = {}, {}
    html = ("<HTML><body>V<b>i</b>agra <a href=\"http://a.example/x?q=1>2\" title='it's'>now</a>"
            "<!-- hidden --> <p>caf&eacute; &amp; more<br/>next "
            "<script type=x>var s = '<p>no</p>';</SCRIPT >shown <img src=http&#58;//img.example/i>"
            "<a href='HTTP://Upper.Example'>u</a> <!--unclosed>after</body>")
    # Inline tags, comments and scripts join the text around them; block tags break lines.
    assert html_text(html, tags, hosts) == "Viagra now\ncafé & more\nnext shown u after"
    assert list(tags) == ["html", "body", "b", "a", "p", "br", "script", "img"]
    assert list(hosts) == ["a.example", "img.example", "upper.example"]
    # A lone "<" is text; an unclosed tag ends the text; an unclosed script hides the rest.
    assert html_text("a < b <3 and <i", {}, {}) == "a < b <3 and"
    assert html_text("x<style>p {}", {}, {}) == "x"


def test_symbolic_link_loops_are_reported_and_skipped(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "real.txt").write_text("real words")
    (tmp_path / "d" / "link.txt").symlink_to(tmp_path / "d" / "real.txt")  # read as a file
    (tmp_path / "d" / "here").symlink_to(".")                               # a -> .
    (tmp_path / "d" / "a").symlink_to("b")                                  # a -> b -> a
    (tmp_path / "d" / "b").symlink_to("a")
    (tmp_path / "d" / "self").symlink_to("self")                            # self -> self
    (tmp_path / "d" / "gone").symlink_to("nowhere")                         # broken
    docs, errors = read(tmp_path)
    d = tmp_path / "d"
    assert [(doc.source, doc.text) for doc in docs] == [(str(d / "link.txt"), "real words"),
                                                        (str(d / "real.txt"), "real words")]
    assert errors == [(str(d / "a"), "too many levels of symbolic links"),
                      (str(d / "b"), "too many levels of symbolic links"),
                      (str(d / "gone"), "no such file or directory"),
                      (str(d / "here"), "symbolic link loop"),
                      (str(d / "self"), "too many levels of symbolic links")]
    # Given as a path itself, a looping link is one unreadable document.
    assert read(d / "self") == ([], [(str(d / "self"), "too many levels of symbolic links")])


def test_a_fifo_or_a_socket_in_a_directory_is_reported_and_skipped(tmp_path):
    import socket
    (tmp_path / "real.txt").write_text("real words")
    os.mkfifo(tmp_path / "pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        docs, errors = read(tmp_path)
    assert [doc.source for doc in docs] == [str(tmp_path / "real.txt")]
    assert errors == [(str(tmp_path / "pipe"), "not a regular file"),
                      (str(tmp_path / "sock"), "not a regular file")]


def test_a_bytearray_reads_as_its_bytes():
    raw = b"From: a@example.com\nSubject: Cheap pills\n\nBuy now"
    assert read_bytes(bytearray(raw)) == read_bytes(raw)
    assert read_bytes(bytearray(raw)).fields[0] == ("from", "a@example.com")


def test_a_long_header_line_decodes_its_encoded_words_as_the_email_package_does(monkeypatch):
    """Lines over RFC 5322's 998 characters are searched for encoded words in linear time
    (tests/test_hostile_input.py): well-formed ones decode as decode_header decodes them,
    adjacent ones joined, text between them kept, a word of bad base64 kept as written."""
    import textnb.documents.message
    from textnb.documents.message import _header_text
    words = ["=?utf-8?q?caf=C3=A9?=", "plain text", "=?iso-8859-1?b?SGVsbG8=?=",
             "=?utf-8?q?ab?=", "=?UTF-8?Q?cd?="]
    value = " ".join(words * 100)
    assert len(value) > 998
    values = [value, "=?utf-8?b?!!!?= " + "x " * 600, "x" * 999 + " =?utf-8?q?y?="]
    linear = [_header_text(v) for v in values]
    assert linear[0].startswith("café plain text Helloabcdcafé plain text")
    assert linear[2] == "x" * 999 + " y"
    # One never closed is text as it stands; the email package's pattern read it to the next
    # word's "?=" ("x =?utf-8?q?café"): an encoded word holds no space.
    assert _header_text("=?a?q?x " + value).startswith("=?a?q?x café plain")
    monkeypatch.setattr(textnb.documents.message, "_LONGEST_LINE", 10 ** 9)  # the email package's way
    assert linear == [_header_text(v) for v in values]


def test_a_parameter_both_continued_and_not_leaves_the_message_read_as_mime():
    """``charset*=utf-8; charset*0=x`` (RFC 2231 continuations, numbered and not) made Python
    3.11's email.utils.decode_params raise TypeError: a one-part message went unread (classify:
    an internal error), a multipart one was read as the plain text of its parts' headers."""
    single = (b"From: a@example.com\nSubject: cheap pills\n"
              b"Content-Type: text/plain; charset*=utf-8; charset*0=x\n\nbuy cheap pills now\n")
    document = read_bytes(single)
    assert document.text == "buy cheap pills now"
    assert dict(document.fields)["content-type"] == "text/plain"
    multipart = (b"From: a@example.com\nSubject: hi\nContent-Type: multipart/mixed; boundary=b\n\n"
                 b"--b\nContent-Type: text/plain; charset*=utf-8; charset*0=x\n\nhello there\n"
                 b"--b\nContent-Type: image/gif; name*=a; name*0=b\n"
                 b"Content-Disposition: attachment; filename*=c; filename*0=d\n\nGIF89a\n--b--\n")
    document = read_bytes(multipart)
    assert document.text == "hello there"
    assert ("attachment", "image/gif") in document.fields


# -- the filter's scans by str methods, against the patterns that define them ------------------

def _regex_looks_like_html(text):
    import re
    head = text[:4096]
    tag = re.compile(message._HTML_TAG, re.IGNORECASE)
    return "<" in head and (head.lstrip()[:1] == "<" and tag.match(head.lstrip()) is not None
                            or len(tag.findall(head)) >= 5)


# Pieces of tags and near misses (case, white space, a word character after the name), so that
# a drawn text often holds five tags or opens with one.
_HTML_PIECES = st.lists(st.one_of(
    st.sampled_from(["<", "<HTML", "<html>", "<!DOCTYPE", "<!doctypes", "<p", "<P>", "<pre>",
                     "<br/", "<BR_", "<a href", "<A\t\nHREF=", "<a  hrefx", "<ahref", "<a\x1chref",
                     "<img", "<IMG2", "<td ", "<tr", "<font", "<tables", "<div", "<body", "<head",
                     " ", "\n", "\x0b", "x", "_", "1", "<<p", "İ", "<İmg", "<\u017f", "<dıv",
                     "<dİv",
                     "é", "<TÄBLE", "<td\u212a", "<p\u00a0", "<a\u2003href", "<font\u0301"]),
    st.text(max_size=3)), max_size=30).map("".join)


@settings(max_examples=3000, deadline=None)
@given(_HTML_PIECES)
def test_html_sent_as_text_is_told_by_str_methods_as_by_the_pattern(text):
    assert message._looks_like_html(text) == _regex_looks_like_html(text)


def test_html_sent_as_text_is_told_without_the_regular_expression_engine():
    import subprocess
    code = ("import sys; from textnb.documents.message import _looks_like_html as f; "
            "print(f('<p>hi ' * 5), f('a < b'), f('<a\\thref=x>'), f('<pre>' * 9), "
            "f('<p>café ' * 5), 're' in sys.modules)")
    # -S: no site, whose editable-install hooks import the engine themselves (the package is
    # found on PYTHONPATH instead).
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": root})
    assert done.stdout.split() == ["True", "False", "True", "False", "True", "False"]


def test_a_document_is_the_named_tuple_it_was():
    """Document is namedtuple("Document", ["source", "text", "fields"], defaults=[()])
    written out (collections is not imported for it): the same fields, defaults, methods,
    equality, repr and pickling."""
    import pickle
    from collections import namedtuple
    Named = namedtuple("Document", ["source", "text", "fields"], defaults=[()])
    for args, kwargs in [(("a", "b"), {}), (("a",), {"text": "b", "fields": (("x", "y"),)})]:
        document, named = Document(*args, **kwargs), Named(*args, **kwargs)
        assert document == named and tuple(document) == tuple(named)
        assert (document.source, document.text, document.fields) == tuple(named)
        assert repr(document) == repr(named) and document._fields == named._fields
        assert document._asdict() == named._asdict()
        assert document._replace(text="c") == named._replace(text="c")
        assert type(document._replace(text="c")) is Document
        assert pickle.loads(pickle.dumps(document)) == document
        assert type(pickle.loads(pickle.dumps(document))) is Document
    with pytest.raises(ValueError, match="unexpected field names"):
        Document("a", "b")._replace(body="c")
    with pytest.raises(TypeError):
        Document("a")
