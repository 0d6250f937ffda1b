"""``textnb imap train``'s first half: the messages of IMAP folders as files, one directory
a class, for ``textnb train`` to train on exactly as on files (the second half). Each
message is its first megabyte as the server stores it, the most textnb reads of a file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from . import mailbox

if TYPE_CHECKING:
    from imapclient import IMAPClient

_SAFE = re.compile(r"[^\w.@+-]")  # a folder's name as part of a file name


def download(client: "IMAPClient", sources: Sequence[tuple[str, str]], directory: Path,
             problem: Callable[[str], None]) -> dict[str, int]:
    """Write the messages of each (class, folder) to ``directory/CLASS/NNN FOLDER/UID.eml``
    (NNN: the source's place in ``sources``, so that the files are read in that order, each
    folder's by UID); messages of each folder, by folder. Messages the server would not give
    are reported to ``problem`` and left out."""
    counts = {}
    for i, (label, folder) in enumerate(sources):
        mailbox.select(client, folder, readonly=True)
        target = directory / label / f"{i:03d} {_SAFE.sub('_', folder)}"
        target.mkdir(parents=True)
        n = 0
        uids = mailbox.new_uids(client, 0)
        for batch in mailbox.batches(uids, mailbox.large(client, uids)):
            messages, failed = mailbox.fetch(client, batch)
            for uid, message in messages.items():
                (target / f"{uid:010d}.eml").write_bytes(message.raw)
            n += len(messages)
            for uid, why in failed.items():
                problem(f"{folder} UID {uid}: cannot fetch it, not trained on: {why}")
        counts[folder] = n
    return counts
