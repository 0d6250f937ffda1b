"""X, y → MultinomialNB, BernoulliNB, ComplementNB: exact counts, log-space scores, partial_fit,
merge, unlearn.

The models keep exact counts (``class_count_``, ``feature_count_``) and derive their log
parameters from them in one step (``_update``), so ``partial_fit``, ``merge`` and ``unlearn``
are additions and subtractions, and a model trained in pieces equals one trained at once.

Every score is a sum of logs, ``jll = bias_c + Σ_k x_k · w_ck``; the posterior is normalised
with log-sum-exp, so a document of any length never underflows. ``X`` may be a
``scipy.sparse`` matrix, an object with CSR arrays (``data``, ``indices``, ``indptr``, ``shape``),
or a small dense array-like; it is never densified. The module needs numpy only: scoring one
document does not pay for importing scipy.

The estimators follow scikit-learn's conventions without importing it, and pass its
``check_estimator`` (tests/test_sklearn_conformance.py): input is validated in O(stored entries),
and where scikit-learn is already loaded the errors and warnings raised are also its own
``NotFittedError`` and ``DataConversionWarning``.

Examples
--------
>>> import numpy as np
>>> X = np.array([[0, 3, 0], [0, 3, 3], [3, 0, 0], [2, 3, 0],
...               [4, 3, 0], [4, 0, 3], [3, 0, 0], [0, 0, 0]])
>>> y = ["spam"] * 4 + ["ham"] * 4
>>> model = MultinomialNB(alpha=1.0).fit(X, y)
>>> np.exp(model.feature_log_prob_).round(2).tolist()   # classes_ = ['ham', 'spam']
[[0.6, 0.2, 0.2], [0.3, 0.5, 0.2]]
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..settings import setting_problem
from .estimator import BaseNB, check_labels, check_weights
from .sparse import CSR, StoredCounts, as_csr, row_sums, used_terms

try:  # documents' scores summed in C (textnb/_scores.c), where it was built
    from .. import _scores as _fast
except ImportError:  # no C compiler at install time: numpy's bincount, the same sums
    _fast = None

# A first fit's counts of more cells (classes × terms) than this are made as stored, not dense
# (_count_stored): 32 MB; 20 Newsgroups' words, 3.7 million, stay dense.
_DENSE_CELLS = 1 << 22
# Terms whose weights are derived at once when scoring: 4,096 × 20 classes × 8 bytes = 0.6 MB
# a temporary, below glibc's mmap threshold growth, and as fast as one block (20 Newsgroups).
_WEIGHT_BLOCK = 4096


def class_log_prior(class_count: np.ndarray, fit_prior: bool = True,
                    class_prior: Sequence[float] | None = None) -> np.ndarray:
    """log P(c): given ``class_prior`` (normalised), else N_c/N if ``fit_prior``, else uniform.

    Uniform priors make the decision the maximum-likelihood rule; learned or given priors make
    it MAP (maximum likelihood is MAP with a uniform class distribution: Mitchell, Machine
    Learning, ch. 6).
    """
    n_classes = len(class_count)
    if class_prior is not None:
        prior = np.asarray(class_prior, dtype=float)
        if prior.shape != (n_classes,) or np.any(prior < 0) or not prior.sum() > 0:
            raise ValueError(f"class_prior must be {n_classes} non-negative numbers, "
                             f"one per class, not all zero; got {list(class_prior)}")
        with np.errstate(divide="ignore"):
            return np.log(prior) - np.log(prior.sum())
    if fit_prior:
        with np.errstate(divide="ignore"):
            return np.log(class_count) - np.log(class_count.sum())
    return np.full(n_classes, -np.log(n_classes))


# What DiscreteNB._cached keeps when only α or the priors change: it follows from the counts.
_OF_COUNTS = frozenset({"total", "complement_sums"})


class DiscreteNB(BaseNB):
    """Naive Bayes over term counts: the state is ``class_count_`` and ``feature_count_``."""

    _binary = False

    def __init__(self, *, alpha: float = 1.0, fit_prior: bool = True,
                 class_prior: Sequence[float] | None = None) -> None:
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    @property
    def n_features_in_(self) -> int:
        """The number of terms, columns of X (scikit-learn's name); AttributeError before fit."""
        return self._n_terms()

    @property
    def feature_count_(self) -> np.ndarray:
        """n_kc, ndarray of shape (n_classes, n_terms); built from the counts as stored
        (:class:`StoredCounts`) when a restored model is first asked for it."""
        counts = self.__dict__.get("_feature_count")
        if counts is None:
            stored = self.__dict__.get("_stored_counts")
            if stored is None:
                raise AttributeError("feature_count_")
            counts = self._feature_count = stored.dense()
            del self._stored_counts
        return counts

    @feature_count_.setter
    def feature_count_(self, counts: np.ndarray) -> None:
        self.__dict__.pop("_stored_counts", None)
        self._feature_count = counts

    def restore_counts(self, class_count: np.ndarray, counts: "np.ndarray | StoredCounts") -> None:
        """Set the counts of a model read back (``classes_`` set), dense or as stored."""
        self.class_count_ = class_count
        if isinstance(counts, StoredCounts):
            self.__dict__.pop("_feature_count", None)
            self._stored_counts = counts
        else:
            self.feature_count_ = counts
        self._update()

    def stored_counts(self) -> StoredCounts:
        """The counts as a model file stores them (:class:`StoredCounts`), non-zero ones only."""
        stored = self.__dict__.get("_stored_counts")
        return stored if stored is not None else StoredCounts.of(self.feature_count_)

    def _n_terms(self) -> int:
        stored = self.__dict__.get("_stored_counts")
        return stored.shape[1] if stored is not None else self.feature_count_.shape[1]

    def _count_columns(self, columns: np.ndarray) -> np.ndarray:
        """n_kc of the given terms: ndarray of shape (n_classes, len(columns))."""
        stored = self.__dict__.get("_stored_counts")
        return stored.columns(columns) if stored is not None else self.feature_count_[:, columns]

    def _count_rows(self) -> Iterable[np.ndarray]:
        """Each class's counts n_c·, in turn."""
        stored = self.__dict__.get("_stored_counts")
        return stored.rows() if stored is not None else iter(self.feature_count_)

    # -- learning: counts in, counts out --------------------------------------------------

    def fit(self, X: Any, y: Iterable, sample_weight: Sequence[float] | None = None) -> "DiscreteNB":
        """Count X's terms per class of y (Mitchell's LEARN_NAIVE_BAYES_TEXT); returns self."""
        for name in ("classes_", "class_count_", "_feature_count", "_stored_counts"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y, sample_weight=sample_weight)

    def partial_fit(self, X: Any, y: Iterable, classes: Iterable | None = None,
                    sample_weight: Sequence[float] | None = None) -> "DiscreteNB":
        """Add documents to the counts; labels never seen before become new classes."""
        self._check_alpha()   # before any count changes: a bad alpha must not leave half a model
        X, labels = self._check_xy(X, y)
        weight = check_weights(sample_weight, X.shape[0])
        wanted = np.unique(labels) if classes is None else np.union1d(labels, list(classes))
        if not hasattr(self, "classes_"):
            if len(labels) == 0:
                raise ValueError("cannot fit on an empty training set")
            self.classes_ = wanted
            self.class_count_ = np.zeros(len(self.classes_))
            if len(self.classes_) * X.shape[1] > _DENSE_CELLS:
                self._count_stored(X, labels, weight)
                return self
            self.feature_count_ = np.zeros((len(self.classes_), X.shape[1]))
        else:
            self._add_classes(wanted)
        self._count(X, labels, weight, sign=1.0)
        self._update()
        return self

    def unlearn(self, X: Any, y: Iterable, sample_weight: Sequence[float] | None = None) -> "DiscreteNB":
        """Subtract documents learned before; ValueError (model unchanged) if they were not."""
        self._check_fitted()
        X, labels = self._check_xy(X, y)
        weight = check_weights(sample_weight, X.shape[0])
        unknown = sorted(set(labels.tolist()) - set(self.classes_.tolist()))
        if unknown:
            raise ValueError(f"cannot unlearn class {unknown[0]!r}: the model never learned it")
        saved = self.class_count_.copy(), self.feature_count_.copy()
        self._count(X, labels, weight, sign=-1.0)
        # A tolerance, because weighted counts are floats summed in another order.
        if (self.class_count_ < -1e-9).any() or (self.feature_count_ < -1e-9).any():
            self.class_count_, self.feature_count_ = saved
            raise ValueError("cannot unlearn documents the model did not learn "
                             "(counts would become negative)")
        # What is left of a count within that tolerance of 0 is 0: rounding, not a document
        # (so a term that only the documents taken out had has none, as if never seen).
        self.class_count_[self.class_count_ < 1e-9] = 0.0
        self.feature_count_[self.feature_count_ < 1e-9] = 0.0
        self._update()
        return self

    def merge(self, other: "DiscreteNB") -> "DiscreteNB":
        """Add another model's counts over the same terms: equals fitting on both data sets."""
        self._check_fitted()
        other._check_fitted()
        if type(other) is not type(self):
            raise ValueError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        if other.feature_count_.shape[1] != self.feature_count_.shape[1]:
            raise ValueError(f"cannot merge models over {self.feature_count_.shape[1]} and "
                             f"{other.feature_count_.shape[1]} terms")
        self._add_classes(other.classes_)
        rows = np.searchsorted(self.classes_, other.classes_)
        self.class_count_[rows] += other.class_count_
        self.feature_count_[rows] += other.feature_count_
        self._update()
        return self

    def insert_terms(self, positions: np.ndarray) -> None:
        """Insert zero-count terms before the given columns (``numpy.insert`` semantics)."""
        self._check_fitted()
        if len(positions):
            self.feature_count_ = np.insert(self.feature_count_, positions, 0.0, axis=1)
            self._update()

    def delete_terms(self, columns: np.ndarray) -> None:
        """Remove the given term columns (``numpy.delete`` semantics), undoing ``insert_terms``."""
        self._check_fitted()
        if len(columns):
            # C order, as after fit: row sums over another layout differ in the last bit.
            self.feature_count_ = np.ascontiguousarray(np.delete(self.feature_count_, columns, axis=1))
            self._update()

    def _check_xy(self, X: Any, y: Iterable) -> tuple[CSR, np.ndarray]:
        X = self._check_x(X, fitting=True)
        return X, check_labels(y, X.shape[0])

    def _check_x(self, X: Any, fitting: bool = False) -> CSR:
        """X as CSR arrays, checked in O(stored entries): finite, as many terms as the model has,
        and, to be learned (``fitting``), non-negative with at least one term."""
        X = as_csr(X)
        if hasattr(self, "class_count_") and X.shape[1] != self._n_terms():
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self._n_terms()} features as input (its terms)")
        if fitting and X.shape[1] == 0:
            raise ValueError(f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                             f"required: there are no terms to count")
        # NaN passes "min < 0" and would poison the counts for good: test for finite too.
        if X.data.dtype.kind not in "biu" and not np.isfinite(X.data).all():
            raise ValueError("X holds NaN or inf; counts must be finite numbers")
        if fitting and X.data.size and np.min(X.data) < 0:
            raise ValueError("Negative values in data passed to X: counts must be >= 0")
        return X

    def _add_classes(self, labels: np.ndarray) -> None:
        new = np.setdiff1d(labels, self.classes_)
        if new.size:
            classes = np.union1d(self.classes_, new)
            rows = np.searchsorted(classes, self.classes_)
            class_count = np.zeros(len(classes))
            feature_count = np.zeros((len(classes), self.feature_count_.shape[1]))
            class_count[rows] = self.class_count_
            feature_count[rows] = self.feature_count_
            self.classes_, self.class_count_, self.feature_count_ = classes, class_count, feature_count

    def _count(self, X: CSR, labels: np.ndarray, weight: np.ndarray, sign: float) -> None:
        """class_count_[c] ± Σ w_d and feature_count_[c, k] ± Σ w_d x_dk over documents d of c."""
        row_class = np.searchsorted(self.classes_, labels)
        self.class_count_ += sign * np.bincount(row_class, weights=weight,
                                                minlength=len(self.classes_))
        for c, sums in self._class_sums(X, row_class, weight):
            self.feature_count_[c] += sign * sums

    def _count_stored(self, X: CSR, labels: np.ndarray, weight: np.ndarray) -> None:
        """A first fit's :meth:`_count` into the counts as stored (:class:`StoredCounts`), each
        class's sums made in turn and their non-zero cells kept, never the (n_classes,
        n_terms) array (20 Newsgroups' words and pairs: 78 MB dense, 13 MB stored): the same
        numbers; a later update makes the dense counts, as in a model read back."""
        n_classes, n_terms = len(self.classes_), X.shape[1]
        row_class = np.searchsorted(self.classes_, labels)
        self.class_count_ += np.bincount(row_class, weights=weight, minlength=n_classes)
        terms, values, classes = [], [], []   # a class with documents at least
        for c, sums in self._class_sums(X, row_class, weight):
            counted = np.flatnonzero(sums)
            terms.append(counted)
            values.append(sums[counted])
            classes.append(np.full(counted.size, c, dtype=np.intp))
        terms = np.concatenate(terms)
        order = np.argsort(terms, kind="stable")   # by term, each term's classes ascending
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=indptr[1:])
        self.restore_counts(self.class_count_, StoredCounts(
            indptr, np.concatenate(classes)[order], np.concatenate(values)[order],
            (n_classes, n_terms)))

    def _class_sums(self, X: CSR, row_class: np.ndarray, weight: np.ndarray
                    ) -> Iterable[tuple[int, np.ndarray]]:
        """(c, Σ_d w_d x_d· over documents d of class c, ndarray of shape (n_terms,)) of each
        class with documents in X, in turn."""
        n_terms = X.shape[1]
        values = (X.data > 0).astype(float) if self._binary else X.data.astype(float, copy=False)
        # One class at a time, into a vector of n_terms: a dense (class, term) bincount and its
        # copies took three times feature_count_'s size (20 Newsgroups: +89 MB at fit). Each
        # cell still sums its entries in document order, so the counts are the same numbers.
        if _fast is not None:  # the same sums in C (textnb/_scores.c), without entries' copies
            row_class = np.ascontiguousarray(row_class, dtype=np.int64)
            weight = np.ascontiguousarray(weight, dtype=float)
            indices, indptr = np.ascontiguousarray(X.indices), np.ascontiguousarray(X.indptr)
            for c in np.unique(row_class).tolist():
                sums = np.zeros(n_terms)
                _fast.class_sums(values, indices, indptr, row_class, weight, c, sums)
                yield c, sums
            return
        lengths = np.diff(X.indptr)
        values = values * np.repeat(weight, lengths)   # X's own values are not changed
        entry_class = np.repeat(row_class.astype(np.int32), lengths)
        for c in np.unique(row_class).tolist():
            mine = entry_class == c
            yield c, np.bincount(X.indices[mine], weights=values[mine], minlength=n_terms)

    # -- scoring: jll = bias + X' @ weights.T --------------------------------------------

    def _check_alpha(self) -> None:
        # The estimators' one rule (textnb.settings): finite, for alpha = inf scored NaN.
        problem = setting_problem("alpha", self.alpha)
        if problem:
            raise ValueError(f"{problem} (1 is Laplace smoothing)")

    def _update(self, counts_changed: bool = True) -> None:
        """Derive again what follows from the counts and the settings; ``counts_changed``
        False (only α or the priors changed) keeps what follows from the counts alone."""
        self._check_alpha()
        self.class_log_prior_ = class_log_prior(self.class_count_, self.fit_prior, self.class_prior)
        # What follows from the counts (weights, per-class sums) is derived when first needed,
        # and kept until they change: training (partial_fit, then save) and scoring (the used
        # terms' weights only) never hold the (n_classes, n_terms) weights beside the counts
        # (20 Newsgroups: 27 MB each). A new dict: predict fills it, __dict__ stays as it was.
        derived = {} if counts_changed else self.__dict__.get("_derived", {})
        self._derived: dict[str, Any] = {name: derived[name] for name in _OF_COUNTS & derived.keys()}

    def _cached(self, name: str, derive: Any) -> Any:
        """``derive()``, computed once per change of the counts."""
        derived = self.__dict__.get("_derived")
        if derived is None:
            raise AttributeError(name)  # not fitted: hasattr says False
        if name not in derived:
            derived[name] = derive()
        return derived[name]

    @property
    def feature_log_prob_(self) -> np.ndarray:
        """The model's log probabilities, ndarray of shape (n_classes, n_terms) (per model)."""
        return self._cached("feature_log_prob_", self._feature_log_prob)

    def _feature_log_prob(self) -> np.ndarray:
        return self._all_weights()

    def _all_weights(self) -> np.ndarray:
        """:meth:`_weights` of every term, filled a class row at a time into the term-major
        (Fortran order) layout: scoring reads a term's classes together, and scipy multiplies
        documents by weights.T far faster when contiguous. Each row is reduced as a whole vector: the same
        sums, bit for bit, as a reduction over the rows of a C-ordered array."""
        weights = np.empty((len(self.classes_), self._n_terms()), order="F")
        every = slice(None)
        for c, count in enumerate(self._count_rows()):
            weights[c] = self._weights(count[None, :], every, [c])[0]
        return weights

    def _weights(self, counts: np.ndarray, columns: Any, classes: Any = slice(None)) -> np.ndarray:
        """The weights w_ck of jll = bias + x' @ w.T, of the given terms (``columns``, whose
        counts are ``counts``, shape (len(classes), len(columns))) and classes, each computed
        alone, elementwise: the same numbers whichever terms are asked for."""
        raise NotImplementedError

    def _bias(self) -> np.ndarray:
        return self.class_log_prior_

    def decomposition(self) -> tuple[np.ndarray, np.ndarray]:
        """(bias, weights) with jll(x) = bias + x' @ weights.T, x' = x (or its presence bits).

        bias: ndarray of shape (n_classes,); weights: ndarray of shape (n_classes, n_terms).
        Scoring and explanations both use it, so they cannot disagree.
        """
        return self._bias(), self._cached("weights", self._all_weights)

    @property
    def unseen_weight_(self) -> np.ndarray:
        """u_c, the weight of a term the model never counted (n_kc = 0 for every class), per
        class: ndarray of shape (n_classes,). A document's words outside the vocabulary, where
        vectorising kept them (``X.unseen``), add u_c each (each distinct one, for presence
        features) to its score, as a cross-validation fold scores a held-out document's words
        that the fold's training lacks."""
        return self._cached("unseen_weight_", self._unseen_weight)

    def _unseen_weight(self) -> np.ndarray:
        raise NotImplementedError

    def unseen_amounts(self, X: CSR) -> np.ndarray | None:
        """Each document's words outside the vocabulary as the model weighs them (Σ of their
        weighed counts; for presence features, how many distinct words): shape
        (n_documents,), or None where ``X`` kept none (``X.unseen`` None)."""
        if X.unseen is None:
            return None
        values = (X.unseen.data > 0).astype(float) if self._binary else X.unseen.data
        return row_sums(values, X.unseen.indptr)

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        X = self._check_x(X)
        jll = self._seen_joint_log_likelihood(X)
        amounts = self.unseen_amounts(X)
        if amounts is not None:
            jll += amounts[:, None] * self.unseen_weight_
        return jll

    def _seen_joint_log_likelihood(self, X: CSR) -> np.ndarray:
        n_docs, n_classes = X.shape[0], len(self.classes_)
        # The weights of the terms X uses only (a part of 1,000 news posts: 20,000 of 172,000),
        # unless every weight is at hand already.
        used, inverse = used_terms(X.indices, X.shape[1])
        derived = self.__dict__.get("_derived", {})
        if "weights" in derived:
            weights = derived["weights"][:, used]
        else:
            # A block of terms at a time: the temporaries of _weights are a block's, not five
            # (n_classes, len(used)) arrays (a 20 Newsgroups part: 16 MB of them).
            weights = np.empty((n_classes, used.size))
            for start in range(0, used.size, _WEIGHT_BLOCK):
                block = used[start:start + _WEIGHT_BLOCK]
                weights[:, start:start + block.size] = self._weights(self._count_columns(block),
                                                                     block)
        values = (X.data > 0).astype(float) if self._binary else X.data
        jll = np.empty((n_docs, n_classes))
        if _fast is not None:  # the same sums from C (textnb/_scores.c), a tenth of the time
            _fast.jll(np.ascontiguousarray(values, dtype=float),
                      inverse.astype(np.int64, copy=False), X.indptr,
                      np.ascontiguousarray(weights), jll)
            return jll + self._bias()
        rows = np.repeat(np.arange(n_docs), np.diff(X.indptr))
        # One class at a time: each score adds its document's entries in order, from 0, as
        # scipy's sparse product did (the same sums, bit for bit), and the temporaries are
        # vectors of X's entries, not an (entries × classes) array.
        for c in range(n_classes):
            jll[:, c] = np.bincount(rows, weights=values * weights[c][inverse], minlength=n_docs)
        return jll + self._bias()


class MultinomialNB(DiscreteNB):
    """Multinomial Naive Bayes: a document is a bag of term occurrences.

    P(w_k|c) = (n_kc + α) / (n_c + α ``|V|``), where n_kc counts occurrences of term k in class
    c's documents and n_c = Σ_k n_kc; α = 1 is Laplace's (n_k + 1)/(n + ``|Vocabulary|``)
    (Mitchell, Machine Learning, ch. 6; McCallum & Nigam 1998), α < 1 is Lidstone smoothing.
    Score: log P(c) + Σ_k x_k log P(w_k|c).

    Parameters
    ----------
    alpha : float, default=1.0
        Smoothing, > 0.
    fit_prior : bool, default=True
        Learn P(c) = N_c/N; False gives uniform priors (the maximum-likelihood rule).
    class_prior : sequence of float, default=None
        Given priors, in ``classes_`` order (MAP).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    class_count_ : ndarray of shape (n_classes,)
        Documents (or their weights) per class.
    feature_count_ : ndarray of shape (n_classes, n_terms)
        n_kc.
    feature_log_prob_ : ndarray of shape (n_classes, n_terms)
        log P(w_k|c).
    class_log_prior_ : ndarray of shape (n_classes,)
        log P(c).
    """

    def _weights(self, counts: np.ndarray, columns: Any, classes: Any = slice(None)) -> np.ndarray:
        # log P(w_k|c) = log(n_kc + α) − log Σ_k' (n_k'c + α)
        weights = np.log(counts + self.alpha)
        weights -= self._log_totals()[classes, None]   # in place: tuning derives these often
        return weights

    def _unseen_weight(self) -> np.ndarray:
        # log P(w|c) of a term of zero count: log α − log Σ_k (n_kc + α)
        return np.log(self.alpha) - self._log_totals()

    def _log_totals(self) -> np.ndarray:
        """log Σ_k (n_kc + α) per class, each row summed as a whole vector."""
        return self._cached("log_totals", lambda: np.array(
            [np.log((count + self.alpha).sum()) for count in self._count_rows()]))


class BernoulliNB(DiscreteNB):
    """Multivariate Bernoulli Naive Bayes: a document is the set of terms present in it.

    P(w_k present|c) = p_kc = (df_kc + α) / (N_c + 2α), where df_kc counts class-c documents
    containing term k (α = 1: two pseudo-documents; McCallum & Nigam 1998). Absent terms count:
    log P(x|c) = Σ_k log(1 − p_kc) + Σ_{k present} log(p_kc / (1 − p_kc)), so the first sum is
    computed once per class and the second over present terms only, never densifying X.

    Parameters and attributes are those of :class:`MultinomialNB`; ``feature_count_`` holds
    df_kc and ``feature_log_prob_`` holds log p_kc.
    """

    _binary = True

    def _log_present(self, counts: np.ndarray, classes: Any = slice(None)) -> np.ndarray:
        """log p_kc = log(df_kc + α) − log(N_c + 2α)."""
        return np.log(counts + self.alpha) - np.log(self.class_count_ + 2 * self.alpha)[classes, None]

    def _log_absent(self, counts: np.ndarray, classes: Any = slice(None)) -> np.ndarray:
        """log(1 − p_kc) from the counts, (N_c − df_kc + α)/(N_c + 2α): 1 − exp(log p) would
        lose precision as p → 1. The maximum guards float residue from weighted unlearning."""
        absent = np.maximum(self.class_count_[classes, None] - counts, 0) + self.alpha
        return np.log(absent) - np.log(self.class_count_ + 2 * self.alpha)[classes, None]

    def _feature_log_prob(self) -> np.ndarray:
        return self._log_present(self.feature_count_)

    @property
    def feature_log_absent_prob_(self) -> np.ndarray:
        """log(1 − p_kc), ndarray of shape (n_classes, n_terms)."""
        return self._cached("feature_log_absent_prob_",
                            lambda: self._log_absent(self.feature_count_))

    def _weights(self, counts: np.ndarray, columns: Any, classes: Any = slice(None)) -> np.ndarray:
        # log(p / (1 − p)): what a present term adds to the absent terms' Σ log(1 − p)
        return self._log_present(counts, classes) - self._log_absent(counts, classes)

    def _unseen_weight(self) -> np.ndarray:
        # log(p / (1 − p)) of a term in no document: log α − log(N_c + α)
        return self._weights(np.zeros((len(self.classes_), 1)), None)[:, 0]

    def _bias(self) -> np.ndarray:
        # log P(c) + Σ_k log(1 − p_kc), each class's row summed as a whole vector
        return self._cached("bias", lambda: self.class_log_prior_ + np.array(
            [self._log_absent(count[None, :], [c])[0].sum()
             for c, count in enumerate(self._count_rows())]))


class ComplementNB(DiscreteNB):
    """Complement Naive Bayes (Rennie et al., 2003) as scikit-learn's ``ComplementNB``: each class
    is scored by how unlike the *other* classes' text a document is, which corrects multinomial
    NB's bias towards classes with more training text.

    θ_~c,k = (Σ_c' n_kc' − n_kc + α) / Σ_k' (Σ_c' n_k'c' − n_k'c + α), the smoothed share of term
    k in the complement of class c; ``feature_log_prob_`` holds the weights w_ck = −log θ_~c,k,
    or with ``norm`` w_ck = log θ_~c,k / Σ_k' log θ_~c,k' (Rennie's weight normalisation).
    Score: Σ_k x_k w_ck, with no prior term: scikit-learn drops Rennie's log P(c) (it "is
    dominated" by the evidence) and uses ``class_log_prior_`` only when there is a single class.
    So ``fit_prior`` and ``class_prior`` change ``class_log_prior_`` but not the predictions;
    :class:`ComplementNBWithPrior` keeps the prior in the score. With two classes the score
    difference (``norm=False``) is the multinomial log-likelihood ratio, so the two models rank
    documents alike there. Predictions and probabilities equal scikit-learn's for the same
    parameters (tests/test_models.py checks to 1e-10 on random counts).

    Parameters
    ----------
    alpha, fit_prior, class_prior : as in :class:`MultinomialNB`.
    norm : bool, default False — normalise each class's weights to sum to 1.

    >>> import numpy as np
    >>> model = ComplementNB().fit(np.array([[3, 0, 1], [0, 2, 1], [1, 3, 0]]), ["a", "b", "b"])
    >>> model.predict(np.array([[2, 0, 0], [0, 1, 0]])).tolist()
    ['a', 'b']
    """

    def __init__(self, *, alpha: float = 1.0, fit_prior: bool = True,
                 class_prior: Sequence[float] | None = None, norm: bool = False) -> None:
        super().__init__(alpha=alpha, fit_prior=fit_prior, class_prior=class_prior)
        self.norm = norm

    def _complement(self, counts: np.ndarray, columns: Any) -> np.ndarray:
        """Σ_c' n_kc' − n_kc + α of the given terms."""
        complement = self._total()[columns] - counts
        complement += self.alpha
        # A float residue of unlearning must not make a complement count negative.
        return np.maximum(complement, self.alpha, out=complement)

    def _complement_sums(self) -> np.ndarray:
        """Per class, Σ_k max(Σ_c' n_kc' − n_kc, 0): the complement's count, without α."""
        def derive() -> np.ndarray:
            total = self._total()
            sums = []
            for count in self._count_rows():
                complement = total - count
                sums.append(np.maximum(complement, 0.0, out=complement).sum())
            return np.array(sums)
        return self._cached("complement_sums", derive)

    def _total(self) -> np.ndarray:
        """Σ_c n_kc, per term: the rows added in order."""
        stored = self.__dict__.get("_stored_counts")
        return self._cached("total", lambda: stored.total() if stored is not None
                            else self.feature_count_.sum(axis=0))

    def _normalisers(self) -> np.ndarray:
        """Per class, log Σ_k θ's numerator and, with ``norm``, Σ_k log θ_~c,k: (2, n_classes)."""
        def derive() -> np.ndarray:
            found = np.zeros((2, len(self.classes_)))
            if not self.norm:
                # Σ_k max(n_k − n_kc + α, α) = Σ_k max(n_k − n_kc, 0) + α|V|: the sums kept
                # apart from α, a new α (tuning tries several on each fold) costs no pass over
                # the terms (20 Newsgroups' word pairs: 1.2 million, 20 classes).
                found[0] = np.log(self._complement_sums() + self.alpha * self._n_terms())
                return found
            for c, count in enumerate(self._count_rows()):  # one class's row at a time
                complement = self._complement(count, slice(None))
                found[0, c] = np.log(complement.sum())
                if self.norm:
                    found[1, c] = (np.log(complement) - found[0, c]).sum()
            return found
        return self._cached("normalisers", derive)

    def _weights(self, counts: np.ndarray, columns: Any, classes: Any = slice(None)) -> np.ndarray:
        log_norm, log_sum = self._normalisers()[:, classes]
        # In place, the same numbers: tuning derives these for every fold and α.
        complement = self._complement(counts, columns)
        log_theta = np.log(complement, out=complement)
        log_theta -= log_norm[:, None]
        if self.norm:
            log_theta /= log_sum[:, None]
            return log_theta
        return np.negative(log_theta, out=log_theta)

    def _unseen_weight(self) -> np.ndarray:
        # A term no class counted has the complement count α in every class.
        log_norm, log_sum = self._normalisers()
        log_theta = np.log(self.alpha) - log_norm
        return log_theta / log_sum if self.norm else -log_theta

    def _bias(self) -> np.ndarray:
        n_classes = len(self.class_log_prior_)
        return self.class_log_prior_ if n_classes == 1 else np.zeros(n_classes)


class ComplementNBWithPrior(ComplementNB):
    """:class:`ComplementNB` with the class prior in the score, as Rennie et al. (2003, eq. 6)
    write it: log P(c) + Σ_k x_k w_ck. TextClassifier's ``model="complement"`` is this model, so
    that its ``fit_prior`` and ``class_prior`` (``textnb train --prior``) take effect. With
    uniform priors (TextClassifier's default) predictions and probabilities equal
    :class:`ComplementNB`'s; only the joint log-likelihood differs, by −log(n_classes).

    >>> import numpy as np
    >>> X, y = np.array([[3, 0, 1], [0, 2, 1], [1, 3, 0]]), ["a", "b", "b"]
    >>> ComplementNBWithPrior(class_prior=[0.999, 0.001]).fit(X, y).predict([[0, 1, 0]]).tolist()
    ['a']
    >>> ComplementNB(class_prior=[0.999, 0.001]).fit(X, y).predict([[0, 1, 0]]).tolist()
    ['b']
    """

    def _bias(self) -> np.ndarray:
        return self.class_log_prior_
