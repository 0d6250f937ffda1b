"""TextClassifier ⇄ model file: its settings, classes, stop words, learned cutoffs and tuning
in meta.json; its terms, counts, learned documents' digests and the score constants the mail
filter scores with as arrays (one file, :mod:`textnb.store.container`), so that unlearning a
document the model never learned is an error rather than corrupt counts."""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np

from .. import incremental
from ..classifier import TextClassifier
from ..errors import ModelFileError
from ..decision.rules import check_cutoffs
from ..nb.discrete import BernoulliNB, ComplementNBWithPrior, DiscreteNB, MultinomialNB
from ..nb.sparse import StoredCounts
from ..text.hashing import HashedVocabulary
from ..text.vocabulary import Vocabulary
from . import container, journal, schema

KIND = "text-classifier"


def saved_meta(classifier: TextClassifier) -> dict[str, Any]:
    """What a model file's meta.json (and a dump's header) says of a fitted classifier: its
    settings as JSON values (tuples and sets as lists), classes and stop words, and the cutoffs
    and tuning record it learned, if any; :func:`restore` reads it back."""
    params = classifier.get_params()
    if params["ngram_range"] is not None:
        params["ngram_range"] = list(params["ngram_range"])
    if params["class_prior"] is not None:
        params["class_prior"] = [float(p) for p in params["class_prior"]]
    if isinstance(params["stop_words"], os.PathLike):
        params["stop_words"] = os.fspath(params["stop_words"])
    elif not isinstance(params["stop_words"], str) and params["stop_words"] is not None:
        params["stop_words"] = sorted(params["stop_words"])
    meta = {"params": params, "classes": [_json_label(c) for c in classifier.model_.classes_],
            "stop_words": list(classifier.stop_words_),
            "ngram_range": list(classifier._ngrams())}  # as counted
    for name in ("cutoffs", "tuning"):
        if getattr(classifier, f"{name}_", None):
            meta[name] = getattr(classifier, f"{name}_")
    if getattr(classifier, "decision_threshold_", None) is not None:
        meta["decision_threshold"] = classifier.decision_threshold_
    if classifier.learned_errors_[0]:  # what textnb's learners weigh errors by
        meta["learned_errors"] = list(classifier.learned_errors_)
    return meta


def save_model(classifier: TextClassifier, path: str | os.PathLike) -> None:
    """Write a fitted classifier to ``path`` atomically (a zip of .npy arrays and JSON)."""
    classifier._check_fitted()
    model = classifier.model_
    meta = saved_meta(classifier)
    problem = schema.text_classifier_problem(meta)
    if problem:
        raise ValueError(f"cannot save this classifier: {problem}")
    # The constants first: their passes over the terms' counts are this function's largest
    # temporaries (20 Newsgroups: 7 MB), better not added to the arrays built below.
    constants = score_constants(model)
    row = {str(label): i for i, label in enumerate(model.classes_)}
    # A hashed vocabulary keeps no terms: its column numbers take their place.
    hashed = isinstance(classifier.vocabulary_, HashedVocabulary)
    names = [] if hashed else classifier.vocabulary_.terms_
    terms = np.frombuffer(join_terms(names), dtype=np.uint8)
    # Where each term's line ends (after its line break): the scorer's index into the terms.
    breaks = np.append(np.flatnonzero(terms == ord("\n")), terms.size)
    term_ends = breaks[:len(names)] + 1
    # The counts by term (or hashed column), non-zero ones only (format 3): row k of the CSR
    # arrays is term k, so the scorer reads the rows of a message's terms. Integral counts are
    # stored as the smallest unsigned integers that hold them, others as float64: exact either way.
    indptr, cls, values, _ = model.stored_counts()
    if values.size and (values == np.trunc(values)).all() and values.max() < 2.0 ** 64:
        values = values.astype(_unsigned(values.max()))
    bias = model._bias()
    arrays = {"class_count": model.class_count_,
              "digests": classifier.digests_,
              "digest_classes": np.array([row[name] for name in classifier._digest_names],
                                         dtype=_unsigned(len(model.classes_) - 1)
                                         )[classifier._digest_codes],
              "terms": terms,
              "term_ends": term_ends.astype(_unsigned(terms.size + 1)),
              "count_indptr": indptr.astype(_unsigned(values.size)),
              "count_classes": cls.astype(_unsigned(len(model.classes_) - 1)),
              "count_values": values,
              # What textnb.store.scorer scores one message with, without numpy: a term's weights
              # follow from its counts and these (score_constants), the prior from score_bias.
              "score_bias": bias, "score_constants": constants}
    if hashed:
        arrays["columns"] = classifier.vocabulary_.columns_
    if (classifier.digest_weights_ != 1).any():  # training on error: shares of walks
        arrays["digest_weights"] = classifier.digest_weights_
    container.save(path, KIND, meta, arrays)
    journal.remove(path)  # the file holds what its journal did, and is another file now


def _unsigned(top: int) -> type:
    """The smallest unsigned integer type that holds 0 to ``top``."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if top <= np.iinfo(t).max)


def score_constants(model: DiscreteNB) -> np.ndarray:
    """(a, b), each of shape (n_classes,), from which term k's weights w_kc follow from its
    counts n_kc alone (N_c = class_count, α = alpha), with the expressions of
    :mod:`textnb.nb.discrete`, so that the scorer's weights are these to the rounding of a log:

    * multinomial: w = log(n + α) − a, a = log Σ_k (n_kc + α)
    * Bernoulli: w = (log(n + α) − a) − (log(max(N − n, 0) + α) − a), a = log(N + 2α)
    * complement: w = (log max(Σ_c' n_kc' − n + α, α) − a) / b, a = log Σ_k of that
      complement count, b = −1, or Σ_k log θ_kc with weight normalisation (``norm``).
    """
    # The model's own per-class sums (one class's row at a time, no (n_classes, n_terms)
    # temporaries): the numbers its weights are computed with.
    b = -np.ones(len(model.classes_))
    if isinstance(model, BernoulliNB):
        a = np.log(model.class_count_ + 2 * model.alpha)
    elif isinstance(model, MultinomialNB):
        a = model._log_totals()
    else:
        a, sums = model._normalisers()
        if model.norm:
            b = sums
    return np.array([a, b])


def load_model(path: str | os.PathLike, *, n_jobs: int | None = 1) -> TextClassifier:
    """Read a classifier written by :func:`save_model` (format 1, 2 or 3) and the documents
    its journal learned and unlearned since (:mod:`textnb.store.journal`), as one model;
    ModelFileError, one line naming the file, if it is not one by
    :mod:`textnb.store.container`'s rules (the mail filter's too): its members, settings and
    sizes within bounds, its arrays of the shapes its classes and terms imply, its counts
    finite and non-negative, its terms sorted; its journal's records by the journal's.

    The model scores with the score constants the file (or its journal's last commit) holds
    (:func:`_score_with`), as the mail filter does, and works in ``n_jobs`` processes
    (default 1) where it works in parallel, not in as many as it was trained with: a file
    starts no processes.
    """
    return journal.steady(path, lambda: load_for_update(path, n_jobs=n_jobs))[0]


def load_for_update(path: str | os.PathLike, *, n_jobs: int | None = 1
                    ) -> tuple[TextClassifier, container.ModelFile, journal.Journal]:
    """(:func:`load_model`'s classifier, the file as read, its journal as read): what an
    update appends to the journal with (:mod:`textnb.store.learning`)."""
    model = container.read(path, KIND)
    arrays = model.arrays()
    meta, sizes = model.meta, model.sizes
    terms = (list(meta["terms"]) if model.version == 1 else
             arrays["columns"] if "columns" in arrays else arrays["terms"])
    feature_count = (StoredCounts(arrays["count_indptr"], arrays["count_classes"],
                                  arrays["count_values"], (sizes["C"], sizes["T"]))
                     if model.version >= 3 else arrays["feature_count"])
    try:
        classifier = restore(meta, terms, arrays["class_count"], feature_count,
                             arrays["digests"], arrays["digest_classes"],
                             arrays.get("digest_weights"))
    except ValueError as error:  # what only restore knows: format 1's terms, hashed columns
        raise model.corrupt(str(error)) from None
    classifier.n_jobs = n_jobs
    if model.version >= 2:
        _score_with(classifier.model_, arrays)
    found = journal.read(model)
    if found.documents:
        _replay(classifier, model, found)
    if found.learned_errors is not None:
        classifier.learned_errors_ = tuple(found.learned_errors)
    return classifier, model, found


def _replay(classifier: TextClassifier, model: container.ModelFile,
            found: journal.Journal) -> None:
    """The journal's committed documents learned and unlearned, in order, as
    :func:`textnb.store.journal.replay_plain` has them for the mail filter; then the last
    commit's score constants scored with."""
    for record in found.documents:
        row = incremental.Row(record["keys"], np.array(record["values"], dtype=float),
                              int(record["digest"], 16))
        try:
            incremental.apply(classifier, row, record["class"], record["weight"],
                              unlearn=record["op"] == "unlearn", strict=False, in_place=True)
        except ValueError as error:
            raise ModelFileError(f"journal '{journal.path_of(model.name)}' is corrupt "
                                 f"({error})") from None
    bias, constants = found.constants
    _score_with(classifier.model_, {"score_bias": np.array(bias, dtype=float),
                                    "score_constants": np.array(constants).reshape(2, -1)})


def _score_with(model: DiscreteNB, arrays: dict[str, np.ndarray]) -> None:
    """Have a model read from a file score with the file's score_bias and score_constants
    (format 3) or score_weights (format 2), as the mail filter's scorer does, rather than
    derive them from the counts again: for every file textnb wrote these are the numbers it
    would derive (:func:`score_constants`), and for any file every reader scores alike.
    Learning derives them again from the counts."""
    bias = arrays["score_bias"]
    derived = model._derived
    if isinstance(model, BernoulliNB):
        derived["bias"] = bias
    else:  # multinomial and complement: the bias is the log prior
        model.class_log_prior_ = bias
    if "score_weights" in arrays:
        derived["weights"] = np.asfortranarray(arrays["score_weights"].T)
        return
    a, b = arrays["score_constants"]
    if isinstance(model, MultinomialNB):
        derived["log_totals"] = a
    elif isinstance(model, ComplementNBWithPrior):
        derived["normalisers"] = np.array([a, b if model.norm else np.zeros_like(b)])


def restore(meta: dict[str, Any], terms: list[str], class_count: np.ndarray,
            feature_count: np.ndarray | StoredCounts, digests: np.ndarray,
            digest_classes: np.ndarray, digest_weights: np.ndarray | None = None) -> TextClassifier:
    """A fitted classifier from what a model file or a dump holds: ``meta`` (params, classes,
    stop_words, and learned cutoffs and tuning if any, all checked as a model file's are), the
    sorted distinct terms (for a hashed vocabulary, its increasing column numbers), the counts
    (class_count of shape (n_classes,), feature_count of shape (n_classes, n_terms) or as a
    model file stores it, finite and non-negative) and each learned document's digest, class
    number and weight (default 1). ValueError says what is wrong."""
    problem = schema.text_classifier_problem(meta)
    if problem:
        raise ValueError(problem)
    params = schema.with_legacy(meta["params"])
    if params["ngram_range"] is not None:
        params["ngram_range"] = tuple(params["ngram_range"])
    classifier = TextClassifier(**params)
    classifier.ngram_range_ = tuple(meta.get("ngram_range") or params["ngram_range"])
    classifier.stop_words_ = list(meta["stop_words"])
    settings = {name: params[name] for name in ("min_df", "max_df", "max_features")}
    if params.get("hash_bits") is not None:  # terms: the hashed columns
        vocabulary = HashedVocabulary.restore(params["hash_bits"], terms, **settings)
    else:
        vocabulary = Vocabulary(**settings)
        vocabulary.terms_ = terms
        # Sorted terms are distinct, and are looked up by bisection until a dict is asked for
        # (Vocabulary.index_): classifying keeps no dict of every term. Others get one now.
        if any(map(operator.ge, terms, terms[1:])):
            vocabulary.index_ = dict(zip(terms, range(len(terms))))
            vocabulary.unsorted = True  # looked up by the dict only, never bisected
            if len(vocabulary.index_) != len(terms):
                raise ValueError("the terms are not distinct")
    model = classifier.new_model()
    model.classes_ = np.array(meta["classes"])
    shape = (len(model.classes_), len(terms))
    if class_count.shape != shape[:1] or feature_count.shape != shape:
        raise ValueError(f"counts of shapes {class_count.shape} and {feature_count.shape}, "
                         f"expected {shape[:1]} and {shape}")
    if isinstance(feature_count, StoredCounts):
        _counts(feature_count.values)
    else:
        feature_count = _counts(feature_count)
    if digest_classes.size and not 0 <= digest_classes.min() <= digest_classes.max() < shape[0]:
        raise ValueError("digest_classes holds a class number out of range")
    model.restore_counts(_counts(class_count), feature_count)
    classifier.vocabulary_, classifier.model_ = vocabulary, model
    if digest_weights is not None and not (np.isfinite(digest_weights).all()
                                           and (digest_weights > 0).all()):
        raise ValueError("digest_weights holds a weight that is not a positive number")
    classifier._learned(digests, model.classes_.astype(str), digest_weights, codes=digest_classes)
    classifier.cutoffs_ = check_cutoffs(meta.get("cutoffs"), meta["classes"])
    classifier.decision_threshold_ = meta.get("decision_threshold")  # checked with the meta
    classifier.tuning_ = meta.get("tuning")  # what --tune found: shown by info, not used
    classifier.learned_errors_ = tuple(meta.get("learned_errors", (0, 0)))  # checked with the meta
    if classifier.tuning_ is not None and not isinstance(classifier.tuning_, dict):
        raise ValueError("its tuning record is not an object")
    return classifier


def _counts(counts: np.ndarray) -> np.ndarray:
    """Counts as floats, checked finite and non-negative (NaN would make every score NaN)."""
    if not np.isfinite(counts).all() or (counts < 0).any():
        raise ValueError("counts must be finite and non-negative")
    return counts.astype(float, copy=False)


def join_terms(terms: list[str]) -> bytearray:
    """The sorted terms as UTF-8 lines: read in a millisecond, where JSON takes ten."""
    if any("\n" in term for term in terms):  # no tokenizer makes one; a caller's Vocabulary may
        raise ValueError("a term holds a line break; it cannot be saved")
    # Joined a few thousand at a time: one str of them all takes four bytes a character once a
    # term holds a character beyond the BMP (20 Newsgroups: 7 MB for 1.7 MB of UTF-8).
    out = bytearray()
    for start in range(0, len(terms), 4096):
        if start:
            out += b"\n"
        out += "\n".join(terms[start:start + 4096]).encode("utf-8")
    return out


def _json_label(label: Any) -> Any:
    return label.item() if isinstance(label, np.generic) else label
