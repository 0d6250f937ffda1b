#!/usr/bin/env python3
"""Rewrite a mail corpus in the shapes of corpora we do not have, to see the defaults there.

The mail corpora the defaults are judged on are not all full RFC 822 mail: a mailing-list
corpus keeps a Subject line and a body (Ling-Spam's "bare" form: lower case, words and
punctuation spaced), an SMS corpus has no headers and 160 characters. This script writes a
copy of a SpamAssassin-layout corpus (one directory per part: easy_ham/, spam/, ...) in one
of those shapes, file for file, so that ``scripts/bench_spam.py --data OUT`` compares textnb
and bogofilter on it:

* ``subject-body``: ``Subject: <subject>`` and the text of the text/* parts (HTML tags
  dropped), lower-cased, each word and punctuation mark separated by a space;
* ``short``: the text parts' first 160 characters, white space collapsed, no header.

Run::

    python scripts/reduce_corpus.py corpora/full/spamassassin /tmp/subject-body subject-body
    python scripts/bench_spam.py --data /tmp/subject-body
"""

from __future__ import annotations

import argparse
import email
import email.policy
import html
import re
from pathlib import Path

_WORDS = re.compile(r"\w+|[^\w\s]")
_TAG = re.compile(r"<[^>]*>")
SMS_LENGTH = 160


def text_parts(raw: bytes) -> str:
    """The decoded text/* parts of a message (HTML reduced to its text), joined by newlines."""
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    texts = []
    for part in message.walk():
        if part.get_content_maintype() != "text":
            continue
        text = (part.get_payload(decode=True) or b"").decode("latin-1")
        if part.get_content_subtype() == "html":
            text = html.unescape(_TAG.sub(" ", text))
        texts.append(text)
    return "\n".join(texts)


def reduce(raw: bytes, shape: str) -> str:
    """One message in the given shape (``subject-body`` or ``short``)."""
    body = text_parts(raw)
    if shape == "short":
        return " ".join(body.split())[:SMS_LENGTH] + "\n"
    subject = str(email.message_from_bytes(raw, policy=email.policy.compat32).get("Subject") or "")
    spaced = lambda text: " ".join(_WORDS.findall(text.lower()))  # noqa: E731
    return f"Subject: {spaced(subject)}\n\n{spaced(body)}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a directory of parts, each of message files")
    parser.add_argument("target", type=Path, help="where the reduced copy goes (created)")
    parser.add_argument("shape", choices=("subject-body", "short"))
    args = parser.parse_args()
    count = 0
    for part in sorted(p for p in args.source.iterdir() if p.is_dir()):
        (args.target / part.name).mkdir(parents=True, exist_ok=True)
        for path in sorted(part.iterdir()):
            (args.target / part.name / path.name).write_text(
                reduce(path.read_bytes(), args.shape), encoding="utf-8")
            count += 1
    print(f"{count} messages written to {args.target} ({args.shape})")


if __name__ == "__main__":
    main()
