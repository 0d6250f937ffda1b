"""labelled texts → K-fold cross-validation of training: each fold's model trained on the
other folds as ``textnb train`` trains it (cutoffs and decision threshold too), its scores of the
held-out documents, and each fold's figures (``textnb evaluate --cv``)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..classifier import TextClassifier
from ..decision.rules import spam_class_of, spam_cutoffs
from ..errors import UsageError
from ..folds import stratified_folds
from .metrics import summary


def cross_validate(texts: list, y: np.ndarray, k: int, seed: int, spam_class: str | None,
                   make: Callable[[list], TextClassifier]):
    """(classes, out-of-fold log P(c|x), cutoffs, decision threshold, fold of each document):
    each fold's model, ``make(labels)`` of every label, trained on the other folds as `train`
    would train it, its cutoffs and threshold too. cutoffs: None, or (spam class, spam cutoff per document, ham cutoff per
    document, learned by every fold); threshold: each document's fold's (NaN where none).
    Copies of a file (the same bytes) share a fold: no model scores a document it learned."""
    if len(set(y.tolist())) < 2:
        raise UsageError("cross-validation needs at least two classes")
    folds = stratified_folds(y, k, seed, groups=np.array([hash(text) for text in texts]))
    classes = np.unique(y).astype(str)
    log_proba = np.zeros((len(y), len(classes)))
    high, low, threshold = np.zeros(len(y)), np.zeros(len(y)), np.full(len(y), np.nan)
    found, learned = None, True
    for fold in range(k):
        test = folds == fold
        clf = make(y.tolist())
        clf.set_params(spam_class=spam_class or spam_class_of(classes) or "spam")
        clf.fit([t for t, held_out in zip(texts, test) if not held_out], y[~test])
        log_proba[test] = clf.predict_log_proba([t for t, held_out in zip(texts, test) if held_out])
        found = spam_cutoffs(classes, clf.cutoffs_, spam_class)
        learned = learned and bool(clf.cutoffs_)
        if found:
            high[test], low[test] = found[1], found[2]
        if clf.decision_threshold_ is not None:
            threshold[test] = clf.decision_threshold_
    return classes, log_proba, found and (found[0], high, low, learned), threshold, folds


def fold_results(y, log_proba, classes, positive, cutoffs, threshold, folds,
                 k) -> dict[str, list[float]]:
    """Each fold's accuracy, macro F1 and, for two classes, ROC AUC and the rates."""
    results: dict[str, list[float]] = {}
    for fold in range(k):
        test = folds == fold
        r = summary(y[test], log_proba[test], classes, positive,
                    cutoffs and (cutoffs[1][test], cutoffs[2][test]), threshold[test])
        values = {"accuracy": r["accuracy"], "macro_f1": r["macro"]["f1"]}
        if positive is not None:
            values.update(roc_auc=r["roc_auc"], false_positive_rate=r["false_positive_rate"],
                          false_negative_rate=r["false_negative_rate"])
        if "at_cutoffs" in r:
            values.update({f"{key}_at_cutoffs": r["at_cutoffs"][key]
                           for key in ("fpr", "fnr", "unsure")})
        for key, value in values.items():
            results.setdefault(key, []).append(value)
    return results
