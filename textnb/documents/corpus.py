"""labelled directories and mailboxes → (class, path) pairs: a directory or mailbox trains the
class it is named after (spam/, spam.mbox), ``NAME=PATH`` names one, and a directory holding
only subdirectories gives one class each (the 20 Newsgroups layout)."""

from __future__ import annotations

import os
from typing import Sequence

from ..errors import DocumentError, UsageError
from .sources import is_maildir


# Mailbox files and folders are named for what they hold plus one of these (Thunderbird and
# mutt: spam.mbox; Eudora and Pegasus: spam.mbx; Apple Mail exports a spam.mbox directory).
MAILBOX_SUFFIXES = (".mbox", ".mbx")


def class_name(path: str) -> str:
    """The class a directory or mailbox trains: its name, without a mailbox suffix."""
    name = os.path.basename(os.path.normpath(path))
    stem, suffix = os.path.splitext(name)
    return stem if stem and suffix.lower() in MAILBOX_SUFFIXES else name


def labelled_sources(dirs: Sequence[str], labels: Sequence[str]) -> list[tuple[str, str]]:
    """(class, path) pairs: each DIR is a class named after it (spam.mbox: spam); --label
    NAME=PATH names one; a single DIR holding only subdirectories gives one class per
    subdirectory (20 Newsgroups)."""
    sources = []
    for spec in labels:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"Invalid value for --label: expected NAME=PATH, got {spec!r}")
        if not os.path.exists(path):
            raise DocumentError(f"no such file or directory: {path} (--label {name})")
        sources.append((name, path))
    for directory in dirs:
        if not os.path.exists(directory):
            raise DocumentError(f"no such file or directory: {directory}")
    if len(dirs) == 1 and not labels and os.path.isdir(dirs[0]) and not is_maildir(dirs[0]):
        entries = [e for e in sorted(os.scandir(dirs[0]), key=lambda e: e.name)
                   if not e.name.startswith(".")]
        if entries and all(e.is_dir() for e in entries):
            return [(class_name(e.path), e.path) for e in entries]
    sources += [(class_name(d), d) for d in dirs]
    if not sources:
        raise UsageError("give the training directories, e.g. textnb train spam/ ham/")
    return sources
