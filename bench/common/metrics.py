"""The figures of a ranking and of spam decisions, computed here rather than by the library
measured."""

from __future__ import annotations

import math

import numpy as np


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of values, tied values sharing the mean of their ranks."""
    values = np.asarray(values, float)
    order = np.argsort(values, kind="mergesort")
    s = values[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    ends = np.r_[starts[1:], s.size]
    ranks = np.empty(s.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def roc_auc(positive: np.ndarray, score: np.ndarray) -> float:
    """Mann–Whitney: P(a random positive scores above a random negative), ties one half; NaN
    without both."""
    positive = np.asarray(positive, bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = average_ranks(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def rates(is_spam: np.ndarray, status: np.ndarray) -> dict:
    """FPR, FNR and unsure shares of a spam/ham/unsure decision; "not caught": spam in the
    inbox or unsure, as a share of spam; "unsure": of all messages."""
    ham = ~is_spam
    missed = (status != "spam") & is_spam
    return {"fp": int(((status == "spam") & ham).sum()),
            "fn": int(((status == "ham") & is_spam).sum()),
            "fpr": float(((status == "spam") & ham).sum() / ham.sum()),
            "fnr": float(((status == "ham") & is_spam).sum() / is_spam.sum()),
            "spam_unsure": float(((status == "unsure") & is_spam).sum() / is_spam.sum()),
            "ham_unsure": float(((status == "unsure") & ham).sum() / ham.sum()),
            "unsure": float((status == "unsure").mean()),
            "not_caught": float(missed.sum() / is_spam.sum()), "missed": int(missed.sum())}


def best_not_caught(is_spam: np.ndarray, score: np.ndarray, max_fpr: float) -> float:
    """The least share of spam a spam cutoff must leave uncaught to call at most ``max_fpr`` of
    the ham spam, the cutoff chosen on these very scores: what the ranking allows, whatever
    cutoffs were learned."""
    ham = np.sort(score[~is_spam])[::-1]
    allowed = math.floor(max_fpr * ham.size + 1e-9)
    return float(np.mean(score[is_spam] <= ham[allowed])) if allowed < ham.size else 0.0


def decide(score: np.ndarray, spam_cut: float, ham_cut: float) -> np.ndarray:
    """spam if score ≥ spam_cut, ham if score ≤ ham_cut, unsure between (bogofilter's rule)."""
    return np.where(score >= spam_cut, "spam", np.where(score <= ham_cut, "ham", "unsure"))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))
