"""out-of-fold spam log-odds → the ham and spam cutoffs a two-class mail model decides by.

A cutoff fixed on P(spam|x) fails twice: the probability is 0 or 1 for most messages, and how
far the log-odds of a spam and a ham spread depends on the corpus. So the cutoffs are learned
from the training messages themselves: K-fold cross-validation gives each one the log-odds of a
model that never saw it, and on those scores

* the spam cutoff is the lowest one that a new ham passes at most ``target_fpr`` of the time,
  with 95 % confidence: a one-sided bound on the held-out ham's exceedances, not their share
  (:func:`ham_allowed`), so that the rate ``info`` promises holds on new mail; where too few
  ham are held out for any bound, the 95 % bootstrap bound of their tail's extrapolation
  (:func:`_tail_bound`), for 50 ham or fewer no lower than the highest held-out spam. A
  message is spam when its log-odds are at or above it;
* the ham cutoff is the highest one, not above the spam cutoff, that a new spam falls under at
  most ``target_fnr`` of the time (ham when at or below it), raised as far as needed
  to leave at most ``target_unsure`` of all messages between the two;
* a young model's (fewer ham than :func:`ham_needed`) ham cutoff is sized on the classes
  instead (unless ``target_unsure`` is 0): halfway between the score under a share of the ham,
  a fifth at :data:`YOUNG_HAM` ham and narrowing as 1/√n (:func:`young_unsure`), and the one
  over a quarter of that share of the spam (:func:`young_band`), so that spam its extrapolated spam
  cutoff misses is unsure, not ham, and the user trains on it (bogofilter's workflow);
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

import copy
import math
from typing import Any, Iterable, Sequence

import numpy as np

from ..folds import usable_folds
from ..nb.discrete import DiscreteNB
from ..nb.on_error import take_rows, trained_on_error
from ..nb.sparse import CSR, row_sums
from ..text.features import check_lengths, encode_labels, noting_digests, text_iterable, weigh
from ..text.vocabulary import relabel

# Defaults: at most one ham in a thousand called spam (bogofilter's and SpamBayes' aim), at
# most one spam in a hundred delivered as ham; what lies between is unsure, at most one message
# in fifty (2 %, under the 3 % a user tolerates, leaving room for a new corpus to differ).
TARGET_FPR = 0.001
TARGET_FNR = 0.01
TARGET_UNSURE = 0.02
FOLDS = 5
# The confidence with which the spam cutoff keeps target_fpr on new ham.
CONFIDENCE = 0.95
# A young model's unsure band: at YOUNG_HAM held-out ham, YOUNG_UNSURE of them lie above its
# ham cutoff. 30 + 30 SpamAssassin messages (tested on 2,796 newer ones) left 41 % of the new
# spam in spam or unsure with the 2 % band; the ham cutoff at the new ham's 75th percentile
# would have left 99 % (docs/design/spam.md).
YOUNG_HAM = 30
YOUNG_UNSURE = 0.2
# Its ham cutoff lies YOUNG_GAP of the way from the ham's edge (YOUNG_UNSURE of them above) to
# the spam's (YOUNG_SPAM times that share of them below), where that lies higher (young_band).
YOUNG_GAP = 0.5
YOUNG_SPAM = 0.25
# Bootstrap resamples of the held-out ham that bound the extrapolated spam cutoff, and the
# seed that makes the cutoffs a function of the scores.
TAIL_RESAMPLES = 200
TAIL_SEED = 0
# The heaviest tail the spam cutoff is extrapolated with (_tail), a generalised Pareto shape: at
# 0.5 the score 0.1 % of new ham pass lies about twice as far above u (the score under the
# highest tenth of the held-out ham's) as an exponential tail puts it.
TAIL_SHAPE_MAX = 0.5
# The fewest of the highest held-out ham the tail is fitted to (_tail).
TAIL_LEAST = 5
# Messages of each class below which no message is taken for mis-sorted, and the share of a
# class above which none is (a mail user's folders are not that far off).
SUSPECT_MIN = 20
SUSPECT_SHARE = 0.05


def choose_cutoffs(log_odds: np.ndarray, is_spam: np.ndarray, target_fpr: float = TARGET_FPR,
                   target_fnr: float = TARGET_FNR, target_unsure: float = TARGET_UNSURE,
                   as_new: np.ndarray | None = None) -> dict[str, Any]:
    """Spam and ham cutoffs on ``log_odds`` (float array of shape (n,)) for messages whose class
    is ``is_spam`` (bool array), and the rates they give there. ``as_new``, where given: the
    same messages' spam log-odds taken as new ones are (:func:`out_of_fold`), as the trained
    model will score new mail; a young model's ham cutoff is read off them
    (:func:`young_band`), and where its spam cutoff is extrapolated from the fewest scores
    (:data:`TAIL_LEAST`, 50 ham or fewer) it is the higher of their tail's bound and
    ``log_odds``' (their own terms, known to a fold's model without counts, pull the held-out
    ham's scores together; with more ham the higher bound cost more spam than it spared ham:
    docs/design/spam.md), and no lower than the highest held-out spam's (as new, where given;
    unless ``target_unsure`` is 0).

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
    # The spam cutoff: above all but the `allowed` highest-scoring ham, and where no number
    # of them is a bound, above the tail's.
    allowed = ham_allowed(target_fpr, ham.size)
    bound = ham[ham.size - 1 - allowed]           # the highest ham that must stay below
    higher = np.concatenate([ham[ham > bound], spam[spam > bound]])
    spam_cutoff = (bound + higher.min()) / 2 if higher.size else bound + 1.0
    if not bounded(ham.size, target_fpr):
        spam_cutoff = max(spam_cutoff, _tail_bound(ham, target_fpr))
    new = log_odds if as_new is None else np.asarray(as_new, dtype=float)
    if as_new is not None and _tail_size(ham.size) == TAIL_LEAST:
        # A tail of the fewest scores: as new mail's too, whichever bound is higher.
        spam_cutoff = max(spam_cutoff, _tail_bound(np.sort(new[~is_spam]), target_fpr))
    if _tail_size(ham.size) == TAIL_LEAST and extrapolated(ham.size, target_fpr) \
            and target_unsure > 0:
        # Nor below any of its spam: thirty ham cannot say how heavy their tail is, and newer
        # ham drift up; the band keeps the spam under it flagged, unsure (young_band;
        # bench.young, docs/design/spam.md).
        spam_cutoff = max(spam_cutoff, float(new[is_spam].max()))
    if extrapolated(ham.size, target_fpr) and target_unsure > 0:
        # Young: the band is sized on both classes (young_band), not narrowed by
        # target_unsure (0 asks for no band at all).
        ham_cutoff = min(young_band(np.sort(new[~is_spam]), np.sort(new[is_spam])), spam_cutoff)
        return {"spam": float(spam_cutoff), "ham": float(ham_cutoff),
                **rates(log_odds, is_spam, spam_cutoff, ham_cutoff)}
    # The ham cutoff: below all but the `allowed` lowest-scoring spam, and not above the spam one.
    allowed = fnr_allowed(target_fnr, spam.size)
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
    the ham's scores (on a clean corpus none; with labels swapped, most of them and no other
    message: docs/design/spam.md). Classes of fewer than :data:`SUSPECT_MIN` messages: none (their quartiles say little); nor where
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
    over a threshold. The m highest (:func:`_tail_size`) exceed the next, u, by amounts
    a generalised Pareto distribution fits, its shape ξ by probability-weighted moments (Hosking
    & Wallis, 1987) kept between 0 (the exponential) and :data:`TAIL_SHAPE_MAX`, its scale
    σ = β(1 − ξ) from their mean β: a new ham passes u + x with probability
    (m/(n + 1))·(1 + ξx/σ)^(−1/ξ) (at ξ = 0, e^(−x/β)), and the cutoff is where that is
    ``target``. −inf for fewer than two scores."""
    n = ham.size
    m = min(_tail_size(n), n - 1)
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


def _tail_size(n: int) -> int:
    """How many of n held-out ham scores :func:`_tail` fits: a tenth, at least :data:`TAIL_LEAST`."""
    return max(TAIL_LEAST, math.ceil(0.1 * n))


def _tail_bound(ham: np.ndarray, target: float) -> float:
    """An upper 95 % (:data:`CONFIDENCE`) bound of :func:`_tail`'s cutoff for the held-out ham
    scores ``ham`` (ascending): its quantile over :data:`TAIL_RESAMPLES` bootstrap resamples
    of them. The tail of a few hundred scores, or thirty, is one draw of many: a cutoff fitted
    to it is under the true one about half of the time, and then a new ham passes it more
    often than ``target`` (on synthetic scores whose rate is known, tests/test_cutoffs.py)."""
    n = ham.size
    if n < 2:
        return _tail(ham, target)
    rng = np.random.default_rng(TAIL_SEED)
    drawn = np.sort(ham[rng.integers(0, n, (TAIL_RESAMPLES, n))], axis=1)
    return float(np.quantile([_tail(row, target) for row in drawn], CONFIDENCE))


def ham_allowed(target: float, n: int) -> int:
    """How many of n held-out ham scores may lie at or above the spam cutoff so that, with 95 %
    (:data:`CONFIDENCE`) confidence, a new ham does at most ``target`` of the time: the largest
    a with P(Binomial(n, target) ≤ a) ≤ 0.05. The cutoff keeps the target when more than a of
    the n lie above the score a new ham passes ``target`` of the time, which happens with
    probability P(Binomial(n, target) > a); it is the Clopper–Pearson one-sided bound on a/n
    kept at or under the target (a/n itself, a point estimate, promised rates new mail broke:
    docs/design/spam.md). 0 where no number is a bound (:func:`bounded`)."""
    return max(_bounded_count(target, n), 0)


def _bounded_count(target: float, n: int) -> int:
    """:func:`ham_allowed`, −1 where none is a bound; for ``target`` 0, 0."""
    if target <= 0:
        return 0
    from scipy.special import bdtr   # P(Binomial(n, p) ≤ a); here, where cutoffs are learned
    low, high = -1, n                # bdtr(low) ≤ 0.05 (by convention at −1), and the largest
    while low < high:                # such a lies in [low, high]
        middle = (low + high + 1) // 2
        if bdtr(middle, n, target) <= 1 - CONFIDENCE:
            low = middle
        else:
            high = middle - 1
    return low


def bounded(ham: int, target_fpr: float) -> bool:
    """Whether ``ham`` held-out ham bound the spam cutoff for ``target_fpr`` by their own
    scores (:func:`ham_allowed`): at least ln 0.05 / ln(1 − target) of them (2,995 for
    0.1 %), else the cutoff is their tail's bound (:func:`_tail_bound`) where that is higher."""
    return _bounded_count(target_fpr, ham) >= 0


def ham_bounding(target_fpr: float) -> int:
    """The fewest held-out ham that bound the spam cutoff for ``target_fpr`` (> 0) by their own
    scores (:func:`bounded`): the least n with (1 − target)^n ≤ 0.05, 2,995 for 0.1 %."""
    return math.ceil(math.log(1 - CONFIDENCE) / math.log1p(-target_fpr) - 1e-9)


def young_unsure(ham: int) -> float:
    """The share of a young model's held-out ham left above its ham cutoff (unsure, or spam):
    :data:`YOUNG_UNSURE` at :data:`YOUNG_HAM` ham or fewer, narrowing as 1/√n, the rate at
    which their tail, and so the spam cutoff, is known better (2.5 % at 1,999)."""
    return YOUNG_UNSURE * math.sqrt(YOUNG_HAM / max(ham, YOUNG_HAM))


def young_band(ham: np.ndarray, spam: np.ndarray) -> float:
    """A young model's ham cutoff from held-out spam log-odds of ham and spam (ascending,
    scored as new mail is): :data:`YOUNG_GAP` (half) of the way from the score under the
    highest :func:`young_unsure` share of the ham to the one over the lowest
    :data:`YOUNG_SPAM` (a quarter) of that share of the spam (5 % at 30 ham), where the
    spam's lies higher; else the ham's. New mail drifts:
    SpamAssassin's newer ham score higher than the training folders' held-out ham and its
    newer spam lower, so a cutoff read off the ham alone left most of the newer ham unsure on
    some draws; halfway into the gap between the classes leaves room for both to move
    (measured in docs/design/spam.md, ``python -m bench.young``)."""
    share = young_unsure(ham.size)
    k = min(math.ceil(share * ham.size - 1e-9), ham.size)  # ham above
    cutoff = (ham[-k] + ham[-k - 1]) / 2 if k < ham.size else ham[0] - 1.0
    low = float(np.quantile(spam, share * YOUNG_SPAM))
    return cutoff + YOUNG_GAP * (low - cutoff) if low > cutoff else cutoff


def fnr_allowed(target: float, n: int) -> int:
    """How many of n spam scores may lie below the ham cutoff so that a new spam does at most
    ``target`` of the time. Of n + 1 exchangeable scores, the new one is below the
    (a + 1)-th lowest of the others with probability (a + 1)/(n + 1): a + 1 ≤ target ·
    (n + 1). 0 where even that is more than the target."""
    return max(math.floor(target * (n + 1) + 1e-9) - 1, 0)


def extrapolated(ham: int, target_fpr: float) -> bool:
    """Whether a model of ``ham`` training ham is young for ``target_fpr``: too few to read
    where a new ham scores that seldom off their scores, fewer than 2/target − 1 of them
    (1,999 for 0.1 %), so that its spam cutoff is extrapolated from their tail
    (:func:`_tail_bound`) and its unsure band sized on them (:func:`young_unsure`). With fewer
    than 1/target − 1 (999) no score of theirs is one a new ham passes that seldom,
    (0 + 1)/(n + 1) being more, and their own rates (no ham called spam, as a rule) do not show
    it; up to 1,999, the highest of them is, but one newsletter more or less among them moves
    it. (How the two fare on samples of SpamAssassin, beside bogofilter: docs/design/spam.md,
    ``python -m bench.spam --sample``.)"""
    return 0 < target_fpr and ham < ham_needed(target_fpr)


def ham_needed(target_fpr: float) -> int:
    """The fewest held-out ham a spam cutoff for ``target_fpr`` (> 0) is read off rather than
    extrapolated: the least n with (1 + 1)/(n + 1) ≤ target, so that one ham may score above
    it (:func:`ham_allowed`), 1,999 for 0.1 %."""
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
# textbooks' worked examples, a handful of documents, have no folds to learn one from.
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


# Rows scored at a time by the left-out scores (left_out): their temporaries, some ten arrays
# of the rows' entries, are a block's, not a 20,000-message sample's (SpamAssassin ten times
# over: 240 → 406 MiB peak RSS when all at once).
LEFT_OUT_ROWS = 1000


def two_class_log_odds(model: DiscreteNB, X: CSR) -> np.ndarray:
    """ln P(second class|x) − ln P(first class|x) of each row of X, for a two-class model."""
    log_proba = model.predict_log_proba(X)
    return log_proba[:, 1] - log_proba[:, 0]


def misplaced(cutoffs: dict[str, Any]) -> float:
    """How many messages learned cutoffs misplace on the out-of-fold scores: spam or ham called
    the other, or unsure."""
    n, n_spam = cutoffs["messages"], cutoffs["spam_messages"]
    # A message left out as mis-sorted is one its out-of-fold score misplaces too.
    return (cutoffs["fpr"] * (n - n_spam) + cutoffs["fnr"] * n_spam + cutoffs["unsure"] * n
            + cutoffs.get("suspects", 0))


# -- the cross-validations of a TextClassifier's fit --------------------------------------------
# Functions of a classifier's settings (spam_class, the targets, cutoff_folds, keep_suspects,
# margin, max_passes, n_jobs, model, alpha, the priors, tf, norm, hash_bits) and of its
# new_model() and on_error_model(), over the counts fit made.

def _weigh(classifier: Any, X: CSR) -> CSR:
    """X weighed as the classifier weighs documents (:func:`textnb.text.features.weigh`)."""
    return weigh(X, classifier.model, classifier.tf, classifier.norm)


def choose_training(classifier: Any, X: CSR, raw: CSR | None, labels: list, digests: np.ndarray
                    ) -> tuple[str, tuple]:
    """(training, (cutoffs, suspect, as_new)): the training to fit mail by and what the
    cross-validation of its cutoffs gave (:func:`learn_cutoffs`). "auto" trains on error
    where the ham are too few to read the spam cutoff off their scores (it is extrapolated:
    the two trainings' out-of-fold estimates are then too noisy to choose by, and the one
    that looked better had been lucky: docs/design/spam.md); else it keeps the one whose
    out-of-fold decisions misplace fewer messages, full training on a tie or with too few
    documents to cross-validate. Training on error's held-out rows are scored as new documents too
    (as_new, for the decision threshold); full training's threshold has scores of its own
    (:func:`learn_threshold`)."""
    def learn(kind: str, raw: CSR | None) -> tuple:
        return learn_cutoffs(classifier, X, labels,
                             fit=None if kind == "full" else classifier.on_error_model,
                             raw=None if kind == "full" else raw, groups=digests)

    if classifier.training != "auto":
        return classifier.training, learn(classifier.training, raw)
    walked = learn("on-error", raw)
    ham = sum(str(label) != classifier.spam_class for label in labels)
    if (walked[0] is not None and extrapolated(ham, classifier.target_fpr)
            and min(ham, len(labels) - ham) >= SUSPECT_MIN):
        return "on-error", walked
    full = learn("full", None)
    if walked[0] is not None and full[0] is not None \
            and misplaced(walked[0]) < misplaced(full[0]):
        return "on-error", walked
    return "full", full


def learn_cutoffs(classifier: Any, X: CSR, labels: list, fit=None, raw: CSR | None = None,
                   whole: DiscreteNB | None = None, groups: np.ndarray | None = None,
                   weight: np.ndarray | None = None
                   ) -> tuple[dict[str, Any] | None, np.ndarray | None, np.ndarray | None]:
    """(cutoffs, suspect, as_new): the spam and ham cutoffs on the spam log-odds, chosen on
    out-of-fold scores of the weighted counts X (:func:`textnb.decision.cutoffs.choose_cutoffs`),
    with their estimated rates and how many messages were left out as likely mis-sorted
    (``suspects``; ``suspect`` says which, :func:`textnb.decision.cutoffs.suspects`), and the
    out-of-fold log-odds scored as new documents are, given the raw counts
    (:func:`out_of_fold`); (None, None, None) without a spam class among exactly two
    classes, or with too few messages.

    The folds share the vocabulary of all of X, but each fold's model holds only the counts
    of the other folds: a held-out document's terms are known, its counts are not.
    ``fit(X, y)`` gives a fold's model (default: the counts of X, or of the model
    ``whole``, less the held part's, :func:`out_of_fold`); the messages of a group (their
    digests: copies) share a fold.
    """
    y = np.array(labels, dtype=str)
    if not classifier.learns_cutoffs(labels):
        return None, None, None
    is_spam = y == classifier.spam_class
    folds = usable_folds(y, classifier.cutoff_folds, groups)
    if folds is None:
        return None, None, None
    k = int(folds.max()) + 1
    log_odds, as_new = out_of_fold(classifier, X, raw, y, folds, fit, whole, weight)
    # The log-odds of the spam class (as_new, returned, stays in the classes' order).
    sign = -1.0 if np.unique(y)[0] == classifier.spam_class else 1.0
    log_odds = sign * log_odds
    new_spam = None if as_new is None else sign * as_new
    suspect = (np.zeros(y.size, dtype=bool) if classifier.keep_suspects
               else suspects(log_odds, is_spam))
    chosen = choose_cutoffs(log_odds[~suspect], is_spam[~suspect], classifier.target_fpr,
                            classifier.target_fnr, classifier.target_unsure,
                            None if new_spam is None else new_spam[~suspect])
    return {"spam_class": classifier.spam_class, **chosen, "folds": k,
            "suspects": int(suspect.sum()), "target_fpr": classifier.target_fpr,
            "target_fnr": classifier.target_fnr, "target_unsure": classifier.target_unsure}, suspect, as_new


def out_of_fold(classifier: Any, X: CSR, raw: CSR | None, y: np.ndarray, folds: np.ndarray, fit=None,
                 whole: DiscreteNB | None = None,
                 weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """(log_odds, as_new): the log-odds of the second class over the first of each row of
    X (weighted counts, labelled ``y``, two classes) by the model of the other folds
    (``folds``, each row's number) — ``fit(X, y)``, or the counts of X (or of the model
    ``whole``, which learned X's rows among others, each ``weight`` times) less the held
    fold's — over every term of X; and, given the rows' ``raw`` counts, the same models'
    log-odds of the rows taken as a new document is, its counts cut to the terms the model
    has counts of and then weighted (None without ``raw``): for full training, the
    log-odds a model trained on the other folds alone gives them (to rounding); training
    on error walks the other folds over every term of X, which moves them a little (under
    0.05 in tests/test_threshold.py)."""
    log_odds = np.empty(y.size)
    as_new = None if raw is None else np.empty(y.size)
    # Without `fit`, a fold's model is the whole's counts less its held part's: X counted
    # once and a fifth of it taken out k times, rather than four fifths counted k times.
    if fit is None and whole is None:
        whole = classifier.new_model().fit(X, y)
    k = int(folds.max()) + 1
    # Training on error's folds walked together: a fold's model scored while the next walk.
    walked = (trained_on_error(X, y, [np.flatnonzero(folds != fold) for fold in range(k)],
                               classifier.new_model, classifier.margin, classifier.max_passes,
                               n_jobs=classifier.n_jobs) if fit == classifier.on_error_model else None)
    for fold in range(k):
        held = folds == fold
        X_held = take_rows(X, held)
        model = (next(walked)[0] if walked is not None
                 else fit(take_rows(X, ~held), y[~held]) if fit is not None
                 else copy.deepcopy(whole).unlearn(X_held, y[held], sample_weight=(
                     None if weight is None else weight[held])))
        log_odds[held] = two_class_log_odds(model, X_held)
        if raw is not None:  # the fold's model is its own: cut to its terms in place
            as_new[held] = two_class_log_odds(model, new_rows(classifier, model, take_rows(raw, held),
                                                         cut=fit is not None))
    return log_odds, as_new


def new_rows(classifier: Any, model: DiscreteNB, raw: CSR, cut: bool) -> CSR:
    """The rows of raw counts ``raw`` as :meth:`predict` weighs a new document's, for
    ``model``, whose terms without counts it deletes: cut to the terms it has counts of,
    then weighted (the unknown words left out before a row is made unit length). A hashed
    vocabulary keeps every column after full training, so there the rows are only
    weighted, unless ``cut`` (training on error keeps the learned documents' columns)."""
    if classifier.hash_bits is not None and not cut:
        return _weigh(classifier, raw)
    used = model.feature_count_.sum(axis=0) > 0
    column = np.where(used, np.cumsum(used) - 1, -1)
    model.delete_terms(np.flatnonzero(~used))
    return _weigh(classifier, relabel(raw, column, int(used.sum())))


def rated(classifier: Any, cutoffs: dict[str, Any], scores: np.ndarray | None, labels: Sequence,
           how: str) -> dict[str, Any]:
    """``cutoffs`` with the rates they give on ``scores`` (the classes in the order of their
    names; None: as they were), held-out scores that stand for new mail's: for full training
    each message's by a model of the others ("left out", :func:`left_out`), for training
    on error the folds' models' of their held-out messages taken as new ones ("as new",
    :func:`out_of_fold`). The folds' own scores choose the cutoffs, but they are no
    estimate of what the cutoffs do: a fold's model knows a held-out message's own terms
    without counts, each adding log((N_ham + α|V|)/(N_spam + α|V|)) to its log-odds, where
    the trained model ignores a new message's unknown terms, and they promise far fewer spam
    not caught than new mail shows (docs/design/spam.md). The spam cutoff they set stays, for
    it kept new ham called spam under its target, where cutoffs read off the left-out scores
    did not."""
    if scores is None:
        return cutoffs
    y = np.asarray(labels, dtype=str)
    spam = -scores if np.unique(y)[0] == classifier.spam_class else scores
    return {**cutoffs, **rates(spam, y == classifier.spam_class, cutoffs["spam"],
                                        cutoffs["ham"]), "rated": how}


def left_out(classifier: Any, raw: CSR, X: CSR, labels: Sequence, groups: np.ndarray,
              whole: DiscreteNB | None = None,
              weight: np.ndarray | None = None) -> np.ndarray | None:
    """The log-odds of the second class over the first (by their names, as
    :func:`out_of_fold`'s) of each row of raw counts ``raw`` (``X``: weighted; ``labels``,
    two classes) by a model of the other rows — or of ``whole``, which learned each row
    ``weight`` times among others — less its group's (``groups``: copies, equal rows), the
    row taken as :meth:`predict` takes a new text (cut to the terms the rest hold, then
    weighted). Exact, in passes over X's entries, for two-class multinomial or complement
    NB, whose log-odds are the same; with 1 the second class and 0 the first:

        Σ_k x'_k [log(n'_k1 + α) − log(n'_k0 + α)]
            + (Σ_k x'_k)·log((N'_0 + α|V'|) / (N'_1 + α|V'|)) + log P'(1)/P'(0)

    with n'_kc class c's counts of term k less the group's (m_c times the row: a group's
    rows are equal), N'_c their sum, |V'| the terms the rest hold, x' the row cut to them
    and weighted, and P' the prior (given, learned from the rest, or uniform). None for the
    Bernoulli model, whose absent terms score too."""
    if classifier.model == "bernoulli":
        return None
    y = np.asarray(labels, dtype=str)
    second = np.unique(y)[1]
    pos = y == second
    if whole is None:  # the counts of X's rows, each once
        whole = classifier.new_model().fit(X, list(labels))
    # Its column in the model's classes (sorted as given, not as names) and the prior's.
    s = [str(c) for c in whole.classes_].index(second)
    n1, n0 = whole.feature_count_[s], whole.feature_count_[1 - s]
    docs1, docs0 = whole.class_count_[s], whole.class_count_[1 - s]
    w = np.ones(y.size) if weight is None else weight
    n_docs = X.shape[0]
    blocks = [np.arange(start, min(start + LEFT_OUT_ROWS, n_docs))
              for start in range(0, n_docs, LEFT_OUT_ROWS)]
    _, key = np.unique(groups, return_inverse=True)
    m1 = np.bincount(key, weights=w * pos)[key]
    m0 = np.bincount(key, weights=w * ~pos)[key]
    held, alpha = np.count_nonzero(n0 + n1), classifier.alpha
    log_odds = np.empty(n_docs)
    for block in blocks:
        part, counts = take_rows(X, block), take_rows(raw, block)
        cols, at = part.indices, np.repeat(block, np.diff(part.indptr))
        c1 = np.maximum(n1[cols] - m1[at] * part.data, 0.0)
        c0 = np.maximum(n0[cols] - m0[at] * part.data, 0.0)
        known = c0 + c1 > 1e-9 * (n0[cols] + n1[cols])  # rounding: a term only the group holds
        terms = held - row_sums(~known, part.indptr)                            # |V'|
        indptr = np.concatenate([[0], np.cumsum(row_sums(known, part.indptr))]).astype(
            part.indptr.dtype)
        cut = _weigh(classifier, CSR(counts.data[known], counts.indices[known], indptr, counts.shape))
        mass = row_sums(part.data, part.indptr)                               # Σ_k x_k
        total0 = np.maximum(n0.sum() - m0[block] * mass, 0.0) + alpha * terms
        total1 = np.maximum(n1.sum() - m1[block] * mass, 0.0) + alpha * terms
        cut_mass = row_sums(cut.data, indptr)
        with np.errstate(divide="ignore", invalid="ignore"):  # |V'| = 0: nothing to weigh
            log_ratio = np.where(cut_mass > 0, np.log(total0) - np.log(total1), 0.0)
        log_odds[block] = (
            row_sums(cut.data * (np.log(c1[known] + alpha) - np.log(c0[known] + alpha)), indptr)
            + cut_mass * log_ratio)
    if classifier.class_prior is not None:
        prior = np.asarray(classifier.class_prior, dtype=float)
        log_odds += np.log(prior[s]) - np.log(prior[1 - s])
    elif classifier.fit_prior:
        log_odds += np.log(docs1 - m1) - np.log(docs0 - m0)
    return log_odds


def learn_threshold(classifier: Any, X: CSR, raw: CSR | None, labels: list, training: str,
                     as_new: np.ndarray | None, whole: DiscreteNB | None = None,
                     groups: np.ndarray | None = None,
                     weight: np.ndarray | None = None) -> float | None:
    """``decision_threshold_``: the setting's number, or for "auto" and two classes of at
    least THRESHOLD_MIN documents each, the accuracy threshold
    (:func:`textnb.decision.cutoffs.accuracy_threshold`) on held-out log-odds taken as new
    documents' are: for full training each document's by a model of the others
    (:func:`left_out`, copies (``groups``) left out together, of the model ``whole`` if
    given), else ``as_new`` (the cutoffs' folds'), else those of folds of its own, copies
    together (:func:`out_of_fold`); None: the most probable class decides."""
    setting = classifier.decision_threshold
    if raw is None and setting is None:
        return None
    y = np.asarray(labels)
    classes, counts = np.unique(y, return_counts=True)  # in the model's order
    if raw is None:  # a number (_build checked it): it decides between two classes only
        return float(setting) if classes.size == 2 else None
    folds = usable_folds(y, FOLDS, groups)   # None: a class of one distinct document
    if classes.size != 2 or counts.min() < THRESHOLD_MIN or folds is None:
        return None
    named = (left_out(classifier, raw, X, labels, np.arange(y.size) if groups is None else groups,
                            whole, weight) if as_new is None and training == "full" else as_new)
    if named is not None:  # the classes in the order of their names
        as_new = -named if str(classes[1]) != np.unique(y.astype(str))[1] else named
    else:
        fit = None if training == "full" else classifier.on_error_model
        _, as_new = out_of_fold(classifier, X, raw, y, folds, fit, whole, weight)
    return accuracy_threshold(as_new, y == classes[1])


def learn_thresholds(classifier: Any, texts: Iterable[Any], y: Iterable) -> Any:
    """Learn what ``fit`` cross-validates for two classes — a mail model's spam and ham
    cutoffs, the decision threshold — for a model that counted every document it learned
    (``partial_fit``, or ``training="full"``), from some of them: ``texts`` labelled ``y``,
    each learned under its label (ValueError otherwise). The folds are ``fit``'s, but each
    fold's model is this one less the fold's texts, so a corpus too large to hold need not
    be: ``textnb train`` counts one as it reads it and learns these on a sample of it, read
    again. The texts the out-of-fold scores place among the other class are taken out of a
    mail model, as ``fit`` leaves them out (``suspects_`` numbers them among ``texts``).

    ``texts`` may be an iterator, read once; ``y`` is read after it."""
    classifier._check_fitted()
    if getattr(classifier, "on_error_", None) is not None:
        raise ValueError("learn_thresholds needs a model that counted every document; this "
                         "one was trained on error")
    found: list[np.ndarray] = []
    raw = classifier.vocabulary_.count_parts(
        noting_digests(classifier._count_stream(text_iterable(texts)), found))
    labels = list(y)
    check_lengths(range(raw.shape[0]), labels)
    if len(classifier.classes_) != 2 or set(map(str, labels)) != set(map(str, classifier.classes_)):
        raise ValueError("learning thresholds needs a two-class model and texts of both "
                         "its classes")
    digests = np.concatenate(found)
    weight, codes = copies_learned(classifier, digests, labels)
    counts, X = raw, classifier._weigh(raw)
    raw = counts if classifier.decision_threshold == "auto" else None
    # None without a spam class, or, as fit learns none, for fewer than two texts of a class.
    classifier.cutoffs_, suspect, _ = learn_cutoffs(classifier, X, labels, whole=classifier.model_,
                                                    groups=digests, weight=weight)
    classifier.suspects_ = np.empty(0, int)
    if classifier.cutoffs_:
        classifier.cutoffs_.update(training="full", sampled_from=int(classifier.digests_.size))
        classifier.suspects_ = np.flatnonzero(suspect)
        if classifier.suspects_.size:  # out of the model, every copy
            classifier.model_.unlearn(take_rows(X, suspect),
                                np.array(labels, dtype=object)[suspect].tolist(),
                                sample_weight=weight[suspect])
            gone = np.zeros(classifier.digests_.size, dtype=bool)
            for code in np.unique(codes[suspect]):
                gone |= (classifier._digest_codes == code) & np.isin(
                    classifier.digests_, digests[suspect & (codes == code)])
            classifier._learned(classifier.digests_[~gone], classifier._digest_names,
                          classifier.digest_weights_[~gone], codes=classifier._digest_codes[~gone])
            keep = ~suspect
            X, labels = take_rows(X, keep), np.array(labels, dtype=object)[keep].tolist()
            digests, weight, counts = digests[keep], weight[keep], take_rows(counts, keep)
            raw = None if raw is None else counts
    scores = (left_out(classifier, counts, X, labels, digests, classifier.model_, weight)
                if classifier.cutoffs_ or raw is not None else None)
    if classifier.cutoffs_:
        classifier.cutoffs_ = rated(classifier, classifier.cutoffs_, scores, labels, "left out")
    classifier.decision_threshold_ = learn_threshold(classifier, X, raw, labels, "full", scores,
                                                     classifier.model_, digests, weight)
    return classifier


def copies_learned(classifier: Any, digests: np.ndarray, labels: list) -> tuple[np.ndarray, np.ndarray]:
    """(weight, codes) of the documents of these digests and labels: the copies of each
    the model learned under its label over its copies among them, the times each must be
    taken out of the model to take every learned copy out with it (copies share a fold),
    and each label's number among ``_digest_names``. ValueError for a document the model
    never learned under its label."""
    names, codes = encode_labels(labels, classifier._digest_names.tolist())
    weight = np.empty(digests.size)
    for code in np.unique(codes):
        mine = codes == code
        learned, times = np.unique(classifier.digests_[classifier._digest_codes == code],
                                   return_counts=True)
        at = np.minimum(np.searchsorted(learned, digests[mine]), max(learned.size - 1, 0))
        if not learned.size or (learned[at] != digests[mine]).any():
            raise ValueError(f"a text labelled {names[code]!r} was not learned as one")
        _, here, copies = np.unique(digests[mine], return_inverse=True, return_counts=True)
        weight[mine] = times[at] / copies[here.ravel()]
    return weight, codes
