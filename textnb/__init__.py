"""textnb: Naive Bayes text classification and spam filtering, in log space."""

from .classifier import TextClassifier, load_model, save_model
from .errors import DocumentError, ModelFileError, TextnbError
from .explain import Contribution, Explanation, explain_document, informative_terms
from .models import BaseNB, BernoulliNB, ComplementNB, MultinomialNB
from .tokens import Tokenizer
from .vocabulary import Vocabulary

__version__ = "0.1.0"

__all__ = [
    "BaseNB", "BernoulliNB", "ComplementNB", "Contribution", "DocumentError", "Explanation",
    "ModelFileError", "MultinomialNB", "TextClassifier", "TextnbError", "Tokenizer", "Vocabulary",
    "explain_document", "informative_terms", "load_model", "save_model", "__version__",
]
