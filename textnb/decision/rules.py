"""log P(c|x) of one document → its decision: label, probability, log-odds, spam status.

Shared by ``textnb classify`` and ``textnb filter``, and free of numpy, so that the commands
procmail runs once per message (textnb/quick.py) decide exactly as the full ones do.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing costs a mail filter's start-up 4 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# Cutoffs for a model that learned none (an old file, one built by `learn` alone): on P(spam|x)
# as bogofilter's default spam_cutoff/ham_cutoff (its tri-state mode), applied as log-odds
# (logit 0.99 = +4.595, logit 0.45 = −0.201), which give the same decisions without the
# rounding of a probability saturated at 1. The ham cutoff sets what a user training on error
# sees unsure and so learns: 0.5 ranked worse online (docs/design/online.md).
SPAM_CUTOFF = 0.99
HAM_CUTOFF = 0.45

# The spam cutoff of a model that learned none moves towards this P(spam) as its share of
# errors among the messages learned falls: learning every message, the errors weighed more
# (below) make its scores surer, and at 0.99 it called more ham spam than bogofilter
# (docs/design/online.md). Trained on error it stays at SPAM_CUTOFF.
LEARNING_ALL_SPAM_CUTOFF = 0.999

# A message textnb's learners learn (learn, TELL, imap) that the model called wrong or unsure
# weighs up to this many times one it called right, by how rarely the learner errs: trained on
# error every learned message is an error and weighs 1; learning every message, the errors
# ranked better weighed more (docs/design/online.md).
ERROR_WEIGHT = 5.0


class Exit:
    """``classify --exit-code`` answers as bogofilter does; elsewhere 0 is success. Plain ints:
    making an enum class cost every mail filter's start 0.4 ms (python -X importtime)."""

    SPAM = 0
    HAM = 1
    UNSURE = 2
    ERROR = 3

    @staticmethod
    def of(status: str) -> int:
        """The exit code of a decision's status: spam, ham or unsure."""
        return {"spam": Exit.SPAM, "ham": Exit.HAM, "unsure": Exit.UNSURE}[status]


# What mail programs name the folder of spam (Thunderbird's and Apple Mail's Junk, Outlook's
# Junk E-mail, Yahoo's Bulk Mail), in lower case: a class of one of these names holds spam.
SPAM_NAMES = ("spam", "junk", "junk e-mail", "junk email", "junk mail", "bulk mail")


def spam_class_of(classes: Sequence[Any]) -> str | None:
    """The class of ``classes`` that holds spam by its name: "spam", else the only one named
    as mail programs name their spam folder (:data:`SPAM_NAMES`), in any case and without a
    Maildir++ folder's dots and parents (".Junk", ".INBOX.Spam"); None if there is no such
    class, or more than one."""
    names = [str(c) for c in classes]
    if "spam" in names:
        return "spam"
    found = [name for name in names if name.rsplit(".", 1)[-1].strip().lower() in SPAM_NAMES]
    return found[0] if len(found) == 1 else None


# The cutoffs of a two-class model: (spam class, spam cutoff, ham cutoff), the cutoffs on the
# spam log-odds ln P(spam|x) − ln P(ham|x): spam at or above the first, ham at or below the
# second, unsure between.
Cutoffs = tuple[str, float, float]


def scores_unseen(unseen: str, classes: Sequence[Any]) -> bool:
    """Whether a text classifier scores a new document's words outside its vocabulary (as terms
    no class counted): ``unseen`` "score" or "drop", or "auto": scored by a model of more than
    two classes, which decides by the most probable class, as ``--tune``'s folds scored them;
    dropped by a model of two, whose cutoffs (mail) and decision threshold were measured on
    held-out scores that drop them (docs/design/text-classification.md, "Words unseen in
    training"). The mail filter's scorer and load_model read it alike."""
    return unseen == "score" or (unseen == "auto" and len(classes) > 2)


def logit(p: float) -> float:
    """ln(p / (1 − p)): a cutoff on P(spam|x) as a cutoff on the log-odds (±inf at 0 and 1)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return math.log(p / (1.0 - p))


def error_share(learned: int, errors: int) -> float:
    """e = (errors + 1) / (learned + 1): the share of the messages textnb's learners learned
    that the model had called wrong or unsure (one error of one message a prior). Trained on
    error it stays 1; learning every message, it is a few hundredths."""
    return (errors + 1) / (learned + 1)


def error_weight(learned: int, errors: int) -> float:
    """The weight of a message learned that the model called wrong or unsure, after
    ``learned`` messages of which ``errors`` were so: 1 + (W − 1)(1 − e), W = ERROR_WEIGHT,
    e = :func:`error_share`."""
    return 1.0 + (ERROR_WEIGHT - 1.0) * (1.0 - error_share(learned, errors))


def default_spam_cutoff(counted: Sequence[int] = (0, 0)) -> float:
    """The spam cutoff (log-odds) of a model that learned none, after ``counted`` (messages,
    errors) learned: logit(SPAM_CUTOFF) + (logit(LEARNING_ALL_SPAM_CUTOFF) −
    logit(SPAM_CUTOFF))(1 − e), e = :func:`error_share`."""
    low, high = logit(SPAM_CUTOFF), logit(LEARNING_ALL_SPAM_CUTOFF)
    return low + (high - low) * (1.0 - error_share(*counted))


def learned_weight(counted: Sequence[int], status: str, role: str) -> tuple[float, tuple[int, int]]:
    """(the weight of a message of ``role``, spam or ham, that the model called ``status``
    before learning it; the count of messages and errors after it), ``counted`` the count
    before: an error (the status not its role: wrong, or unsure) weighs :func:`error_weight`,
    a message called right 1."""
    learned, errors = counted
    error = status != role
    return (error_weight(learned, errors) if error else 1.0), (learned + 1, errors + error)


def spam_cutoffs(classes: Sequence[Any], learned: dict[str, Any] | None = None,
                 spam_class: str | None = None, spam_cutoff: float | None = None,
                 ham_cutoff: float | None = None, threshold: float | None = None, *,
                 learned_errors: Sequence[int] = (0, 0)) -> Cutoffs | None:
    """The cutoffs that decide spam, ham or unsure; None unless the model has two classes, one
    of them the spam class.

    The spam class is ``spam_class``, else the one the cutoffs were learned for, else the class
    named so (:func:`spam_class_of`). Each cutoff is, first found: the option given
    (``spam_cutoff``/``ham_cutoff`` on P(spam|x), ``threshold`` for both, no unsure band), the
    one the model learned by cross-validation (``learned``: its ``spam_class``, ``spam`` and
    ``ham`` log-odds), else :func:`default_spam_cutoff` of the messages the model's learners
    counted (``learned_errors``) and HAM_CUTOFF; a cutoff given alone moves the other
    one, if it must, to itself. ValueError if the ham cutoff given is above the spam cutoff
    given.
    """
    learned = learned or {}
    names = [str(c) for c in classes]
    spam = spam_class or learned.get("spam_class") or spam_class_of(names) or "spam"
    if len(names) != 2 or spam not in names:
        return None
    if threshold is not None:
        spam_cutoff = ham_cutoff = threshold
    if spam_class is not None and spam_class != learned.get("spam_class"):
        learned = {}  # cutoffs learned for another class say nothing about this one
    high = (logit(spam_cutoff) if spam_cutoff is not None
            else learned.get("spam", default_spam_cutoff(learned_errors)))
    low = logit(ham_cutoff) if ham_cutoff is not None else learned.get("ham", logit(HAM_CUTOFF))
    if spam_cutoff is None:
        high = max(high, low)  # a ham cutoff given alone moves a learned spam cutoff up to it
    elif ham_cutoff is None:
        low = min(low, high)   # and a spam cutoff given alone moves a learned ham cutoff down
    if low > high:
        raise ValueError(f"the ham cutoff (log-odds {low:+.3f}) is above the spam cutoff "
                         f"(log-odds {high:+.3f})")
    return spam, float(high), float(low)


def check_cutoffs(cutoffs: Any, classes: Sequence[Any]) -> dict[str, Any] | None:
    """Learned cutoffs as read from a model file: None, or a dict whose spam class is one of
    two classes and whose cutoffs are finite numbers, the ham one not above the spam one;
    ValueError for anything else."""
    if cutoffs is None:
        return None
    if (not isinstance(cutoffs, dict) or len(classes) != 2
            or cutoffs.get("spam_class") not in [str(c) for c in classes]):
        raise ValueError("its cutoffs do not fit its classes")
    high, low = cutoffs.get("spam"), cutoffs.get("ham")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               for v in (high, low)) or low > high:
        raise ValueError("its cutoffs are not two ordered finite numbers")
    return cutoffs


def threshold_rule(classes: Sequence[Any], threshold: float) -> str:
    """A two-class decision threshold in words, as train, info and explain say it."""
    first, second = classes
    return f"{second} where its log-odds over {first} are >= {threshold:+.3f}"


def decide(classes: Sequence[Any], row: Sequence[float], source: str,
           cutoffs: Cutoffs | None, threshold: float | None = None) -> dict[str, Any]:
    """The decision on a document whose log P(c|x) per class (``classes`` order) is ``row``.

    label: always a class, the most probable one (the first of equals), or of two classes
    without cutoffs but with a ``threshold`` (the model's decision threshold), the second
    where its log-odds over the first reach it; probability: the label's P(c|x); log_odds:
    ln P(label|x) − ln P(other|x) (below 0 where the threshold chose the less probable class),
    finite where the probabilities round to 1 and 0; verdict: what the document is called,
    the label or, with cutoffs, "unsure". With cutoffs also status (spam, ham or unsure,
    decided on spam_log_odds), spam_probability and spam_log_odds; label is then the class of
    the status (the most probable when unsure, as ``textnb filter`` and ``serve`` say), and
    probability and log_odds are that label's (below 0 where a cutoff called the less probable
    class: ham at a positive ham cutoff).
    """
    row = list(row)
    if threshold is not None and len(row) == 2 and not cutoffs:
        best = int(row[1] - row[0] >= threshold)
        top, runner_up = row[best], row[1 - best]
    else:
        top = max(row)
        best = row.index(top)  # the first of equals
        runner_up = max(row[:best] + row[best + 1:], default=top)
    decision = {"source": source, "label": classes[best], "verdict": classes[best],
                "probability": math.exp(top), "log_odds": top - runner_up,
                "probabilities": dict(zip(map(str, classes), map(math.exp, row)))}
    if cutoffs:
        spam, spam_cutoff, ham_cutoff = cutoffs
        s = [str(c) for c in classes].index(spam)
        log_odds = row[s] - row[1 - s]
        status = "spam" if log_odds >= spam_cutoff else "ham" if log_odds <= ham_cutoff else "unsure"
        at = {"spam": s, "ham": 1 - s, "unsure": best}[status]
        # A cutoff may call the less probable class: its probability and log-odds, then below 0.
        decision.update(label=classes[at], verdict="unsure" if status == "unsure" else classes[at],
                        probability=math.exp(row[at]), log_odds=row[at] - row[1 - at],
                        spam_probability=math.exp(row[s]), spam_log_odds=log_odds, status=status)
    return decision


def scores(decision: dict[str, Any]) -> tuple[str, float, float]:
    """The two numbers a decision is printed with, and their name: a mail decision (one with a
    spam status) is "spam", P(spam|x) and ln P(spam|x) − ln P(ham|x), whatever its verdict, so
    that a batch's lines sort by them as bogofilter's spamicity does; any other is "", the
    label's P(label|x) and its log-odds over the runner-up."""
    if "status" in decision:
        return "spam", decision["spam_probability"], decision["spam_log_odds"]
    return "", decision["probability"], decision["log_odds"]


def names(decision: dict[str, Any]) -> tuple[str, str]:
    """The names of a decision's :func:`scores` in text: "spam-probability" and
    "spam-log-odds" for mail, "probability" and "log-odds" else (TSV and JSON: with "_")."""
    kind = scores(decision)[0]
    prefix = f"{kind}-" if kind else ""
    return f"{prefix}probability", f"{prefix}log-odds"


def headers(decision: dict[str, Any]) -> list[tuple[str, str]]:
    """The X-TextNB-* header lines of a decision, its :func:`scores` named as everywhere else:
    with a spam status, Class (the verdict), Status, Spam-Probability (P(spam|x)) and
    Spam-Log-Odds (which does not saturate); without, Class (the label), Probability and
    Log-Odds (the label's)."""
    _, probability, log_odds = scores(decision)
    named = [("-".join(w.capitalize() for w in name.split("-"))) for name in names(decision)]
    fields = [("X-TextNB-Class", str(decision["verdict"]))]
    if "status" in decision:
        fields.append(("X-TextNB-Status",
                       {"spam": "Yes", "ham": "No", "unsure": "Unsure"}[decision["status"]]))
    return fields + [(f"X-TextNB-{named[0]}", f"{probability:.6f}"),
                     (f"X-TextNB-{named[1]}", f"{log_odds:.4f}")]


def line(decision: dict[str, Any], output: str = "text",
         widths: Sequence[int] = (0, 0, 0, 0)) -> str:
    """A decision as ``classify`` prints it: text, tsv or json (with its explanation, if any).
    Text and TSV give source, verdict and the decision's :func:`scores` (a mail decision's
    P(spam) and spam log-odds); text columns are padded to ``widths``, the widest of a batch,
    so that a batch's lines align."""
    if output == "json":
        import json
        return json.dumps(decision, ensure_ascii=False)
    _, probability, log_odds = scores(decision)
    if output == "tsv":
        return "\t".join([decision["source"], str(decision["verdict"]),
                          f"{probability:.6f}", f"{log_odds:.4f}"])
    source, verdict, p_width, odds_width = widths
    text = (f"{decision['source']:<{source}}  {str(decision['verdict']):<{verdict}}  "
            f"{probability:>{p_width}.4f}  {names(decision)[1]} {log_odds:>+{odds_width}.2f}")
    explanation = decision.get("explanation")
    if explanation:
        lines = [text, f"  why {explanation['label']} over {explanation['against']} "
                       f"(log-odds {explanation['log_odds']:+.2f}):",
                 f"    {'prior':<30} {explanation['prior_log_odds']:+8.3f}"]
        if explanation["absent_words"]:
            lines.append(f"    {'(absent words)':<30} {explanation['absent_words']:+8.3f}")
        if explanation.get("unseen_words"):
            lines.append(f"    {'(%d unseen words)' % explanation['unseen_words']:<30} "
                         f"{explanation['unseen_log_odds']:+8.3f}")
        lines += [f"    {t['term'][:30]:<30} {t['log_odds']:+8.3f}" for t in explanation["terms"]]
        lines.append(f"    {'(other terms)':<30} {explanation['other_terms']:+8.3f}")
        text = "\n".join(lines)
    return text
