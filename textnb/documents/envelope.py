"""header fields → the fields a spam filter learns from the envelope: relays, domains, shapes.

SpamBayes and bogofilter learn from every header, not only Subject and From: the relays a
message passed (Received hosts and their IP prefixes), the domains of its addresses, the shape
of its Message-ID, its encodings and its time zone mark the software and networks that send
spam. Each becomes a field of its own, so its tokens get their own prefix (``ip:64.12``,
``received:mx.example.com``, ``return-path-domain:example.com``, ``message-id-shape:9.a9``).

They rank spam better than the fields of :data:`textnb.documents.message.HEADER_FIELDS`
alone (docs/design/tokens.md; ``python -m bench.spam --cv`` measures it).

Every pattern here matches from a token's start only (a look-behind), so it reads a header in
one pass whatever its content: a hostile header of a megabyte costs linear time.
"""

from __future__ import annotations

import itertools

from ..decoding import POSSESSIVE

TYPE_CHECKING = False  # typing costs a mail filter's start-up 4 ms
if TYPE_CHECKING:
    from collections.abc import Iterable

try:  # the C twins of the scans (textnb/_tokens.c), where they were built
    from .. import _tokens as _fast
except ImportError:
    _fast = None

# At most this much of one header value is read: real ones are under a kilobyte.
MAX_VALUE = 4096
# At most this many header fields are read: a message relayed 30 times has 30 Received lines,
# and a crafted one with 24,000 of them costs no more than one with this many.
MAX_FIELDS = 256
# Address headers whose domains are evidence. From, To and Cc are left out: their words are
# tokens already, and their domains again cost 20 Newsgroups 0.3 points of accuracy.
_ADDRESS_FIELDS = ("reply-to", "return-path", "sender")
# Headers whose whole (short) value is a token: encodings, priorities, list software.
_VALUE_FIELDS = frozenset({"content-transfer-encoding", "mime-version", "x-priority",
                           "x-msmail-priority", "importance", "precedence"})
# Every field read here.
_READ = frozenset({"received", "message-id", "date", *_ADDRESS_FIELDS, *_VALUE_FIELDS})

_compiled: tuple | None = None  # _patterns(), once compiled


def _patterns() -> tuple:
    """(IP, HOST, DOMAIN, MESSAGE_ID, ZONE, SHAPES): the Python scans' patterns, compiled when
    first needed (a value not ASCII, or textnb/_tokens.c not built), not at every start-up of
    the mail filter, whose scans run in C (nor is the regular expression engine imported)."""
    global _compiled
    if _compiled is None:
        _compiled = _compile()
    return _compiled


def _compile() -> tuple:
    import re
    # The look-behind follows the first digit, so that the pattern starts with a digit: the
    # regex engine then skips to the next digit in C rather than trying the look-behind at
    # every character (40 % less time on SpamAssassin's Received lines, same matches).
    ip = re.compile(r"(\d(?<![\d.]\d)\d{0,2})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\d.])")
    # Possessive repeats (where Python has them): no label can give back characters to a "."
    # that must follow it, so the matches are the same, found a fifth faster.
    host = re.compile(r"(?<![\w.-])[a-z\d][\w-]*" + POSSESSIVE + r"(?:\.[\w-]+" + POSSESSIVE
                      + r")+")
    domain = re.compile(r"(?<=@)[\w-]+(?:\.[\w-]+)+")
    message_id = re.compile(r"<?([^@<>\s]{0,200})@?([^>\s]{0,200})")
    zone = re.compile(r"([+-]\d{4}|[A-Z]{1,5})\W*$")  # -0700, or an abbreviation: GMT, (PDT)
    shapes = ((re.compile(r"\d+"), "9"), (re.compile(r"[a-z]+"), "a"),
              (re.compile(r"[A-Z]+"), "A"))
    return ip, host, domain, message_id, zone, shapes


def envelope_fields(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The extra fields of a message's headers, given as (lower-case name, value) pairs."""
    headers = list(itertools.islice(headers, MAX_FIELDS))
    if _fast is not None:  # in C, where every value read is ASCII: 22 → 11 µs a message
        fields = _fast.envelope(headers, _READ, _ADDRESS_FIELDS, _VALUE_FIELDS, MAX_FIELDS,
                                MAX_VALUE)
        if fields is not None:
            return fields
    return _python_envelope_fields(headers)


def _python_envelope_fields(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """envelope_fields in Python: where a value is not ASCII, or textnb/_tokens.c not built."""
    _, _, domain, message_id, zone_mark, shapes = _patterns()
    fields: list[tuple[str, str]] = []
    for name, value in headers:
        if name not in _READ:  # most of a message's fields, tested once
            continue
        value = value[:MAX_VALUE]
        if name == "received":
            ips, hosts = _received(value.lower())
            if ips:
                fields.append(("ip", ips))
            if hosts:
                fields.append(("received", hosts))
        elif name in _ADDRESS_FIELDS:
            domains = domain.findall(value.lower())
            if domains:
                fields.append((f"{name}-domain", _joined(domains + [_registered(d) for d in domains])))
                fields.append((f"{name}-tld", _joined(d.rsplit(".", 1)[-1] for d in domains)))
        elif name == "message-id":
            match = message_id.match(value.strip())
            if match and match[0]:
                shape = match[1]
                for pattern, mark in shapes:
                    shape = pattern.sub(mark, shape)
                fields.append(("message-id-shape", shape[:30]))
                if match[2]:
                    fields.append(("message-id-domain", match[2].lower()))
        elif name in _VALUE_FIELDS:
            fields.append((name, " ".join(value.lower().split())[:40]))
        elif name == "date":
            zone = zone_mark.search(value.strip()[-40:])
            fields.append(("date-zone", zone[1] if zone else "none"))
    return fields


def _python_received(value: str) -> tuple[str, str]:
    """(its addresses' prefixes "a.b a.b.c a.b.c.d …", its distinct host names, not all
    digits, then their registered domains) of a lower-case Received field, "" for none."""
    ip, host = _patterns()[:2]
    ips = " ".join(f"{a}.{b} {a}.{b}.{c} {a}.{b}.{c}.{d}" for a, b, c, d in ip.findall(value))
    hosts = [h for h in host.findall(value) if not h.replace(".", "").isdigit()]
    return ips, _joined(hosts + [_registered(h) for h in hosts])


# The same, in C where it was built (textnb/_tokens.c): Received fields, some eight a message,
# were most of the time reading a message took (20 Newsgroups' posts have none).
_received = _fast.received if _fast is not None else _python_received


def _joined(words: Iterable[str]) -> str:
    """The distinct words, in their first order, as one field value."""
    return " ".join(dict.fromkeys(words))


def _registered(host: str) -> str:
    """The last two labels of a host name: the domain a sender registers (example.com)."""
    return ".".join(host.rsplit(".", 2)[-2:])
