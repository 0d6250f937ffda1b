"""textnb: Naive Bayes text classification and spam filtering, in log space.

The names below are imported when first used (PEP 562), so that ``textnb filter``, which
needs only the document reader, the tokenizer and a model's scores, starts without numpy.
"""

from __future__ import annotations

__version__ = "0.1.0"

# name → the module defining it
_EXPORTS = {
    "TextClassifier": "classifier", "load_model": "store.text_model",
    "save_model": "store.text_model",
    "DocumentError": "errors", "ModelFileError": "errors", "TextnbError": "errors",
    "Contribution": "nb.explain", "Explanation": "nb.explain", "explain_document": "nb.explain",
    "informative_terms": "nb.explain",
    "BaseNB": "nb.estimator", "BernoulliNB": "nb.discrete", "ComplementNB": "nb.discrete",
    "ComplementNBWithPrior": "nb.discrete", "MultinomialNB": "nb.discrete",
    "Tokenizer": "text.tokens", "Vocabulary": "text.vocabulary",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'textnb' has no attribute {name!r}")
    from importlib import import_module  # here: importlib costs every mail filter's start 0.3 ms
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
