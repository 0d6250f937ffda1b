"""Spam ranking variants, fast: 10-fold CV of the 70 % training parts over one count matrix.

Each variant is a function (counts of a fold's training messages, their labels) → a model with
``predict_log_proba`` and ``classes_``; it is fitted on nine folds and scores the tenth, for
the 70 % training parts of the stratified 70/30 splits of seeds 0–3 (``--seeds``). The messages
are counted once, by textnb's defaults (``TextClassifier(spam_class="spam", training="full",
keep_suspects=True).fit`` of all of them, then its ``transform``: the vocabulary of all of them: a fold's model counts only its own messages, so a
held-out message's terms are known but have no counts, as in textnb's own cutoff folds), so a
variant costs seconds, not a training run each. Reported per seed and on average:

* 1 − ROC AUC (%) of the pooled out-of-fold spam log-odds;
* the tail: the share of spam at or below the spam cutoff the FPR rule (0.1 %, as
  textnb.decision.cutoffs) would set on those out-of-fold scores — what a learned cutoff leaves uncaught.

``--split time`` measures drift instead: each variant fits the 2002 parts (spam/, easy_ham/,
half of hard_ham/ by the seed) over their own terms and scores the 2003 parts (spam_2/,
easy_ham_2/, the other half); the tail is then the least spam any cutoff with FPR ≤ 0.1 % on
those test scores leaves.

``--swap SHARE`` swaps that share of the training labels at random (the held-out messages are
judged by their true labels). ``--fold-seed N`` draws other folds: the spread between draws is
the noise a difference must beat (the defaults: tail 6.67–6.86 % over three draws).

Beside the variants, ``command``: the command at its defaults, ``textnb train spam/ ham/`` on
each fold's training messages and ``textnb classify`` of the held-out ones (``--split time``:
on the 2002 parts, of the 2003 ones), scored alike: what a user gets, every step the variants
leave out included (word pairs or not, learned cutoffs, suspects). It trains once a fold, so it
takes most of the run's time (``--no-command`` leaves it out).

The tail's cutoff is textnb's FPR rule, ``textnb.decision.cutoffs.ham_allowed``: no public name gives it yet.

Run (from the repository root)::

    python -m bench.ranking --data corpora/full/spamassassin
    python -m bench.ranking --variants default nb-lr+on-error --no-command
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import args as options
from bench.common.corpora import list_spam, spam_dir
from bench.common.metrics import roc_auc
from bench.common.splits import stratified_split, time_split
from bench.common.systems import command_run


class Linear:
    """Two-class scores x·w + b as log-probabilities whose difference is the log-odds."""

    def __init__(self, w: np.ndarray, b: float, scale: np.ndarray | None, binary: bool) -> None:
        self.w, self.b, self.scale, self.binary = w, b, scale, binary
        self.classes_ = np.array(["ham", "spam"])

    def log_odds(self, X) -> np.ndarray:
        values = np.ones_like(X.data, dtype=float) if self.binary else X.data
        if self.scale is not None:
            values = values * self.scale[X.indices]
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.bincount(rows, weights=values * self.w[X.indices], minlength=X.shape[0]) + self.b

    def predict_log_proba(self, X) -> np.ndarray:
        out = np.zeros((X.shape[0], 2))
        out[:, 1] = self.log_odds(X)
        return out


def logistic(A, target: np.ndarray, lam: float, iters: int = 300) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by L-BFGS (scipy): weights and bias."""
    from scipy.optimize import minimize
    sign = np.where(target, -1.0, 1.0)

    def loss(wb: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = wb[:-1], wb[-1]
        s = sign * (A @ w + b)                      # loss log(1 + e^s), s = −y·z
        p = sign / (1 + np.exp(-s))
        return (np.logaddexp(0, s).sum() + 0.5 * lam * w @ w,
                np.append(A.T @ p + lam * w, p.sum()))

    found = minimize(loss, np.zeros(A.shape[1] + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": iters})
    return found.x[:-1], found.x[-1]


def nb_logistic(X, y: np.ndarray, lam: float = 0.1) -> Linear:
    """Wang & Manning's NB-weighted features: presence scaled by the NB log-count ratio r,
    then logistic regression (NBSVM with a logistic loss)."""
    from scipy.sparse import csr_matrix
    A = csr_matrix((np.ones_like(X.data, dtype=float), X.indices, X.indptr), shape=X.shape)
    spam = y == "spam"
    p = 1 + np.asarray(A[spam].sum(0)).ravel()
    q = 1 + np.asarray(A[~spam].sum(0)).ravel()
    r = np.log(p / p.sum()) - np.log(q / q.sum())
    w, b = logistic(A.multiply(r).tocsr(), spam, lam)
    return Linear(w, b, r, binary=True)


class Sum:
    """The log-odds of several models, weighted and added."""

    def __init__(self, models: list, weights: list[float]) -> None:
        self.models, self.weights = models, weights
        self.classes_ = np.array(["ham", "spam"])

    def predict_log_proba(self, X) -> np.ndarray:
        out = np.zeros((X.shape[0], 2))
        for model, weight in zip(self.models, self.weights):
            lp = model.predict_log_proba(X)
            s = list(model.classes_).index("spam")
            out[:, 1] += weight * (lp[:, s] - lp[:, 1 - s])
        return out


def variants() -> dict:
    from textnb.nb.discrete import ComplementNB, MultinomialNB
    from textnb.nb.on_error import train_on_error

    def on_error(new):
        return lambda X, y: train_on_error(X, y, new)[0]

    complement = on_error(lambda: ComplementNB(alpha=0.03))
    return {
        "default": complement,     # on error, four walks: what textnb picks for full mail
        "full": lambda X, y: ComplementNB(alpha=0.03).fit(X, y),
        "multinomial": on_error(lambda: MultinomialNB(alpha=0.03)),
        "nb-lr": nb_logistic,
        "nb-lr+on-error": lambda X, y: Sum([complement(X, y), nb_logistic(X, y)], [2.0, 1.0]),
    }


def drift(fit_variant, X, y: np.ndarray, paths: list[str], seed: int) -> tuple[float, float]:
    """(1 − AUC %, least spam % not caught at FPR ≤ 0.1 %) of the 2003 parts scored by a model
    of the 2002 parts over the terms those hold (``--split time``)."""
    from textnb.nb.on_error import take_rows
    train, test = time_split(paths, seed)
    Xt, Xh = take_rows(X, train), take_rows(X, test)
    present = np.bincount(Xt.indices, minlength=X.shape[1]) > 0   # the 2002 terms, others out
    Xt, Xh = (keep_columns(part, present) for part in (Xt, Xh))
    model = fit_variant(Xt, y[train])
    lp = model.predict_log_proba(Xh)
    s = list(model.classes_).index("spam")
    return figures(y[test] == "spam", lp[:, s] - lp[:, 1 - s])


def keep_columns(X, keep: np.ndarray):
    """CSR ``X`` with only the columns ``keep`` marks, renumbered in their order."""
    from textnb.nb.sparse import CSR
    from textnb.text.vocabulary import to_scipy
    kept = to_scipy(X)[:, np.flatnonzero(keep)]
    return CSR(kept.data, kept.indices.astype(np.int32), kept.indptr.astype(np.int64), kept.shape)


def figures(is_spam: np.ndarray, log_odds: np.ndarray) -> tuple[float, float]:
    """(1 − AUC %, the % of spam at or below the spam cutoff textnb's FPR rule sets at 0.1 %
    on these scores)."""
    from textnb.decision.cutoffs import ham_allowed
    ham = np.sort(log_odds[~is_spam])
    bound = ham[ham.size - 1 - ham_allowed(0.001, ham.size)]
    return (100 * (1 - roc_auc(is_spam, log_odds)),
            100 * float((log_odds[is_spam] <= bound).mean()))


def command(paths: list[str], y: np.ndarray, labels: np.ndarray, seed: int, folds: int,
            fold_seed: int, split: str) -> tuple[float, float]:
    """The figures of the command at its defaults: on ``folds`` folds of the 70 % training
    part (trained on ``labels``, judged by ``y``), or by time."""
    from textnb.folds import stratified_folds
    with tempfile.TemporaryDirectory(prefix="ranking-") as scratch:
        def scores(train: np.ndarray, held: np.ndarray) -> np.ndarray:
            run = command_run(Path(scratch), {c: [Path(paths[i]) for i in train if labels[i] == c]
                                              for c in ("spam", "ham")},
                              [Path(paths[i]) for i in held])
            return np.array([r["spam_log_odds"] for r in run.records])
        if split == "time":
            train, test = time_split(paths, seed)
            return figures(y[test] == "spam", scores(train, test))
        train, _ = stratified_split(y, 0.7, seed)
        fold = stratified_folds(y[train], folds, seed + fold_seed)
        log_odds = np.zeros(train.size)
        for k in range(folds):
            log_odds[fold == k] = scores(train[fold != k], train[fold == k])
        return figures(y[train] == "spam", log_odds)


def main(argv: list[str] | None = None) -> int:
    parser = options.parser(__name__, __doc__)
    options.spam_data(parser)
    parser.add_argument("--variants", nargs="+", default=["default", "full", "multinomial"],
                        help=f"of: {', '.join(variants())} (default: the first three)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--fold-seed", type=int, default=0, help="added to each seed for the folds")
    parser.add_argument("--split", choices=("random", "time"), default="random",
                        help="random: 10-fold CV of the 70 %% training parts (default); time: fit "
                             "the 2002 parts, score the 2003 ones")
    parser.add_argument("--swap", type=float, default=0.0, metavar="SHARE",
                        help="swap this share of the training labels (default 0)")
    options.no_command(parser)
    args = parser.parse_args(argv)
    known = variants()
    unknown = [name for name in args.variants if name not in known]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; choose from {', '.join(known)}")
    return options.run("bench.ranking", lambda: run(args, known))


def run(args, known: dict) -> None:
    from textnb import TextClassifier
    from textnb.folds import stratified_folds
    from textnb.nb.on_error import take_rows

    paths, y = list_spam(spam_dir(args.data, args.archive))
    raws = [Path(p).read_bytes() for p in paths]
    start = time.perf_counter()
    # The counts textnb fits on, of every message, with its defaults (the terms as trained:
    # full training keeps every message's terms, keep_suspects every message).
    X = TextClassifier(spam_class="spam", training="full", keep_suspects=True).fit(
        raws, list(y)).transform(raws)
    how = ("the 2002 parts fitted, the 2003 parts scored, hard_ham halved by seeds "
           if args.split == "time" else f"{args.folds}-fold CV of the 70 % training parts of seeds ")
    print(f"{len(y)} messages, {X.shape[1]} terms, counted in {time.perf_counter() - start:.1f} s; "
          f"{how}{', '.join(map(str, args.seeds))}"
          + (f"; {args.swap:.1%} of the labels swapped" if args.swap else ""), flush=True)
    print(f"{'variant':<16} {'1 - AUC % by seed':<34} {'mean':>7}   "
          f"{'tail % by seed':<26} {'mean':>6}  time")
    for name in args.variants:
        fit_variant = known[name]
        aucs, tails = [], []
        began = time.perf_counter()
        for seed in args.seeds:
            if args.split == "time":
                auc, tail = drift(fit_variant, X, y, paths, seed)
                aucs.append(auc)
                tails.append(tail)
                continue
            train, _ = stratified_split(y, 0.7, seed)
            Xt, truth = take_rows(X, train), y[train]
            labels = truth.copy()
            if args.swap:
                swapped = np.random.default_rng(7).random(labels.size) < args.swap
                labels[swapped] = np.where(labels[swapped] == "spam", "ham", "spam")
            folds = stratified_folds(truth, args.folds, seed + args.fold_seed)
            log_odds = np.zeros(labels.size)
            for fold in range(args.folds):
                held = folds == fold
                model = fit_variant(take_rows(Xt, ~held), labels[~held])
                lp = model.predict_log_proba(take_rows(Xt, held))
                s = list(model.classes_).index("spam")
                log_odds[held] = lp[:, s] - lp[:, 1 - s]
            auc, tail = figures(truth == "spam", log_odds)
            aucs.append(auc)
            tails.append(tail)
        print(f"{name:<16} {' '.join(f'{a:.3f}' for a in aucs):<34} {np.mean(aucs):>7.4f}   "
              f"{' '.join(f'{t:.1f}' for t in tails):<26} {np.mean(tails):>6.2f}  "
              f"{time.perf_counter() - began:.0f} s", flush=True)
    if args.command:
        aucs, tails = [], []
        began = time.perf_counter()
        for seed in args.seeds:
            labels = y.copy()
            if args.swap and args.split != "time":
                train, _ = stratified_split(y, 0.7, seed)
                swapped = np.random.default_rng(7).random(train.size) < args.swap
                labels[train[swapped]] = np.where(labels[train[swapped]] == "spam", "ham", "spam")
            auc, tail = command(paths, y, labels, seed, args.folds, args.fold_seed, args.split)
            aucs.append(auc)
            tails.append(tail)
        print(f"{'command':<16} {' '.join(f'{a:.3f}' for a in aucs):<34} {np.mean(aucs):>7.4f}   "
              f"{' '.join(f'{t:.1f}' for t in tails):<26} {np.mean(tails):>6.2f}  "
              f"{time.perf_counter() - began:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
