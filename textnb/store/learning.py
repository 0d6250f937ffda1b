"""raw messages → a model file, learned (or unlearned) in place under the update lock: the
daemon's TELL, ``textnb learn`` and ``textnb imap`` use it.

:func:`learn` and :func:`forget` append through :mod:`textnb.store.appending`, which reads only
what the update needs; for a model it does not keep, :class:`Update` loads the whole model,
learns its documents one row at a time in memory (:mod:`textnb.incremental`) and
appends them, with the score constants after them, to the file's journal as one commit
(:mod:`textnb.store.journal`): a few kilobytes a message, not the whole model. Once a
commit leaves the journal larger than :data:`~textnb.store.journal.COMPACT_BYTES`, it is
folded into the file after the learner returns (:func:`compact`, in a
detached process, or the caller's when ``detach=False``: the daemon's thread); a learner that
would leave it larger than :data:`~textnb.store.journal.HARD_BYTES`, or adds a class, writes
the whole model itself (atomically) and removes the journal. A document is learned once as a
class: learning it again changes nothing.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from .. import incremental
from ..classifier import TextClassifier
from ..errors import ModelFileError
from ..online import learning_weight
from . import journal
from .appending import Appender, Declined, reopen
from .container import ModelFile, locked
from .text_model import score_constants, load_for_update, save_model


class Update:
    """Documents learned and unlearned into a loaded model (``classifier``), kept as the
    journal records :meth:`write` appends."""

    def __init__(self, path: str | os.PathLike, classifier: TextClassifier, model: ModelFile,
                 found: journal.Journal) -> None:
        self.path, self.classifier, self.model, self.journal = path, classifier, model, found
        self.records: list[dict] = []
        self.whole = model.version < 3  # an older format is written anew, never journalled

    def learn(self, raw: bytes, label: Any, other: Any = None) -> bool:
        """Learn ``raw`` as ``label``; one learned as ``other`` moves to ``label``. False,
        nothing changed, when it was learned as ``label`` already. A label the model has not
        is a new class (the whole file is written)."""
        classifier = self.classifier
        c = self._class(label)
        if c is None:  # a new class: partial_fit's general path, and the whole file written
            classifier.partial_fit([raw], [label])
            self.whole = True
            return True
        row = incremental.rows(classifier, [raw])[0]
        if incremental.learned_as(classifier, row.digest, c).size:
            return False
        weight = learning_weight(classifier, raw, label)  # as the model stood: errors weigh more
        o = self._class(other) if other is not None else None
        if o is not None and incremental.learned_as(classifier, row.digest, o).size:
            self._unlearn(row, o)
        incremental.apply(classifier, row, c, weight)
        self._note("learn", row, c, weight)
        return True

    def forget(self, raw: bytes, labels: Sequence[Any]) -> bool:
        """Unlearn ``raw`` from the first of ``labels`` it was learned as; False when none."""
        row = incremental.rows(self.classifier, [raw])[0]
        for label in labels:
            c = self._class(label)
            if c is not None and incremental.learned_as(self.classifier, row.digest, c).size:
                self._unlearn(row, c)
                return True
        return False

    def _unlearn(self, row: incremental.Row, c: int) -> None:
        place = incremental.learned_as(self.classifier, row.digest, c)
        weight = float(self.classifier.digest_weights_[place[0]])
        incremental.apply(self.classifier, row, c, weight, unlearn=True)
        self._note("unlearn", row, c, weight)

    def _note(self, op: str, row: incremental.Row, c: int, weight: float) -> None:
        self.records.append({"op": op, "class": c, "digest": f"{row.digest:016x}",
                             "weight": weight, "keys": row.keys,
                             "values": row.values.tolist()})

    def _class(self, label: Any) -> int | None:
        names = [str(c) for c in self.classifier.classes_]
        return names.index(str(label)) if str(label) in names else None

    def write(self) -> bool:
        """Append the records as one commit, or write the whole model when it must be;
        whether a compaction is due after (as :meth:`Appender.write`)."""
        if not self.records and not self.whole:
            return False
        model = self.classifier.model_
        records = journal.lines(self.records, (model._bias().tolist(),
                                               score_constants(model).ravel().tolist()),
                                self.classifier.learned_errors_)
        size = (self.journal.end if not self.journal.stale else 0) + len(records)
        self.records = []
        if self.whole or size > journal.HARD_BYTES:
            save_model(self.classifier, self.path)
            return False
        journal.append(self.path, self.model.identity, self.journal, records)
        return size > journal.COMPACT_BYTES


def learn(path: str | os.PathLike, raw: bytes, label: Any, other: Any,
          detach: bool = True) -> bool:
    """Learn ``raw`` as ``label`` under the update lock (the one ``textnb learn`` takes); a
    message learned as ``other`` moves to ``label``. False, nothing written, when it was
    learned as ``label`` already. ModelFileError when the file is missing: a model of one
    message, one class, would decide nothing. A compaction due after is started in a
    detached process (``detach``), else left to the caller (:func:`compact`)."""
    return _change(path, lambda update: update.learn(raw, label, other), detach)


def forget(path: str | os.PathLike, raw: bytes, labels: Sequence[Any],
           detach: bool = True) -> bool:
    """Unlearn ``raw`` from whichever of ``labels`` it was learned as, under the update lock;
    False, nothing written, when it was never learned; ModelFileError when the file is
    missing. ``detach`` as :func:`learn`'s."""
    return _change(path, lambda update: update.forget(raw, labels), detach)


def _change(path: str | os.PathLike, change: Callable[[Any], bool], detach: bool) -> bool:
    """``change`` of an :class:`~textnb.store.appending.Appender` of the file (which reads
    what the update needs), else of an :class:`Update` (the whole model), written."""
    _must_exist(path)
    with locked(path):
        try:
            update: Appender | Update = reopen(path)
            changed = change(update)
        except Declined:  # nothing written yet: the general path, from the start
            update = Update(path, *load_for_update(path))
            changed = change(update)
        due = update.write()
    if due and detach:  # after the lock: this learner has learned; the fold follows
        journal.compact_detached(path)
    return changed


def _must_exist(path: str | os.PathLike) -> None:
    # Before the lock, which would leave a lock file beside a model that is not there.
    if not os.path.exists(path):
        raise ModelFileError(f"model file '{os.fspath(path)}' does not exist: TELL learns "
                             f"only into a model that does (textnb train, or textnb learn "
                             f"--new-class)")


def compact(model_path: str | os.PathLike, over: int | None = None) -> bool:
    """Fold the journal into the model file at ``model_path`` if it is still larger than
    ``over`` bytes (default :data:`~textnb.store.journal.COMPACT_BYTES`) under the update
    lock; whether it did.

    The model and its journal are read, and the new file written beside it, before the lock,
    as any reader and writer may; under the lock, the records committed since (the tail,
    :func:`~textnb.store.journal.tail`) are appended to the journal as the new file's
    section, the new file renamed over the old, and the journal replaced by the tail alone.
    A learner that comes during a fold so waits for the tail's writing and two renames, not
    for a read and a write of the whole model. A crash leaves the old file and its journal
    (the section after its last commit is not read, and the next learner cuts it off), or
    the new file and a journal whose section for it holds the tail: each message counted
    once. A file or journal replaced since it was read (another fold, a training) is folded
    the old way, read and written under the lock."""
    from .container import read
    from .text_model import KIND, load_model
    over = journal.COMPACT_BYTES if over is None else over
    if journal.size_of(model_path) <= over:
        return False
    target = os.path.realpath(model_path)
    before = _stat(target)
    classifier, model, found = journal.steady(model_path, lambda: load_for_update(model_path))
    directory, name = os.path.split(target)
    # A name the model file's writer removes once this process is gone (container.save)
    folded = os.path.join(directory, f".{name}.{os.getpid()}.fold.textnb-tmp")
    try:
        save_model(classifier, folded)
        identity = read(folded, KIND, writable=False).identity
        with locked(model_path):
            if journal.size_of(model_path) <= over:
                return False  # another compaction, or a new model, came first
            appended = (journal.tail(model_path, model, found) if _stat(target) == before
                        else None)
            if appended is None:  # replaced since it was read
                save_model(load_model(model_path), model_path)
                return True
            tail, end = appended
            if tail:
                journal.carry(model_path, end, identity, tail)
            os.chmod(folded, os.stat(target).st_mode & 0o777)
            os.replace(folded, target)
            if tail:
                journal.restart(model_path, identity, tail)
            else:
                journal.remove(model_path)
            return True
    finally:
        try:
            os.unlink(folded)
        except FileNotFoundError:
            pass


def _stat(path: str) -> tuple:
    """Which file is at ``path``: a written model file is replaced, never changed."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


# journal.compact_detached's process: python -m textnb.store.learning PATH OVER
if __name__ == "__main__":
    import sys
    try:
        compact(sys.argv[1], int(sys.argv[2]))
    except Exception:  # nothing to tell: the next learner compacts
        sys.exit(1)
