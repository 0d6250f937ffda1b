"""CSV rows → column distributions → TableNB: Naive Bayes over tables of categories and numbers.

Each column gets a class-conditional distribution, and a row's score is the shared log-space
one of :class:`~textnb.nb.estimator.BaseNB`::

    jll[r, c] = log P(c) + Σ_j log p(x_rj | c)        (missing cells add 0)

Column kinds (:mod:`textnb.tables.columns`):

- ``categorical``: P(v|c) = (n_cv + k) / (n_c + k·|domain|), k = ``alpha`` ≥ 0.
- ``gaussian``: N(x; μ_c, σ²_c), σ² with ``ddof`` 1 (the sample variance) or 0, floored.
- ``poisson``: λ_c^x e^(−λ_c) / x!, λ_c the class mean; x a count.
- ``exponential``: λ_c e^(−λ_c x), λ_c = 1 / class mean; x > 0.
- ``equal-width`` / ``equal-frequency`` (optionally ``:bins``, e.g. ``equal-width:4``): the
  number is binned on edges learned from all training rows, then the bin is categorical.

A column whose cells all read as numbers is ``gaussian`` unless told otherwise; any other
column is ``categorical``. Empty cells (``""``, ``None``, NaN) are skipped in training and
prediction. Row weights count a row that many times (a table of counts). Rows are
numbered from 1 (after a CSV's header) in error messages.

Examples
--------
>>> X = [["sunny", "hot"], ["rain", "mild"], ["rain", "hot"], ["sunny", "mild"]]
>>> model = TableNB(alpha=0).fit(X, ["no", "yes", "yes", "no"], columns=["outlook", "temp"])
>>> model.predict_proba([["rain", "hot"]]).round(2).tolist()
[[0.0, 1.0]]
"""

from __future__ import annotations

import numbers
import os
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import ModelFileError
from ..nb.discrete import class_log_prior
from ..nb.estimator import BaseNB
from ..store import container
from .columns import Categorical, DISTRIBUTIONS, parse_kind
from .reading import TableError, clean_cell, infer_kind

MODEL_KIND = "table"




# -- cells ------------------------------------------------------------------------------------


# -- column distributions: sufficient statistics in, log-densities out -----------------------


# -- the model --------------------------------------------------------------------------------

class TableNB(BaseNB):
    """Naive Bayes over table rows, one distribution per column, scored in log space.

    Parameters
    ----------
    kinds : mapping column name → kind, or a sequence of kinds (one per column), optional —
        see the module docstring; unnamed columns are inferred from their cells.
    alpha : float ≥ 0, default 1.0 — k of Laplace smoothing for categorical and binned columns
        (the m-estimate's pseudo-counts); 0 reproduces the unsmoothed textbook numbers.
    ddof : int, default 1 — Gaussian variance M2/(n − ddof): 1, the sample variance, or 0 for the MLE.
    var_floor : float > 0, default 1e-9 — relative variance floor (see :class:`Gaussian`).
    bins : int ≥ 1, default 5 — bins of ``equal-width``/``equal-frequency`` without ``:bins``.
    unseen : {"skip", "error"}, default "skip" — a categorical value never seen in training
        is skipped like an empty cell, or raises TableError.
    fit_prior : bool, default True — learn P(c) = N_c/N; False gives uniform priors.
    class_prior : sequence of float, optional — given priors in ``classes_`` order.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,), sorted labels
    class_count_ : ndarray of shape (n_classes,), rows (or their weights) per class
    class_log_prior_ : ndarray of shape (n_classes,), log P(c)
    columns_ : list of str, the feature columns in order
    kinds_ : list of str, each column's kind
    distributions_ : dict column name → :class:`Categorical`, :class:`Gaussian`,
        :class:`Poisson` or :class:`Exponential`
    target_ : str or None, the name of the class column (used for sampled tables)

    If every class scores −inf on a row (possible only with alpha = 0), no class explains it:
    scoring raises TableError naming the row instead of returning NaN probabilities.
    """

    def __init__(self, *, kinds: Mapping[str, str] | Sequence[str] | None = None,
                 alpha: float = 1.0, ddof: int = 1, var_floor: float = 1e-9, bins: int = 5,
                 unseen: str = "skip", fit_prior: bool = True,
                 class_prior: Sequence[float] | None = None) -> None:
        self.kinds = kinds
        self.alpha = alpha
        self.ddof = ddof
        self.var_floor = var_floor
        self.bins = bins
        self.unseen = unseen
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def fit(self, X: Sequence[Sequence[Any]], y: Iterable,
            sample_weight: Sequence[float] | None = None, *,
            columns: Sequence[str] | None = None, target: str | None = None) -> "TableNB":
        """Learn P(c) and each column's P(x|c) from rows X (cells) and labels y; returns self.

        ``columns`` names X's columns (default x0, x1, …); ``sample_weight`` counts each row
        that many times. TableError for a ragged row, an empty label, a bad cell, or a column
        with no values for some class.
        """
        self._check_params()
        labels = np.asarray(list(y) if not isinstance(y, np.ndarray) else y)
        if labels.ndim != 1 or len(labels) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(labels)} labels")
        if len(X) == 0:
            raise ValueError("cannot fit on an empty table")
        names = self._check_columns(X, columns)
        for i, label in enumerate(labels):
            if clean_cell(label) is None:
                raise TableError(f"row {i + 1}{'' if target is None else f', column {target!r}'}"
                                 ": the class label is empty")
        weight = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, float)
        if weight.shape != (len(X),) or not np.all(np.isfinite(weight) & (weight >= 0)):
            raise ValueError(f"sample_weight must be {len(X)} finite numbers ≥ 0, one per row")
        classes, cls = np.unique(labels, return_inverse=True)
        cells = list(zip(*X))
        distributions = {}
        for name, kind, column in zip(names, self._resolve_kinds(names, cells), cells):
            kind, bins = parse_kind(kind)
            dist = DISTRIBUTIONS[kind](name, kind, bins or self.bins)
            distributions[name] = dist.fit(column, cls, weight, len(classes))
            empty = np.flatnonzero(dist.n == 0)
            if empty.size:
                raise TableError(f"column {name!r} has no values for class "
                                 f"'{classes[empty[0]]}': fill it in or drop the column")
        self.classes_, self.class_count_ = classes, np.bincount(cls, weights=weight)
        self.distributions_, self.target_ = distributions, target
        self._update()
        return self

    @property
    def columns_(self) -> list[str]:
        """The feature columns, in order."""
        return list(self.distributions_)

    @property
    def kinds_(self) -> list[str]:
        """Each column's kind, in column order."""
        return [dist.kind for dist in self.distributions_.values()]

    def _check_params(self) -> None:
        # numbers.Real first: a string must give this ValueError, not a TypeError from >=.
        if not isinstance(self.alpha, numbers.Real) or not self.alpha >= 0:
            raise ValueError(f"alpha must be a number ≥ 0 (0: no smoothing), got {self.alpha!r}")
        if not isinstance(self.ddof, (int, np.integer)) or self.ddof < 0:
            raise ValueError(f"ddof must be a whole number ≥ 0 (1: n − 1), got {self.ddof!r}")
        if not isinstance(self.var_floor, numbers.Real) or not self.var_floor > 0:
            raise ValueError(f"var_floor must be a number > 0, got {self.var_floor!r}")
        if not isinstance(self.bins, (int, np.integer)) or self.bins < 1:
            raise ValueError(f"bins must be a whole number ≥ 1, got {self.bins!r}")
        if self.unseen not in ("skip", "error"):
            raise ValueError(f"unseen must be 'skip' or 'error', got {self.unseen!r}")

    def _check_columns(self, X: Sequence[Sequence[Any]],
                       columns: Sequence[str] | None) -> list[str]:
        if columns is None:
            columns = [f"x{j}" for j in range(len(X[0]) if len(X) else 0)]
        names = [str(c) for c in columns]
        for i, row in enumerate(X):
            if len(row) != len(names):
                raise TableError(f"row {i + 1} has {len(row)} cells, expected {len(names)}")
        if not names:
            raise TableError("the table has no feature columns")
        if len(set(names)) != len(names):
            raise ValueError(f"column names must be distinct, got {names}")
        return names

    def _resolve_kinds(self, names: list[str], cells: list[Sequence[Any]]) -> list[str]:
        """The kind of each column: given in ``kinds`` or inferred from its cells."""
        given: Mapping[str, str] = {}
        if isinstance(self.kinds, Mapping):
            given = self.kinds
            unknown = [name for name in given if name not in names]
            if unknown:
                raise ValueError(f"kinds names {unknown[0]!r}, which is not a column; "
                                 f"the columns are {', '.join(names)}")
        elif self.kinds is not None:
            if len(self.kinds) != len(names):
                raise ValueError(f"kinds gives {len(self.kinds)} kinds for {len(names)} columns")
            given = dict(zip(names, self.kinds))
        return [given.get(name) or infer_kind(column) for name, column in zip(names, cells)]

    def _update(self) -> None:
        self._check_params()
        self.class_log_prior_ = class_log_prior(self.class_count_, self.fit_prior, self.class_prior)
        for dist in self.distributions_.values():
            dist.update(self)

    # -- scoring ------------------------------------------------------------------------------

    def contributions(self, X: Sequence[Sequence[Any]]) -> np.ndarray:
        """log p(x_rj | c) of shape (n_rows, n_columns, n_classes); 0 for skipped cells.

        Scoring and :meth:`explain` both use it: jll = class_log_prior_ + sum over columns.
        """
        self._check_fitted()
        self._check_columns(X, self.columns_)
        if len(X) == 0:
            return np.zeros((0, len(self.columns_), len(self.classes_)))
        cells = list(zip(*X))
        return np.stack([dist.log_likelihood(column, self)
                         for dist, column in zip(self.distributions_.values(), cells)], axis=1)

    def _joint_log_likelihood(self, X: Sequence[Sequence[Any]]) -> np.ndarray:
        jll = self.class_log_prior_ + self.contributions(X).sum(axis=1)
        dead = np.flatnonzero(np.all(np.isneginf(jll), axis=1))
        if dead.size:
            raise TableError(f"row {dead[0] + 1}: every class has probability 0 (with alpha = 0, "
                             f"each class misses one of the row's values); use alpha > 0")
        return jll

    def explain(self, row: Sequence[Any]) -> dict[str, np.ndarray]:
        """Each column's log p(x_j | c), shape (n_classes,), in column order (0 if skipped).

        ``class_log_prior_ + sum(explain(row).values())`` is ``predict_joint_log_proba([row])[0]``.
        """
        return dict(zip(self.columns_, self.contributions([row])[0]))

    # -- generating ---------------------------------------------------------------------------

    def sample(self, n: int, seed: int | None = None) -> tuple[list[list[Any]], np.ndarray]:
        """Draw n rows: the class from P(c), then each column from its P(x|c) (the generative model).

        Returns (rows, labels): rows a list of n lists in ``columns_`` order (str for
        categorical, float for gaussian, exponential and binned — uniform within the bin —,
        int for poisson); labels an ndarray of shape (n,).
        """
        self._check_fitted()
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be a whole number ≥ 0, got {n!r}")
        rng = np.random.default_rng(seed)
        prior = np.exp(self.class_log_prior_)
        cls = rng.choice(len(self.classes_), size=n, p=prior / prior.sum())
        columns = [dist.sample(cls, rng) for dist in self.distributions_.values()]
        return [list(row) for row in zip(*columns)], self.classes_[cls]

    # -- model files --------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the model atomically as a ``table`` model file (JSON + numeric arrays)."""
        self._check_fitted()
        # JSON has no tuples, numpy scalars or arrays: make them lists and Python numbers.
        params = {k: (dict(v) if isinstance(v, Mapping) else np.asarray(v).tolist()
                      if isinstance(v, (np.ndarray, np.generic, tuple)) else v)
                  for k, v in self.get_params().items()}
        columns, arrays = [], {"class_count": self.class_count_}
        for j, (name, dist) in enumerate(self.distributions_.items()):
            meta, parts = dist.state()
            columns.append({"name": name, "kind": dist.kind, **meta})
            arrays.update({f"{j}.{key}": value for key, value in parts.items()})
        container.save(path, MODEL_KIND, {"params": params, "classes": self.classes_.tolist(),
                                          "target": self.target_, "columns": columns}, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TableNB":
        """Read a model written by :meth:`save`; ModelFileError if it is not one."""
        meta, arrays = container.load(path, MODEL_KIND)
        try:
            model = cls(**meta["params"])
            model.classes_ = np.asarray(meta["classes"])
            model.class_count_ = arrays["class_count"]
            model.target_ = meta["target"]
            model.distributions_ = {}
            for j, column in enumerate(meta["columns"]):
                dist = DISTRIBUTIONS[column["kind"]](column["name"], column["kind"])
                dist.set_state(column, {key.split(".", 1)[1]: value
                                        for key, value in arrays.items()
                                        if key.startswith(f"{j}.")})
                model.distributions_[column["name"]] = dist
            model._update()
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise ModelFileError(f"model file '{os.fspath(path)}' is not a valid table model "
                                 f"({type(error).__name__}: {error})") from None
        return model


# -- EM for rows whose class is missing (Mitchell, Machine Learning, ch. 6.12) -------------------

def fit_em(model: TableNB, X: Sequence[Sequence[Any]], y: Sequence[Any],
           sample_weight: Sequence[float] | None = None, *, columns: Sequence[str] | None = None,
           target: str | None = None, max_iter: int = 100, tol: float = 1e-10,
           callback: Any = None) -> list[float]:
    """Fit ``model`` by EM on rows X whose labels y may be missing (empty, ``?`` or None).

    Starts from the labeled rows alone; then E-step: P(c|x_r) of each unlabeled row; M-step:
    ``fit`` on the labeled rows plus each unlabeled row once per class, weighted by P(c|x_r)
    (times its own weight), "as if the guesses were observed". Stops once the log-likelihood
    Σ_labeled w log P(y, x) + Σ_unlabeled w log Σ_c P(c, x) + α Σ log P(v|c) (the Dirichlet
    prior of smoothed categorical columns) improves by ≤ tol·|L|, or after ``max_iter``.
    ``callback(iteration, L)`` reports each. Returns the list of L per iteration.

    >>> X = [["sunny", "hot"], ["rain", "mild"], ["rain", "hot"], ["sunny", "mild"],
    ...      ["rain", "mild"], ["sunny", "hot"]]
    >>> model = TableNB(alpha=1)
    >>> history = fit_em(model, X, ["no", "yes", "yes", "no", "?", None], columns=["outlook", "temp"])
    >>> model.predict([["rain", "mild"]]).tolist(), all(b >= a for a, b in zip(history, history[1:]))
    (['yes'], True)
    """
    labels = [clean_cell(label) for label in y]
    missing = np.array([label is None for label in labels], dtype=bool)
    if len(labels) != len(X):
        raise ValueError(f"X has {len(X)} rows but y has {len(labels)} labels")
    if not labels:  # a CSV of a header alone: fit's own words, not numpy's on an empty array
        raise TableError("cannot fit on an empty table")
    weight = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, float)
    known = np.flatnonzero(~missing)
    if known.size == 0:
        raise TableError("every row's class is missing: label some rows")
    rows = [X[i] for i in known]
    model.fit(rows, [labels[i] for i in known], weight[known], columns=columns, target=target)
    if not missing.any():
        return []
    unlabeled = [X[i] for i in np.flatnonzero(missing)]
    w_unlabeled = weight[missing]
    history: list[float] = []
    for iteration in range(1, max_iter + 1):
        proba = model.predict_proba(unlabeled)                                    # E-step
        k = len(model.classes_)
        model.fit(rows + unlabeled * k,                                           # M-step
                  [labels[i] for i in known] + [c for c in model.classes_ for _ in unlabeled],
                  np.concatenate([weight[known], (proba.T * w_unlabeled).ravel()]),
                  columns=columns, target=target)
        history.append(_em_objective(model, rows, [labels[i] for i in known], weight[known],
                                     unlabeled, w_unlabeled))
        if callback is not None:
            callback(iteration, history[-1])
        if len(history) > 1 and history[-1] - history[-2] <= tol * abs(history[-1]):
            break
    return history


def _em_objective(model: TableNB, rows, labels, weight, unlabeled, w_unlabeled) -> float:
    """The log-likelihood fit_em maximises (see there)."""
    from ..nb.sparse import logsumexp
    jll = model.predict_joint_log_proba(rows)
    at = np.searchsorted(model.classes_, np.asarray(labels))
    total = float((weight * jll[np.arange(len(rows)), at]).sum())
    total += float((w_unlabeled * logsumexp(model.predict_joint_log_proba(unlabeled), axis=1)).sum())
    if model.alpha > 0:
        total += model.alpha * sum(float(d.log_prob.sum()) for d in model.distributions_.values()
                                   if isinstance(d, Categorical))
    return total
