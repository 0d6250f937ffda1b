"""count matrices with unlabeled rows → expectation–maximisation → a Naive Bayes model with
fractional counts: semi-supervised NB (Nigam et al., 2000) and clustering by a mixture of
multinomials.

EM as Nigam et al. (2000) apply it (and Mitchell, Machine Learning, ch. 6.12): guess the missing values (the classes of the
unlabeled documents) from the model, re-estimate the model as if the guesses were observed,
repeat until convergence. Here:

- E-step: P(c|x_d) for every unlabeled document d, from the current model (log-sum-exp);
- M-step: the counts are the labeled documents' counts plus λ · Σ_d P(c|x_d) x_d, and the
  class counts N_c + λ · Σ_d P(c|x_d) (λ = ``unlabeled_weight``); the model's own ``_update``
  turns them into MAP parameters, P(w|c) = (n_wc + α)/(n_c + α|V|).

The objective, reported once per iteration in ``em_history_``, is the log posterior up to a
constant::

    L(θ) = Σ_labeled log P(y_d) P(x_d|y_d) + λ Σ_unlabeled log Σ_c P(c) P(x_d|c) + log P(θ)

with log P(θ) the Dirichlet prior the smoothing α stands for: Σ_ck α log θ_ck for the
multinomial (Dir(1 + α)), Σ_ck α (log p_ck + log(1 − p_ck)) for the Bernoulli model
(Beta(1 + α, 1 + α)); the class prior is uniform (Dir(1)). The multinomial coefficients are
constants and left out. Each EM step cannot decrease L (tests/test_em.py checks every iteration
on real mail); iteration stops when L improves by less than ``tol`` · |L| or after ``max_iter``
M-steps. With ``hard=True`` the E-step assigns each document wholly to its most probable class
(classification EM, the notes' k-means view): L can then only be checked on the completed data.

Only the generative event models take part: complement NB has no likelihood to maximise.

Examples
--------
>>> import numpy as np
>>> X = np.array([[3, 0, 0], [0, 3, 0], [2, 0, 1], [0, 2, 1], [3, 0, 1], [1, 4, 0]])
>>> model = SemiSupervisedNB().fit(X, [0, 1, -1, -1, -1, -1])
>>> model.predict(X).tolist()
[0, 1, 0, 1, 0, 1]
>>> bool(np.all(np.diff(model.em_history_) >= 0))
True
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .discrete import BernoulliNB, ComplementNB, DiscreteNB, MultinomialNB
from .estimator import BaseNB, check_labels
from .sparse import CSR, as_csr, divide_rows, logsumexp

# scikit-learn's mark of an unlabeled sample (sklearn.semi_supervised).
UNLABELED = -1
# Nigam et al. (2000) iterate "until convergence", which took about 7–10 rounds on 20NG;
# python -m bench.em measured L still moving by ~1e-5 relative after 10 and accuracy flat.
MAX_ITER = 30
TOL = 1e-6
# λ: Nigam et al.'s EM-λ weights unlabeled documents below 1 when labels are plentiful; 1 is
# their basic EM. python -m bench.em chooses λ by CV among these when labels allow.
WEIGHTS = (0.01, 0.1, 0.3, 1.0)
# α of complement_start's model: TextClassifier's default.
START_ALPHA = 0.03
# Spherical k-means iterations of kmeans_start: a start, not the clustering; EM refines it.
KMEANS_ITER = 10
GENERATIVE = (MultinomialNB, BernoulliNB)

Callback = Callable[[int, float], None]


def log_prior(model: DiscreteNB) -> float:
    """log P(θ) up to a constant: the Dirichlet (Beta) prior whose MAP estimate α smoothing is."""
    alpha = model.alpha
    if isinstance(model, BernoulliNB):
        return float(alpha * (model.feature_log_prob_.sum() + model.feature_log_absent_prob_.sum()))
    return float(alpha * model.feature_log_prob_.sum())


def _scipy(X: CSR):
    from scipy.sparse import csr_matrix
    return csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)


def _check_generative(model: Any) -> None:
    if type(model) not in GENERATIVE:
        raise ValueError(f"EM needs a generative event model (multinomial or bernoulli), not "
                         f"{type(model).__name__}: complement NB has no likelihood to maximise")


def expectation_maximization(model: DiscreteNB, X_labeled: Any, y_labeled: Sequence,
                             X_unlabeled: Any, *, unlabeled_weight: float = 1.0,
                             max_iter: int = MAX_ITER, tol: float = TOL, hard: bool = False,
                             classes: Sequence | None = None,
                             initial_proba: np.ndarray | None = None,
                             callback: Callback | None = None) -> tuple[list[float], np.ndarray]:
    """Fit ``model`` (a MultinomialNB or BernoulliNB, changed in place) by EM.

    Starts from the labeled documents alone, or, when ``initial_proba`` is given (shape
    (n_unlabeled, n_classes), over ``classes``), from an M-step on those guesses (how a
    clustering starts). ``callback(iteration, L)`` is called after each iteration.

    Returns (history, proba): L after each M-step, a list of float; and P(c|x) of the
    unlabeled documents under the final model, ndarray of shape (n_unlabeled, n_classes).
    """
    _check_generative(model)
    model._check_alpha()
    if not (isinstance(unlabeled_weight, (int, float)) and unlabeled_weight >= 0):
        raise ValueError(f"unlabeled_weight must be a number >= 0, got {unlabeled_weight!r}")
    if not (isinstance(max_iter, int) and max_iter >= 1):
        raise ValueError(f"max_iter must be a whole number >= 1, got {max_iter!r}")
    U = model._check_x(X_unlabeled, fitting=True)
    if model._binary:
        U = CSR((U.data > 0).astype(float), U.indices, U.indptr, U.shape)
    U = _scipy(U)
    if X_labeled is None or len(y_labeled) == 0:
        if classes is None or initial_proba is None:
            raise ValueError("without labeled documents, give classes and initial_proba")
        model.classes_ = np.asarray(classes)
        model.class_count_ = np.zeros(len(model.classes_))
        model.feature_count_ = np.zeros((len(model.classes_), U.shape[1]))
        L = None
    else:
        model.fit(X_labeled, y_labeled)
        model._add_classes(np.asarray(classes if classes is not None else []))
        L = _scipy(model._check_x(X_labeled))
        if model._binary:
            L.data = (L.data > 0).astype(float)
        labeled_rows = np.searchsorted(model.classes_, check_labels(y_labeled, L.shape[0]))
    base_class, base_feature = model.class_count_.copy(), model.feature_count_.copy()

    def m_step(proba: np.ndarray) -> None:
        weighted = unlabeled_weight * proba
        model.class_count_ = base_class + weighted.sum(axis=0)
        model.feature_count_ = base_feature + np.asarray((U.T @ weighted).T)
        model._update()

    def objective(jll_unlabeled: np.ndarray) -> float:
        total = log_prior(model)
        if L is not None:
            jll = model._joint_log_likelihood(L)
            total += float(jll[np.arange(L.shape[0]), labeled_rows].sum())
        if hard:
            return total + unlabeled_weight * float(jll_unlabeled.max(axis=1).sum())
        return total + unlabeled_weight * float(logsumexp(jll_unlabeled, axis=1).sum())

    if initial_proba is not None:
        m_step(np.asarray(initial_proba, dtype=float))
    elif L is None:
        raise ValueError("without labeled documents, give initial_proba")
    else:
        model._update()
    history: list[float] = []
    for iteration in range(1, max_iter + 1):
        jll = model._joint_log_likelihood(U)                                    # E-step
        proba = _posterior(jll, hard)
        m_step(proba)                                                           # M-step
        jll = model._joint_log_likelihood(U)
        history.append(objective(jll))
        if callback is not None:
            callback(iteration, history[-1])
        if len(history) > 1 and history[-1] - history[-2] <= tol * abs(history[-1]):
            break
    return history, _posterior(jll, hard)


def complement_start(X_labeled: Any, y_labeled: Sequence, X_unlabeled: Any,
                     alpha: float = START_ALPHA) -> np.ndarray:
    """First guesses of the unlabeled documents' classes, for EM to start from: the classes
    complement NB (α = ``alpha``) on L2-normalised counts of the labeled documents gives them,
    one-hot rows over the sorted classes, shape (n_unlabeled, n_classes).

    With few labeled documents the multinomial model EM refines is a poor first E-step, and
    EM's local optimum depends on it; complement NB (Rennie et al., 2003, "Tackling the poor
    assumptions of naive Bayes text classifiers") on normalised counts guesses better. On 20
    Newsgroups, 10 labeled posts a group and 11,114 unlabeled (python -m bench.em): EM from
    the labeled documents alone 54.4 % test accuracy, from these guesses 68.3 %.
    """
    def normalised(X: Any):
        matrix = _scipy(as_csr(X)).astype(float)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        divide_rows(matrix.data, matrix.indptr, np.where(norms > 0, norms, 1.0))
        return matrix

    model = ComplementNB(alpha=alpha).fit(normalised(X_labeled), y_labeled)
    rows = np.searchsorted(model.classes_, model.predict(normalised(X_unlabeled)))
    proba = np.zeros((len(rows), len(model.classes_)))
    proba[np.arange(len(rows)), rows] = 1.0
    return proba


def _posterior(jll: np.ndarray, hard: bool) -> np.ndarray:
    """P(c|x) from the joint log-likelihood, or its argmax as a one-hot row when ``hard``."""
    if hard:
        proba = np.zeros_like(jll)
        proba[np.arange(len(jll)), np.argmax(jll, axis=1)] = 1.0
        return proba
    return np.exp(jll - logsumexp(jll, axis=1)[:, None])


class SemiSupervisedNB(BaseNB):
    """Naive Bayes trained by EM on labeled and unlabeled documents (Nigam et al., 2000).

    ``fit(X, y)``: rows whose label is −1 (``UNLABELED``; or None in an object array) are
    unlabeled, scikit-learn's convention for semi-supervised estimators.

    Parameters
    ----------
    model : "multinomial" or "bernoulli" — the event model.
    alpha, fit_prior : as in :class:`~textnb.nb.discrete.MultinomialNB`.
    unlabeled_weight : float ≥ 0, λ, the weight of an unlabeled document's counts (Nigam et
        al.'s EM-λ); 0 gives the supervised model.
    max_iter, tol : at most ``max_iter`` EM iterations; stop once L improves by ≤ tol·|L|.
    hard : bool — classification EM: each unlabeled document goes wholly to its likeliest class.

    Attributes
    ----------
    model_ : the fitted MultinomialNB / BernoulliNB, with fractional counts
    classes_ : ndarray of shape (n_classes,)
    em_history_ : list of float, L after each iteration (never decreasing with ``hard=False``)
    n_iter_ : int, iterations run
    """

    def __init__(self, *, model: str = "multinomial", alpha: float = 1.0, fit_prior: bool = True,
                 unlabeled_weight: float = 1.0, max_iter: int = MAX_ITER, tol: float = TOL,
                 hard: bool = False) -> None:
        self.model = model
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.tol = tol
        self.hard = hard

    def fit(self, X: Any, y: Sequence, callback: Callback | None = None) -> "SemiSupervisedNB":
        """EM on X's rows: labeled ones count under their label, rows labeled −1 by posterior."""
        events = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB}
        if self.model not in events:
            raise ValueError(f"model must be 'multinomial' or 'bernoulli', not {self.model!r}")
        X = as_csr(X)
        labels = check_labels(y, X.shape[0], unlabeled=UNLABELED)
        unlabeled = unlabeled_mask(labels)
        if unlabeled.all():
            raise ValueError("every document is unlabeled: label some, or cluster them "
                             "(textnb.nb.em.MixtureNB)")
        model = events[self.model](alpha=self.alpha, fit_prior=self.fit_prior)
        kept = labels[~unlabeled]
        if kept.dtype == object:
            kept = np.array(kept.tolist())
        self.em_history_, _ = expectation_maximization(
            model, _rows(X, ~unlabeled), kept, _rows(X, unlabeled),
            unlabeled_weight=self.unlabeled_weight, max_iter=self.max_iter, tol=self.tol,
            hard=self.hard, callback=callback)
        self.model_, self.classes_ = model, model.classes_
        self.n_iter_ = len(self.em_history_)
        return self

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        return self.model_._joint_log_likelihood(X)


def unlabeled_mask(labels: np.ndarray) -> np.ndarray:
    """True where a label is −1 (or None): ndarray of bool, shape (n,)."""
    if labels.dtype == object:
        return np.array([label is None or (isinstance(label, (int, np.integer)) and label == -1)
                         for label in labels.tolist()], dtype=bool)
    if labels.dtype.kind in "iuf":
        return labels == UNLABELED
    return labels == str(UNLABELED)


def _rows(X: CSR, keep: np.ndarray) -> CSR:
    """The rows of X where ``keep`` is True, as CSR arrays."""
    return CSR(*_csr_arrays(_scipy(X)[np.flatnonzero(keep)]))


def _csr_arrays(matrix) -> tuple:
    return matrix.data, matrix.indices, matrix.indptr, matrix.shape


def split_rows(X: CSR, n: int) -> tuple[CSR, CSR]:
    """(the first n rows of X, the rest), as CSR arrays sharing X's buffers."""
    cut = X.indptr[n]
    return (CSR(X.data[:cut], X.indices[:cut], X.indptr[:n + 1], (n, X.shape[1])),
            CSR(X.data[cut:], X.indices[cut:], X.indptr[n:] - cut, (X.shape[0] - n, X.shape[1])))


def kmeans_start(X: Any, k: int, rng: np.random.Generator,
                 iterations: int = KMEANS_ITER) -> np.ndarray:
    """A start for EM: the clusters of spherical k-means (Dhillon & Modha, 2001, "Concept
    decompositions for large sparse text data using clustering") on the rows of X weighted by
    idf and L2-normalised, seeded by k-means++ (Arthur & Vassilvitskii, 2007) over the cosine
    distance; one-hot rows, shape (n_documents, k).

    EM's optimum depends on its start: from these it reaches better clusterings than from
    single random documents (docs/design/unlabeled-multilabel.md; python -m bench.cluster).
    Iteration stops early when the clusters stop changing or one would be left empty."""
    M = _scipy(as_csr(X)).astype(float).tocsr()
    n = M.shape[0]
    df = np.bincount(M.indices, minlength=M.shape[1])
    M.data *= np.log(n / np.maximum(df, 1))[M.indices] + 1.0               # tf·idf
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
    divide_rows(M.data, M.indptr, np.where(norms > 0, norms, 1.0))
    seeds = [int(rng.integers(n))]
    # Similarities to one document: a dense column of n; the k centroids are dense k × terms,
    # as the model's own counts are.
    distance = np.maximum(1.0 - (M @ M[seeds[0]].T).toarray().ravel(), 0.0)
    for _ in range(k - 1):
        weight = distance ** 2
        seed = int(rng.choice(n, p=weight / weight.sum())) if weight.sum() > 0 else \
            int(rng.choice(np.setdiff1d(np.arange(n), seeds)))
        seeds.append(seed)
        distance = np.minimum(distance, np.maximum(
            1.0 - (M @ M[seed].T).toarray().ravel(), 0.0))
    centroids = M[seeds].toarray()
    clusters = np.asarray(M @ centroids.T).argmax(axis=1)
    clusters[seeds] = np.arange(k)                    # a seed in its own cluster: none empty
    for _ in range(iterations):
        one_hot = np.zeros((n, k))
        one_hot[np.arange(n), clusters] = 1.0
        centroids = np.asarray((M.T @ one_hot).T)
        centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-300)
        found = np.asarray(M @ centroids.T).argmax(axis=1)
        if np.array_equal(found, clusters) or np.bincount(found, minlength=k).min() == 0:
            break
        clusters = found
    proba = np.zeros((n, k))
    proba[np.arange(n), clusters] = 1.0
    return proba


class MixtureNB:
    """Clustering by a mixture of multinomials (or Bernoullis) fitted by EM from several starts.

    Each start (``init="kmeans"``) is :func:`kmeans_start`'s clusters, or (``"random"``)
    ``n_clusters`` distinct documents picked at random, each one cluster's only member (as
    Mitchell's ch. 6.12 starts); then EM runs, and the start of the highest L is kept, as
    KMeans keeps the best of its ``n_init``. ``hard=True`` runs classification EM.

    Parameters
    ----------
    n_clusters : int ≥ 2
    model, alpha, fit_prior, max_iter, tol, hard : as in :class:`SemiSupervisedNB`.
    n_init : int, starts.
    init : "kmeans" or "random", how each start is made.
    random_state : int or None, the seed; the same seed gives the same clusters.

    Attributes
    ----------
    model_ : fitted MultinomialNB/BernoulliNB whose classes are 0 … n_clusters − 1
    labels_ : ndarray of shape (n_documents,), the cluster of each document
    proba_ : ndarray of shape (n_documents, n_clusters), P(cluster|x)
    em_history_ : list of float, L per iteration of the kept start
    log_likelihood_ : float, its final L; start_log_likelihoods_ : list, every start's

    >>> import numpy as np
    >>> X = np.array([[5, 1, 0, 0], [4, 2, 0, 0], [0, 0, 3, 3], [0, 1, 4, 2]])
    >>> labels = MixtureNB(n_clusters=2, random_state=0).fit(X).labels_
    >>> bool(labels[0] == labels[1] != labels[2] == labels[3])
    True
    """

    def __init__(self, n_clusters: int = 2, *, model: str = "multinomial", alpha: float = 1.0,
                 fit_prior: bool = True, n_init: int = 5, max_iter: int = 100, tol: float = TOL,
                 hard: bool = False, init: str = "kmeans",
                 random_state: int | None = None) -> None:
        self.n_clusters = n_clusters
        self.model = model
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.hard = hard
        self.init = init
        self.random_state = random_state

    def fit(self, X: Any, callback: Callable[[int, int, float], None] | None = None) -> "MixtureNB":
        """Cluster X's rows; ``callback(start, iteration, L)`` reports progress. Returns self."""
        events = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB}
        if self.model not in events:
            raise ValueError(f"model must be 'multinomial' or 'bernoulli', not {self.model!r}")
        X = as_csr(X)
        k = self.n_clusters
        if not (isinstance(k, (int, np.integer)) and 2 <= k <= X.shape[0]):
            raise ValueError(f"n_clusters must be a whole number from 2 to the number of "
                             f"documents ({X.shape[0]}), got {k!r}")
        if not (isinstance(self.n_init, (int, np.integer)) and self.n_init >= 1):
            raise ValueError(f"n_init must be a whole number >= 1, got {self.n_init!r}")
        if self.init not in ("kmeans", "random"):
            raise ValueError(f"init must be 'kmeans' or 'random', not {self.init!r}")
        rng = np.random.default_rng(self.random_state)
        best = None
        self.start_log_likelihoods_ = []
        for start in range(self.n_init):
            if self.init == "kmeans":
                initial = kmeans_start(X, k, rng)
            else:
                initial = np.zeros((X.shape[0], k))
                initial[rng.choice(X.shape[0], size=k, replace=False), np.arange(k)] = 1.0
            model = events[self.model](alpha=self.alpha, fit_prior=self.fit_prior)
            report = None if callback is None else (lambda i, v, s=start: callback(s, i, v))
            history, proba = expectation_maximization(
                model, None, [], X, max_iter=self.max_iter, tol=self.tol, hard=self.hard,
                classes=np.arange(k), initial_proba=initial, callback=report)
            self.start_log_likelihoods_.append(history[-1])
            if best is None or history[-1] > best[0][-1]:
                best = history, proba, model
        self.em_history_, self.proba_, self.model_ = best
        self.log_likelihood_ = self.em_history_[-1]
        self.labels_ = np.argmax(self.proba_, axis=1)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The most probable cluster of each row: ndarray of shape (n_documents,)."""
        return self.model_.predict(X)


