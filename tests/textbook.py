"""The textbook text classifier, for tests whose numbers come from the worked examples of
Mitchell's Machine Learning (ch. 6) and McCallum & Nigam (1998).

The library's defaults (complement NB, α = 0.03, unit-length documents, uniform priors) were
chosen for accuracy; these tests pin Mitchell's multinomial model with Laplace smoothing and
learned priors, words outside the vocabulary dropped, unless a test says otherwise.
"""

from textnb import TextClassifier as _TextClassifier

# Mitchell's: only "positions that contain tokens found in Vocabulary" are scored.
TEXTBOOK = {"model": "multinomial", "alpha": 1.0, "fit_prior": True, "norm": None,
            "unseen": "drop"}


def TextClassifier(**settings) -> _TextClassifier:  # noqa: N802 — stands in for the class
    return _TextClassifier(**{**TEXTBOOK, **settings})
