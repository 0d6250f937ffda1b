"""A classifier's settings and the first documents → what its settings left to the documents
mean: the stop words of ``stop_words="auto"`` and the n-grams of ``ngram_range=None``."""

from __future__ import annotations

import statistics
from typing import Any, Iterable

from .documents.message import relayed
from .text.features import Text, text_length

# Two-class text (and short text, below) counts word pairs from the first number of documents
# to the second: pairs cross-validated better on reviews and pairs of newsgroups
# (docs/design/text-classification.md; python -m bench.ngrams). Fewer documents (the textbooks'
# worked examples) count words; so do more, whose pairs could outgrow memory: --ngrams 2 with
# --hash-bits counts them in bounded memory.
PAIRS_DOCUMENTS = (500, 100_000)
# Texts whose median length (characters; bytes as read) is under this are short: they count
# word pairs for PAIRS_DOCUMENTS documents, however many classes (20 Newsgroups' Subject lines
# gained by them; its whole posts would hold a million terms for little: same page).
SHORT_TEXT = 500


def ngram_range(classifier: Any, labels: list, sample: Iterable[Text] = (),
                documents: int | None = None) -> tuple[int, int]:
    """The word n-grams ``classifier`` counts for documents of these labels (a list of all of
    them, or just the class names and how many ``documents`` there are) of which ``sample``
    are some: its ``ngram_range`` if given, else (1, 2) for documents that are mostly not full
    mail (no Received field) when a spam class is one of two classes (SMS, a Subject and a
    body), or when there are :data:`PAIRS_DOCUMENTS` of them, of two classes (reviews, two
    newsgroups) or short (median under :data:`SHORT_TEXT` characters: snippets, headlines,
    subject lines); (1, 1) for anything else, or when the labels or documents are not known
    yet."""
    if not may_pair(classifier, labels, documents):
        return tuple(classifier.ngram_range or (1, 1))
    sample = list(sample)
    if 2 * sum(map(relayed, sample)) >= len(sample):  # full mail, or nothing to tell by
        return (1, 1)
    if classifier.learns_cutoffs(labels) or len(set(map(str, labels))) == 2:
        return (1, 2)
    return (1, 2) if statistics.median(map(text_length, sample)) < SHORT_TEXT else (1, 1)


def may_pair(classifier: Any, labels: list, documents: int | None = None) -> bool:
    """Whether documents of these labels may count word pairs by default, as their first texts
    decide: no ``ngram_range`` given, and two classes with a spam class among them, or
    :data:`PAIRS_DOCUMENTS` documents (``documents``, else one a label)."""
    low, high = PAIRS_DOCUMENTS
    enough = low <= (len(labels) if documents is None else documents) <= high
    return classifier.ngram_range is None and (enough or classifier.learns_cutoffs(labels))


def stop_words(classifier: Any, labels: Iterable = (), sample: Iterable[Text] = ()) -> Any:
    """The stop words ``classifier`` uses for documents of these labels (a list of them, or
    just the class names) of which ``sample`` are some: its ``stop_words``, or for "auto"
    "english" where ``spam_class`` is one of them (or, with no label known yet, is set), else
    "none" for short texts (a median under :data:`SHORT_TEXT` characters: in a snippet or a
    headline every word counts), else "english-without-negations"."""
    if not stop_words_auto(classifier):
        return classifier.stop_words
    if not stop_words_by_length(classifier, labels):
        return "english"
    sample = list(sample)
    if sample and statistics.median(map(text_length, sample)) < SHORT_TEXT:
        return "none"
    return "english-without-negations"


def stop_words_by_length(classifier: Any, labels: Iterable = ()) -> bool:
    """Whether :func:`stop_words` for documents of these labels depends on how long they are:
    "auto" stop words, and not mail (``spam_class`` not among the labels, or not set where
    none is known yet)."""
    names = set(map(str, labels))
    mail = classifier.spam_class is not None and (str(classifier.spam_class) in names
                                                  or not names)
    return stop_words_auto(classifier) and not mail


def stop_words_auto(classifier: Any) -> bool:
    """Whether the stop words are left to the documents ("auto")."""
    return isinstance(classifier.stop_words, str) and classifier.stop_words == "auto"
