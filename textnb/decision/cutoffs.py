"""out-of-fold spam log-odds → the ham and spam cutoffs a two-class mail model decides by.

A cutoff fixed on P(spam|x) fails twice: the probability is 0 or 1 for most messages, and how
far the log-odds of a spam and a ham spread depends on the corpus. So the cutoffs are learned
from the training messages themselves: K-fold cross-validation gives each one the log-odds of a
model that never saw it, and on those scores

* the spam cutoff is the lowest one that a new ham passes at most ``target_fpr`` of the time
  (:func:`_allowed`; extrapolated from the highest scores where there are too few ham,
  :func:`extrapolated`; a message is spam when its log-odds are at or above it);
* the ham cutoff is the highest one, not above the spam cutoff, that a new spam falls under at
  most ``target_fnr`` of the time (ham when at or below it), raised as far as needed
  to leave at most ``target_unsure`` of all messages between the two;
* between them a message is unsure; when the classes separate well the band is empty.

Raising the ham cutoff moves spam from unsure into the inbox, never into the spam folder: spam
not caught (in the inbox or unsure) depends on the spam cutoff alone. Where the classes overlap
(short messages, say) a band wide enough to hold 1 % FNR would leave a fifth of all mail to be
sorted by hand; the bound keeps it a small share.

The rates these cutoffs give on the out-of-fold scores are kept as the estimate a user sees in
``textnb info``.

A few mis-sorted training messages (spam in the ham folder) would set the spam cutoff: they
score as spam, so the "highest ham" are spam, and the cutoff rises above most spam (SpamAssassin
with 1 % of the training labels swapped: 68–92 % of the test spam not caught, at 4–5 % when
clean). :func:`suspects` finds the messages a model that never saw them places among the other
class; they are left out of the cutoffs' choice (and of the model, :mod:`textnb.classifier`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# Defaults: at most one ham in a thousand called spam (bogofilter's and SpamBayes' aim), at
# most one spam in a hundred delivered as ham; what lies between is unsure, at most one message
# in fifty (2 %, under the 3 % a user tolerates, leaving room for a new corpus to differ).
TARGET_FPR = 0.001
TARGET_FNR = 0.01
TARGET_UNSURE = 0.02
FOLDS = 5
# The heaviest tail the spam cutoff is extrapolated with (_tail), a generalised Pareto shape: at
# 0.5 the score 0.1 % of new ham pass lies about twice as far above u (the score under the
# highest tenth of the held-out ham's) as an exponential tail puts it.
TAIL_SHAPE_MAX = 0.5
# Messages of each class below which no message is taken for mis-sorted, and the share of a
# class above which none is (a mail user's folders are not that far off).
SUSPECT_MIN = 20
SUSPECT_SHARE = 0.05


def choose_cutoffs(log_odds: np.ndarray, is_spam: np.ndarray, target_fpr: float = TARGET_FPR,
                   target_fnr: float = TARGET_FNR,
                   target_unsure: float = TARGET_UNSURE) -> dict[str, Any]:
    """Spam and ham cutoffs on ``log_odds`` (float array of shape (n,)) for messages whose class
    is ``is_spam`` (bool array), and the rates they give there.

    Returns ``{"spam": s, "ham": h, "fpr", "fnr", "unsure", "spam_unsure", "ham_unsure",
    "spam_not_caught", "messages", "spam_messages"}`` with h ≤ s; rates are fractions of ham, of spam or of all
    messages (``unsure``). Each cutoff sits halfway between the two scores it separates, so a
    message scored a little differently by the final model still falls on the same side.
    """
    log_odds = np.asarray(log_odds, dtype=float)
    is_spam = np.asarray(is_spam, dtype=bool)
    if not all(0 <= rate < 1 for rate in (target_fpr, target_fnr, target_unsure)):
        raise ValueError(f"target rates must be in [0, 1), got FPR {target_fpr}, FNR {target_fnr},"
                         f" unsure {target_unsure}")
    if log_odds.shape != is_spam.shape or not np.isfinite(log_odds).all():
        raise ValueError("need one finite log-odds per message")
    ham, spam = np.sort(log_odds[~is_spam]), np.sort(log_odds[is_spam])
    if not ham.size or not spam.size:
        raise ValueError("choosing cutoffs needs both spam and ham messages")
    # The spam cutoff: above all but the `allowed` highest-scoring ham.
    allowed = _allowed(target_fpr, ham.size)
    bound = ham[ham.size - 1 - allowed]           # the highest ham that must stay below
    higher = np.concatenate([ham[ham > bound], spam[spam > bound]])
    spam_cutoff = (bound + higher.min()) / 2 if higher.size else bound + 1.0
    if extrapolated(ham.size, target_fpr):
        spam_cutoff = max(spam_cutoff, _tail(ham, target_fpr))
    # The ham cutoff: below all but the `allowed` lowest-scoring spam, and not above the spam one.
    allowed = _allowed(target_fnr, spam.size)
    bound = spam[allowed]                         # the lowest spam that must stay above
    lower = np.concatenate([ham[ham < bound], spam[spam < bound]])
    ham_cutoff = (bound + lower.max()) / 2 if lower.size else bound - 1.0
    ham_cutoff = min(ham_cutoff, spam_cutoff)
    # At most `allowed` messages strictly between the cutoffs: the ham cutoff no lower than
    # halfway between the (allowed+1)-th and the allowed-th highest score under the spam cutoff.
    allowed = math.floor(target_unsure * log_odds.size + 1e-9)
    under = np.sort(log_odds[log_odds < spam_cutoff])
    if under.size > allowed:
        above = under[under.size - allowed] if allowed else spam_cutoff
        ham_cutoff = max(ham_cutoff, (under[under.size - 1 - allowed] + above) / 2)
    return {"spam": float(spam_cutoff), "ham": float(ham_cutoff),
            **rates(log_odds, is_spam, spam_cutoff, ham_cutoff)}


def suspects(log_odds: np.ndarray, is_spam: np.ndarray) -> np.ndarray:
    """Which messages (bool array) their out-of-fold ``log_odds`` place among the other class:
    likely mis-sorted. A mis-sorted spam scores as spam do, so half of such ham lie at or above
    the spam's median score and three quarters at or above its lower quartile; a genuine ham
    that looks like spam lies in a tail that thins out towards the spam. So of the ham at or
    above the spam's lower quartile (k25), as many of the highest-scoring as the ones at or
    above the median (k50) imply, min(k25, 1.5·k50), are suspects; the same for spam against
    the ham's scores. Clean SpamAssassin (70 % parts of seeds 0 and 1): none; with 1 % of the
    labels swapped, 32 and 31 of the 39 swapped messages, and no other. Classes
    of fewer than :data:`SUSPECT_MIN` messages: none (their quartiles say little); nor where
    more than :data:`SUSPECT_SHARE` of a class would be (then the model cannot tell the classes
    apart, or the labels say little: either way no few messages are to blame)."""
    log_odds = np.asarray(log_odds, dtype=float)
    is_spam = np.asarray(is_spam, dtype=bool)
    found = np.zeros(log_odds.size, dtype=bool)
    if min(is_spam.sum(), (~is_spam).sum()) < SUSPECT_MIN:
        return found
    for label, sign in ((False, 1.0), (True, -1.0)):   # ham scored high, spam scored low
        mine = np.flatnonzero(is_spam == label)
        score, other = sign * log_odds[mine], sign * log_odds[is_spam != label]
        k50 = int((score >= np.median(other)).sum())
        k25 = int((score >= np.percentile(other, 25)).sum())
        n = min(k25, round(1.5 * k50))
        if n <= SUSPECT_SHARE * mine.size:   # more: classes the model cannot tell apart
            found[mine[np.argsort(-score, kind="stable")[:n]]] = True
    return found


def _tail(ham: np.ndarray, target: float) -> float:
    """The score a new ham passes ``target`` of the time, extrapolated from the tail of the
    scores ``ham`` (ascending), where too few of them read it off (:func:`extrapolated`): peaks
    over a threshold. The m highest (a tenth of them, at least 5) exceed the next, u, by amounts
    a generalised Pareto distribution fits, its shape ξ by probability-weighted moments (Hosking
    & Wallis, 1987) kept between 0 (the exponential) and :data:`TAIL_SHAPE_MAX`, its scale
    σ = β(1 − ξ) from their mean β: a new ham passes u + x with probability
    (m/(n + 1))·(1 + ξx/σ)^(−1/ξ) (at ξ = 0, e^(−x/β)), and the cutoff is where that is
    ``target``. −inf for fewer than two scores."""
    n = ham.size
    m = min(max(5, math.ceil(0.1 * n)), n - 1)
    if m < 1:
        return -math.inf
    u = ham[n - 1 - m]
    excess = ham[n - m:] - u                      # ascending, as the scores are
    beta = float(np.mean(excess))
    weighted = float(np.mean((1 - (np.arange(1, m + 1) - 0.35) / m) * excess))
    shape = 2 - beta / (beta - 2 * weighted) if beta > 2 * weighted else 0.0
    shape = min(max(shape, 0.0), TAIL_SHAPE_MAX)
    share = target * (n + 1) / m                  # of the m, the share a new ham may pass
    if shape == 0:
        return u + beta * math.log(1 / share)
    return u + beta * (1 - shape) / shape * (share ** -shape - 1)


def _allowed(target: float, n: int) -> int:
    """How many of n scores may lie beyond a cutoff so that a new message of their class does
    at most ``target`` of the time. Of n + 1 exchangeable scores, the new one is beyond the
    (a + 1)-th most extreme of the others with probability (a + 1)/(n + 1): a + 1 ≤ target ·
    (n + 1). (Allowing target · n of them, as the rates on the n themselves suggest, gave 0.12 %
    of new ham called spam for a target of 0.1 %.) 0 where even that is more than the target."""
    return max(math.floor(target * (n + 1) + 1e-9) - 1, 0)


def extrapolated(ham: int, target_fpr: float) -> bool:
    """Whether a spam cutoff for ``target_fpr`` over the held-out scores of ``ham`` training
    ham is extrapolated from their tail (:func:`_tail`; never below the one read off their
    scores): where the cutoff they give rests on their single highest score, fewer than
    2/target − 1 of them (1,999 for 0.1 %). With fewer than 1/target − 1 (999) no score of
    theirs is one a new ham passes that seldom, (0 + 1)/(n + 1) being more, and their own rates
    (no ham called spam, as a rule) do not show it; up to 1,999, the highest of them is, but
    one newsletter more or less among them moves it.

    SpamAssassin samples (scripts/bench_spam.py --sample, seeds 0–11, the rest of the corpus
    scored), of the other ham called spam and of the spam not caught: 100 training ham 0.14 %,
    44 % (an exponential tail: 0.31 %, 31 %; the cutoff above them all, seeds 0–5: 1.06 %,
    15 %); 300 ham 0.11 %, 23 % (0.24 %, 17 %; 0.67 %, 7 %); 1,000 ham 0.09 %, 13 % (0.13 %,
    11 %; read off, 0.18 %, 9 %); 1,500 ham 0.07 %, 10 % (0.10 %, 8 %; read off 0.13 %, 8 %).
    bogofilter on the same messages (seeds 0–5): 0.10 / 0.08 / 0.07 % of ham called spam at
    100 / 300 / 1,000 ham, 42 / 26 / 16 % of the spam not caught, 27 / 15 / 7 % of all
    messages unsure. 2,000 ham and more are read off."""
    return 0 < target_fpr and ham < ham_needed(target_fpr)


def ham_needed(target_fpr: float) -> int:
    """The fewest held-out ham a spam cutoff for ``target_fpr`` (> 0) is read off rather than
    extrapolated: the least n with (1 + 1)/(n + 1) ≤ target, so that one ham may score above
    it (:func:`_allowed`), 1,999 for 0.1 %."""
    return math.ceil(2 / target_fpr - 1 - 1e-9)


def rates(log_odds: np.ndarray, is_spam: np.ndarray, spam_cutoff: float,
          ham_cutoff: float) -> dict[str, Any]:
    """FPR (ham called spam), FNR (spam called ham), the unsure shares and "spam not caught"
    (FNR + spam unsure) of a spam/ham/unsure decision at the given cutoffs."""
    is_spam = np.asarray(is_spam, dtype=bool)
    spam_said = log_odds >= spam_cutoff
    ham_said = ~spam_said & (log_odds <= ham_cutoff)
    unsure = ~spam_said & ~ham_said
    n_spam, n_ham = max(int(is_spam.sum()), 1), max(int((~is_spam).sum()), 1)
    fnr = float((ham_said & is_spam).sum() / n_spam)
    spam_unsure = float((unsure & is_spam).sum() / n_spam)
    return {"fpr": float((spam_said & ~is_spam).sum() / n_ham), "fnr": fnr,
            "unsure": float(unsure.mean()), "spam_unsure": spam_unsure,
            "ham_unsure": float((unsure & ~is_spam).sum() / n_ham),
            "spam_not_caught": fnr + spam_unsure, "messages": int(is_spam.size),
            "spam_messages": int(is_spam.sum())}


# Documents of each class below which no decision threshold is learned (argmax decides): the
# lecture notes' worked examples, a handful of documents, have no folds to learn one from.
THRESHOLD_MIN = 20


def accuracy_threshold(log_odds: np.ndarray, positive: np.ndarray) -> float:
    """The log-odds at or above which a document is called positive that makes the fewest
    mistakes on ``log_odds`` (out-of-fold scores, float array) of documents whose class is
    ``positive`` (bool array): of the thresholds halfway between neighbouring scores (and one
    beyond each end), the one nearest 0 (the most probable class) among those with fewest
    mistakes, so that a tie keeps the model's own decision."""
    log_odds = np.asarray(log_odds, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    if log_odds.shape != positive.shape or not log_odds.size or not np.isfinite(log_odds).all():
        raise ValueError("need one finite log-odds per document")
    order = np.argsort(log_odds, kind="stable")
    scores, ranked = log_odds[order], positive[order]
    # Threshold i lies below scores[i] (i = n: above them all): positives below it are called
    # negative, negatives at or above it positive. Equal scores fall on one side together.
    candidates = np.concatenate([[scores[0] - 1.0], (scores[1:] + scores[:-1]) / 2,
                                 [scores[-1] + 1.0]])
    mistakes = (np.concatenate([[0], np.cumsum(ranked)])
                + (~ranked).sum() - np.concatenate([[0], np.cumsum(~ranked)]))
    valid = np.concatenate([[True], scores[1:] > scores[:-1], [True]])
    best = np.flatnonzero(valid & (mistakes == mistakes[valid].min()))
    return float(candidates[best[np.argmin(np.abs(candidates[best]))]])
