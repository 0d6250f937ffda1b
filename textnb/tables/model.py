"""CSV rows → column distributions → TableNB: Naive Bayes over tables of categories and numbers.

Each column gets a class-conditional distribution, and a row's score is the shared log-space
one of :class:`~textnb.nb.estimator.BaseNB`::

    jll[r, c] = log P(c) + Σ_j log p(x_rj | c)        (missing cells add 0)

Column kinds (seed 004 names all of them):

- ``categorical``: P(v|c) = (n_cv + k) / (n_c + k·|domain|), k = ``alpha`` ≥ 0.
- ``gaussian``: N(x; μ_c, σ²_c), σ² with ``ddof`` 1 (seed 000) or 0, floored.
- ``poisson``: λ_c^x e^(−λ_c) / x!, λ_c the class mean; x a count.
- ``exponential``: λ_c e^(−λ_c x), λ_c = 1 / class mean; x > 0.
- ``equal-width`` / ``equal-frequency`` (optionally ``:bins``, e.g. ``equal-width:4``): the
  number is binned on edges learned from all training rows, then the bin is categorical.

A column whose cells all read as numbers is ``gaussian`` unless told otherwise; any other
column is ``categorical``. Empty cells (``""``, ``None``, NaN) are skipped in training and
prediction. Row weights count a row that many times (seed 002's count table). Rows are
numbered from 1 (after a CSV's header) in error messages.

Examples
--------
>>> X = [["sunny", "hot"], ["rain", "mild"], ["rain", "hot"], ["sunny", "mild"]]
>>> model = TableNB(alpha=0).fit(X, ["no", "yes", "yes", "no"], columns=["outlook", "temp"])
>>> model.predict_proba([["rain", "hot"]]).round(2).tolist()
[[0.0, 1.0]]
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import os
from typing import IO, Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from ..store import container as modelfile
from ..decoding import decode
from ..errors import ModelFileError, TextnbError
from ..nb.estimator import BaseNB
from ..nb.discrete import class_log_prior

KINDS = ("categorical", "gaussian", "poisson", "exponential", "equal-width", "equal-frequency")
MODEL_KIND = "table"
# log λ needs λ > 0: a class whose counts are all 0 gets this rate instead of 0.
_MIN_RATE = 1e-9


class TableError(TextnbError):
    """A table cannot be used: ragged rows, a missing column, a value of the wrong type."""


# -- reading CSV ------------------------------------------------------------------------------

class Table(NamedTuple):
    """A CSV file's header and rows of cell strings (each row as long as the header)."""

    columns: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> list[str]:
        """The cells of column ``name``; TableError naming the columns if there is none."""
        return [row[0] for row in self.select([name])]

    def index(self, names: Sequence[str]) -> list[int]:
        """Positions of ``names`` in the header; TableError naming the columns if one is missing."""
        missing = [name for name in names if name not in self.columns]
        if missing:
            raise TableError(f"no column {missing[0]!r}; the columns are "
                             f"{', '.join(self.columns)}")
        return [self.columns.index(name) for name in names]

    def select(self, names: Sequence[str]) -> list[list[str]]:
        """Rows restricted to ``names``, in that order; TableError for a missing column."""
        index = self.index(names)
        return [[row[i] for i in index] for row in self.rows]


def read_csv(source: str | os.PathLike | IO[bytes] | IO[str]) -> Table:
    """Read a CSV file (path or open file) with a header row into a :class:`Table`.

    Bytes are decoded like documents (UTF-8, else Windows-1252; a BOM is dropped); blank lines
    are skipped. TableError for an empty file, a blank or repeated column name, or a row
    whose number of cells differs from the header's.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            raw = f.read()
    else:
        raw = source.read()
    text = decode(raw) if isinstance(raw, bytes) else raw
    # newline="": rows end at CR, LF or CRLF, as the csv module asks (a file of CR-only lines,
    # or a stray CR, raised csv.Error: "new-line character seen in unquoted field").
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    try:
        records = [r for r in reader if r]
    except csv.Error as error:  # a cell over the csv module's 131,072 characters, say
        raise TableError(f"line {reader.line_num}: {error}") from None
    if not records:
        raise TableError("the table is empty: a header row is needed")
    header = [name.strip() for name in records[0]]
    for j, name in enumerate(header):
        if not name:
            raise TableError(f"column {j + 1} of the header has no name")
        if name in header[:j]:
            raise TableError(f"column {name!r} appears twice in the header")
    for i, row in enumerate(records[1:], 1):
        if len(row) != len(header):
            raise TableError(f"row {i} has {len(row)} cells but the header has {len(header)}")
    return Table(header, records[1:])


# -- cells ------------------------------------------------------------------------------------

# A cell holding only this is missing, as an empty one is (the UCI tables' convention).
MISSING = "?"


def _clean(cell: Any) -> str | None:
    """A cell as a stripped string, or None when it is empty or ``?`` (missing)."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return None
    text = str(cell).strip()
    return text if text and text != MISSING else None


def parse_numbers(cells: Sequence[Any], column: str) -> np.ndarray:
    """Cells → float ndarray of shape (n,), NaN where empty; TableError naming row and column."""
    values = np.full(len(cells), np.nan)
    for i, cell in enumerate(cells):
        text = _clean(cell)
        if text is None:
            continue
        try:
            values[i] = float(text)
        except ValueError:
            raise TableError(f"row {i + 1}, column {column!r}: {text!r} is not a number") from None
        if np.isinf(values[i]):
            raise TableError(f"row {i + 1}, column {column!r}: {text!r} is not a finite number")
    return values


def parse_weights(cells: Sequence[Any], column: str) -> np.ndarray:
    """Cells → row weights (counts) of shape (n,); TableError for an empty or negative one."""
    weight = parse_numbers(cells, column)
    _first_bad(~(weight >= 0), weight, column, "a weight ≥ 0")
    return weight


def _infer_kind(cells: Sequence[Any]) -> str:
    """``gaussian`` when every non-empty cell reads as a number, else ``categorical``."""
    try:
        parse_numbers(cells, "")
    except TableError:
        return "categorical"
    return "gaussian"


def _first_bad(mask: np.ndarray, values: np.ndarray, column: str, need: str) -> None:
    """TableError for the first row where ``mask`` holds: its value violates ``need``."""
    if mask.any():
        i = int(np.argmax(mask))
        shown = "an empty cell" if np.isnan(values[i]) else f"{values[i]:g}"
        raise TableError(f"row {i + 1}, column {column!r}: {shown} is not {need}")


# -- column distributions: sufficient statistics in, log-densities out -----------------------

class Categorical:
    """P(v|c) = (n_cv + k) / (n_c + k·V) over the V values (or bins) seen in training.

    With k = 0 a value never seen with class c has P = 0: log-probability −inf, so c is ruled
    out for that row, as in the seeds' unsmoothed tables. A value never seen in training at all
    is skipped like an empty cell (``unseen="skip"``) or a TableError (``unseen="error"``).
    Binned columns (``edges`` set) map a number x to bin b with edges[b] ≤ x < edges[b+1];
    numbers outside the training range fall in the first or last bin.

    Attributes: ``categories`` (V labels), ``count`` (n_classes, V) weighted n_cv,
    ``log_prob`` (n_classes, V), ``edges`` (V + 1,) for binned columns, else None.
    """

    def __init__(self, name: str, kind: str = "categorical", bins: int = 5) -> None:
        self.name, self.kind, self.bins = name, kind, bins
        self.edges: np.ndarray | None = None

    @property
    def n(self) -> np.ndarray:
        """Weighted number of non-empty cells per class, n_c: shape (n_classes,)."""
        return self.count.sum(axis=1)

    def fit(self, cells: Sequence[Any], cls: np.ndarray, weight: np.ndarray,
            n_classes: int) -> "Categorical":
        if self.kind == "categorical":
            # the domain is what the rows show; a row of weight 0 is not there
            self.categories = sorted({t for t, w in zip(map(_clean, cells), weight)
                                      if t is not None and w > 0})
        else:
            x = parse_numbers(cells, self.name)
            seen = ~np.isnan(x) & (weight > 0)  # a row of weight 0 is not there
            if not seen.any():
                raise TableError(f"column {self.name!r} has no values")
            self.edges = _bin_edges(x[seen], weight[seen], self.bins, self.kind)
            self.categories = [f"[{a:g}, {b:g})" for a, b in zip(self.edges, self.edges[1:])]
            self.categories[-1] = self.categories[-1][:-1] + "]"  # the last bin holds the max
        code = self._encode(cells, unseen="skip")
        seen = code >= 0
        cell = cls[seen] * len(self.categories) + code[seen]
        self.count = np.bincount(cell, weights=weight[seen],
                                 minlength=n_classes * len(self.categories)
                                 ).reshape(n_classes, -1)
        return self

    def _encode(self, cells: Sequence[Any], unseen: str) -> np.ndarray:
        """Cells → value indices of shape (n,), −1 for empty (or skipped unseen) cells."""
        if self.edges is not None:
            x = parse_numbers(cells, self.name)
            code = np.searchsorted(self.edges[1:-1], x, side="right")
            return np.where(np.isnan(x), -1, code)
        index = {v: i for i, v in enumerate(self.categories)}
        text = [_clean(cell) for cell in cells]
        code = np.array([index.get(t, -1) if t is not None else -1 for t in text], dtype=int)
        if unseen == "error" and (bad := [i for i, t in enumerate(text)
                                          if t is not None and code[i] < 0]):
            raise TableError(f"row {bad[0] + 1}, column {self.name!r}: {text[bad[0]]!r} was "
                             f"never seen in training (values: {', '.join(self.categories)})")
        return code

    def update(self, model: "TableNB") -> None:
        smoothed = self.count + model.alpha
        with np.errstate(divide="ignore"):
            self.log_prob = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))

    def log_likelihood(self, cells: Sequence[Any], model: "TableNB") -> np.ndarray:
        """log P(x_r|c) of shape (n, n_classes); 0 for skipped cells."""
        code = self._encode(cells, model.unseen)
        return np.where(code[:, None] >= 0, self.log_prob.T[code], 0.0)

    def sample(self, cls: np.ndarray, rng: np.random.Generator) -> list:
        # Inverse CDF per row; the min guards a cumulative sum that ends a hair below 1.
        cdf = np.cumsum(np.exp(self.log_prob), axis=1)[cls]
        code = np.minimum((rng.random(len(cls))[:, None] > cdf).sum(axis=1), cdf.shape[1] - 1)
        if self.edges is None:
            return [self.categories[i] for i in code]
        return rng.uniform(self.edges[code], self.edges[code + 1]).tolist()

    def state(self) -> tuple[dict, dict]:
        arrays = {"count": self.count}
        if self.edges is not None:
            arrays["edges"] = self.edges
        return {"categories": self.categories}, arrays

    def set_state(self, meta: dict, arrays: dict) -> None:
        self.categories = list(meta["categories"])
        self.count = arrays["count"]
        self.edges = arrays.get("edges")


def _bin_edges(x: np.ndarray, weight: np.ndarray, bins: int, kind: str) -> np.ndarray:
    """Bin edges of shape (≤ bins + 1,): equal widths over [min, max], or weighted quantiles.

    Equal frequency takes edge i as the smallest x whose cumulative weight exceeds i/bins of
    the total, so 1…8 in 4 bins gives {1, 2}, {3, 4}, {5, 6}, {7, 8}, and a row of weight w
    bins exactly like w repeated rows.
    Repeated edges (ties) are merged, so there may be fewer bins than asked.
    """
    if kind == "equal-width":
        edges = np.linspace(x.min(), x.max(), bins + 1)
    else:
        order = np.argsort(x)
        cumulative = np.cumsum(weight[order])
        at = np.searchsorted(cumulative, np.arange(1, bins) / bins * cumulative[-1], side="right")
        edges = np.concatenate([[x.min()], x[order][at], [x.max()]])
    edges = np.unique(edges)
    return edges if len(edges) > 1 else np.array([edges[0], edges[0]])


class _Numeric:
    """Weighted count n_c, mean and squared-deviation sum M2_c of a numeric column per class.

    Attributes: ``n``, ``mean``, ``m2``, each of shape (n_classes,). Subclasses derive their
    parameters in ``update`` and give ``_log_density(x) -> (n, n_classes)``.
    """

    need = "a number"

    def __init__(self, name: str, kind: str, bins: int = 5) -> None:
        self.name, self.kind = name, kind

    def _parse(self, cells: Sequence[Any]) -> np.ndarray:
        x = parse_numbers(cells, self.name)
        _first_bad(self._invalid(x), x, self.name, self.need)
        return x

    def _invalid(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(len(x), dtype=bool)

    def fit(self, cells: Sequence[Any], cls: np.ndarray, weight: np.ndarray,
            n_classes: int) -> "_Numeric":
        x = self._parse(cells)
        seen = ~np.isnan(x)
        x, cls, weight = x[seen], cls[seen], weight[seen]
        self.n = np.bincount(cls, weights=weight, minlength=n_classes)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean = np.bincount(cls, weights=weight * x, minlength=n_classes) / self.n
        self.m2 = np.bincount(cls, weights=weight * (x - self.mean[cls]) ** 2,
                              minlength=n_classes)
        return self

    def log_likelihood(self, cells: Sequence[Any], model: "TableNB") -> np.ndarray:
        x = self._parse(cells)[:, None]
        return np.where(np.isnan(x), 0.0, self._log_density(np.nan_to_num(x)))

    def state(self) -> tuple[dict, dict]:
        return {}, {"n": self.n, "mean": self.mean, "m2": self.m2}

    def set_state(self, meta: dict, arrays: dict) -> None:
        self.n, self.mean, self.m2 = arrays["n"], arrays["mean"], arrays["m2"]


class Gaussian(_Numeric):
    """log N(x; μ_c, σ²_c) = −½ log(2π σ²_c) − (x − μ_c)² / (2σ²_c).

    σ²_c = M2_c / (n_c − ddof), at least ``var_floor`` × the column's variance over all rows
    (``var_floor`` itself if that is 0), so a constant column never divides by zero.
    Attributes add ``var`` of shape (n_classes,).
    """

    def update(self, model: "TableNB") -> None:
        total = self.n.sum()
        grand = (self.n * self.mean).sum() / total
        spread = (self.m2 + self.n * (self.mean - grand) ** 2).sum() / total
        floor = model.var_floor * (spread if spread > 0 else 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = self.m2 / (self.n - model.ddof)
        # n_c ≤ ddof (one row with ddof 1) leaves no spread to estimate: use the floor.
        self.var = np.where(self.n > model.ddof, np.maximum(var, floor), floor)

    def _log_density(self, x: np.ndarray) -> np.ndarray:
        return -0.5 * np.log(2 * np.pi * self.var) - (x - self.mean) ** 2 / (2 * self.var)

    def sample(self, cls: np.ndarray, rng: np.random.Generator) -> list:
        return rng.normal(self.mean[cls], np.sqrt(self.var[cls])).tolist()


class Poisson(_Numeric):
    """log P(x; λ_c) = x log λ_c − λ_c − log x!, λ_c = the class mean; x a count ≥ 0."""

    need = "a whole number ≥ 0 (poisson column)"

    def _invalid(self, x: np.ndarray) -> np.ndarray:
        return ~np.isnan(x) & ((x < 0) | (x != np.round(x)))

    def update(self, model: "TableNB") -> None:
        self.rate = np.maximum(self.mean, _MIN_RATE)

    def _log_density(self, x: np.ndarray) -> np.ndarray:
        from scipy.special import gammaln  # only Poisson columns pay for scipy

        return x * np.log(self.rate) - self.rate - gammaln(x + 1)

    def sample(self, cls: np.ndarray, rng: np.random.Generator) -> list:
        return rng.poisson(self.rate[cls]).tolist()


class Exponential(_Numeric):
    """log E(x; λ_c) = log λ_c − λ_c x, λ_c = 1 / class mean (maximum likelihood); x > 0."""

    need = "a number > 0 (exponential column)"

    def _invalid(self, x: np.ndarray) -> np.ndarray:
        return x <= 0

    def update(self, model: "TableNB") -> None:
        self.rate = 1.0 / self.mean

    def _log_density(self, x: np.ndarray) -> np.ndarray:
        return np.log(self.rate) - self.rate * x

    def sample(self, cls: np.ndarray, rng: np.random.Generator) -> list:
        return rng.exponential(1.0 / self.rate[cls]).tolist()


_DISTRIBUTIONS = {"categorical": Categorical, "equal-width": Categorical,
                  "equal-frequency": Categorical, "gaussian": Gaussian, "poisson": Poisson,
                  "exponential": Exponential}


def parse_kind(spec: str) -> tuple[str, int | None]:
    """``"equal-width:4"`` → (``"equal-width"``, 4); ValueError for an unknown kind."""
    kind, _, bins = str(spec).strip().lower().partition(":")
    if kind not in KINDS or (bins and (kind not in KINDS[4:] or not bins.isdigit()
                                       or int(bins) < 1)):
        raise ValueError(f"unknown column kind {spec!r}; choose from {', '.join(KINDS)} "
                         f"(binning may name its bins, e.g. equal-width:4)")
    return kind, int(bins) if bins else None


# -- the model --------------------------------------------------------------------------------

class TableNB(BaseNB):
    """Naive Bayes over table rows, one distribution per column, scored in log space.

    Parameters
    ----------
    kinds : mapping column name → kind, or a sequence of kinds (one per column), optional —
        see the module docstring; unnamed columns are inferred from their cells.
    alpha : float ≥ 0, default 1.0 — k of Laplace smoothing for categorical and binned columns
        (k in seed 004, l in seed 000); 0 reproduces the unsmoothed textbook numbers.
    ddof : int, default 1 — Gaussian variance M2/(n − ddof): 1 as in seed 000, 0 for the MLE.
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
            if _clean(label) is None:
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
            dist = _DISTRIBUTIONS[kind](name, kind, bins or self.bins)
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
        return [given.get(name) or _infer_kind(column) for name, column in zip(names, cells)]

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
        """Draw n rows: the class from P(c), then each column from its P(x|c) (seed 002).

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
        modelfile.save(path, MODEL_KIND, {"params": params, "classes": self.classes_.tolist(),
                                          "target": self.target_, "columns": columns}, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TableNB":
        """Read a model written by :meth:`save`; ModelFileError if it is not one."""
        meta, arrays = modelfile.load(path, MODEL_KIND)
        try:
            model = cls(**meta["params"])
            model.classes_ = np.asarray(meta["classes"])
            model.class_count_ = arrays["class_count"]
            model.target_ = meta["target"]
            model.distributions_ = {}
            for j, column in enumerate(meta["columns"]):
                dist = _DISTRIBUTIONS[column["kind"]](column["name"], column["kind"])
                dist.set_state(column, {key.split(".", 1)[1]: value
                                        for key, value in arrays.items()
                                        if key.startswith(f"{j}.")})
                model.distributions_[column["name"]] = dist
            model._update()
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise ModelFileError(f"model file '{os.fspath(path)}' is not a valid table model "
                                 f"({type(error).__name__}: {error})") from None
        return model


# -- EM for rows whose class is missing (seed 001: "guess the missing values ... repeat") -------

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
    labels = [_clean(label) for label in y]
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
