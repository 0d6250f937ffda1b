"""labelled sources → a trained TextClassifier, its documents held or streamed.

``textnb train``'s plan: two classes are cross-validated for their decision threshold (and
mail for its cutoffs) over every document's counts at once, up to
:data:`THRESHOLD_MAX_BYTES` of files (mail: :data:`CUTOFFS_MAX_MESSAGES` messages or
:data:`CUTOFFS_MAX_BYTES`); beyond, they train as they are read, every document counted, in
bounded memory, and learn their threshold (and cutoffs) on a sample of :data:`SAMPLE`
documents read again (:meth:`TextClassifier.learn_thresholds`). Reading reports unreadable
documents through ``on_error`` and shows its progress through ``progress`` (a function of the
files' list giving a context manager over them), both the caller's.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from typing import Callable, ContextManager, Iterator, Sequence

import numpy as np

from .classifier import TextClassifier
from .decision.cutoffs import ham_needed
from .documents.message import MAX_BYTES
from .documents.sources import first_raw, iter_files, mbox_messages, read_raw
from .errors import DocumentError

# A context manager over a list of files that yields them (counted on a progress line, say).
Progress = Callable[[Sequence], ContextManager]


# Two classes cross-validate their decision threshold (and mail its cutoffs) over every
# document's counts at once, up to this much input (bytes of the files), and for mail these many
# messages or bytes. Beyond, they train as they are read, every document counted, in bounded
# memory, and learn their threshold (and cutoffs) on a sample of SAMPLE documents read again
# (TextClassifier.learn_thresholds). Held at once, mail's counts and cross-validations peak at
# under twice the files' size, and at some 4 kB a message for short ones (docs/design/scale.md;
# python -m bench.scale --mail).
THRESHOLD_MAX_BYTES = 100 << 20


CUTOFFS_MAX_MESSAGES = 100_000


CUTOFFS_MAX_BYTES = 256 << 20


SAMPLE = 20_000


def read_labelled(sources: list[tuple[str, str]], on_error: Callable[[str, str], None],
                  progress: Progress | None = None, where: list[str] | None = None):
    """Documents' bytes and their labels from (class, path) pairs; a class with none is an error.
    The bytes are parsed by the classifier, in its worker processes. ``where``: as
    :func:`stream_labelled`'s."""
    texts, labels = stream_labelled(sources, on_error, progress, where)
    texts = list(texts)
    check_read(sources, labels)
    return texts, labels


def stream_labelled(sources: list[tuple[str, str]], on_error: Callable[[str, str], None],
                    progress: Progress | None = None, where: list[str] | None = None,
                    on_cut: Callable[[str], None] | None = None):
    """:func:`read_labelled`'s bytes as an iterator read once, and their labels, a list that
    fills as the bytes are read: for ``fit``, which parses the bytes as they are read, so that
    they are never all held; ``where``, if given, fills with each document's file (one string
    a file, shared); ``on_cut(source)`` is called for each document longer than
    :data:`~textnb.documents.message.MAX_BYTES`, of which only that much is read. A class
    without files is an error here; :func:`check_read` says whether each class had a readable
    document."""
    labels: list[str] = []
    # The files first (a directory listing is cheap next to reading), so that the progress line
    # knows how many there are; an mbox is one file of many documents.
    files = [(label, found) for label, path in sources for found in iter_files(path, on_error)]
    check_read(sources, [label for label, _ in files])

    def texts():
        with (progress or nullcontext)(files) as bar:
            for label, found in bar:
                for source, raw in read_raw([found], on_error=on_error):
                    if on_cut is not None and len(raw) > MAX_BYTES:  # read one byte over: cut
                        on_cut(source)
                    labels.append(label)
                    if where is not None:
                        where.append(found)
                    yield raw

    return texts(), labels


def check_read(sources: list[tuple[str, str]], labels: list[str]) -> None:
    found = set(labels)
    missing = [label for label, _ in sources if label not in found]
    if missing:
        raise DocumentError(f"no readable documents for class {missing[0]!r}")


def streams(classifier: TextClassifier, classes: Sequence[str], sampled: bool = False) -> bool:
    """Whether training as the documents are read (partial_fit) gives the model fit would:
    every document counted (training full, or auto without a spam class), no pruning by
    document frequency (which needs every document's counts), no cutoffs or two-class decision
    threshold to cross-validate (they need every document's scores), unless they are
    ``sampled``: learned on a sample of the documents, read again (:func:`sampled_thresholds`)."""
    return (classifier.training in ("full", "auto")
            and (sampled or not (classifier.learns_cutoffs(classes) or (
                len(set(map(str, classes))) == 2 and classifier.decision_threshold == "auto")))
            and type(classifier.min_df) is int and classifier.min_df <= 1
            and classifier.max_df == 1.0 and classifier.max_features is None)


def input_size(sources: list[tuple[str, str]]) -> tuple[int, int]:
    """(bytes, documents) of the files of (class, path) sources: a file is a document, an mbox
    of a megabyte or more as many as it has lines starting "From " (standard input counts 0)."""
    size = documents = 0
    for _, path in sources:
        for found in (iter_files(path, lambda *_: None) if path != "-" else ()):
            try:
                n = os.path.getsize(found)
                documents += mbox_messages(found) if n >= 1 << 20 else 1
            except OSError:  # reading reports it
                continue
            size += n
    return size, documents


def too_large(size: tuple[int, int], mail: bool) -> bool:
    """Whether training holds documents of (bytes, documents) at once: THRESHOLD_MAX_BYTES,
    for mail CUTOFFS_MAX_BYTES and CUTOFFS_MAX_MESSAGES."""
    if mail:
        return size[0] > CUTOFFS_MAX_BYTES or size[1] > CUTOFFS_MAX_MESSAGES
    return size[0] > THRESHOLD_MAX_BYTES


def first_documents(sources: list[tuple[str, str]], per_source: int = 20) -> list[bytes]:
    """The first documents of each (class, path) source, unparsed; standard input, which can
    be read only once, and unreadable documents left out (training reports them)."""
    return [raw for _, path in sources if path != "-" for raw in first_raw([path], per_source)]


def train_streaming(classifier: TextClassifier, sources: list[tuple[str, str]],
                    on_error: Callable[[str, str], None],
                    progress: Progress | None = None,
                    on_cut: Callable[[str], None] | None = None) -> list[str]:
    """Train on the documents of (class, path) pairs as they are read: partial_fit counts a
    part of them at a time, so memory holds a part's documents and counts, not every one's.
    Returns their labels, in order. ``on_cut``: as :func:`stream_labelled`'s."""
    texts, labels = stream_labelled(sources, on_error, progress, on_cut=on_cut)
    try:
        classifier.partial_fit(texts, labels)
    except ValueError:
        check_read(sources, labels)  # "no readable documents for class x" says more
        raise
    check_read(sources, labels)
    classifier.on_error_ = None
    # Saved next: the terms' index is no part of the file, and the largest thing held with them.
    classifier.vocabulary_.drop_index()
    return labels


def sampled_thresholds(classifier: TextClassifier, sources: list[tuple[str, str]],
                       learned: list[str], progress: Progress | None = None
                       ) -> tuple[list[str], list[str]]:
    """Learn the decision threshold (and a mail model's cutoffs) of a model trained on the
    documents of (class, path) pairs as they were read, with these labels, from a random sample
    of them, read again (TextClassifier.learn_thresholds): SAMPLE in all, each class in its
    share (the threshold makes the fewest mistakes on them, as on all), but for mail at least
    as many of a class (all of a smaller one) as the spam cutoff is read off, not extrapolated
    (:func:`textnb.decision.cutoffs.ham_needed`: 1,999 for 0.1 %). Returns (their files, their labels)."""
    classes, codes = np.unique(learned, return_inverse=True)
    share, rng = min(1.0, SAMPLE / len(learned)), np.random.default_rng(0)
    target = classifier.target_fpr
    least = ham_needed(target) if target > 0 and classifier.learns_cutoffs(classes.tolist()) else 0
    chosen: set[int] = set()
    for code in range(classes.size):
        members = np.flatnonzero(codes == code)
        take = min(members.size, max(round(share * members.size), least))
        chosen.update(rng.choice(members, take, replace=False).tolist())
    where: list[str] = []
    texts, labels = stream_labelled(sources, lambda *_: None, progress, where)
    picked: tuple[list[str], list[str]] = ([], [])

    def sample() -> Iterator[bytes]:
        for i, raw in enumerate(texts):  # reported unreadable the first time
            if i in chosen:
                picked[0].append(where[i])
                picked[1].append(labels[i])
                yield raw

    try:
        classifier.learn_thresholds(sample(), picked[1])
    except ValueError as error:
        if labels != learned:  # files came or went between the two readings
            raise DocumentError("the training files changed while training read them: "
                                "train again") from error
        raise
    return picked
