"""model (+ one document) → informative terms per class, per-term log-odds contributions.

Both read the model's own decomposition ``jll = bias_c + Σ_k x_k w_ck``, so an explanation adds
up to exactly the score the model gave: log-odds(label vs. runner-up) = prior log-odds +
baseline + Σ contributions (posterior odds = likelihood ratio × prior odds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .discrete import DiscreteNB
from .sparse import as_csr


@dataclass(frozen=True)
class Contribution:
    """One term of a document: its weight, the value the model saw (its count, transformed as
    the model's tf, idf and norm settings say: l2-normalised by default), and its log-odds push
    towards ``label``."""

    term: str
    weight: float
    log_odds: float


@dataclass(frozen=True)
class Explanation:
    """Why a document got ``label`` rather than ``against`` (the runner-up), in natural logs.

    ``log_odds`` = ``prior_log_odds`` + ``baseline`` + ``unseen_log_odds`` + Σ of every term's
    contribution; ``terms`` lists the largest contributions (by absolute value) and ``rest``
    sums the others. ``baseline`` is the Bernoulli model's evidence from absent words (0 for
    the others); ``unseen`` counts the distinct words of the document outside the vocabulary
    that were scored, and ``unseen_log_odds`` is their push: their weighed amount ×
    (u_label − u_against) (:attr:`~textnb.nb.discrete.DiscreteNB.unseen_weight_`).
    """

    label: Any
    against: Any
    log_odds: float
    prior_log_odds: float
    baseline: float
    terms: list[Contribution]
    rest: float
    unseen: int = 0
    unseen_log_odds: float = 0.0


def explain_document(model: DiscreteNB, terms: Sequence[str], X: Any, top: int = 10,
                     label: Any = None) -> Explanation:
    """Explain the decision ``label`` (default: the most probable class) on the single document
    ``X`` (shape (1, n_terms)) against the most probable other class; where a decision
    threshold or cutoffs chose the less probable class, its log-odds are below 0."""
    X = as_csr(X)
    if X.shape[0] != 1:
        raise ValueError(f"explain one document at a time, got {X.shape[0]}")
    if len(model.classes_) < 2:
        raise ValueError("a model with one class has no decision to explain")
    jll = model.predict_joint_log_proba(X)[0]
    order = np.argsort(-jll, kind="stable")
    if label is not None:
        found = np.flatnonzero(model.classes_ == label)
        if not found.size:
            raise ValueError(f"{label!r} is not one of the model's classes")
        order = np.concatenate([found[:1], order[order != found[0]]])
    first, second = order[:2]
    bias, weights = model.decomposition()
    values = (X.data > 0).astype(float) if model._binary else X.data
    pushes = values * (weights[first, X.indices] - weights[second, X.indices])
    prior = model.class_log_prior_[first] - model.class_log_prior_[second]
    order = np.argsort(-np.abs(pushes), kind="stable")
    shown, hidden = order[:top], order[top:]
    amounts = model.unseen_amounts(X)
    unseen = 0 if amounts is None else int(X.unseen.indptr[1] - X.unseen.indptr[0])
    u = model.unseen_weight_ if unseen else None
    unseen_push = float(amounts[0] * (u[first] - u[second])) if unseen else 0.0
    return Explanation(
        label=model.classes_[first].item(), against=model.classes_[second].item(),
        log_odds=float(jll[first] - jll[second]), prior_log_odds=float(prior),
        baseline=float(bias[first] - bias[second] - prior),
        terms=[Contribution(terms[X.indices[i]], float(X.data[i]), float(pushes[i])) for i in shown],
        rest=float(pushes[hidden].sum()), unseen=unseen, unseen_log_odds=unseen_push)


def informative_terms(model: DiscreteNB, terms: Sequence[str],
                      top: int = 10) -> dict[Any, list[tuple[str, float]]]:
    """Per class c, the ``top`` terms with the largest w_ck − max_{c'≠c} w_c'k.

    For the multinomial model that is log P(w|c) − log max_{c'≠c} P(w|c'): how many times
    more likely the term is in c than in the class that likes it next best (with two classes,
    the familiar log-likelihood ratio).
    """
    _, weights = model.decomposition()
    if len(model.classes_) < 2:
        raise ValueError("a model with one class has no informative terms")
    top = min(top, weights.shape[1])
    # max_{c'≠c} w_c'k is the term's best class weight, or its second-best where c is its
    # best: both found in one pass over the classes, O(classes × terms), where comparing
    # every class with every other took classes² × terms (100 classes: 5.3 s, 213 MB).
    first, second, first_class = _best_two(weights)
    result = {}
    for c, label in enumerate(model.classes_):
        ratio = weights[c] - np.where(first_class == c, second, first)
        best = np.arange(ratio.size)
        if 0 < top < ratio.size:
            # Every term at least as good as the top-th, ties included, so that ties are broken
            # by term order below rather than by wherever argpartition happened to put them.
            best = np.flatnonzero(ratio >= -np.partition(-ratio, top - 1)[top - 1])
        best = best[np.lexsort((best, -ratio[best]))][:top]
        result[label.item()] = [(terms[k], float(ratio[k])) for k in best]
    return result



def _best_two(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of ``weights`` (n_classes, n_terms): its largest value, its second largest
    (equal to the largest where two classes share it) and the row of the largest (the first of
    equals), one row at a time, never a copy of the whole."""
    first = np.full(weights.shape[1], -np.inf)
    second = first.copy()
    best = np.zeros(weights.shape[1], dtype=np.intp)
    for c, row in enumerate(weights):
        np.maximum(second, np.minimum(first, row), out=second)
        best[row > first] = c
        np.maximum(first, row, out=first)
    return first, second, best
