"""TextClassifier's settings of a fixed set of values, declared once: read by the estimator's
checks (:meth:`TextClassifier._build <textnb.classifier.TextClassifier>`), the model file's
(:mod:`textnb.store.schema`) and the command line's choices (``--event-model``, ``--tf``,
``--norm``, ``--training``, ``--stem``). Plain Python: the mail filter reads it."""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing costs a mail filter's start-up 2 ms
if TYPE_CHECKING:
    from typing import Any

# name → its values, in the order the messages and the command line's choices list them.
CHOICES: dict[str, tuple] = {
    "model": ("multinomial", "bernoulli", "complement"),   # the event model
    "tf": ("raw", "log", "binary"),                        # term weights
    "norm": (None, "l2"),                                  # document length
    "training": ("full", "on-error", "auto"),
    "stemmer": (None, "porter", "snowball"),
}


def listed(values: tuple, quote: bool = False) -> str:
    """"a, b or c" (quoted: "'a', 'b' or 'c'") of the values but None."""
    names = [repr(v) if quote else str(v) for v in values if v is not None]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def problem(params: dict[str, Any]) -> str | None:
    """What is wrong with a TextClassifier's settings of fixed values and ``n_jobs``
    (``get_params()``), as ``fit`` says it, or None."""
    model, tf, norm, training = (params[k] for k in ("model", "tf", "norm", "training"))
    if model not in CHOICES["model"]:
        return f"model must be one of {', '.join(CHOICES['model'])}, not {model!r}"
    if tf not in CHOICES["tf"]:
        return f"tf must be {listed(CHOICES['tf'], quote=True)}, not {tf!r}"
    if norm not in CHOICES["norm"]:
        return f"norm must be None or {listed(CHOICES['norm'], quote=True)}, not {norm!r}"
    if training not in CHOICES["training"]:
        return f"training must be {listed(CHOICES['training'], quote=True)}, not {training!r}"
    n_jobs = params["n_jobs"]
    if n_jobs is not None and (not isinstance(n_jobs, int) or n_jobs == 0):
        return f"n_jobs must be a number of processes (-1: every core) or None, not {n_jobs!r}"
    return None


def threshold_problem(threshold: Any) -> str | None:
    """What is wrong with a ``decision_threshold`` setting ("auto", None or a finite number)."""
    if not (threshold is None or (isinstance(threshold, str) and threshold == "auto")
            or (isinstance(threshold, (int, float)) and not isinstance(threshold, bool)
                and math.isfinite(threshold))):
        return f"decision_threshold must be 'auto', None or a number, not {threshold!r}"
    return None


def choices(name: str) -> list[str]:
    """A setting's values as the command line spells them (None: "none"), for click.Choice;
    --training's sorted ("auto" first)."""
    values = ["none" if v is None else v for v in CHOICES[name]
              if v is not None or name == "norm"]
    return sorted(values) if name == "training" else values
