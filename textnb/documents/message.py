"""bytes → Document: RFC 822/MIME mail, news articles, plain text.

A :class:`Document` is what the tokenizer needs: the body text (text parts decoded, HTML reduced
to its text) and header fields whose tokens get the field name as a prefix, as SpamBayes does
(``subject:free`` is stronger spam evidence than ``free`` in a body). Markup is evidence too:
the HTML tag names, the hosts links point to and the attachments' types and file names become
fields (``html``, ``url``, ``attachment``); an attachment's bytes never do.

Choices:

* :func:`read_bytes` is the one way bytes become a Document: ``classify``, ``train``,
  ``learn``, ``filter`` and :class:`~textnb.classifier.TextClassifier` all call it, so the same
  bytes give the same tokens and the same verdict whichever way they come in.
* NUL bytes are dropped and CR or CRLF line ends become LF before anything else looks at the
  bytes (the email package reads CR and CRLF as LF already; a NUL is no text in any charset),
  so "\0From: ..." is mail and an old Mac's CR-only file is read as it is shown. A binary file
  (an image in a training directory) is read as what its bytes decode to: its junk gives
  few tokens, most of them longer than the token length cap and dropped.
* Most messages are read without the email package (:func:`_simple_message`: text parts,
  multiparts of them and attachments with plain header blocks, nearly all real mail and news),
  with the very Document it would give, at half the cost (docs/design/performance.md); the rest go
  through it.
* Every parser step is linear in its input: the email package gets at most
  :data:`MAX_PARTS` MIME parts and Content-Type/Content-Disposition values of at most
  :data:`MAX_PARAMETER_FIELD` characters (its parameter parser is quadratic), and no regular
  expression applied to a message can rescan it (tests/test_hostile_input.py times 1 MB
  adversarial inputs).
"""

from __future__ import annotations

import codecs

from ..decoding import decode

try:  # the C twins of the scans (textnb/_tokens.c), where they were built
    from .. import _tokens as _fast
except ImportError:
    _fast = None

TYPE_CHECKING = False  # typing itself costs a mail filter's start-up 3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from email.message import Message


class Document(tuple):
    """A text to classify and the header fields whose tokens get ``name:`` as a prefix:
    ``source`` (str), ``text`` (str), ``fields`` (tuple of (name, value) str pairs).

    The named tuple ``namedtuple("Document", ["source", "text", "fields"], defaults=[()])``
    is, written out: collections, imported for it, cost a mail filter's start 1.9 ms at load 8
    (python -X importtime).
    """

    __slots__ = ()
    _fields = ("source", "text", "fields")

    def __new__(cls, source: str, text: str, fields: tuple = ()) -> Document:
        return tuple.__new__(cls, (source, text, fields))

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    @classmethod
    def _make(cls, iterable: object) -> Document:
        return cls(*iterable)

    def _replace(self, **changes: object) -> Document:
        result = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return result

    def _asdict(self) -> dict:
        return dict(zip(self._fields, self))

    def __repr__(self) -> str:
        return f"Document(source={self[0]!r}, text={self[1]!r}, fields={self[2]!r})"

    source = property(lambda self: self[0], doc="Where the text came from (str).")
    text = property(lambda self: self[1], doc="The text (str).")
    fields = property(lambda self: self[2], doc="The (name, value) header fields (tuple).")


# Headers that tell who sent a message, to whom, about what and with which software. Routing
# noise (Received, Message-ID, Date) is left out, and so are Newsgroups, Path and Xref, which
# name the answer on Usenet.
HEADER_FIELDS = frozenset({
    "subject", "from", "to", "cc", "reply-to", "organization", "keywords", "summary",
    "x-mailer", "user-agent", "x-newsreader",
})


# Real mail has a few MIME parts (at most 22 in a SpamAssassin message); a crafted one can hold
# a hundred thousand in a megabyte, at 20 µs each in the email package. The parser stops at the
# chunk where the cap is passed, and the message is read as a deeply nested one is: its
# headers, and its body as plain text.
MAX_PARTS = 500
# The email package's parser is a generator per nesting level, and each line passes through all
# of them: 400 nested multiparts took 0.15 s, 800 raise RecursionError. Real mail nests a few
# levels (forwarded messages inside digests).
MAX_DEPTH = 30
# RFC 2045 boundaries are at most 70 characters; the longest Content-Type of the SpamAssassin
# corpus is 14 kB of "; " (spam_2/00471), whose type comes first. email.message._parseparam
# copies the rest of the value for each ";" (quadratic: 11 s on 100 kB of them): values of the
# fields it parses are cut at this length before it sees them.
MAX_PARAMETER_FIELD = 1024
_PARAMETER_FIELDS = frozenset({"content-type", "content-disposition"})
_PARSE_CHUNK = 8192  # what email.parser.Parser feeds at a time
_Part = None  # email.message.Message with the cut above, defined with the email package's import


def _parse(raw: bytes, headersonly: bool = False) -> Message:
    """The email package's Message of raw (line ends LF), as BytesParser gives it, with at most
    MAX_PARAMETER_FIELD characters of each Content-Type/-Disposition; ValueError beyond
    MAX_PARTS parts or MAX_DEPTH levels of nesting."""
    # The email package is imported here: a plain message (see _simple_message) never needs
    # it, and it is a third of a mail filter's start-up. compat32 is its legacy policy: it
    # never raises on broken headers and keeps their values as found, where the modern
    # policies parse (and fail on) every address and date.
    from email.feedparser import FeedParser
    from email.message import Message
    from email.policy import compat32

    global _Part
    if _Part is None:
        class _Part(Message):  # noqa: N801 — defined once, at first use
            def set_raw(self, name: str, value: str) -> None:
                if len(value) > MAX_PARAMETER_FIELD and name.lower() in _PARAMETER_FIELDS:
                    value = value[:MAX_PARAMETER_FIELD]
                super().set_raw(name, value)

    parts = 0

    def new_part(policy: object = compat32) -> Message:
        nonlocal parts
        parts += 1
        return _Part(policy)

    parser = FeedParser(new_part, policy=compat32)
    if headersonly:
        parser._set_headersonly()
    # BytesParser reads bytes as ASCII with surrogate escapes (8-bit bytes survive into
    # get_payload(decode=True) and raw headers) and feeds 8 kB at a time.
    text = raw.decode("ascii", "surrogateescape")
    for start in range(0, len(text), _PARSE_CHUNK):
        parser.feed(text[start:start + _PARSE_CHUNK])
        if parts > MAX_PARTS or len(parser._msgstack) > MAX_DEPTH:
            raise ValueError(f"more than {MAX_PARTS} MIME parts or {MAX_DEPTH} levels")
    return parser.close()


def _parse_headers(raw: bytes) -> Message:
    """The Message of raw's header block, its body the rest of raw, not split into parts: what
    a headers-only parse gives, without the email package reading the body line by line."""
    if raw.startswith(b"\n"):  # an empty header block
        head, body = b"", raw[1:]
    else:
        end = raw.find(b"\n\n")
        if end < 0:
            return _parse(raw, headersonly=True)
        head, body = raw[:end + 1], raw[end + 2:]
    message = _parse(head, headersonly=True)
    # The header block may have ended before the blank line, at a line that is no header field:
    # the payload is then from that line on, blank line included; a "From " line just before
    # the blank line is put back as the body's first line, and the blank line still ends the
    # header block. (_payload: get_payload() would replace 8-bit bytes.)
    rest = message._payload or ""
    last_line = head[head.rfind(b"\n", 0, -1) + 1:]
    if rest and not (last_line.startswith(b"From ") and rest.encode("ascii", "surrogateescape") == last_line):
        rest += "\n"
    message.set_payload(rest + body.decode("ascii", "surrogateescape"))
    return message


# A header field line starts with a field name (printable ASCII but ":") and a colon (compiled
# where _is_message reads without textnb/_tokens.c).
_FIELD = rb"[!-9;-~]+:"
# Fields of which at least one must appear for a header block to be taken as mail or news, so
# that a text file starting with "Note: ..." stays a text file.
_MAIL_FIELDS = frozenset({
    b"from", b"to", b"cc", b"subject", b"date", b"received", b"return-path", b"message-id",
    b"mime-version", b"content-type", b"newsgroups", b"path", b"organization", b"lines",
    b"sender", b"reply-to", b"delivered-to",
})
# Real header blocks are a few kilobytes; spam with hundreds of Received lines stays under this.
_SNIFF_BYTES = 64 * 1024
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def read_bytes(raw: bytes, source: str = "-") -> Document:
    """Document of a mail/news message (it starts with a header block), else of plain text.

    The one way bytes become a Document: every command and the Python API read through it.
    """
    if raw.startswith(_UTF16_BOMS):
        # Windows Notepad's "Unicode" is UTF-16 with a byte order mark: its NULs are text.
        return Document(source, cap(raw).decode("utf-16", errors="replace"))
    raw = _clean(cap(raw))
    if _is_message(raw):
        return _message(raw, source)
    return Document(source, decode(raw).removeprefix("\ufeff"))


def parse_message(raw: bytes, source: str = "-") -> Document:
    """Document of raw read as an RFC 822 / MIME message or news article, even when it does not
    start with a header block; never raises on bad MIME. :func:`read_bytes` is the entry point
    that decides; this is for callers that know they hold a message."""
    return _message(_clean(cap(raw)), source)


def _clean(raw: bytes) -> bytes:
    """raw without NUL bytes, its CR and CRLF line ends made LF."""
    if b"\0" in raw:
        raw = raw.replace(b"\0", b"")
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return raw


def _message(raw: bytes, source: str) -> Document:
    """Document of a message whose bytes went through cap and _clean."""
    simple = _simple_message(raw, source)
    if simple is not None:
        return simple
    try:
        message = _parse(raw)
        fields = _header_fields(message)
        texts = _body(message, fields)
    except Exception:
        # The email package promises nothing on hostile input: a few kilobytes of nested
        # multiparts make it raise RecursionError; _parse refuses more than MAX_PARTS parts.
        # Keep the headers (a flat parse) and read the body as plain text.
        message = _parse_headers(raw)
        fields = _header_fields(message)
        texts = [decode(message.get_payload(decode=True) or b"")]
    return Document(source, "\n".join(texts), tuple(fields))


# The patterns of paths a mail filter seldom takes (relayed's bytes, the header scan without
# textnb/_tokens.c, long encoded headers, attachments, uuencoded files) are compiled where they
# are used, the first time (re.compile's cache holds them): not at every start-up, where
# compiling one costs 20-150 µs.
_RECEIVED = rb"^received:"
_BLANK_LINE = rb"\r?\n\r?\n"


def relayed(text: "str | bytes | Document") -> bool:
    """Whether a text is mail that names the relays it passed (a Received field): full mail,
    not a Subject and a body, a short text or a plain str."""
    if isinstance(text, Document):
        return any(name == "received" for name, _ in text.fields)
    if not isinstance(text, (bytes, bytearray)):
        return False
    import re
    head = bytes(text[:_SNIFF_BYTES])
    blank = re.search(_BLANK_LINE, head)
    received = re.compile(_RECEIVED, re.IGNORECASE | re.MULTILINE)
    return (_is_message(head) and
            received.search(head, 0, blank.start() if blank else len(head)) is not None)


def _is_message(raw: bytes) -> bool:
    """Whether raw starts with a header block: after an optional mbox "From " line, every line
    up to the first blank one is a header field or its continuation, one is a mail field, and
    a blank line follows them or there are two fields or more. A lone line such as "Date:
    tomorrow at 5?" or "To: all, meeting at 5" is a text message's words, not a header block
    without a body (all of them were lost: Date is no field whose words count)."""
    if _fast is not None:  # the same answer from C (textnb/_tokens.c): SpamAssassin 15 → 3 µs
        return _fast.is_message(raw, _MAIL_FIELDS, _SNIFF_BYTES)
    import re
    head = raw[:_SNIFF_BYTES]
    blank = head.find(b"\n\n")
    if blank >= 0:  # the lines up to the first blank one, not the whole 64 kB
        lines = head[:blank + 1].split(b"\n")
    else:
        lines = head.split(b"\n")
        if len(head) < len(raw):
            lines.pop()  # cut mid-line
    if lines and lines[0].startswith(b"From "):
        del lines[0]
    known, fields, ended = False, 0, blank >= 0
    for k, line in enumerate(lines):
        if line in (b"", b"\r"):
            # A blank line, unless it is what split() leaves after the text's last line end.
            ended = ended or line == b"\r" or k < len(lines) - 1
            break
        if line[:1] in (b" ", b"\t"):
            continue
        match = re.match(_FIELD, line)
        if match is None:
            return False
        fields += 1
        known = known or match[0][:-1].lower() in _MAIL_FIELDS
    return known and (ended or fields > 1)


def _header_fields(message: Message) -> list[tuple[str, str]]:
    from .envelope import envelope_fields
    fields = []
    items = [(name.lower(), value if isinstance(value, str) else str(value))
             for name, value in message.items()]
    for name, value in message.items():
        name = name.lower()
        if name == "content-type":
            # The type and charset alone: boundaries and other parameters are random strings.
            kind = [message.get_content_type(), _safely(message.get_content_charset)]
            fields.append((name, " ".join(filter(None, kind))))
        elif name in HEADER_FIELDS:
            text = _header_text(value)
            if text:
                fields.append((name, text))
    return fields + envelope_fields(items)


# RFC 2047's encoded word: neither its charset nor its text holds "?" or white space, so a
# search for them takes linear time. The email package's pattern allows both in the text, and
# a line of "=?a?q?x" repeated, no "?=" after them, took it quadratic time: a 64 kB Subject,
# 2.6 s. Lines longer than RFC 5322 allows (998 characters) are read with this one.
_ENCODED_WORD = r"=\?[^?\s]*\?[qQbB]\?[^?\s]*\?="
_LONGEST_LINE = 998


def _header_text(value: object) -> str:
    """A header value as one line of text: RFC 2047 words and 8-bit bytes decoded."""
    # compat32 gives a str, or an email.header.Header when the value holds raw 8-bit bytes;
    # decode_header returns the bytes of both, each with its charset (None for plain text).
    if isinstance(value, str) and "=?" not in value:
        return " ".join(value.split())  # no encoded word: what decode_header would give
    from email.header import HeaderParseError, decode_header
    try:
        if isinstance(value, str) and max(map(len, value.splitlines())) > _LONGEST_LINE:
            chunks = _encoded_words(value)
        else:
            chunks = decode_header(value)
    except HeaderParseError:  # an encoded word of bad base64: keep it as written
        chunks = [(str(value), None)]
    parts: list[str] = []
    last: object = None
    for chunk, charset in chunks:
        # decode_header drops the space between an encoded word and the plain text after it
        # (email.header.Header adds it back); two adjacent encoded words do join.
        if parts and (charset is None or last is None):
            parts.append(" ")
        parts.append(chunk if isinstance(chunk, str) else decode(chunk, charset))
        last = charset
    return " ".join("".join(parts).split())


def _encoded_words(value: str) -> list[tuple[object, str | None]]:
    """decode_header's chunks of ``value``, its encoded words found by :data:`_ENCODED_WORD`:
    the text between them as it stands, but white space alone between two of them dropped,
    as RFC 2047 says and decode_header does."""
    import re
    from email.header import decode_header
    chunks: list[tuple[object, str | None]] = []
    end = 0
    for word in re.finditer(_ENCODED_WORD, value):
        between = value[end:word.start()]
        if between and not (end and between.isspace()):
            chunks.append((between, None))
        chunks.extend(decode_header(word[0]))  # one word: the email package's own decoding
        end = word.end()
    if value[end:]:
        chunks.append((value[end:], None))
    return chunks


def _safely(read: Callable[[], str | None]) -> str | None:
    """``read()``, a MIME parameter the email package decodes (a charset, a file name), or None
    where it cannot: a parameter both continued and not (``name*=a; name*0=b``, RFC 2231) made
    Python 3.11's email.utils.decode_params raise TypeError, and the message went unread."""
    try:
        return read()
    except (TypeError, ValueError, LookupError):
        return None


def _body(message: Message, fields: list[tuple[str, str]]) -> list[str]:
    """The texts of message's text parts; appends its html, url and attachment fields."""
    texts: list[str] = []
    tags: dict[str, None] = {}
    hosts: dict[str, None] = {}
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        # A multipart that could not be split (its boundary is missing or wrong) is read as
        # the text it holds, as a mail reader shows it.
        if kind.startswith(("text/", "multipart/")):
            text = _text(part.get_payload(decode=True) or b"", _safely(part.get_content_charset),
                         kind, tags, hosts)
            if text:
                texts.append(text)
        else:
            filename = _header_text(_safely(part.get_filename) or "")
            fields.append(("attachment", f"{kind} {filename}".rstrip()))
    _markup_fields(tags, hosts, fields)
    return texts


def _text(payload: bytes, charset: str | None, kind: str, tags: dict[str, None],
          hosts: dict[str, None]) -> str:
    """The text of a decoded text part: HTML reduced to its text (its tags and link hosts
    added to ``tags`` and ``hosts``), uuencoded files named."""
    text = decode(payload, charset)
    if kind == "text/html" or _looks_like_html(text):
        from .html import html_text
        return html_text(text, tags, hosts)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if text.startswith("begin ") or "\nbegin " in text:  # where _UU_BEGIN's ^ can match
        text = _name_uuencoded(text)
    return text.strip()


def _markup_fields(tags: dict[str, None], hosts: dict[str, None],
                   fields: list[tuple[str, str]]) -> None:
    if tags:
        fields.append(("html", " ".join(tags)))
    if hosts:
        fields.append(("url", " ".join(hosts)))


# -- the common case without the email package ----------------------------------------------

# A Content-Type (or Content-Disposition) the fast path reads: a type and simple parameters,
# each a token or a quoted string without quotes, backslashes, ";" or line ends inside, not
# starting with "<" (which the email package strips from a boundary or file name), and no RFC
# 2231 "name*=": then its parser reads them as this does. No two blank runs are adjacent:
# "\s*;?\s*" made a run of spaces without ";" quadratic (a minute on 100 kB of them, issue #10).
_VALUE = r'(?:"[^"\\\n;<][^"\\\n;]*"|[^\s;"\\<][^\s;"\\]*)'
_PARAMETERS = r'((?:\s*;\s*[\w-]+\s*=\s*' + _VALUE + r')*)\s*(?:;\s*)?'
_CONTENT_TYPE = r"([\w.+-]+/[\w.+-]+)" + _PARAMETERS
_DISPOSITION = r"[\w.+-]+" + _PARAMETERS
_PARAMETER = r'([\w-]+)\s*=\s*(?:"([^"]*)"|([^\s;"]+))'
# Both are read in C where it was built (textnb/_tokens.c), their patterns compiled where it
# was not: compiling them cost every delivery's start 2.7 million instructions (callgrind).
# A header block of fields and their continuation lines, and one field of it: compat32's value
# is the text after the colon, leading blanks dropped, continuation lines kept with their line
# ends, the final line end dropped. Each line starts with a field name or a blank, so neither
# pattern can backtrack over more than a line.
_HEADER_BLOCK = r"(?:[!-9;-~]+:[^\n]*\n(?:[ \t][^\n]*\n)*)*"
_HEADER = r"([!-9;-~]+):[ \t]*([^\n]*(?:\n[ \t][^\n]*)*)\n"
# Transfer encodings whose payload the fast path decodes as the email package does (it leaves
# any other name but base64 and uuencode as it is).
_RAW_ENCODINGS = frozenset({"", "7bit", "8bit", "binary"})
# Leaf parts (and boundary lines of one multipart) and levels of nesting the fast path reads; a
# message with more is left to the email package, and to its limits: with at most 64 leaves at
# most 5 levels deep, no message here has MAX_PARTS parts.
_FAST_PARTS = 64
_FAST_DEPTH = 5


def _simple_message(raw: bytes, source: str) -> Document | None:
    """The Document of a message of text parts (plain, HTML, any text/*), multiparts of them
    and attachments, with ASCII LF header blocks, as the email package would give it (at a
    fifth of its cost for a one-part message); None for any other message.

    Most news articles and mail are such messages. Anything unusual (a message/rfc822 or
    multipart/digest part, uuencoded parts, 8-bit or CR bytes in a header, a line that is no
    header field, a boundary line right after another, parameters beyond the simple ones) is
    left to the email package, so the two paths agree exactly (tests/test_documents.py compares
    them on every message of the corpora).
    """
    headers, body = _header_block(raw, top=True)
    if headers is None:
        return None
    first = _first(headers)
    leaves: list[tuple] = []
    if not _leaves(first, body, False, 0, leaves):
        return None
    match = _content_type(first["content-type"]) if "content-type" in first else None
    kind = match[0].lower() if match else "text/plain"
    charset = _parameter(match[1], "charset") if match else None
    fields = []
    for name, value in headers:
        if name == "content-type":
            # The type and charset alone: boundaries and other parameters are random strings.
            fields.append((name, " ".join(filter(None, [kind, charset and charset.lower()]))))
        elif name in HEADER_FIELDS:
            text = _header_text(value)
            if text:
                fields.append((name, text))
    from .envelope import envelope_fields
    fields += envelope_fields(headers)
    texts: list[str] = []
    tags: dict[str, None] = {}
    hosts: dict[str, None] = {}
    for leaf in leaves:
        if len(leaf) == 2:  # (kind, file name): an attachment
            fields.append(("attachment", f"{leaf[0]} {_header_text(leaf[1] or '')}".rstrip()))
            continue
        text = _text(*leaf, tags, hosts)
        if text:
            texts.append(text)
    _markup_fields(tags, hosts, fields)
    return Document(source, "\n".join(texts), tuple(fields))


def _header_block(raw: bytes, top: bool = False) -> tuple[list[tuple[str, str]] | None, bytes]:
    """(the (lower-case name, value) fields of raw's header block, the body after it); None
    for fields the fast path leaves to the email package. ``top``: a message's own header
    block, which may open with an mbox "From " line."""
    if raw.startswith(b"\n") and not top:  # a part without fields
        return [], raw[1:]
    end = raw.find(b"\n\n")
    head, body = (raw, b"") if end < 0 else (raw[:end + 1], raw[end + 2:])
    if not head.isascii() or b"\r" in head:
        return None, body
    text = head.decode("ascii")
    if not text.endswith("\n"):
        text += "\n"  # a last line without its line end is a field too
    if top and text.startswith("From "):
        text = text[text.find("\n") + 1:]
    if _fast is not None:  # the same fields from C (textnb/_tokens.c): 36 → 19 µs a message
        return _fast.header_fields(text), body
    import re
    # Every line a header field or its continuation, checked and split by two patterns (the
    # regex engine's loop) rather than line by line in Python (a sixth of the fast path's time).
    if re.fullmatch(_HEADER_BLOCK, text) is None:
        return None, body
    return [(name.lower(), value) for name, value in re.findall(_HEADER, text)], body


def _first(headers: list[tuple[str, str]]) -> dict[str, str]:
    """Each field's first value, as Message.get gives it."""
    first: dict[str, str] = {}
    for name, value in headers:
        first.setdefault(name, value)
    return first


def _content_type(value: str) -> tuple[str, str] | None:
    """(type, parameters): the groups of _CONTENT_TYPE's match of the whole ``value``, or None."""
    if _fast is not None and value.isascii():
        return _fast.content_type(value)
    import re
    match = re.fullmatch(_CONTENT_TYPE, value)
    return match.groups() if match else None


def _parameter(parameters: str, name: str) -> str | None:
    """The value of the first parameter called ``name`` (lower case; any case in
    ``parameters``) of a _PARAMETERS match."""
    if not parameters:  # the common case: a part without parameters
        return None
    if _fast is not None and parameters.isascii():
        return _fast.parameter(parameters, name)
    import re
    return next((quoted or token for key, quoted, token in re.findall(_PARAMETER, parameters)
                 if key.lower() == name), None)


def _leaves(first: dict[str, str], body: bytes, part: bool, depth: int,
            leaves: list[tuple]) -> bool:
    """Append the leaves of the part with these fields (:func:`_first`) and body to ``leaves``,
    in the order Message.walk gives them: (payload, charset, kind) for a text part, the
    payload decoded as get_payload(decode=True) does; (kind, file name or None) for an
    attachment. False where the email package must read the part. ``part``: a part of a
    multipart, whose last line end belongs to the boundary line after it."""
    content_type = first.get("content-type")
    if content_type is None:
        kind, parameters = "text/plain", ""
    else:
        match = (_content_type(content_type)
                 if len(content_type) <= MAX_PARAMETER_FIELD else None)
        if match is None:
            return False
        kind, parameters = match[0].lower(), match[1]
    main = kind.partition("/")[0]
    if main == "multipart":
        boundary = _parameter(parameters, "boundary")
        boundary = boundary.rstrip() if boundary else boundary
        if not boundary or kind == "multipart/digest" or depth >= _FAST_DEPTH:
            return False
        return _split(body, boundary.encode("ascii"), depth + 1, leaves)
    if main == "message":
        return False
    if main == "text":
        encoding = first.get("content-transfer-encoding", "").lower()
        if part and body.endswith(b"\n"):
            body = body[:-1]
        if encoding == "quoted-printable":
            import quopri  # what Message.get_payload(decode=True) calls
            body = quopri.decodestring(body)
        elif encoding == "base64":
            from email._encoded_words import decode_b  # as get_payload(decode=True) decodes
            body = decode_b(b"".join(body.splitlines()))[0]
        elif encoding not in _RAW_ENCODINGS:
            return False
        charset = _parameter(parameters, "charset")
        leaves.append((body, charset and charset.lower(), kind))
        return len(leaves) <= _FAST_PARTS
    # An attachment: its file name is Content-Disposition's filename, else Content-Type's name.
    disposition = first.get("content-disposition")
    filename = None
    if disposition is not None:
        import re
        match = (re.fullmatch(_DISPOSITION, disposition)
                 if len(disposition) <= MAX_PARAMETER_FIELD else None)
        if match is None:
            return False
        filename = _parameter(match[1], "filename")
    if filename is None:
        filename = _parameter(parameters, "name")
    leaves.append((kind, filename.strip() if filename else None))
    return len(leaves) <= _FAST_PARTS


def _split(body: bytes, boundary: bytes, depth: int, leaves: list[tuple]) -> bool:
    """The parts of a multipart body between its ``--boundary`` lines, up to the closing
    ``--boundary--`` (or the end), read by _leaves; False where the email package must."""
    if b"\r" in body:
        return False
    separator = b"--" + boundary
    marks = []  # (where the boundary line starts, where it ends) of each, up to a closing one
    closed = False
    at = 0 if body.startswith(separator) else (body.find(b"\n" + separator) + 1 or -1)
    while at >= 0:
        end = body.find(b"\n", at)
        end = len(body) if end < 0 else end
        rest = body[at + len(separator):end]
        close = rest.startswith(b"--")
        if not rest[2 if close else 0:].strip(b" \t"):  # only blanks after it: a boundary line
            marks.append((at, end))
            if close:
                closed = True
                break
            if len(marks) > _FAST_PARTS:
                return False
        at = body.find(b"\n" + separator, end) + 1 or -1
    # A part between two boundary lines; none before the first, none after a closing one. The
    # email package makes no part of an empty line pair, nor of a preamble without boundaries.
    if not marks or closed and len(marks) == 1:
        return False
    ends = [start for start, _ in marks[1:]]
    if not closed:
        ends.append(len(body))
    for (_, start), end in zip(marks, ends):
        if start + 1 >= end:  # two boundary lines in a row, or one at the very end
            return False
        headers, payload = _header_block(body[start + 1:end])
        if headers is None or not _leaves(_first(headers), payload, True, depth, leaves):
            return False
    return True


# Common tags; a body opening with one, or holding several, is HTML whatever its MIME type says
# (compiled where a text holds a "<", not at every start).
_HTML_TAG = r"<(?:html|!doctype|head|body|br|p|div|table|tr|td|font|a\s+href|img)\b"
# The first line of a uuencoded file in a body ("begin 644 name" ... "end"): its lines are junk
# to a tokenizer. The "end" line is found with str.find: a pattern that matched up to it
# rescanned the rest of the text from every "begin" line without one (quadratic, issue #10).
_UU_BEGIN = r"^begin [0-7]{3,4} (\S[^\n]*)\n"


# _HTML_TAG's names, for the scan of ASCII text by str methods (_tag_at).
_HTML_NAMES = ("html", "!doctype", "head", "body", "br", "p", "div", "table", "tr", "td", "font",
               "img")


def _looks_like_html(text: str) -> bool:
    """Whether a text opens with one of _HTML_TAG's tags or holds five (in its first 4 kB)."""
    # Old spam sends HTML without a MIME header, so as text/plain; a mail reader shows it as HTML.
    head = text[:4096]
    if "<" not in head:
        return False
    if "\u0130" not in head and "\u0131" not in head:
        # By str methods, the same answer: the regular expression engine (with enum, a share of
        # a mail filter's start) was imported for a third of its mail.
        # Each match starts at a "<" and holds no other, so findall's count is that of the
        # "<" where a match starts. re.IGNORECASE takes "İ" and "ı" for an "i" (they are left
        # to it); lower() gives every other character one character, an ASCII letter only for
        # one of its capitals (and "K", the Kelvin sign, for "k", as re does).
        lower = head.lower()
        stripped = lower.lstrip()
        if stripped[:1] == "<" and _tag_at(stripped, 1):
            return True
        found, at = 0, lower.find("<")
        while at >= 0 and found < 5:
            found += _tag_at(lower, at + 1)
            at = lower.find("<", at + 1)
        return found >= 5
    import re
    tag = re.compile(_HTML_TAG, re.IGNORECASE)
    return head.lstrip()[:1] == "<" and tag.match(head.lstrip()) is not None \
        or len(tag.findall(head)) >= 5


def _tag_at(lower: str, at: int) -> bool:
    """Whether _HTML_TAG matches at the "<" before lower[at], in lower-case ASCII ``lower``:
    a name, or "a", white space and "href", then no word character (\\b)."""
    def ends(k: int) -> bool:
        return not (lower[k:k + 1].isalnum() or lower[k:k + 1] == "_")

    for name in _HTML_NAMES:
        if lower.startswith(name, at) and ends(at + len(name)):
            return True
    if not lower.startswith("a", at):
        return False
    k = at + 1
    while lower[k:k + 1].isspace():
        k += 1
    return k > at + 1 and lower.startswith("href", k) and ends(k + 4)


def _name_uuencoded(text: str) -> str:
    """text with each uuencoded file, from its "begin" line to its "end" line, standing as an
    attachment does: "uuencoded name"."""
    out: list[str] = []
    import re
    pos = 0
    uu_begin = re.compile(_UU_BEGIN, re.MULTILINE)
    while (begin := uu_begin.search(text, pos)) is not None:
        end = _end_line(text, begin.end() - 1)
        if end < 0:  # no "end" line after this one, nor after any later "begin"
            break
        out += [text[pos:begin.start()], f"uuencoded {begin[1]}"]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _end_line(text: str, newline: int) -> int:
    """The position after the first line "end" that follows the line end at ``newline``, or -1."""
    while (found := text.find("\nend", newline)) >= 0:
        after = found + 4
        if after == len(text) or text[after] == "\n":
            return after
        newline = after
    return -1


# A message's text, even a long newsletter, is tens of kilobytes; what lies beyond a megabyte
# is attachments, which give no tokens (only their MIME headers do). The cap bounds the time
# and memory one stray file (a disk image in a corpus directory, a video mailed through
# procmail) can cost. SpamAssassin's spamc stops at 500 KB for the same reason.
MAX_BYTES = 1 << 20


def cap(raw: bytes) -> bytes:
    """The first MAX_BYTES of raw, cut after a line end when there is one."""
    if len(raw) <= MAX_BYTES:
        return raw
    end = raw.rfind(b"\n", 0, MAX_BYTES)
    return raw[:end + 1] if end >= 0 else raw[:MAX_BYTES]
