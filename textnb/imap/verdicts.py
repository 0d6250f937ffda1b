"""The model file as textnb imap uses it: each message's status (spam, ham or unsure, as
``textnb classify`` and ``filter`` decide it), and learning one message into the file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..decision.rules import spam_cutoffs
from ..errors import ModelFileError
from ..store.journal import path_of
from ..store.learning import learn
from ..store.text_model import load_model

SPAM, HAM = "spam", "ham"


class Verdicts:
    """A two-class mail model, loaded again when its file is replaced (by a learn)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._signature: tuple[int, ...] | None = None
        self.refresh()

    def refresh(self) -> None:
        """Load the file if it or its journal changed since it was read."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise ModelFileError(f"model file '{self.path}' does not exist: train one "
                                 f"(textnb imap train --spam Junk --ham INBOX)") from None
        try:  # a learn appends to the model's journal (textnb.store.journal)
            journal = os.stat(path_of(self.path))
            appended: tuple[int, ...] = (journal.st_ino, journal.st_mtime_ns, journal.st_size)
        except OSError:
            appended = ()
        signature = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size) + appended
        if signature == self._signature:
            return
        classifier = load_model(self.path)
        found = spam_cutoffs(classifier.classes_, getattr(classifier, "cutoffs_", None),
                             classifier.spam_class, learned_errors=classifier.learned_errors_)
        if found is None:
            raise ModelFileError(f"model file '{self.path}' has classes "
                                 f"{[str(c) for c in classifier.classes_]}: textnb imap needs "
                                 f"a mail model of two classes, one of them spam")
        spam = found[0]
        classes = list(classifier.classes_)
        ham = classes[1 - [str(c) for c in classes].index(spam)]
        spam = classes[[str(c) for c in classes].index(spam)]
        self.classifier, self.classes = classifier, {SPAM: spam, HAM: ham}
        self._signature = signature

    def statuses(self, raws: Sequence[bytes]) -> tuple[list[str | None], dict[int, str]]:
        """Each message's status, spam, ham or unsure (None for one that could not be
        classified), and index → why, for those."""
        if not raws:
            return [], {}
        if len(raws) > 1:
            try:
                return [str(s) for s in self.classifier.spam_status(list(raws))], {}
            except Exception:  # noqa: BLE001 — one message must not stop the others
                pass
        found: list[str | None] = []
        failed = {}
        for i, raw in enumerate(raws):  # one at a time: which one it was
            try:
                found.append(str(self.classifier.spam_status([raw])[0]))
            except Exception as error:  # noqa: BLE001
                found.append(None)
                failed[i] = f"could not be classified: {type(error).__name__}: {error}"
        return found, failed

    def learn(self, raw: bytes, role: str) -> bool:
        """Learn a message as spam or ham (``role``) under the update lock, unlearning it from
        the other class if it was learned so; False if it was learned so already."""
        other = HAM if role == SPAM else SPAM
        return learn(self.path, raw, self.classes[role], self.classes[other])
