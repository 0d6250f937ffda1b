"""raw message → a model file, learned (or unlearned) in place under the update lock: the
daemon's TELL, ``textnb learn`` and ``textnb imap`` use it. The file is replaced atomically."""

from __future__ import annotations

import os
from typing import Any, Sequence

from ..classifier import TextClassifier
from ..errors import ModelFileError
from .container import locked
from .text_model import load_model, save_model


def learn(path: str | os.PathLike, raw: bytes, label: Any, other: Any) -> bool:
    """Learn ``raw`` as ``label`` under the update lock (the one ``textnb learn`` takes) and
    replace the model file atomically; a message learned as ``other`` moves to ``label``.
    False, the file untouched, when it was learned as ``label`` already. ModelFileError when
    the file is missing: a model of one message, one class, would decide nothing."""
    _must_exist(path)
    with locked(path):
        classifier = load_model(path)
        if _unlearned(classifier, raw, label):
            return False  # it was learned: the copy with it removed is thrown away
        _unlearned(classifier, raw, other)
        classifier.partial_fit([raw], [label])
        save_model(classifier, path)
    return True


def forget(path: str | os.PathLike, raw: bytes, labels: Sequence[Any]) -> bool:
    """Unlearn ``raw`` from whichever of ``labels`` it was learned as, under the update lock;
    False, the file untouched, when it was never learned; ModelFileError when the file is
    missing."""
    _must_exist(path)
    with locked(path):
        classifier = load_model(path)
        if not any(_unlearned(classifier, raw, label) for label in labels):
            return False
        save_model(classifier, path)
    return True


def _must_exist(path: str | os.PathLike) -> None:
    # Before the lock, which would leave a lock file beside a model that is not there.
    if not os.path.exists(path):
        raise ModelFileError(f"model file '{os.fspath(path)}' does not exist: TELL learns "
                             f"only into a model that does (textnb train, or textnb learn "
                             f"--new-class)")


def _unlearned(classifier: TextClassifier, raw: bytes, label: Any) -> bool:
    # TextClassifier.unlearn recognises a learned document by its digest and raises,
    # unchanged, for one it never learned as that label.
    try:
        classifier.unlearn([raw], [label])
    except ValueError:
        return False
    return True
