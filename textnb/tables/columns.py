"""A table's column → its class-conditional distribution: categorical (binned numbers too),
Gaussian, Poisson, exponential; each fitted on weighted rows, scoring cells in log space."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .reading import TableError, clean_cell, first_bad, parse_numbers


KINDS = ("categorical", "gaussian", "poisson", "exponential", "equal-width", "equal-frequency")


# log λ needs λ > 0: a class whose counts are all 0 gets this rate instead of 0.
MIN_RATE = 1e-9


class Categorical:
    """P(v|c) = (n_cv + k) / (n_c + k·V) over the V values (or bins) seen in training.

    With k = 0 a value never seen with class c has P = 0: log-probability −inf, so c is ruled
    out for that row, as in the textbooks' unsmoothed tables. A value never seen in training at all
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
            self.categories = sorted({t for t, w in zip(map(clean_cell, cells), weight)
                                      if t is not None and w > 0})
        else:
            x = parse_numbers(cells, self.name)
            seen = ~np.isnan(x) & (weight > 0)  # a row of weight 0 is not there
            if not seen.any():
                raise TableError(f"column {self.name!r} has no values")
            self.edges = bin_edges(x[seen], weight[seen], self.bins, self.kind)
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
        text = [clean_cell(cell) for cell in cells]
        code = np.array([index.get(t, -1) if t is not None else -1 for t in text], dtype=int)
        if unseen == "error" and (bad := [i for i, t in enumerate(text)
                                          if t is not None and code[i] < 0]):
            raise TableError(f"row {bad[0] + 1}, column {self.name!r}: {text[bad[0]]!r} was "
                             f"never seen in training (values: {', '.join(self.categories)})")
        return code

    def update(self, model: Any) -> None:
        smoothed = self.count + model.alpha
        with np.errstate(divide="ignore"):
            self.log_prob = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))

    def log_likelihood(self, cells: Sequence[Any], model: Any) -> np.ndarray:
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


def bin_edges(x: np.ndarray, weight: np.ndarray, bins: int, kind: str) -> np.ndarray:
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


class Numeric:
    """Weighted count n_c, mean and squared-deviation sum M2_c of a numeric column per class.

    Attributes: ``n``, ``mean``, ``m2``, each of shape (n_classes,). Subclasses derive their
    parameters in ``update`` and give ``_log_density(x) -> (n, n_classes)``.
    """

    need = "a number"

    def __init__(self, name: str, kind: str, bins: int = 5) -> None:
        self.name, self.kind = name, kind

    def _parse(self, cells: Sequence[Any]) -> np.ndarray:
        x = parse_numbers(cells, self.name)
        first_bad(self._invalid(x), x, self.name, self.need)
        return x

    def _invalid(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(len(x), dtype=bool)

    def fit(self, cells: Sequence[Any], cls: np.ndarray, weight: np.ndarray,
            n_classes: int) -> "Numeric":
        x = self._parse(cells)
        seen = ~np.isnan(x)
        x, cls, weight = x[seen], cls[seen], weight[seen]
        self.n = np.bincount(cls, weights=weight, minlength=n_classes)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean = np.bincount(cls, weights=weight * x, minlength=n_classes) / self.n
        self.m2 = np.bincount(cls, weights=weight * (x - self.mean[cls]) ** 2,
                              minlength=n_classes)
        return self

    def log_likelihood(self, cells: Sequence[Any], model: Any) -> np.ndarray:
        x = self._parse(cells)[:, None]
        return np.where(np.isnan(x), 0.0, self._log_density(np.nan_to_num(x)))

    def state(self) -> tuple[dict, dict]:
        return {}, {"n": self.n, "mean": self.mean, "m2": self.m2}

    def set_state(self, meta: dict, arrays: dict) -> None:
        self.n, self.mean, self.m2 = arrays["n"], arrays["mean"], arrays["m2"]


class Gaussian(Numeric):
    """log N(x; μ_c, σ²_c) = −½ log(2π σ²_c) − (x − μ_c)² / (2σ²_c).

    σ²_c = M2_c / (n_c − ddof), at least ``var_floor`` × the column's variance over all rows
    (``var_floor`` itself if that is 0), so a constant column never divides by zero.
    Attributes add ``var`` of shape (n_classes,).
    """

    def update(self, model: Any) -> None:
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


class Poisson(Numeric):
    """log P(x; λ_c) = x log λ_c − λ_c − log x!, λ_c = the class mean; x a count ≥ 0."""

    need = "a whole number ≥ 0 (poisson column)"

    def _invalid(self, x: np.ndarray) -> np.ndarray:
        return ~np.isnan(x) & ((x < 0) | (x != np.round(x)))

    def update(self, model: Any) -> None:
        self.rate = np.maximum(self.mean, MIN_RATE)

    def _log_density(self, x: np.ndarray) -> np.ndarray:
        from scipy.special import gammaln  # only Poisson columns pay for scipy

        return x * np.log(self.rate) - self.rate - gammaln(x + 1)

    def sample(self, cls: np.ndarray, rng: np.random.Generator) -> list:
        return rng.poisson(self.rate[cls]).tolist()


class Exponential(Numeric):
    """log E(x; λ_c) = log λ_c − λ_c x, λ_c = 1 / class mean (maximum likelihood); x > 0."""

    need = "a number > 0 (exponential column)"

    def _invalid(self, x: np.ndarray) -> np.ndarray:
        return x <= 0

    def update(self, model: Any) -> None:
        self.rate = 1.0 / self.mean

    def _log_density(self, x: np.ndarray) -> np.ndarray:
        return np.log(self.rate) - self.rate * x

    def sample(self, cls: np.ndarray, rng: np.random.Generator) -> list:
        return rng.exponential(1.0 / self.rate[cls]).tolist()


DISTRIBUTIONS = {"categorical": Categorical, "equal-width": Categorical,
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
