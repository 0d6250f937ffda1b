"""scikit-learn's estimator conventions without importing scikit-learn: Parameters (get_params,
set_params), BaseNB (log-space prediction), NotFittedError, tags, checks of y and weights."""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import types
import warnings
from typing import Any, Iterable, Sequence

import numpy as np

from .sparse import logsumexp


class NotFittedError(ValueError, AttributeError):
    """A model was used before ``fit``; a ValueError, and an AttributeError as scikit-learn's is."""


class DataConversionWarning(UserWarning):
    """Input was converted to what the model expects, e.g. y of shape (n, 1) flattened."""


def _sklearn_compatible(ours: type) -> type:
    """``ours``, or, if scikit-learn is already imported, a subclass of ``ours`` and of the class
    of the same name in ``sklearn.exceptions``, so that scikit-learn code catching its own
    exception (``check_is_fitted``, ``check_estimator``) catches ours. Never imports it."""
    theirs = getattr(sys.modules.get("sklearn.exceptions"), ours.__name__, None)
    return ours if theirs is None else _joined(ours, theirs)


@functools.lru_cache(maxsize=None)
def _joined(ours: type, theirs: type) -> type:
    return type(ours.__name__, (ours, theirs), {"__module__": ours.__module__})


def not_fitted(estimator: Any) -> NotFittedError:
    """The NotFittedError of an estimator used before ``fit``."""
    return _sklearn_compatible(NotFittedError)(
        f"this {type(estimator).__name__} is not fitted yet; call fit first")


def sklearn_tags(poor_score: bool = False, **input_tags: bool) -> Any:
    """scikit-learn >= 1.6 tags of a classifier taking ``input_tags`` (imported here: only
    scikit-learn calls ``__sklearn_tags__``, so other users never pay for importing it)."""
    from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags
    return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                classifier_tags=ClassifierTags(poor_score=poor_score),
                input_tags=InputTags(**input_tags))


def check_labels(y: Any, n_documents: int, unlabeled: Any = None) -> np.ndarray:
    """y as a 1-D array of ``n_documents`` class labels (or the number ``unlabeled``, which
    marks a document without a label among labels of any kind: EM's −1); ValueError for
    anything else.

    A column vector (n, 1) is flattened with a DataConversionWarning; whole numbers in a float
    array are labels, other floats a regression target (refused, as scikit-learn does).
    """
    if y is None:
        raise ValueError("a classifier requires y to be passed, but the target y is None")
    y = y if hasattr(y, "__len__") or hasattr(y, "__array__") else list(y)
    check_label_kinds(y, unlabeled)
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        warnings.warn(_sklearn_compatible(DataConversionWarning)(
            "A column-vector y was passed when a 1d array was expected; it was flattened"),
            stacklevel=3)
        labels = labels.ravel()
    if labels.ndim != 1:
        raise ValueError(f"y should be a 1d array of labels, got an array of shape {labels.shape}")
    if labels.shape[0] != n_documents:
        raise ValueError(f"X has {n_documents} documents but y has {labels.shape[0]} labels")
    if np.iscomplexobj(labels):
        raise ValueError("Complex data not supported: y holds complex numbers, not labels")
    if labels.dtype.kind == "f" and not (np.isfinite(labels) & (labels == np.round(labels))).all():
        raise ValueError("Unknown label type: continuous (y holds fractional numbers; a "
                         "classifier needs class labels)")
    return labels


def check_label_kinds(y: Any, unlabeled: Any = None) -> None:
    """ValueError for a y that is one string (``fit(X, "spam")`` would read four labels s, p,
    a, m) or that mixes strings and numbers (``[1, "1"]`` would merge into one class), the
    number ``unlabeled`` aside."""
    if isinstance(y, (str, bytes)):
        raise ValueError(f"y must be a sequence of labels, one a document, not a single "
                         f"{type(y).__name__} ({y[:40]!r}); for one document: [label]")
    if getattr(y, "dtype", object) != object or not hasattr(y, "__iter__"):
        return  # an array of one type (or what only converts to one): nothing mixed
    types = set(map(type, y if unlabeled is None else
                    (v for v in y if isinstance(v, str) or v != unlabeled)))
    # bools are numbers too: numpy and scikit-learn take them as 0 and 1.
    if any(issubclass(t, str) for t in types) and any(issubclass(t, numbers.Number) for t in types):
        raise ValueError("y mixes strings and numbers: labels must be all strings or all "
                         "numbers (1 and '1' would be one class)")


def check_weights(sample_weight: Any, n_documents: int) -> np.ndarray:
    """One finite, non-negative weight per document, not all zero: ndarray of shape (n,)."""
    if sample_weight is None:
        return np.ones(n_documents)
    weight = np.asarray(sample_weight, dtype=float)
    if weight.shape != (n_documents,):
        raise ValueError(f"sample_weight must have one weight per document ({n_documents})")
    if weight.size and not (np.isfinite(weight).all() and weight.min() >= 0):
        raise ValueError("sample_weight must hold finite numbers >= 0")
    if weight.size and not weight.any():
        raise ValueError("sample_weight is all zero: Sample weights must contain at least one "
                         "non-zero number")
    return weight


class Parameters:
    """scikit-learn's parameter conventions over a class's constructor arguments, as its
    ``BaseEstimator`` has them (without importing scikit-learn): ``get_params``,
    ``set_params`` (which refuses unknown names) and a repr that lists them."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _parameters(type(self))}

    def set_params(self, **params: Any) -> Any:
        names = _parameters(type(self))
        for name, value in params.items():
            if name not in names:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid: {', '.join(names)}")
            setattr(self, name, value)
        return self

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # An inherited __init__ names the class that defined it in a TypeError
        # ("DiscreteNB.__init__() got an unexpected keyword argument"): each class gets a copy
        # named after itself.
        init = cls.__init__
        if "__init__" not in vars(cls) and isinstance(init, types.FunctionType):
            own = types.FunctionType(init.__code__, init.__globals__, init.__name__,
                                     init.__defaults__, init.__closure__)
            own.__kwdefaults__, own.__doc__ = init.__kwdefaults__, init.__doc__
            own.__annotations__ = init.__annotations__
            own.__qualname__ = f"{cls.__qualname__}.__init__"
            cls.__init__ = own  # type: ignore[misc]

    def __repr__(self) -> str:
        """The class and the settings that differ from its defaults, as scikit-learn prints
        them (``print_changed_only``): ``TextClassifier(alpha=1.0)``."""
        defaults = _defaults(type(self))
        settings = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()
                             if _changed(v, defaults[k]))
        return f"{type(self).__name__}({settings})"


@functools.cache
def _parameters(cls: type) -> tuple[str, ...]:
    return tuple(_defaults(cls))


@functools.cache
def _defaults(cls: type) -> dict[str, Any]:
    return {p.name: p.default for p in inspect.signature(cls).parameters.values()
            if p.kind != p.VAR_KEYWORD}


def _changed(value: Any, default: Any) -> bool:
    """Whether a setting differs from its default, as scikit-learn judges it: by repr (an
    array compares by element), NaN equal to NaN."""
    if repr(value) == repr(default):
        return False
    nan = (lambda v: isinstance(v, float) and v != v)
    return not (nan(value) and nan(default))


class BaseNB(Parameters):
    """Log-space prediction shared by every model: subclasses supply the joint log-likelihood.

    A subclass sets ``classes_`` and implements ``_joint_log_likelihood(X)`` returning
    ``log P(c) + log P(x|c)`` as an ndarray of shape (n_documents, n_classes).
    """

    classes_: np.ndarray

    # scikit-learn conventions, without importing scikit-learn.
    _estimator_type = "classifier"  # what scikit-learn < 1.6 reads; newer versions ask for tags

    def __sklearn_tags__(self) -> Any:
        """Tags for scikit-learn >= 1.6, whose Pipeline and check_is_fitted require them:
        sparse input, counts only (``positive_only``: negative X is refused), and, as
        scikit-learn's own naive Bayes models declare, ``poor_score``: check_estimator's
        accuracy test uses Gaussian blobs, which are no term counts."""
        return sklearn_tags(poor_score=True, sparse=True, positive_only=True)

    def set_params(self, **params: Any) -> "BaseNB":
        super().set_params(**params)
        if hasattr(self, "classes_"):
            self._update()
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise not_fitted(self)

    def _update(self) -> None:
        """Derive log parameters from counts; subclasses override."""

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        raise NotImplementedError

    def predict_joint_log_proba(self, X: Any) -> np.ndarray:
        """log P(c) + log P(x|c), unnormalised: ndarray of shape (n_documents, n_classes)."""
        self._check_fitted()
        return self._joint_log_likelihood(X)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """log P(c|x) = jll − logsumexp(jll): ndarray of shape (n_documents, n_classes)."""
        jll = self.predict_joint_log_proba(X)
        return jll - logsumexp(jll, axis=1)[:, None]

    def predict_proba(self, X: Any) -> np.ndarray:
        """P(c|x), rows summing to 1: ndarray of shape (n_documents, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """argmax_c log P(c) + log P(x|c): ndarray of shape (n_documents,) of labels."""
        jll = self.predict_joint_log_proba(X)   # first: it says "not fitted" when classes_ is absent
        return self.classes_[np.argmax(jll, axis=1)]

    def score(self, X: Any, y: Iterable, sample_weight: Sequence[float] | None = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y`` (scikit-learn's default classifier score)."""
        predicted = self.predict(X)   # first: it checks X
        hits = predicted == check_labels(y, len(predicted))
        return float(np.average(hits, weights=sample_weight))
