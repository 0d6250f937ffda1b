"""labelled texts → the TextClassifier settings that cross-validate best: ``train --tune``.

The texts are tokenized once, with word pairs, and counted once; every candidate is a view of
that one count matrix (its unigram columns, or all), weighed (raw counts, log(1 + count) or
presence; unit length or not), and every fold's model is fitted once per weighing and event
model: the smoothing α changes only the log probabilities (``_update``), not the counts. Every
weighing and model is tried on single words at the classifier's α, every α for the best three
of those, and word pairs for the best two at the best α and its neighbours: a coordinate
search, which costs a few plain trainings.

The score is the accuracy of the most probable class; for two-class mail (a spam class among
two) it is the ROC AUC of the spam log-odds, which is what learned cutoffs act on.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .metrics import stratified_folds

# The grid: what the lecture notes and the literature vary (Rennie et al. 2003; Wang & Manning
# 2012 for presence and word pairs on sentiment).
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0)
MODELS = ("complement", "multinomial", "bernoulli")
TFS = ("raw", "log", "binary")
NORMS = (None, "l2")
NGRAMS = ((1, 1), (1, 2))
FOLDS = 5
# Settings of the unigram search tried again with word pairs.
WIDER = 2


@dataclass
class Tuning:
    """What ``tune`` found: the rows (settings, mean, sd per fold) best first, and the best."""

    metric: str
    folds: int
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def best(self) -> dict[str, Any]:
        return self.rows[0]

    @property
    def settings(self) -> dict[str, Any]:
        """The best row as TextClassifier parameters."""
        best = self.best
        return {"model": best["model"], "alpha": best["alpha"], "tf": best["tf"],
                "norm": best["norm"], "ngram_range": tuple(best["ngram_range"])}

    def summary(self, top: int = 10) -> dict[str, Any]:
        """The JSON-able record kept in the model file."""
        return {"metric": self.metric, "folds": self.folds, "candidates": len(self.rows),
                "best": self.best, "top": self.rows[:top]}


def tune(classifier: Any, texts: Sequence, labels: Sequence, folds: int = FOLDS,
         seed: int = 0, alphas: Sequence[float] = ALPHAS, models: Sequence[str] = MODELS,
         tfs: Sequence[str] = TFS, norms: Sequence[str | None] = NORMS,
         ngrams: Sequence[tuple[int, int]] = NGRAMS) -> Tuning:
    """Cross-validate the grid of settings around ``classifier`` (a TextClassifier whose other
    settings — stop words, stemming, pruning, priors, spam_class — stay) on ``texts``."""
    from .vocabulary import Vocabulary, to_scipy

    y = np.array(labels, dtype=str)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError("tuning needs at least two classes")
    spam = classifier.spam_class if classes.size == 2 and classifier.spam_class in classes else None
    k = int(min(folds, np.bincount(np.unique(y, return_inverse=True)[1]).min()))
    if k < 2:
        raise ValueError("tuning needs at least two documents of each class")
    wide = max(high for _, high in ngrams)
    counter = type(classifier)(**{**classifier.get_params(), "ngram_range": (1, wide)})
    counter._build()
    parts = counter._count(list(texts), digests=False)
    vocabulary = Vocabulary(min_df=classifier.min_df, max_df=classifier.max_df,
                            max_features=classifier.max_features)
    counts = to_scipy(vocabulary.fit_parts(c for c, _ in parts))
    single = np.array([" " not in term for term in vocabulary.terms_])
    fold = stratified_folds(y, k, seed)
    metric = "1 - ROC AUC" if spam else "accuracy"
    rows: list[dict[str, Any]] = []

    def search(ngram: tuple[int, int], settings: Sequence[tuple[str, str | None, str]],
               alphas: Sequence[float] = alphas) -> None:
        if not alphas or not settings:
            return
        X = counts if ngram[1] > 1 else counts[:, single]
        for tf, norm in dict.fromkeys((tf, norm) for tf, norm, _ in settings):
            weighed = _weigh(X, tf, norm)
            for model in [m for t, n, m in settings if (t, n) == (tf, norm)]:
                scores = _cross_validate(classifier, weighed, y, fold, k, model, alphas, spam)
                for alpha, per_fold in scores.items():
                    rows.append({"model": model, "alpha": alpha, "ngram_range": list(ngram),
                                 "tf": tf, "norm": norm, "mean": statistics.fmean(per_fold),
                                 "sd": statistics.stdev(per_fold) if k > 1 else 0.0})

    # A coordinate search: every weighing and event model on single words at the classifier's
    # own alpha; every alpha for the best few of those; word pairs, which cost ten times as much
    # to score, for the best two at the best alpha and its neighbours.
    def best(n: int) -> list[tuple[str, str | None, str]]:
        ranked = sorted(rows, key=lambda r: r["mean"] if spam else -r["mean"])
        return list(dict.fromkeys((r["tf"], r["norm"], r["model"]) for r in ranked))[:n]

    grid = [(tf, norm, model) for tf, norm in itertools.product(tfs, norms) for model in models
            if model != "bernoulli" or (tf, norm) == ("binary", None)]  # presence only
    if classes.size == 2 and "complement" in models:
        # Two classes: complement NB ranks and decides as multinomial NB does.
        grid = [g for g in grid if g[2] != "multinomial"]
    ngrams = sorted(ngrams, key=lambda n: n[1])
    start = classifier.alpha if classifier.alpha in alphas else sorted(alphas)[len(alphas) // 2]
    search(ngrams[0], grid, [start])
    search(ngrams[0], best(WIDER + 1), [a for a in alphas if a != start])
    for ngram in ngrams[1:]:
        top = sorted(rows, key=lambda r: r["mean"] if spam else -r["mean"])[0]
        at = sorted(alphas).index(top["alpha"])
        search(ngram, best(WIDER), sorted(alphas)[max(at - 1, 0):at + 2])
    rows.sort(key=lambda r: r["mean"] if spam else -r["mean"])
    return Tuning(metric, k, rows)


def _cross_validate(classifier: Any, X: Any, y: np.ndarray, fold: np.ndarray, k: int,
                    model: str, alphas: Sequence[float], spam: str | None) -> dict[float, list[float]]:
    """alpha → the score of each fold; the folds run in worker processes (``n_jobs`` of the
    classifier, as its tokenizing does), each fitting its counts once for every alpha."""
    from joblib import Parallel, delayed, effective_n_jobs
    params = {"fit_prior": classifier.fit_prior, "class_prior": classifier.class_prior}
    n_jobs = min(k, effective_n_jobs(-1 if classifier.n_jobs is None else classifier.n_jobs))
    jobs = (delayed(_fold_scores)(X, y, fold == f, model, params, alphas, spam) for f in range(k))
    per_fold = Parallel(n_jobs=n_jobs)(jobs) if n_jobs > 1 else list(_in_process(jobs))
    return {alpha: [scores[i] for scores in per_fold] for i, alpha in enumerate(alphas)}


def _in_process(jobs: Any) -> Any:
    """Run joblib's delayed calls in this process."""
    return (function(*args, **kwargs) for function, args, kwargs in jobs)


def _fold_scores(X: Any, y: np.ndarray, held: np.ndarray, model: str, params: dict[str, Any],
                 alphas: Sequence[float], spam: str | None) -> list[float]:
    """One fold's score for each alpha: the counts fitted once, the log probabilities derived
    again per alpha (``_update``)."""
    from .classifier import MODELS as EVENT_MODELS
    from .metrics import roc_auc
    nb = EVENT_MODELS[model](alpha=alphas[0], **params).fit(X[~held], y[~held])
    scores = []
    for i, alpha in enumerate(alphas):
        if i:
            nb.alpha = alpha
            nb._update()
        log_proba = nb.predict_log_proba(X[held])
        if spam:
            s = int(np.flatnonzero(nb.classes_ == spam)[0])
            scores.append(1.0 - roc_auc(y[held] == spam, log_proba[:, s] - log_proba[:, 1 - s]))
        else:
            scores.append(float(np.mean(nb.classes_[log_proba.argmax(axis=1)] == y[held])))
    return scores


def _weigh(X: Any, tf: str, norm: str | None) -> Any:
    """X (scipy CSR counts) weighed as TextClassifier weighs documents."""
    X = X.astype(float)
    if tf == "log":
        X.data = np.log1p(X.data)
    elif tf == "binary":
        X.data = np.ones_like(X.data)
    if norm == "l2":
        lengths = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        lengths[lengths == 0] = 1.0
        X = X.multiply(1.0 / lengths[:, None]).tocsr()
    return X
