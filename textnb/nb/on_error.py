"""count matrix + labels → the documents a model must learn to label them all: train on error.

bogofilter's bogominitrain and SpamBayes' "train on error or unsure": start from one document
of each class, then pass over the documents in order, learning only those the model so far gets
wrong or not surely right (the true class ahead of the runner-up by less than ``margin`` in
log-odds), until a pass learns nothing or ``max_passes`` passes are done. Each document is
learned at most once. The model stays small and leans on the hard cases; a corpus with far more
of one class than the other is not learned in that proportion. Which documents a walk learns
depends on their order, so several walks in different orders are averaged (:data:`ORDERS`).

Learning one document changes the counts of its few terms, yet refitting the model recomputes
every weight, which took most of a walk's time. So the walk keeps its own log tables of the
counts, jll(x) = bias + x·G + Σx·h, updates only the learned document's terms (and the
per-class h and bias), and scores the documents ahead up to the next one it must learn, in
blocks, one sparse product each: the same documents learned (tests/test_onerror.py checks
against the definition). Two classes walk in C where it was built (textnb/_onerror.c), the
same steps, in threads, each visiting the rows in its order where they lie
(docs/design/training-speed.md). The model returned is fitted on the learned documents alone, weighted.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..heap import give_back
from ..workers import imap, n_workers
from .discrete import (BernoulliNB, ComplementNB, ComplementNBWithPrior, MultinomialNB,
                       class_log_prior)
from .sparse import CSR, as_csr, row_sums

try:  # two-class walks in C (textnb/_onerror.c), where it was built
    from .. import _onerror as _fast
except ImportError:  # pragma: no cover - no C compiler where textnb was installed
    _fast = None

# The margin, in log-odds, by which the true class must lead: e² ≈ 7.4 to 1 (P ≈ 0.88 between
# two classes), SpamBayes' "unsure" zone for a model that is still learning.
MARGIN = 2.0
MAX_PASSES = 10
# Walks over the documents in different orders, each document weighted by the share of walks
# that learned it. One walk's model depends on the order (a document learned early makes later
# ones look right). Four walks against one, SpamAssassin 70/30 splits of seeds 0–3 (defaults,
# cutoffs learned on the training part): test 1 − AUC 0.0138/0.0205/0.0216/0.0347 % →
# 0.0082/0.0154/0.0165/0.0288 % (mean 0.0227 → 0.0172 %; bogofilter 0.0228 %), spam not caught
# 5.6 → 4.8 %; earlier, five walks lowered the 10-fold 1 − AUC from 0.028 to 0.025 %. A power
# of two: a weight k/4 is exact in binary floating point, so whole counts (norm=None) weighted
# by it add and subtract exactly, and ``learn --unlearn`` takes back what training put in (the
# document's weight is kept with its digest). Four walks cost four times one.
ORDERS = 4
# Documents scored at once: a block grows while it holds no error and starts small again after
# one, since everything after the first error in a block must be scored again.
_BLOCK = (8, 1024)
# Models whose whole walk runs in C (two classes).
_FAST_KINDS = ("multinomial", "complement")
# Fewer documents are walked in this process: a walk of 1,000 takes about 0.1 s, a worker
# process's start and the matrix's transfer a good part of that.
_PARALLEL_MIN_DOCUMENTS = 1000


def train_on_error(X: Any, y: Sequence, new_model: Callable[[], Any], margin: float = MARGIN,
                   max_passes: int = MAX_PASSES, orders: int | None = None,
                   n_jobs: int | None = 1) -> tuple[Any, np.ndarray, list[int]]:
    """(model, weight, per_pass): the model trained on error over the rows of the CSR matrix
    ``X`` (scipy.sparse or :class:`~textnb.nb.sparse.CSR`, shape (n_documents, n_terms)) labelled
    ``y``, walked in ``orders`` orders (default :data:`ORDERS`: the given one, then seeded
    shuffles), in ``n_jobs`` processes
    (:mod:`textnb.workers`; None: every core); ``weight``, float array of shape (n_documents,),
    is the share of the walks that learned each row (0 or 1 for one walk), and the model is
    ``new_model().fit(X[weight > 0], y[weight > 0], sample_weight=weight[weight > 0])`` (the
    rows of X, :func:`take_rows`);
    ``per_pass`` says how many each pass of the first walk learned."""
    return next(trained_on_error(X, y, [None], new_model, margin, max_passes, orders, n_jobs))


def trained_on_error(X: Any, y: Sequence, subsets: Sequence[np.ndarray | None],
                     new_model: Callable[[], Any], margin: float = MARGIN,
                     max_passes: int = MAX_PASSES, orders: int | None = None,
                     n_jobs: int | None = 1) -> Iterator[tuple[Any, np.ndarray, list[int]]]:
    """:func:`train_on_error` of the rows of X numbered by each of ``subsets`` (int arrays;
    None: every row; ``y`` labels every row of X), in order: a cross-validation's folds.
    Two-class walks in C visit the rows where they lie, and every subset's walks go to one pool
    of threads at once, so that a subset's model is fitted, and used, while the next subsets'
    walks run. ``orders``: None is :data:`ORDERS` as it is when called."""
    orders = ORDERS if orders is None else orders
    if margin < 0 or max_passes < 1 or orders < 1:
        raise ValueError(f"need margin >= 0, max_passes >= 1 and orders >= 1, got {margin}, "
                         f"{max_passes} and {orders}")
    X, labels = as_csr(X), np.asarray(y)
    model = new_model()
    if _fast is None or _Tables.kind_of(model) not in _FAST_KINDS \
            or any(np.unique(labels if rows is None else labels[rows]).size != 2
                   for rows in subsets):
        for rows in subsets:
            yield (_trained(X, labels, new_model, margin, max_passes, orders, n_jobs)
                   if rows is None else _trained(take_rows(X, rows), labels[rows], new_model,
                                                 margin, max_passes, orders, n_jobs))
        return
    # Walks in C let go of the GIL: threads, where worker processes were sent the matrix
    # (four walks over SpamAssassin's 6,046 messages: 0.36–0.38 s in two worker processes,
    # with the scan in C 0.23–0.26 s in this one).
    from concurrent.futures import ThreadPoolExecutor
    values = _Tables.values(model, X)
    sums = row_sums(values.data, values.indptr)  # once, not once a walk
    threads = ThreadPoolExecutor(min(orders, n_workers(n_jobs)))
    try:
        started = [_start(threads, X, labels, rows, sums, new_model, margin, max_passes, orders)
                   for rows in subsets]
        for rows, chosen, walks, futures in started:
            results = [future.result() for future in futures]
            # The walks' tables, freed into their threads' heaps, given back: glibc keeps a
            # thread's heap whole, and the model fitted next would be added to the total.
            give_back()
            yield _weighed(X, rows, chosen, walks, results, new_model, orders)
    finally:
        threads.shutdown(cancel_futures=True)


def _start(threads: Any, X: CSR, labels: np.ndarray, rows: np.ndarray | None, sums: np.ndarray,
           new_model: Callable[[], Any], margin: float, max_passes: int, orders: int) -> tuple:
    """(rows, their labels, walks, futures): the two-class walks in C of X's ``rows`` (None:
    all) sent to the pool ``threads``, each walk's order of them (None: as given)."""
    rows = np.arange(labels.size) if rows is None else np.asarray(rows, dtype=np.int64)
    chosen = labels[rows]
    truth = np.zeros(labels.size, dtype=np.int64)  # each row's class number, by row
    truth[rows] = np.searchsorted(np.unique(chosen), chosen)
    walks = _orders(rows.size, orders)
    futures = [threads.submit(_walk, X, truth, new_model(), 2, margin, max_passes,
                              rows if order is None else rows[order], sums) for order in walks]
    return rows, chosen, walks, futures


def _orders(n: int, orders: int) -> list[np.ndarray | None]:
    """The orders ``orders`` walks visit n documents in: as given (None), then seeded shuffles
    (the same model for the same documents, every time)."""
    shuffle = np.random.default_rng(0)
    return [None] + [shuffle.permutation(n) for _ in range(orders - 1)]


def _trained(X: CSR, labels: np.ndarray, new_model: Callable[[], Any], margin: float,
             max_passes: int, orders: int, n_jobs: int | None) -> tuple:
    """:func:`train_on_error` of every row of X, without the walks in C: in threads (two
    classes), this process, or worker processes (one walk each)."""
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError("training on error needs at least two classes")
    truth = np.searchsorted(classes, labels)
    walks = _orders(labels.size, orders)
    # Each walk its own model: one that learns by partial_fit must start empty.
    jobs = [(X, truth, new_model(), classes.size, margin, max_passes, order) for order in walks]
    if _fast is not None and classes.size == 2:  # two classes, a model without tables in C
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(min(orders, n_workers(n_jobs))) as threads:
            results = list(threads.map(lambda job: _walk(*job), jobs))
        give_back()  # the walks' tables, in their threads' heaps (trained_on_error)
    elif n_jobs == 1 or orders == 1 or labels.size < _PARALLEL_MIN_DOCUMENTS:
        results = [_walk(*job) for job in jobs]
    else:
        results = list(imap(_walk, jobs, min(orders, n_workers(n_jobs))))
    return _weighed(X, None, labels, walks, results, new_model, orders)


def _weighed(X: CSR, rows: np.ndarray | None, labels: np.ndarray, walks: list, results: list,
             new_model: Callable[[], Any], orders: int) -> tuple:
    """(model, weight, per_pass) of the walks' results over X's ``rows`` (None: all), labelled
    ``labels``: each row weighted by the share of the walks that learned it."""
    weight = np.zeros(labels.size)
    for order, (learned, _) in zip(walks, results):
        weight[learned if order is None else order[learned]] += 1
    weight /= orders
    kept = np.flatnonzero(weight > 0)
    model = new_model().fit(take_rows(X, kept if rows is None else rows[kept]), labels[kept],
                            sample_weight=weight[kept])
    return model, weight, results[0][1]


def take_rows(X: CSR, rows: np.ndarray) -> CSR:
    """The rows of X numbered by ``rows`` (int array), in that order, or chosen by it (bool
    array): in C where it was built (textnb/_onerror.c), else numpy; no scipy either way (its
    import is slow)."""
    rows = np.flatnonzero(rows) if rows.dtype == bool else np.ascontiguousarray(rows, np.int64)
    if _fast is not None:
        data, indices, indptr = _fast.rows(np.ascontiguousarray(X.data, dtype=float),
                                           np.ascontiguousarray(X.indices),
                                           np.ascontiguousarray(X.indptr), rows)
        return CSR(np.frombuffer(data), np.frombuffer(indices, dtype=X.indices.dtype),
                   np.frombuffer(indptr, dtype=np.int64), (rows.size, X.shape[1]))
    starts = X.indptr[rows]
    lengths = X.indptr[rows + 1] - starts
    indptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    at = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
    return CSR(X.data[at].astype(float, copy=False), X.indices[at], indptr,
               (rows.size, X.shape[1]))


def _walk(X: Any, truth: np.ndarray, model: Any, n_classes: int, margin: float,
          max_passes: int, order: np.ndarray | None = None,
          sums: np.ndarray | None = None) -> tuple[np.ndarray, list[int]]:
    """(learned, per_pass) of one walk over the rows of X in ``order`` (None: as they are),
    ``learned`` indexing that order; ``truth`` holds each row's class number, ``sums``, if
    given, each row's Σ_k x_k (:func:`textnb.nb.sparse.row_sums`)."""
    if _fast is not None and n_classes == 2 and _Tables.kind_of(model) in _FAST_KINDS:
        # The C walk visits the rows in order where they are: no copy of X a walk, nor of the
        # rows a walk visits (``order``: X's rows, a fold's).
        rows = np.arange(truth.size) if order is None else order.astype(np.int64, copy=False)
        tables = _Tables(model, X, n_classes, sums)
        learned = np.zeros(rows.size, dtype=bool)
        for c in range(n_classes):
            seed = int(np.flatnonzero(truth[rows] == c)[0])
            tables.learn(int(rows[seed]), c)
            learned[seed] = True
        return learned, _fast.walk(*tables.arrays(truth, learned),
                                   tables.kind == "complement", tables.fits_prior,
                                   tables.alpha, margin, max_passes, rows)
    if order is not None:  # here, in the worker: one copy of X is sent, not one per walk
        X, truth = take_rows(X, order), truth[order]
    tables = _Tables(model, X, n_classes)
    learned = np.zeros(truth.size, dtype=bool)
    for c in range(n_classes):
        seed = int(np.flatnonzero(truth == c)[0])
        tables.learn(seed, c)
        learned[seed] = True
    per_pass = []
    X, sums = tables.X, tables.sums
    for _ in range(max_passes):
        count, start = 0, 0
        while (i := tables.first_wrong(X, start, sums, truth, learned, margin)) >= 0:
            tables.learn(i, int(truth[i]))
            learned[i] = True
            count += 1
            start = i + 1
        per_pass.append(count)
        if count == 0:
            break
    return learned, per_pass


class _Tables:
    """A model's joint log-likelihood kept up to date one learned document at a time:
    jll_c(x) = bias_c + Σ_k x_k G_kc + (Σ_k x_k) h_c, with G of shape (n_terms, n_classes)
    (the layout a CSR-by-dense product reads) and x a document's counts, or its presence bits
    for Bernoulli. The formulas are the models' own (textnb.nb.discrete):

    * multinomial: G = log(n_kc + α), h_c = −log(n_c + α|V|), bias = log P(c);
    * complement: G = −log(n_k − n_kc + α), h_c = log(Σ_k (n_k − n_kc + α)), bias = log P(c)
      (0 for ComplementNB, which scores without the prior);
    * Bernoulli: G = log(df_kc + α) − log(N_c − df_kc + α), h = 0, bias = log P(c) +
      Σ_k log(N_c − df_kc + α) − |V| log(N_c + 2α): a document changes N_c, so its class's
      column of G is recomputed (O(|V|), still cheap beside a refit);
    * any other model: refitted per document (``partial_fit``), its ``decomposition`` used.
    """

    def __init__(self, model: Any, X: Any, n_classes: int, sums: np.ndarray | None = None) -> None:
        self.model = model
        self.kind = self.kind_of(model)
        self.X = self.values(model, X)
        self.sums = row_sums(self.X.data, self.X.indptr) if sums is None else sums
        n_terms = X.shape[1]
        self.count = np.zeros((n_terms, n_classes))      # n_kc (df_kc for Bernoulli)
        self.class_count = np.zeros(n_classes)           # N_c: documents learned per class
        self.total = np.zeros(n_terms)                   # n_k = Σ_c n_kc (complement)
        self.mass = np.zeros(n_classes)                  # Σ_k n_kc
        self.alpha = getattr(model, "alpha", 1.0)
        # G of terms no document of the class holds yet (Bernoulli's is set at its first).
        unseen = {"multinomial": np.log(self.alpha), "complement": -np.log(self.alpha)}
        self.G = np.full((n_terms, n_classes), unseen.get(self.kind, 0.0))
        self.h = np.zeros(n_classes)
        self.bias = np.zeros(n_classes)
        self.absent = np.zeros(n_classes)                # Bernoulli: the bias's absent terms
        # Two classes: G's column difference, kept beside G, is all a document's lead needs.
        self.diff = self.G[:, 1] - self.G[:, 0] if n_classes == 2 else None
        # Whether the bias is log P(c) learned from the documents (else a constant or 0).
        self.fits_prior = ((self.kind == "multinomial" or isinstance(model, ComplementNBWithPrior))
                           and model.fit_prior and getattr(model, "class_prior", None) is None)

    @staticmethod
    def kind_of(model: Any) -> str | None:
        """The formulas a model's tables follow: "multinomial", "complement", "bernoulli", or
        None (any other model, refitted per document)."""
        return ("bernoulli" if isinstance(model, BernoulliNB) else
                "complement" if isinstance(model, ComplementNB) and not model.norm else
                "multinomial" if isinstance(model, MultinomialNB) else None)

    @staticmethod
    def values(model: Any, X: CSR) -> CSR:
        """X as the model counts it, float: presence bits for a binary model."""
        values = (X.data > 0) if getattr(model, "_binary", False) else X.data
        return CSR(values.astype(float, copy=False), X.indices, X.indptr, X.shape)

    def arrays(self, truth: np.ndarray, learned: np.ndarray) -> tuple:
        """The matrix, the documents' classes and learned flags, and the tables, in the order
        textnb/_onerror.c takes them (two classes)."""
        X = self.X
        return (X.data, X.indices, X.indptr, self.sums, truth, learned, self.G, self.diff,
                self.count, self.total, self.mass, self.h, self.bias, self.class_count)

    def scores(self, block: Any, sums: np.ndarray) -> np.ndarray:
        """jll of shape (n, n_classes) of ``block``, rows of ``self.X`` (n, n_terms) whose
        values sum to ``sums``."""
        return block @ self.G + sums[:, None] * self.h + self.bias

    def first_wrong(self, X: Any, start: int, sums: np.ndarray, truth: np.ndarray,
                    learned: np.ndarray, margin: float) -> int:
        """The first of rows ``start:`` of X (``self.X``, rows summing to ``sums``), not
        ``learned``, whose true class leads by less than ``margin``; -1 if none."""
        if self.diff is not None and _fast is not None:
            return _fast.first_wrong(*self.arrays(truth, learned), start, margin)
        # Every row is scored, the learned ones left out after: copying the rows still to walk
        # for each pass (X[~learned]) took more time than scoring the learned ones again.
        size = _BLOCK[0]
        while start < truth.size:
            stop = min(start + size, truth.size)
            lead = self.leads(X, start, stop, sums[start:stop], truth[start:stop])
            wrong = np.flatnonzero((lead < margin) & ~learned[start:stop])
            if wrong.size:
                return start + int(wrong[0])
            start, size = stop, min(2 * size, _BLOCK[1])
        return -1

    def leads(self, X: Any, start: int, stop: int, sums: np.ndarray,
              truth: np.ndarray) -> np.ndarray:
        """Each of rows ``start:stop`` of the CSR matrix ``X`` (rows of ``self.X`` whose values
        sum to ``sums``): its true class's jll less the best other class's."""
        from scipy.sparse import csr_matrix  # here: importing textnb must not cost scipy's 17 MB
        lo, hi = X.indptr[start], X.indptr[stop]
        block = csr_matrix((X.data[lo:hi], X.indices[lo:hi], X.indptr[start:stop + 1] - lo),
                           shape=(stop - start, X.shape[1]))
        if self.diff is not None:
            # Two classes: only jll_1 − jll_0 matters. A row's x·diff is summed from 0.0 in the
            # row's order (scipy's product), as textnb/_onerror.c sums it.
            d = block @ self.diff + sums * (self.h[1] - self.h[0]) + (self.bias[1] - self.bias[0])
            return np.where(truth == 1, d, -d)
        jll = self.scores(block, sums)
        n = np.arange(stop - start)
        own = jll[n, truth]
        jll[n, truth] = -np.inf
        return own - jll.max(axis=1)

    def learn(self, row: int, c: int) -> None:
        """Add X's ``row`` to class ``c`` and bring G, h and bias up to date."""
        X, model, alpha = self.X, self.model, self.alpha
        a, b = X.indptr[row], X.indptr[row + 1]
        # numpy indexes by intp fastest (11 against 8 us for G[terms] = ... of 200 terms)
        terms, values = X.indices[a:b].astype(np.intp), X.data[a:b]
        self.class_count[c] += 1
        n_terms = X.shape[1]
        if self.kind is None:
            # Classes are numbered 0..n-1 and all named up front, so the model's rows are ours.
            model.partial_fit(take_rows(X, np.array([row])), [c],
                              classes=np.arange(len(self.class_count)))
            bias, weights = model.decomposition()
            self.bias, self.G = bias, np.ascontiguousarray(weights.T)
            self._differ(slice(None))
            return
        np.add.at(self.count[:, c], terms, values)
        if self.kind == "multinomial":
            self.mass[c] += self.sums[row]
            self.G[terms, c] = np.log(self.count[terms, c] + alpha)
            self.h[c] = -np.log(self.mass[c] + alpha * n_terms)
        elif self.kind == "complement":
            np.add.at(self.total, terms, values)
            self.mass[c] += self.sums[row]
            # −log(n_k − n_kc + α) in place: a third of the time of the expression.
            g = self.total.take(terms)[:, None] - self.count.take(terms, axis=0)
            g += alpha
            self.G[terms] = g = np.negative(np.log(g, out=g), out=g)
            self.h = np.log(self.mass.sum() - self.mass + alpha * n_terms)   # Σ_k n_k = Σ_c n_c
            if self.diff is not None:
                self.diff[terms] = g[:, 1] - g[:, 0]
                terms = terms[:0]   # diff is up to date
        else:
            absent = np.log(self.class_count[c] - self.count[:, c] + alpha)
            self.G[:, c] = np.log(self.count[:, c] + alpha) - absent
            self.absent[c] = absent.sum() - n_terms * np.log(self.class_count[c] + 2 * alpha)
        if self.kind == "bernoulli":
            self.bias = class_log_prior(self.class_count, model.fit_prior, model.class_prior)
            self.bias += self.absent
            terms = slice(None)
        elif self.kind == "multinomial" or isinstance(model, ComplementNBWithPrior):
            self.bias = class_log_prior(self.class_count, model.fit_prior, model.class_prior)
        # else ComplementNB's bias: 0, it scores without the prior
        self._differ(terms)

    def _differ(self, terms: Any) -> None:
        """Bring ``diff`` up to date at ``terms`` (indices or a slice) after G changed there."""
        if self.diff is not None:
            g = self.G[terms] if isinstance(terms, slice) else self.G.take(terms, axis=0)
            self.diff[terms] = g[:, 1] - g[:, 0]
