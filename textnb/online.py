"""A mail model learning one message as textnb's learners do (``learn``, the daemon's TELL,
``textnb imap``): the weight of an error by how rarely the model errs."""

from __future__ import annotations

from typing import Any

from .decision.rules import decide, learned_weight, spam_cutoffs


def learning_weight(classifier: Any, text: Any, label: Any) -> float:
    """The weight ``text`` is learned as ``label`` with, the message counted in the
    classifier's ``learned_errors_`` (messages, errors).

    For a mail model (two classes, one the spam class), a message whose spam status (as
    :meth:`~textnb.classifier.TextClassifier.spam_status` has it) is not its label (wrong,
    or unsure) weighs :func:`~textnb.decision.rules.error_weight` of the messages counted
    before it, and one called right 1: trained on error every weight is 1; learning every
    message, an error weighs nearly :data:`~textnb.decision.rules.ERROR_WEIGHT`
    (docs/design/online.md). Any other model: 1, nothing counted.
    """
    cutoffs = spam_cutoffs(classifier.classes_, classifier.__dict__.get("cutoffs_"),
                           classifier.spam_class, learned_errors=classifier.learned_errors_)
    if cutoffs is None:
        return 1.0
    # Decided as the journal's appender decides (textnb.store.appending), by these cutoffs.
    status = decide(list(classifier.classes_), classifier.predict_log_proba([text])[0].tolist(),
                    "", cutoffs)["status"]
    weight, classifier.learned_errors_ = learned_weight(
        classifier.learned_errors_, status, "spam" if str(label) == cutoffs[0] else "ham")
    return weight
