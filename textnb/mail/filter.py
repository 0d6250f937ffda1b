"""message bytes + header lines → the same bytes with X-TextNB-* headers at the top.

A procmail filter must give back the message it was given: only the X-TextNB-* lines change.
The work is done on bytes, without the email package, so that a message's encoding, folding,
line endings and malformed parts are untouched and a large message costs one copy.
"""

from __future__ import annotations

import os

from ..decision.rules import decide, headers, spam_cutoffs

TYPE_CHECKING = False  # typing costs a mail filter's start-up 4 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import BinaryIO

HEADER_PREFIX = "X-TextNB-"
_OURS = HEADER_PREFIX.lower().encode()

# The bytes of a field name: printable ASCII but ":" (RFC 5322's ftext). Field names are checked
# with bytes.translate, not patterns: compiling four patterns cost every delivery 0.5 ms
# (python -X importtime), a fifth of what the filter adds to Python's start.
_FTEXT = bytes(range(0x21, 0x7F)).replace(b":", b"")


def _field_name(raw: bytes, pos: int, end: int) -> bytes | None:
    """The name of the header field whose line is raw[pos:end] (ftext, then a colon), or None
    where the line is no header field."""
    colon = raw.find(b":", pos, end)
    name = raw[pos:colon]
    return name if colon > pos and not name.translate(None, _FTEXT) else None


def add_headers(raw: bytes, headers: Sequence[tuple[str, str]], whole: bool = True) -> bytes:
    """raw with ``headers`` first in its header block and its old X-TextNB-* fields removed.

    The new lines go after a leading mbox "From " line and end as the message's first line
    does (CRLF, LF, or CR alone as old Macs wrote). Header values are made one line. Input
    without a header block gets a blank line after the new headers, so that its first line
    stays out of them. ``whole``: False where raw is only the head of a message whose rest
    follows unchanged; its header block must then end in it, every line of it whole (else
    ValueError: a field cut in two could not be told ours or not).
    """
    # Lines end at LF; in a message whose first line break is a CR alone (old Macs), at CR.
    lf = raw.find(b"\n")
    cr = raw.find(b"\r", 0, lf if lf >= 0 else len(raw))
    sep = b"\r" if cr >= 0 and cr + 1 != lf else b"\n"
    first_end = raw.find(sep) + 1
    eol = sep if sep == b"\r" else b"\r\n" if raw[:first_end].endswith(b"\r\n") else b"\n"
    start = first_end if first_end and raw.startswith(b"From ") else 0
    lines = b"".join(_line(name, value, eol) for name, value in headers)

    chunks = [raw[:start], lines]
    kept = pos = start  # raw[kept:pos] is still to be copied
    dropping = False  # inside an X-TextNB-* field, whose continuation lines go with it
    while pos < len(raw):
        end = raw.find(sep, pos) + 1
        if not end and not whole:
            break  # a line cut where the head ends: beyond what can be rewritten
        end = end or len(raw)
        if raw[pos:pos + 1] in (b" ", b"\t") and pos > start:
            drop = dropping
        elif (name := _field_name(raw, pos, end)) is not None:
            drop = dropping = name[:len(_OURS)].lower() == _OURS
        else:  # the blank line ending the header block, or the body of a message without one
            if pos == start and raw[pos:end].strip(b"\r\n"):
                chunks.append(eol)
            break
        if drop:
            chunks.append(raw[kept:pos])
            kept = end
        pos = end
    else:
        pos = -1  # the header block ran to the end of raw
    if not whole and (pos < 0 or raw.find(sep, pos) < 0):
        raise ValueError("its header block does not end in its first MiB")
    chunks.append(raw[kept:])
    return b"".join(chunks)


def _line(name: str, value: str, eol: bytes) -> bytes:
    field = name.encode("ascii") if name.isascii() else b""
    if not (len(field) > len(_OURS) and field[:len(_OURS)].lower() == _OURS
            and not field.translate(None, _FTEXT)):
        raise ValueError(f"header name must be {HEADER_PREFIX} and a field name, not {name!r}")
    # One line: a CR or LF in a value would end the header early or start a forged one.
    return f"{name}: {' '.join(value.split())}".encode() + eol


def read_head(stream: BinaryIO) -> tuple[bytes, bool]:
    """(head, whole): the first MAX_BYTES + 1 bytes of a message on ``stream`` (the filter
    classifies its first MAX_BYTES, as every command reads a document) and whether that is the
    whole message; else its rest is still to be read from ``stream``, and passed through."""
    from ..documents.message import MAX_BYTES
    head = stream.read(MAX_BYTES + 1)
    return head, len(head) <= MAX_BYTES


def filter_message(raw: bytes, model: str | os.PathLike, spam_class: str | None = None,
                   spam_cutoff: float | None = None, ham_cutoff: float | None = None,
                   whole: bool = True) -> bytes:
    """raw with the X-TextNB-* headers of its classification by the model file ``model``.

    A two-class model with a spam class (``spam_class``, else the one its cutoffs were learned
    for, else "spam") gives Class (spam, ham or unsure by the cutoffs on the log-odds: those
    given on P(spam|x), else those the model learned, see :func:`~textnb.decision.rules.spam_cutoffs`),
    Status (Yes, No, Unsure), Probability (P(spam|x)) and Log-Odds
    (ln P(spam|x) − ln P(ham|x), which does not saturate); any other model gives the most
    probable class, its probability and its log-odds over the runner-up. ``whole``: False
    where raw is the head of a longer message (:func:`read_head`), whose rest follows unchanged
    (:func:`add_headers`). Raises on any failure: the caller delivers the message unchanged.
    """
    from ..documents.message import read_bytes
    from ..store.scorer import score

    document = read_bytes(raw)
    classes, row, learned, counted = score(model, document.text, document.fields)
    cutoffs = spam_cutoffs(classes, learned, spam_class, spam_cutoff, ham_cutoff,
                           learned_errors=counted)
    decision = decide(classes, row, "-", cutoffs)
    return add_headers(raw, headers(decision), whole)


def classify_file(path: str, model: str | os.PathLike, spam_class: str | None = None,
                  spam_cutoff: float | None = None, ham_cutoff: float | None = None,
                  threshold: float | None = None) -> dict:
    """The decision on the one document at ``path`` ("-": standard input) by the model file
    ``model``, as ``classify --exit-code`` prints it (:func:`~textnb.decision.rules.decide`,
    with the cutoffs of :func:`~textnb.decision.rules.spam_cutoffs`); ValueError unless the
    path is one readable document and the model has a spam class."""
    from ..documents.message import read_bytes
    from ..documents.sources import read_raw
    from ..store.scorer import score

    problems: list[tuple[str, str]] = []
    documents = list(read_raw([path], on_error=lambda *problem: problems.append(problem)))
    if problems or len(documents) != 1:
        raise ValueError("not one readable document")
    source, raw = documents[0]
    document = read_bytes(raw, source)
    classes, row, learned, counted = score(model, document.text, document.fields)
    cutoffs = spam_cutoffs(classes, learned, spam_class, spam_cutoff, ham_cutoff, threshold,
                           learned_errors=counted)
    if cutoffs is None:
        raise ValueError("no spam class")
    return decide(classes, row, source, cutoffs)
