"""One document at a time into a fitted TextClassifier: its row of weighted counts, added to
the counts or taken back in place, in time of the document's terms plus one copy of the
model's counts (a block memory move), never a sort or a pass of Python over the vocabulary.

What :meth:`TextClassifier.partial_fit` of a few documents, ``textnb learn``, the daemon's TELL
and a model file's journal (:mod:`textnb.store.journal`) learn with. A row adds exactly what
``partial_fit`` adds in its general path (the same counts, the same sorted terms), so a model
learned so equals one learned in one piece.
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from itertools import chain, repeat
from typing import Any, NamedTuple, Sequence

import numpy as np

from .text.features import Text, check_lengths, text_list
from .text.hashing import HashedVocabulary, rename_columns, hash_columns

# partial_fit adds this many documents or fewer one row at a time: in time of their terms, not
# of the model's; more are counted in parts and the terms sorted once.
ONE_BY_ONE = 16

# Counts this close to 0 after a document is taken back are 0: rounding of weighted counts
# summed in another order, not a document (as DiscreteNB.unlearn has it).
TOLERANCE = 1e-9


class Row(NamedTuple):
    """One document as a model counts it: ``keys`` its terms (sorted str) or, for a hashed
    vocabulary, its columns (increasing int); ``values`` its weighted counts (ndarray, float64,
    each > 0); ``digest`` the digest ``fit`` records of it."""

    keys: list
    values: np.ndarray
    digest: int


def one_by_one(classifier: Any, texts: Any, labels: list, classes: Any) -> list[int] | None:
    """The class number of each label where ``partial_fit`` adds ``texts`` one row at a time
    (a few documents of classes the fitted model has, its terms sorted), else None (its general
    path: counted in parts, the terms sorted once)."""
    if (not hasattr(classifier, "model_") or classes is not None or not isinstance(texts, list)
            or not 0 < len(texts) <= ONE_BY_ONE or len(labels) != len(texts)
            or getattr(classifier.vocabulary_, "unsorted", False)):
        return None
    number = {c: i for i, c in enumerate(classifier.model_.classes_.tolist())}
    found = [number.get(label) if isinstance(label, (str, int, np.generic)) else None
             for label in labels]
    return None if None in found else found


def rows(classifier: Any, texts: Sequence[Text]) -> list[Row]:
    """Each of ``texts`` as ``classifier`` (fitted) counts and weighs it, in order."""
    hashed = isinstance(classifier.vocabulary_, HashedVocabulary)
    found = []
    for counts, digests in classifier._count_stream(text_list(texts)):
        X = counts.matrix
        if hashed:  # terms sharing a column are counted in it together, then weighed
            bits = classifier.vocabulary_.hash_bits
            X = rename_columns(X, hash_columns(counts.terms, bits)[X.indices], 1 << bits)
        X = classifier._weigh(X)
        for r in range(X.shape[0]):
            lo, hi = int(X.indptr[r]), int(X.indptr[r + 1])
            at = np.asarray(X.indices[lo:hi], dtype=np.int64)
            order = np.argsort(at, kind="stable")
            at = at[order].tolist()
            keys = at if hashed else [counts.terms[i] for i in at]
            values = np.asarray(X.data[lo:hi], dtype=float)[order]
            found.append(Row(keys, values, int(digests[r])))
    return found


def learned_as(classifier: Any, digest: int, label_index: int) -> np.ndarray:
    """The places in ``digests_`` of a document of this digest learned as class
    ``classes_[label_index]``."""
    name = str(classifier.classes_[label_index])
    names = classifier._digest_names.tolist()
    if name not in names:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero((classifier.digests_ == np.uint64(digest))
                          & (classifier._digest_codes == names.index(name)))


def apply(classifier: Any, row: Row, label_index: int, weight: float | None = None,
          unlearn: bool = False, strict: bool = True, in_place: bool = False) -> None:
    """Add ``row`` to class ``classes_[label_index]``'s counts with ``weight`` (default 1:
    learn), or take it back (``unlearn``, with the weight it was learned with unless given:
    ValueError, the model unchanged, unless a document of its digest was learned as that
    class). Terms no learned document has any more leave the vocabulary, as
    :meth:`TextClassifier.unlearn` has it. Not ``strict`` (a journal replayed, as the mail
    filter's scorer replays it): counts that would fall below 0 become 0, and terms the model
    has not are passed over, rather than a ValueError. ``in_place``: the fitted version is
    changed rather than copied (a model no other thread reads yet, as one being loaded)."""
    # On copies of the fitted version, swapped in whole at the end: a read meanwhile answers
    # from the old one (copying the counts costs what the block move of new terms costs).
    vocabulary = (classifier.vocabulary_ if in_place
                  else copy_vocabulary(classifier.vocabulary_))
    at, known = _places(vocabulary, row.keys)
    # New terms: the counts are copied as their columns are inserted, not once more before.
    model = (classifier.model_ if in_place
             else copy_model(classifier.model_, counts=unlearn or bool(known.all())))
    values = np.asarray(row.values, dtype=float)
    if model._binary:
        values = (values > 0).astype(float)
    c = label_index
    if unlearn:
        place = learned_as(classifier, row.digest, c)
        if not place.size or (strict and not known.all()):
            raise ValueError(f"cannot unlearn a document as {classifier.classes_[c]!r}: "
                             f"it was never learned as {classifier.classes_[c]!r}")
        at, values = at[known], values[known]
        if weight is None:
            weight = float(classifier.digest_weights_[place[0]])
        counts = model.feature_count_
        cells = counts[c, at] - weight * values
        left = model.class_count_[c] - weight
        if strict and ((cells < -TOLERANCE).any() or left < -TOLERANCE):
            raise ValueError("cannot unlearn documents the model did not learn "
                             "(counts would become negative)")
        cells[cells < TOLERANCE] = 0.0
        counts[c, at] = cells
        model.class_count_[c] = left if left >= TOLERANCE else 0.0
        empty = at[~counts[:, at].any(axis=0)]
        if empty.size:
            model.delete_terms(empty)
            _delete(vocabulary, empty)
        keep = np.ones(classifier.digests_.size, dtype=bool)
        keep[place[0]] = False
        classifier._learned(classifier.digests_[keep], classifier._digest_names,
                            classifier.digest_weights_[keep],
                            codes=classifier._digest_codes[keep])
    else:
        weight = 1.0 if weight is None else weight
        new = np.flatnonzero(~known)
        if new.size:
            positions = at[new]
            _insert_columns(model, positions)
            _insert(vocabulary, [row.keys[i] for i in new.tolist()], positions)
            # Each key's column among the new columns: its old place, moved by the new keys
            # before it (the keys are sorted, so those are the new ones earlier in the row).
            at = at + np.cumsum(~known) - (~known)
        model.feature_count_[c, at] += weight * values
        model.class_count_[c] += weight
        names = classifier._digest_names.tolist()
        name = str(classifier.classes_[c])
        if name not in names:
            names.append(name)
        classifier._learned(np.append(classifier.digests_, np.uint64(row.digest)), names,
                            np.append(classifier.digest_weights_, weight),
                            codes=np.append(classifier._digest_codes, names.index(name)))
    model._update()
    classifier._fitted = (vocabulary, model)


def copy_vocabulary(vocabulary: Any) -> Any:
    """A vocabulary to change while ``vocabulary`` is read: its terms (or columns) its own."""
    found = copy.copy(vocabulary)
    if not isinstance(vocabulary, HashedVocabulary):  # columns_ are replaced, never changed
        found.terms_ = list(vocabulary.terms_)
        for name in ("_index", "_hashed"):
            found.__dict__.pop(name, None)
        found._looked_up = 0  # its few look-ups bisect until as many as an eighth of its terms
        if vocabulary.__dict__.get("_index") is not None and getattr(vocabulary, "unsorted", False):
            found.index_ = dict(vocabulary.index_)  # terms restored unsorted: looked up by it
    return found


def copy_model(model: Any, counts: bool = True) -> Any:
    """A model to change while ``model`` scores: its counts its own (feature_count_ shared
    unless ``counts``: the caller replaces it), derived again."""
    found = copy.copy(model)
    found.__dict__.pop("_stored_counts", None)
    found.feature_count_ = model.feature_count_.copy() if counts else model.feature_count_
    found.class_count_ = model.class_count_.copy()
    found._derived = {}
    return found


def _places(vocabulary: Any, keys: list) -> tuple[np.ndarray, np.ndarray]:
    """(each key's place among the vocabulary's sorted terms or columns, whether it is there)."""
    if isinstance(vocabulary, HashedVocabulary):
        columns = vocabulary.columns_
        wanted = np.asarray(keys, dtype=np.int64)
        at = np.searchsorted(columns, wanted)
        known = (at < columns.size) & (columns[np.minimum(at, max(columns.size - 1, 0))]
                                        == wanted) if columns.size else np.zeros(len(keys), bool)
        return at.astype(np.int64), np.asarray(known, dtype=bool)
    terms = vocabulary.terms_
    at = np.fromiter(map(bisect_left, repeat(terms), keys), dtype=np.int64, count=len(keys))
    n = len(terms)
    known = np.fromiter((a < n and terms[a] == k for a, k in zip(at.tolist(), keys)),
                        dtype=bool, count=len(keys))
    return at, known


def _insert_columns(model: Any, positions: np.ndarray) -> None:
    """Zero-count terms inserted before the given columns (``numpy.insert`` semantics, whose
    general path takes ten times as long): one copy of the counts, a slice at a time."""
    old = model.feature_count_
    n_classes, n_terms = old.shape
    counts = np.empty((n_classes, n_terms + positions.size))
    start = 0
    for i, place in enumerate(positions.tolist()):
        counts[:, start + i:place + i] = old[:, start:place]
        counts[:, place + i] = 0.0
        start = place
    counts[:, start + positions.size:] = old[:, start:]
    model.feature_count_ = counts


def _insert(vocabulary: Any, new: list, positions: np.ndarray) -> None:
    """Insert the new keys (sorted) before the given places (``numpy.insert`` semantics)."""
    if isinstance(vocabulary, HashedVocabulary):
        vocabulary.columns_ = np.insert(vocabulary.columns_, positions,
                                        np.asarray(new, dtype=np.int64))
        return
    # In place, the last first: each a move of the pointers after it, no reference counted.
    terms = vocabulary.terms_
    for term, place in zip(reversed(new), reversed(positions.tolist())):
        terms.insert(place, term)
    _lookups_changed(vocabulary)


def _delete(vocabulary: Any, columns: np.ndarray) -> None:
    if isinstance(vocabulary, HashedVocabulary):
        vocabulary.columns_ = np.delete(vocabulary.columns_, columns)
        return
    terms, pieces, start = vocabulary.terms_, [], 0
    for column in np.sort(columns).tolist():
        pieces.append(terms[start:column])
        start = column + 1
    pieces.append(terms[start:])
    vocabulary.terms_ = list(chain.from_iterable(pieces))
    _lookups_changed(vocabulary)


def _lookups_changed(vocabulary: Any) -> None:
    """The terms changed: a dict of them is built again when asked for, and the next look-ups
    bisect (a message's few hundred) rather than hash every term again."""
    vocabulary.__dict__.pop("_index", None)
    vocabulary.__dict__.pop("_hashed", None)
    vocabulary._looked_up = 0


def unlearn(classifier: Any, texts: list, labels: list) -> Any:
    """:meth:`TextClassifier.unlearn` of a fitted ``classifier``: documents learned before under the
    same labels taken back, on copies swapped in whole; ValueError if one was not learned."""
    check_lengths(texts, labels)
    parts = classifier._count(texts)
    remove = []
    names = classifier._digest_names.tolist()
    for digest, label in zip(np.concatenate([d for _, d in parts]), labels):
        code = names.index(str(label)) if str(label) in names else -1
        found = np.flatnonzero((classifier.digests_ == digest) & (classifier._digest_codes == code))
        found = np.setdiff1d(found, remove)
        if found.size == 0:
            raise ValueError(f"cannot unlearn a document as {label!r}: "
                             f"it was never learned as {label!r}")
        remove.append(found[0])
    # On copies, swapped in whole when done: a read meanwhile answers from the old version.
    vocabulary = copy_vocabulary(classifier.vocabulary_)
    model = copy_model(classifier.model_)
    model.unlearn(classifier._weigh(vocabulary.count_parts(c for c, _ in parts)), labels,
                  sample_weight=classifier.digest_weights_[remove])
    # Terms no learned document uses any more leave the vocabulary, as if never seen: |V| is
    # in every P(w|c) denominator, so keeping them would change the model unlearning restores.
    unused = np.flatnonzero(~model.feature_count_.any(axis=0))
    if unused.size:
        model.delete_terms(unused)
        if isinstance(vocabulary, HashedVocabulary):
            vocabulary = vocabulary.subset(np.delete(np.arange(len(vocabulary)), unused))
        else:
            terms = np.delete(np.array(vocabulary.terms_, dtype=object), unused).tolist()
            vocabulary.terms_ = terms
            vocabulary.index_ = {term: i for i, term in enumerate(terms)}
    classifier._fitted = (vocabulary, model)
    classifier._learned(np.delete(classifier.digests_, remove), classifier._digest_names,
                  np.delete(classifier.digest_weights_, remove),
                  codes=np.delete(classifier._digest_codes, remove))
    return classifier


def merge(classifier: Any, other: Any) -> Any:
    """:meth:`TextClassifier.merge` of two fitted classifiers: ``other``'s counts added to
    ``classifier``'s, the vocabularies united; equals fitting on both."""
    mine, theirs = _merge_settings(classifier), _merge_settings(other)
    if mine != theirs:
        different = sorted(k for k in mine if mine[k] != theirs[k])
        raise ValueError(f"cannot merge classifiers with different settings: {different}")
    if isinstance(classifier.vocabulary_, HashedVocabulary):
        raise ValueError("cannot merge classifiers with hashed vocabularies (hash_bits); "
                         "train one on both sets of documents")
    classifier.model_.insert_terms(classifier.vocabulary_.grow([other.vocabulary_.terms_]))
    # Widen a copy of the other model to this vocabulary, column by column.
    widened = type(other.model_)(**other.model_.get_params())
    columns = np.array([classifier.vocabulary_.index_[t] for t in other.vocabulary_.terms_],
                       dtype=np.int64)
    widened.classes_ = other.model_.classes_
    widened.class_count_ = other.model_.class_count_
    widened.feature_count_ = np.zeros((len(widened.classes_), len(classifier.vocabulary_)))
    widened.feature_count_[:, columns] = other.model_.feature_count_
    widened._update()
    classifier.model_.merge(widened)
    classifier._learned(np.concatenate([classifier.digests_, other.digests_]),
                  np.concatenate([classifier.digest_labels_, other.digest_labels_]),
                  np.concatenate([classifier.digest_weights_, other.digest_weights_]))
    return classifier


def _merge_settings(classifier: Any) -> dict[str, Any]:
    """The settings two classifiers must share to merge, spelled alike whether fitted here or
    loaded (a model file stores tuples and sets as lists), with the stop words actually used."""
    settings = classifier.get_params()
    for name in ("n_jobs", "spam_class", "target_fpr", "target_fnr", "target_unsure",
                 "cutoff_folds", "keep_suspects", "training", "margin", "max_passes"):
        del settings[name]  # how to fit, not what was counted
    settings["stop_words"] = sorted(classifier.stop_words_)
    settings["ngram_range"] = list(classifier._ngrams())
    if settings["class_prior"] is not None:
        settings["class_prior"] = list(settings["class_prior"])
    return settings
