"""X, y → MultinomialNB, BernoulliNB: exact counts, log-space scores, partial_fit, merge, unlearn.

Both models keep exact counts (``class_count_``, ``feature_count_``) and derive their log
parameters from them in one step (``_update``), so ``partial_fit``, ``merge`` and ``unlearn``
are additions and subtractions, and a model trained in pieces equals one trained at once.

Every score is a sum of logs, ``jll = bias_c + Σ_k x_k · w_ck``; the posterior is normalised
with log-sum-exp, so a document of any length never underflows. ``X`` may be a
``scipy.sparse`` matrix, an object with CSR arrays (``data``, ``indices``, ``indptr``, ``shape``),
or a small dense array-like; it is never densified. The module needs numpy only: scoring one
document does not pay for importing scipy.

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

import inspect
import numbers
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

# Rows are scored in blocks of at most this many stored entries, so the temporary
# (entries × classes) array stays near 2**18 · 20 · 8 B = 42 MB on 20 Newsgroups.
_BLOCK_ENTRIES = 1 << 18
# From this many documents on, scoring uses scipy.sparse (see _joint_log_likelihood).
_SCIPY_MIN_DOCUMENTS = 64


class CSR(NamedTuple):
    """The three arrays of a compressed sparse row matrix, and its shape (no scipy needed)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]


def as_csr(X: Any) -> CSR:
    """Return X's CSR arrays: from scipy.sparse, a CSR tuple, or a dense array-like."""
    if isinstance(X, CSR):
        return X
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return CSR(X.data, X.indices, X.indptr, X.shape)
    dense = np.asarray(X, dtype=float)
    if dense.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (documents × terms), got shape {dense.shape}")
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
    return CSR(dense[rows, cols], cols, indptr, dense.shape)


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """log Σ exp(a) along ``axis``, computed as m + log Σ exp(a − m) so nothing overflows."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)), axis)


def class_log_prior(class_count: np.ndarray, fit_prior: bool = True,
                    class_prior: Sequence[float] | None = None) -> np.ndarray:
    """log P(c): given ``class_prior`` (normalised), else N_c/N if ``fit_prior``, else uniform.

    Uniform priors make the decision the maximum-likelihood rule; learned or given priors make
    it MAP (seed 003: "ML classification is MAP with a uniform class distribution").
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


class BaseNB:
    """Log-space prediction shared by every model: subclasses supply the joint log-likelihood.

    A subclass sets ``classes_`` and implements ``_joint_log_likelihood(X)`` returning
    ``log P(c) + log P(x|c)`` as an ndarray of shape (n_documents, n_classes).
    """

    classes_: np.ndarray

    # scikit-learn conventions, without importing scikit-learn.
    _estimator_type = "classifier"  # what scikit-learn < 1.6 reads; newer versions ask for tags

    def __sklearn_tags__(self) -> Any:
        """Tags for scikit-learn >= 1.6, whose Pipeline and check_is_fitted require them.

        Only scikit-learn calls this, so importing it here costs nothing to other users.
        """
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags
        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(), input_tags=InputTags(sparse=True))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's keyword arguments, as scikit-learn's ``BaseEstimator`` gives them."""
        names = [p.name for p in inspect.signature(type(self).__init__).parameters.values()
                 if p.name != "self" and p.kind != p.VAR_KEYWORD]
        return {name: getattr(self, name) for name in names}

    def set_params(self, **params: Any) -> "BaseNB":
        valid = self.get_params()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid: {', '.join(sorted(valid))}")
            setattr(self, name, value)
        if hasattr(self, "classes_"):
            self._update()
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def _update(self) -> None:
        """Derive log parameters from counts; subclasses override."""

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        raise NotImplementedError

    def predict_joint_log_proba(self, X: Any) -> np.ndarray:
        """log P(c) + log P(x|c), unnormalised: ndarray of shape (n_documents, n_classes)."""
        self._check_fitted()
        return self._joint_log_likelihood(X)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """log P(c|x) = jll − logsumexp(jll): ndarray of shape (n_documents, n_classes)."""
        jll = self.predict_joint_log_proba(X)
        return jll - logsumexp(jll, axis=1)[:, None]

    def predict_proba(self, X: Any) -> np.ndarray:
        """P(c|x), rows summing to 1: ndarray of shape (n_documents, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """argmax_c log P(c) + log P(x|c): ndarray of shape (n_documents,) of labels."""
        jll = self.predict_joint_log_proba(X)   # first: it says "not fitted" when classes_ is absent
        return self.classes_[np.argmax(jll, axis=1)]

    def score(self, X: Any, y: Iterable, sample_weight: Sequence[float] | None = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y`` (scikit-learn's default classifier score)."""
        hits = (self.predict(X) == np.asarray(list(y) if not isinstance(y, np.ndarray) else y))
        return float(np.average(hits, weights=sample_weight))


class _DiscreteNB(BaseNB):
    """Naive Bayes over term counts: the state is ``class_count_`` and ``feature_count_``."""

    _binary = False

    def __init__(self, *, alpha: float = 1.0, fit_prior: bool = True,
                 class_prior: Sequence[float] | None = None) -> None:
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    # -- learning: counts in, counts out --------------------------------------------------

    def fit(self, X: Any, y: Iterable, sample_weight: Sequence[float] | None = None) -> "_DiscreteNB":
        """Count X's terms per class of y (Mitchell's LEARN_NAIVE_BAYES_TEXT); returns self."""
        for name in ("classes_", "class_count_", "feature_count_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y, sample_weight=sample_weight)

    def partial_fit(self, X: Any, y: Iterable, classes: Iterable | None = None,
                    sample_weight: Sequence[float] | None = None) -> "_DiscreteNB":
        """Add documents to the counts; labels never seen before become new classes."""
        self._check_alpha()   # before any count changes: a bad alpha must not leave half a model
        X, labels = self._check_xy(X, y)
        wanted = np.unique(labels) if classes is None else np.union1d(labels, list(classes))
        if not hasattr(self, "classes_"):
            if len(labels) == 0:
                raise ValueError("cannot fit on an empty training set")
            self.classes_ = wanted
            self.class_count_ = np.zeros(len(self.classes_))
            self.feature_count_ = np.zeros((len(self.classes_), X.shape[1]))
        else:
            self._add_classes(wanted)
        self._count(X, labels, sample_weight, sign=1.0)
        self._update()
        return self

    def unlearn(self, X: Any, y: Iterable, sample_weight: Sequence[float] | None = None) -> "_DiscreteNB":
        """Subtract documents learned before; ValueError (model unchanged) if they were not."""
        self._check_fitted()
        X, labels = self._check_xy(X, y)
        unknown = sorted(set(labels.tolist()) - set(self.classes_.tolist()))
        if unknown:
            raise ValueError(f"cannot unlearn class {unknown[0]!r}: the model never learned it")
        saved = self.class_count_.copy(), self.feature_count_.copy()
        self._count(X, labels, sample_weight, sign=-1.0)
        # A tolerance, because weighted counts are floats summed in another order.
        if (self.class_count_ < -1e-9).any() or (self.feature_count_ < -1e-9).any():
            self.class_count_, self.feature_count_ = saved
            raise ValueError("cannot unlearn documents the model did not learn "
                             "(counts would become negative)")
        np.maximum(self.class_count_, 0, out=self.class_count_)
        np.maximum(self.feature_count_, 0, out=self.feature_count_)
        self._update()
        return self

    def merge(self, other: "_DiscreteNB") -> "_DiscreteNB":
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
        X = as_csr(X)
        labels = np.asarray(list(y) if not isinstance(y, np.ndarray) else y)
        if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} documents but y has {labels.shape[0]} labels")
        # NaN passes "min < 0" and would poison the counts for good: test for finite too.
        if X.data.size and not (np.min(X.data) >= 0 and np.isfinite(X.data).all()):
            raise ValueError("X must hold non-negative counts (finite numbers)")
        if hasattr(self, "feature_count_") and X.shape[1] != self.feature_count_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} terms; the model was fitted on "
                             f"{self.feature_count_.shape[1]}")
        return X, labels

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

    def _count(self, X: CSR, labels: np.ndarray, sample_weight: Sequence[float] | None,
               sign: float) -> None:
        """class_count_[c] ± Σ w_d and feature_count_[c, k] ± Σ w_d x_dk over documents d of c."""
        n_docs, n_terms = X.shape
        weight = np.ones(n_docs) if sample_weight is None else np.asarray(sample_weight, float)
        if weight.shape != (n_docs,):
            raise ValueError(f"sample_weight must have one weight per document ({n_docs})")
        row_class = np.searchsorted(self.classes_, labels)
        n_classes = len(self.classes_)
        self.class_count_ += sign * np.bincount(row_class, weights=weight, minlength=n_classes)
        entry_row = np.repeat(np.arange(n_docs), np.diff(X.indptr))
        values = (X.data > 0).astype(float) if self._binary else X.data.astype(float)
        cell = row_class[entry_row] * n_terms + X.indices
        counts = np.bincount(cell, weights=values * weight[entry_row], minlength=n_classes * n_terms)
        self.feature_count_ += sign * counts.reshape(n_classes, n_terms)

    # -- scoring: jll = bias + X' @ weights.T --------------------------------------------

    def _check_alpha(self) -> None:
        # numbers.Real first: a string or None must give this ValueError, not a TypeError from >.
        if not isinstance(self.alpha, numbers.Real) or not self.alpha > 0:
            raise ValueError(f"alpha must be a number > 0 (1 is Laplace smoothing), got {self.alpha!r}")

    def _update(self) -> None:
        self._check_alpha()
        self.class_log_prior_ = class_log_prior(self.class_count_, self.fit_prior, self.class_prior)
        self._update_feature_log_prob()

    def _update_feature_log_prob(self) -> None:
        raise NotImplementedError

    def decomposition(self) -> tuple[np.ndarray, np.ndarray]:
        """(bias, weights) with jll(x) = bias + x' @ weights.T, x' = x (or its presence bits).

        bias: ndarray of shape (n_classes,); weights: ndarray of shape (n_classes, n_terms).
        Scoring and explanations both use it, so they cannot disagree.
        """
        raise NotImplementedError

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        X = as_csr(X)
        if X.shape[1] != self.feature_count_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} terms; the model was fitted on "
                             f"{self.feature_count_.shape[1]}")
        bias, weights = self.decomposition()
        if X.shape[0] >= _SCIPY_MIN_DOCUMENTS:
            # Many documents: scipy's sparse product, 10x faster than gathering below, and worth
            # its 0.3 s import; one document (a mail filter) must not pay that import.
            from scipy.sparse import csr_matrix
            values = (X.data > 0).astype(float) if self._binary else X.data
            return np.asarray(csr_matrix((values, X.indices, X.indptr), shape=X.shape) @ weights.T) + bias
        # (n_terms, n_classes) rows are gathered per stored entry: contiguous reads.
        by_term = np.ascontiguousarray(weights.T)
        n_docs = X.shape[0]
        jll = np.zeros((n_docs, len(bias)))
        start = 0
        while start < n_docs:
            # Take rows until the block holds about _BLOCK_ENTRIES stored entries.
            stop = int(np.searchsorted(X.indptr, X.indptr[start] + _BLOCK_ENTRIES, side="right")) - 1
            stop = min(max(stop, start + 1), n_docs)
            lo, hi = X.indptr[start], X.indptr[stop]
            if hi > lo:
                values = (X.data[lo:hi] > 0).astype(float) if self._binary else X.data[lo:hi]
                entries = by_term[X.indices[lo:hi]] * values[:, None]
                starts = X.indptr[start:stop] - lo
                filled = np.flatnonzero(np.diff(X.indptr[start:stop + 1]))
                # reduceat sums entries[starts[i]:starts[i+1]]; empty rows are skipped so each
                # sum runs exactly over one row's entries.
                jll[start + filled] = np.add.reduceat(entries, starts[filled], axis=0)
            start = stop
        return jll + bias


class MultinomialNB(_DiscreteNB):
    """Multinomial Naive Bayes: a document is a bag of term occurrences.

    P(w_k|c) = (n_kc + α) / (n_c + α|V|), where n_kc counts occurrences of term k in class c's
    documents and n_c = Σ_k n_kc; α = 1 is Laplace's (n_k + 1)/(n + |Vocabulary|) (Mitchell,
    seed 001), α < 1 is Lidstone smoothing. Score: log P(c) + Σ_k x_k log P(w_k|c).

    Parameters
    ----------
    alpha : float > 0, default 1.0
    fit_prior : bool, default True — learn P(c) = N_c/N; False gives uniform priors (ML rule).
    class_prior : sequence of float, optional — given priors, in ``classes_`` order (MAP).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,), sorted labels
    class_count_ : ndarray of shape (n_classes,), documents (or their weights) per class
    feature_count_ : ndarray of shape (n_classes, n_terms), n_kc
    feature_log_prob_ : ndarray of shape (n_classes, n_terms), log P(w_k|c)
    class_log_prior_ : ndarray of shape (n_classes,), log P(c)
    """

    def _update_feature_log_prob(self) -> None:
        smoothed = self.feature_count_ + self.alpha
        self.feature_log_prob_ = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))

    def decomposition(self) -> tuple[np.ndarray, np.ndarray]:
        return self.class_log_prior_, self.feature_log_prob_


class BernoulliNB(_DiscreteNB):
    """Multivariate Bernoulli Naive Bayes: a document is the set of terms present in it.

    P(w_k present|c) = p_kc = (df_kc + α) / (N_c + 2α), where df_kc counts class-c documents
    containing term k (seed 003: "adding two pseudo-documents"). Absent terms count too:
    log P(x|c) = Σ_k log(1 − p_kc) + Σ_{k present} log(p_kc / (1 − p_kc)), so the first sum is
    computed once per class and the second over present terms only, never densifying X.

    Parameters and attributes are those of :class:`MultinomialNB`; ``feature_count_`` holds
    df_kc and ``feature_log_prob_`` holds log p_kc.
    """

    _binary = True

    def _update_feature_log_prob(self) -> None:
        denominator = np.log(self.class_count_ + 2 * self.alpha)[:, None]
        self.feature_log_prob_ = np.log(self.feature_count_ + self.alpha) - denominator
        # log(1 − p) from the counts, (N_c − df_kc + α)/(N_c + 2α): 1 − exp(log p) would lose
        # precision as p → 1. The maximum guards float residue from weighted unlearning.
        absent = np.maximum(self.class_count_[:, None] - self.feature_count_, 0) + self.alpha
        self.feature_log_absent_prob_ = np.log(absent) - denominator
        self._bias = self.class_log_prior_ + self.feature_log_absent_prob_.sum(axis=1)
        self._weights = self.feature_log_prob_ - self.feature_log_absent_prob_

    def decomposition(self) -> tuple[np.ndarray, np.ndarray]:
        return self._bias, self._weights


class ComplementNB(_DiscreteNB):
    """Complement Naive Bayes (Rennie et al., 2003): each class is scored by how unlike the
    *other* classes' text a document is, which corrects multinomial NB's bias towards classes
    with more training text.

    θ_~c,k = (Σ_{c'≠c} n_kc' + α) / (Σ_{c'≠c} n_c' + α|V|); score: log P(c) − Σ_k x_k log θ_~c,k.
    With two classes the score difference is the multinomial log-likelihood ratio, so the two
    models rank documents alike there. ``feature_log_prob_`` holds −log θ_~c,k, the weights, as
    scikit-learn's ``ComplementNB(norm=False)`` does.
    """

    def _update_feature_log_prob(self) -> None:
        complement = self.feature_count_.sum(axis=0) - self.feature_count_ + self.alpha
        # A float residue of unlearning must not make a complement count negative.
        np.maximum(complement, self.alpha, out=complement)
        self.feature_log_prob_ = np.log(complement.sum(axis=1, keepdims=True)) - np.log(complement)

    def decomposition(self) -> tuple[np.ndarray, np.ndarray]:
        return self.class_log_prior_, self.feature_log_prob_
