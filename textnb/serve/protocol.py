"""spamd's protocol, as spamc speaks it: request lines and fields checked, spamd's error lines,
and the parts of an answer (the score on spamc's scale, the Spam: field, the SpamAssassin
header fields). See SpamAssassin's spamd/PROTOCOL file."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Any


# spamd's default required score: recipes and MTA settings written for SpamAssassin compare
# against it, and spamc prints it after the score.
THRESHOLD = 5.0


# Scores shown are clamped here: an infinite cutoff (--spam-cutoff 1) must not print "inf".
SCORE_LIMIT = 999.9


# spamd reads at most 255 header fields; a request's lines are short (spamc's are < 100 bytes).
MAX_FIELDS = 255


MAX_LINE = 8192


METHODS = frozenset({"PING", "SKIP", "CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS",
                     "HEADERS", "TELL"})


_REQUEST_LINE = re.compile(rb"([A-Z_]+) SPAMC/(\S*)\r?\n")


_VERSION = re.compile(rb"(\d{1,3})\.(\d{1,3})")


# Content-length: ASCII digits (str.isdigit takes "²", which int() refuses), at most ten.
_DIGITS = re.compile(r"[0-9]+")


MAX_DIGITS = 10


class Code(enum.IntEnum):
    """The sysexits.h codes spamd answers with (spamc exits with some of them under -x)."""

    EX_OK = 0
    EX_UNAVAILABLE = 69
    EX_PROTOCOL = 76
    EX_TIMEOUT = 79
    EX_TOOBIG = 98


class RequestError(Exception):
    """A request answered with an error line, as spamd words them."""

    def __init__(self, code: Code, text: str) -> None:
        super().__init__(text)
        self.code, self.text = code, text

    def answer(self) -> bytes:
        return f"SPAMD/1.0 {int(self.code)} {self.text}\r\n".encode("latin-1", "replace")


def bad_request(reason: str) -> RequestError:
    return RequestError(Code.EX_PROTOCOL, f"Bad header line: ({reason})")


def spamc_score(spam_log_odds: float, spam_cutoff: float, ham_cutoff: float) -> float:
    """The score spamc shows for a message, from its spam log-odds ln P(spam|x)/P(ham|x) and
    the cutoffs on the log-odds (spam at or above ``spam_cutoff``, ham at or below
    ``ham_cutoff``): linear, the ham cutoff at 0 and the spam cutoff at THRESHOLD, so one
    point is (spam_cutoff − ham_cutoff)/5 nats; with equal or infinite cutoffs one point is
    one nat, the spam cutoff still at THRESHOLD. Clamped to ±SCORE_LIMIT."""
    width = spam_cutoff - ham_cutoff
    nats_per_point = width / THRESHOLD if math.isfinite(width) and width > 0 else 1.0
    score = THRESHOLD + (spam_log_odds - spam_cutoff) / nats_per_point
    return max(-SCORE_LIMIT, min(SCORE_LIMIT, score)) if not math.isnan(score) else 0.0


def shown_score(decision: dict[str, Any]) -> float:
    """The score as spamc shows it, agreeing with the verdict as spamd's
    get_tag_value_for_score makes it: a spam at least THRESHOLD, a non-spam below it."""
    score = round(decision["score"], 1)
    if decision["status"] == "spam":
        return max(score, THRESHOLD)
    return THRESHOLD - 0.1 if score >= THRESHOLD else score


def spam_field_value(decision: dict[str, Any], method: str) -> str:
    """The ``Spam:`` field's value: ``True ; 11.8 / 5.0`` (Yes/No for REPORT_IFSPAM)."""
    yes, no = ("Yes", "No") if method == "REPORT_IFSPAM" else ("True", "False")
    spam = decision["status"] == "spam"
    return f"{yes if spam else no} ; {shown_score(decision):.1f} / {THRESHOLD:.1f}"


def symbol(decision: dict[str, Any]) -> str:
    return f"TEXTNB_{decision['status'].upper()}"


_SA_FIELD = re.compile(rb"X-Spam-(?:Flag|Status):", re.IGNORECASE)


def spamassassin_fields(message: bytes, decision: dict[str, Any]) -> bytes:
    """message (with a header block, as textnb.mail.filter.add_headers leaves it) with
    X-Spam-Status, and X-Spam-Flag: YES for spam, first in its header block, and its own
    X-Spam-Flag and X-Spam-Status fields (with their continuation lines) removed: a sender
    cannot forge the verdict that a recipe written for SpamAssassin tests."""
    spam = decision["status"] == "spam"
    lines = message.splitlines(keepends=True)
    eol = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
    start = 1 if message.startswith(b"From ") else 0
    ours = [b"X-Spam-Flag: YES" + eol] if spam else []
    ours.append(f"X-Spam-Status: {'Yes' if spam else 'No'}, score={shown_score(decision):.1f} "
                f"required={THRESHOLD:.1f} tests={symbol(decision)}".encode() + eol)
    kept, dropping, end = [], False, start
    while end < len(lines) and lines[end].strip(b"\r\n"):
        line = lines[end]
        if line[:1] not in (b" ", b"\t"):
            dropping = _SA_FIELD.match(line) is not None
        if not dropping:
            kept.append(line)
        end += 1
    return b"".join(lines[:start] + ours + kept + lines[end:])


def header_block(message: bytes) -> bytes:
    """The message up to and including the blank line after its header fields (HEADERS)."""
    ends = [at + len(sep) for sep in (b"\n\n", b"\n\r\n") if (at := message.find(sep)) >= 0]
    return message[:min(ends)] if ends else message


@dataclass
class Request:
    method: str
    version: tuple[int, int]
    fields: dict[str, str]
    body: bytes = b""


def check_length(value: str, fields: dict[str, str], max_size: int) -> None:
    """RequestError unless ``value`` is a request's one Content-length: ASCII digits, at
    most MAX_DIGITS of them, a number up to ``max_size``."""
    if "content-length" in fields:
        raise bad_request("more than one Content-Length")
    if not _DIGITS.fullmatch(value):
        raise bad_request("Content-Length contains non-numeric bytes")
    if len(value) > MAX_DIGITS:
        raise bad_request(f"Content-Length of more than {MAX_DIGITS} digits")
    if (size := int(value)) > max_size:
        raise too_big(size, max_size)


def request_line(line: bytes) -> Request:
    """The request of a ``METHOD SPAMC/1.x`` line; RequestError for anything else."""
    if not line:
        raise bad_request("closed before headers")
    match = _REQUEST_LINE.fullmatch(line)
    if match is None:
        raise bad_request(f"not a spamc request: {printable(line)}")
    method = match[1].decode()
    version = _VERSION.fullmatch(match[2])
    if version is None or version[1] != b"1":
        raise bad_request(f"unsupported protocol version SPAMC/{printable(match[2])}; this is 1.x")
    if method not in METHODS:
        raise bad_request(f"unknown method {printable(method)}")
    return Request(method, (int(version[1]), int(version[2])), {})


def too_big(size: int | None, limit: int) -> RequestError:
    said = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return RequestError(Code.EX_TOOBIG, f"Message too big: {said}, the limit is {limit}")


def printable(data: bytes | str, limit: int = 60) -> str:
    """At most ``limit`` characters of untrusted bytes or text, fit for one log or answer
    line."""
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    return "".join(c if " " <= c <= "~" else "?" for c in text[:limit])
