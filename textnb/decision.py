"""log P(c|x) of one document → its decision: label, probability, log-odds, spam status.

Shared by ``textnb classify`` and ``textnb filter``, and free of numpy, so that the commands
procmail runs once per message (textnb/quick.py) decide exactly as the full ones do.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

TYPE_CHECKING = False  # typing costs a mail filter's start-up 4 ms
if TYPE_CHECKING:
    from typing import Any

# Default cutoffs on P(spam|x), as bogofilter's spam_cutoff/ham_cutoff: at or above SPAM_CUTOFF
# is spam, at or below HAM_CUTOFF is ham, between is unsure.
SPAM_CUTOFF = 0.99
HAM_CUTOFF = 0.5


class Exit(enum.IntEnum):
    """``classify --exit-code`` answers as bogofilter does; elsewhere 0 is success."""

    SPAM = 0
    HAM = 1
    UNSURE = 2
    ERROR = 3

    @classmethod
    def of(cls, status: str) -> "Exit":
        """The exit code of a decision's status: spam, ham or unsure."""
        return cls[status.upper()]


# The cutoffs of a two-class model: (spam class, spam cutoff, ham cutoff).
Cutoffs = tuple[str, float, float]


def spam_cutoffs(classes: Sequence[Any], spam_class: str, spam_cutoff: float,
                 ham_cutoff: float) -> Cutoffs | None:
    """The cutoffs, for a two-class model with a class named ``spam_class``; else None."""
    names = [str(c) for c in classes]
    if len(names) == 2 and spam_class in names:
        return spam_class, spam_cutoff, ham_cutoff
    return None


def decide(classes: Sequence[Any], row: Sequence[float], source: str,
           cutoffs: Cutoffs | None) -> dict[str, Any]:
    """The decision on a document whose log P(c|x) per class (``classes`` order) is ``row``.

    label: the most probable class (the first of equals); probability: its P(c|x); log_odds:
    ln P(label|x) − ln P(runner-up|x), finite where the probabilities round to 1 and 0. With
    cutoffs: spam_probability, spam_log_odds, status (spam, ham or unsure) and the label of
    that status.
    """
    order = sorted(range(len(row)), key=lambda c: -row[c])
    best = order[0]
    decision = {"source": source, "label": classes[best],
                "probability": math.exp(row[best]),
                "log_odds": row[best] - row[order[1]] if len(order) > 1 else 0.0,
                "probabilities": {str(c): math.exp(p) for c, p in zip(classes, row)}}
    if cutoffs:
        spam, spam_cutoff, ham_cutoff = cutoffs
        s = [str(c) for c in classes].index(spam)
        p_spam = math.exp(row[s])
        status = "spam" if p_spam >= spam_cutoff else "ham" if p_spam <= ham_cutoff else "unsure"
        decision.update(spam_probability=p_spam, spam_log_odds=row[s] - row[1 - s], status=status,
                        label={"spam": spam, "ham": classes[1 - s], "unsure": "unsure"}[status])
    return decision


def headers(decision: dict[str, Any]) -> list[tuple[str, str]]:
    """The X-TextNB-* header lines of a decision: with a spam status, P(spam) and its log-odds
    (which do not saturate); without, the label's probability and log-odds."""
    if "status" in decision:
        return [("X-TextNB-Class", str(decision["label"])),
                ("X-TextNB-Status", {"spam": "Yes", "ham": "No", "unsure": "Unsure"}[decision["status"]]),
                ("X-TextNB-Probability", f"{decision['spam_probability']:.6f}"),
                ("X-TextNB-Log-Odds", f"{decision['spam_log_odds']:.4f}")]
    return [("X-TextNB-Class", str(decision["label"])),
            ("X-TextNB-Probability", f"{decision['probability']:.6f}"),
            ("X-TextNB-Log-Odds", f"{decision['log_odds']:.4f}")]


def line(decision: dict[str, Any], output: str = "text") -> str:
    """A decision as ``classify`` prints it: text, tsv or json (with its explanation, if any)."""
    if output == "json":
        import json
        return json.dumps(decision, ensure_ascii=False)
    if output == "tsv":
        return "\t".join([decision["source"], str(decision["label"]),
                          f"{decision['probability']:.6f}", f"{decision['log_odds']:.4f}"])
    text = (f"{decision['source']}\t{decision['label']}\t{decision['probability']:.4f}\t"
            f"log-odds {decision['log_odds']:+.2f}")
    explanation = decision.get("explanation")
    if explanation:
        lines = [text, f"  why {explanation['label']} over {explanation['against']} "
                       f"(log-odds {explanation['log_odds']:+.2f}):",
                 f"    {'prior':<30} {explanation['prior_log_odds']:+8.3f}"]
        if explanation["absent_words"]:
            lines.append(f"    {'(absent words)':<30} {explanation['absent_words']:+8.3f}")
        lines += [f"    {t['term'][:30]:<30} {t['log_odds']:+8.3f}" for t in explanation["terms"]]
        lines.append(f"    {'(other terms)':<30} {explanation['other_terms']:+8.3f}")
        text = "\n".join(lines)
    return text
