"""message bytes + header lines → the same bytes with X-TextNB-* headers at the top.

A procmail filter must give back the message it was given: only the X-TextNB-* lines change.
The work is done on bytes, without the email package, so that a message's encoding, folding,
line endings and malformed parts are untouched and a large message costs one copy.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

HEADER_PREFIX = "X-TextNB-"

# Default cutoffs on P(spam|x), as bogofilter's spam_cutoff/ham_cutoff: at or above SPAM_CUTOFF
# is spam, at or below HAM_CUTOFF is ham, between is unsure.
SPAM_CUTOFF = 0.99
HAM_CUTOFF = 0.5

# A header field line: a field name (printable ASCII but ":") and a colon.
_FIELD = re.compile(rb"[!-9;-~]+:")
_OURS = re.compile(re.escape(HEADER_PREFIX.encode()) + rb"[!-9;-~]*:", re.IGNORECASE)
_NAME = re.compile(re.escape(HEADER_PREFIX) + r"[!-9;-~]+", re.IGNORECASE)


def add_headers(raw: bytes, headers: Sequence[tuple[str, str]]) -> bytes:
    """raw with ``headers`` first in its header block and its old X-TextNB-* fields removed.

    The new lines go after a leading mbox "From " line and end as the message's first line
    does (CRLF or LF). Header values are made one line. Input without a header block gets a
    blank line after the new headers, so that its first line stays out of them.
    """
    first_end = raw.find(b"\n") + 1
    eol = b"\r\n" if raw[:first_end].endswith(b"\r\n") else b"\n"
    start = first_end if first_end and raw.startswith(b"From ") else 0
    lines = b"".join(_line(name, value, eol) for name, value in headers)

    chunks = [raw[:start], lines]
    kept = pos = start  # raw[kept:pos] is still to be copied
    dropping = False  # inside an X-TextNB-* field, whose continuation lines go with it
    while pos < len(raw):
        end = raw.find(b"\n", pos) + 1 or len(raw)
        if raw[pos:pos + 1] in (b" ", b"\t") and pos > start:
            drop = dropping
        elif _FIELD.match(raw, pos):
            drop = dropping = _OURS.match(raw, pos) is not None
        else:  # the blank line ending the header block, or the body of a message without one
            if pos == start and raw[pos:end].strip(b"\r\n"):
                chunks.append(eol)
            break
        if drop:
            chunks.append(raw[kept:pos])
            kept = end
        pos = end
    chunks.append(raw[kept:])
    return b"".join(chunks)


def _line(name: str, value: str, eol: bytes) -> bytes:
    if not _NAME.fullmatch(name):
        raise ValueError(f"header name must be {HEADER_PREFIX} and a field name, not {name!r}")
    # One line: a CR or LF in a value would end the header early or start a forged one.
    return f"{name}: {' '.join(value.split())}".encode() + eol


def filter_message(raw: bytes, model: str | os.PathLike, spam_class: str = "spam",
                   spam_cutoff: float = SPAM_CUTOFF, ham_cutoff: float = HAM_CUTOFF) -> bytes:
    """raw with the X-TextNB-* headers of its classification by the model file ``model``.

    A two-class model with a class named ``spam_class`` gives Class (spam, ham or unsure by
    the cutoffs on P(spam|x)), Status (Yes, No, Unsure), Probability (P(spam|x)) and Log-Odds
    (ln P(spam|x) − ln P(ham|x), which does not saturate); any other model gives the most
    probable class, its probability and its log-odds over the runner-up. Raises on any
    failure: the caller delivers the message unchanged.
    """
    from .documents import parse_message
    from .scorer import Scorer

    scorer = Scorer(model)
    document = parse_message(raw)
    row = scorer.log_proba(document.text, document.fields)
    classes = [str(c) for c in scorer.classes]
    if len(classes) == 2 and spam_class in classes:
        s = classes.index(spam_class)
        p_spam = math.exp(row[s])
        status = "spam" if p_spam >= spam_cutoff else "ham" if p_spam <= ham_cutoff else "unsure"
        label = {"spam": spam_class, "ham": classes[1 - s], "unsure": "unsure"}[status]
        headers = [("X-TextNB-Class", label),
                   ("X-TextNB-Status", {"spam": "Yes", "ham": "No", "unsure": "Unsure"}[status]),
                   ("X-TextNB-Probability", f"{p_spam:.6f}"),
                   ("X-TextNB-Log-Odds", f"{row[s] - row[1 - s]:.4f}")]
    else:
        # The first most probable class, as numpy's stable argsort picks it in classify.
        order = sorted(range(len(row)), key=lambda c: -row[c])
        best = order[0]
        log_odds = row[best] - row[order[1]] if len(order) > 1 else 0.0
        headers = [("X-TextNB-Class", classes[best]),
                   ("X-TextNB-Probability", f"{math.exp(row[best]):.6f}"),
                   ("X-TextNB-Log-Odds", f"{log_odds:.4f}")]
    return add_headers(raw, headers)


def quick_options(args: Sequence[str]) -> dict | None:
    """``textnb filter``'s options as filter_message's keywords, when they are the usual ones
    (-m/--model, --spam-class, --spam-cutoff, --ham-cutoff, well formed); None otherwise, so
    that the full command line, with its help and error messages, takes over."""
    from .paths import default_model_path

    names = {"-m": "model", "--model": "model", "--spam-class": "spam_class",
             "--spam-cutoff": "spam_cutoff", "--ham-cutoff": "ham_cutoff"}
    options: dict = {}
    args = list(args)
    while args:
        name, equals, value = args.pop(0).partition("=")
        if name not in names or (equals and name == "-m") or (not equals and not args):
            return None
        value = value if equals else args.pop(0)
        if names[name].endswith("cutoff"):
            try:
                value = float(value)
            except ValueError:
                return None
            if not 0.0 <= value <= 1.0:
                return None
        options[names[name]] = value
    options.setdefault("model", default_model_path())
    if options.get("ham_cutoff", HAM_CUTOFF) > options.get("spam_cutoff", SPAM_CUTOFF):
        return None
    return options
