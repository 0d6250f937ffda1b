"""labeled and unlabeled texts → whether to learn from the unlabeled ones by EM, with which λ
and α: cross-validation on the labeled documents against plain training (``train --unlabeled``).

EM helps when the unlabeled documents come from the classes' own mixture and the labeled ones
are few (Nigam et al., 2000: multinomial NB, α around 0.01–1, λ below 1 when labels are
plentiful); it hurts when they do not, and its gain depends on α. So the labeled documents are
split into k stratified folds; each candidate is trained on k − 1 folds (with every unlabeled
document) and scores the held-out fold: plain training with the classifier's own settings;
multinomial NB on raw counts of terms in at least EM_MIN_DF documents, α ∈ ALPHAS, on the
labeled documents alone (λ = 0); and, for λ ∈ WEIGHTS above 0, that model fitted by EM with
weight λ on the unlabeled documents, starting from the classes complement NB gives them
(:func:`textnb.nb.em.complement_start`), then plain training on the labeled documents and the
unlabeled ones, each in its likeliest class under EM's model. EM finds the classes in the
unlabeled documents; the classifier's own model (complement NB on normalised counts by
default) scores new documents better than EM's multinomial (on 20 Newsgroups, 10 labeled posts
a group: 1.3–3.9 points better for each of 12 settings and draws;
docs/design/unlabeled-multilabel.md). Not with a spam class: there EM's own model is the
candidate, since plain training would learn its cutoffs, the filter's decision, from EM's
guesses as if they were labels (on SpamAssassin, 30 + 30 labeled, it then called 2.5 % of the
test ham spam where the CV on 30 ham saw none).
EM is used only when a candidate's CV accuracy beats plain training's, and, for two classes
one of them a spam class, only if its CV false-positive rate (ham called spam) is no higher,
both at the likelier class and at the spam status the filter decides by (the best candidate
fitted as ``train`` fits it, cutoffs too, in each fold): else plain training, as without
unlabeled documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy.sparse import csr_matrix, vstack

from .classifier import TextClassifier
from .decision.rules import spam_class_of
from .folds import stratified_folds
from .nb.em import complement_start, expectation_maximization, split_rows
from .text.features import text_list

# Nigam et al. (2000) use α from 0.01 to 1; bench.em measured EM collapse at α = 1 over 172,000
# terms of 20 Newsgroups and gain at 0.01. λ: their EM-λ, 1 being basic EM.
ALPHAS = (0.01, 0.1)
WEIGHTS = (0.0, 0.1, 1.0)
# Terms of one document tie no documents together; dropping them (all but 1 of 5 terms of 20
# Newsgroups' training posts) took EM there from 68.3 % to 69.0 % and halved its time.
EM_MIN_DF = 2
FOLDS = 5
# EM iterations of a fold's fit: Nigam et al. report convergence in about 7–10 rounds.
CV_ITERATIONS = 10


@dataclass
class Choice:
    """What cross-validation chose. ``weight`` None: plain training (no EM); 0: multinomial NB
    of ``alpha`` on the labeled documents alone, ``settings`` the classifier's settings for it;
    above 0: plain training on the labeled documents and the unlabeled ones in
    ``unlabeled_classes``, the classes EM at (``alpha``, λ = ``weight``) gives them, or with a
    spam class (``unlabeled_classes`` None) EM's own model, fitted with ``settings`` and
    ``em_start="complement"``. Accuracies
    and false-positive rates are the out-of-fold ones over the labeled documents (the rates None
    without a spam class); ``scores`` maps (α, λ) to its CV accuracy; ``reason`` says why, in a
    phrase."""
    weight: float | None
    alpha: float | None
    folds: int
    accuracy: float
    plain_accuracy: float
    false_positive_rate: float | None = None
    plain_false_positive_rate: float | None = None
    scores: dict[tuple[float, float], float] = field(default_factory=dict)
    reason: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    unlabeled_classes: np.ndarray | None = None

    def summary(self) -> dict[str, Any]:
        """The choice as plain data (a model file's meta.json, ``info``)."""
        return {"weight": self.weight, "alpha": self.alpha, "folds": self.folds,
                "cv_accuracy": self.accuracy, "plain_cv_accuracy": self.plain_accuracy,
                "cv_false_positive_rate": self.false_positive_rate,
                "plain_cv_false_positive_rate": self.plain_false_positive_rate,
                "reason": self.reason}


def choose(classifier: TextClassifier, texts: Sequence[Any], y: Sequence, unlabeled: Sequence[Any],
           *, folds: int = FOLDS, seed: int = 0, alphas: Sequence[float] = ALPHAS,
           weights: Sequence[float] = WEIGHTS,
           progress: Callable[[str], None] | None = None) -> Choice:
    """Cross-validate plain training of ``classifier`` (its settings, unfitted) against EM
    with every (α, λ) on the labeled ``texts`` ``y`` and the ``unlabeled`` texts (module
    docstring). ``progress(message)`` hears of each candidate. Returns a :class:`Choice`."""
    texts, unlabeled = text_list(texts), text_list(unlabeled)
    y = np.asarray(list(y)).astype(str)
    _, sizes = np.unique(y, return_counts=True)
    k = int(min(folds, sizes.min()))
    if k < 2:
        return Choice(None, None, 0, float("nan"), float("nan"),
                      reason="a class has a single labeled document: nothing to cross-validate "
                             "EM on, so no EM")
    fold = stratified_folds(y, k, seed)
    classes = np.unique(y).tolist()
    spam = None
    if len(classes) == 2:  # two-class mail: its false-positive rate must not rise
        spam = classifier.spam_class if classifier.spam_class in classes else spam_class_of(classes)

    def rates(predicted: np.ndarray) -> tuple[float, float | None]:
        accuracy = float(np.mean(predicted == y))
        if spam is None:
            return accuracy, None
        ham = y != spam
        return accuracy, float(np.mean(predicted[ham] == spam))

    def part(f: int, held: bool) -> list:
        return [t for t, g in zip(texts, fold) if (g == f) == held]

    def cross_validate(settings: dict[str, Any], extra: list | None = None,
                       **fit: Any) -> tuple[np.ndarray, float | None]:
        """Each labeled document's class by the model of the other folds, fitted as ``train``
        fits it (cutoffs too; with ``extra``, fold f's training documents joined by the
        unlabeled ones in the classes ``extra[f]``), and with a spam class the share of ham
        whose spam status (what the filter decides by) is spam."""
        found, ham_called_spam = np.empty(len(y), dtype=object), 0
        for f in range(k):
            clf = TextClassifier(**{**classifier.get_params(), **settings})
            if extra is None:
                clf.fit(part(f, False), y[fold != f], **fit)
            else:
                clf.fit(part(f, False) + unlabeled, np.concatenate([y[fold != f], extra[f]]))
            held = part(f, True)
            found[fold == f] = clf.predict(held)
            if spam is not None:
                ham = [t for t, c in zip(held, y[fold == f]) if c != spam]
                ham_called_spam += int(np.sum(clf.spam_status(ham) == "spam"))
        return found.astype(str), (None if spam is None else
                                   ham_called_spam / int(np.sum(y != spam)))

    plain, plain_status_fpr = cross_validate({})
    plain_accuracy, plain_fpr = rates(plain)
    if progress:
        progress(f"plain training: CV accuracy {plain_accuracy:.4f}")

    params = classifier.get_params()
    settings = {"model": "multinomial", "norm": None,
                "min_df": EM_MIN_DF if params["min_df"] == 1 else params["min_df"]}
    em = TextClassifier(**{**params, **settings})
    L, U = _counts(em, y, texts, unlabeled)
    # Plain training's own weighted counts, for it to learn from EM's classes in each fold;
    # its vocabulary, as EM's, is of every text (a held-out one's terms unweighted by its class).
    P, PU = ((None, None) if spam is not None else
             _counts(TextClassifier(**params), y, texts, unlabeled))
    predicted = {(a, w): np.empty(len(y), dtype=object) for a in alphas for w in weights}
    found_classes: dict[tuple[float, float], list[np.ndarray]] = {key: [] for key in predicted}
    for f in range(k):
        train, held = fold != f, fold == f
        first = complement_start(L[train], y[train], U)
        for a in alphas:
            for w in weights:
                model = em.set_params(alpha=a).new_model()
                if w == 0:
                    predicted[a, w][held] = model.fit(L[train], y[train]).predict(L[held])
                    continue
                if spam is not None:  # EM's own model (see the module docstring)
                    expectation_maximization(model, L[train], y[train], U, unlabeled_weight=w,
                                             max_iter=CV_ITERATIONS, initial_proba=first)
                    predicted[a, w][held] = model.predict(L[held])
                    continue
                classes_u = _em_classes(model, L[train], y[train], U, w, first)
                found_classes[a, w].append(classes_u)
                plain_model = classifier.new_model().fit(
                    vstack([P[train], PU]).tocsr(), np.concatenate([y[train], classes_u]))
                predicted[a, w][held] = plain_model.predict(P[held])
    scores, fprs = {}, {}
    for key, found in predicted.items():
        scores[key], fprs[key] = rates(found.astype(str))
        if progress:
            progress(f"α {key[0]:g}, λ {key[1]:g}: CV accuracy {scores[key]:.4f}")
    allowed = [key for key in scores if spam is None or fprs[key] <= plain_fpr]
    # The best accuracy; among equals, the least EM and the largest α (the smoothest model).
    best = max(allowed, key=lambda key: (scores[key], -key[1], key[0]), default=None)
    if best is None or scores[best] <= plain_accuracy:
        why = ("no EM setting beats plain training's CV accuracy" if best is not None or
               spam is None else "every EM setting raises the CV false-positive rate")
        return Choice(None, None, k, plain_accuracy, plain_accuracy, plain_fpr, plain_fpr,
                      scores, why)
    a, w = best
    relabel = w > 0 and spam is None
    chosen = {} if relabel else {**settings, "alpha": a}
    if spam is not None:
        # Mail is filtered by its spam status (the cutoffs), not by the likelier class: the
        # chosen setting must not call more held-out ham spam there than plain training does.
        # On 30 + 30 SpamAssassin messages with 1,400 unlabeled, EM chosen without this check
        # called 5.6 % of the test ham spam, plain training none.
        plain_fpr = plain_status_fpr
        fit = {"unlabeled": unlabeled, "em_weight": w, "em_start": "complement"} if w else {}
        fprs[best] = cross_validate(chosen, **fit)[1]
        if fprs[best] > plain_fpr:
            return Choice(None, None, k, plain_accuracy, plain_accuracy, plain_fpr, plain_fpr,
                          scores, f"the best EM setting (α {a:g}, λ {w:g}) calls more ham "
                                  f"spam: CV false-positive rate {fprs[best]:.4f}")
    if not relabel:
        return Choice(w, a, k, scores[best], plain_accuracy, fprs[best], plain_fpr, scores,
                      "EM wins" if w else "multinomial NB without EM wins", chosen)
    # EM on every labeled document, as in the folds, for the unlabeled ones' classes.
    classes_u = _em_classes(em.set_params(alpha=a).new_model(), L, y, U, w,
                            complement_start(L, y, U))
    return Choice(w, a, k, scores[best], plain_accuracy, fprs[best], plain_fpr, scores,
                  "EM wins", unlabeled_classes=classes_u)


def _em_classes(model: Any, L: csr_matrix, y: np.ndarray, U: csr_matrix, weight: float,
                first: np.ndarray) -> np.ndarray:
    """The likeliest class of each unlabeled row under ``model`` fitted by EM (λ ``weight``,
    CV_ITERATIONS at most, from the guesses ``first``): ndarray of str, shape (n_unlabeled,)."""
    _, proba = expectation_maximization(model, L, y, U, unlabeled_weight=weight,
                                        max_iter=CV_ITERATIONS, initial_proba=first)
    return model.classes_[proba.argmax(axis=1)].astype(str)


def _counts(classifier: TextClassifier, y: np.ndarray, texts: list,
            unlabeled: list) -> tuple[csr_matrix, csr_matrix]:
    """``classifier``'s weighted counts of the labeled texts and of the unlabeled ones, over
    the vocabulary of both: scipy CSR matrices."""
    classifier.ngram_range_ = classifier.default_ngram_range(y.tolist(), texts[:50])
    classifier._build(y.tolist(), texts[:50])
    vocabulary = classifier._vocabulary()
    X = classifier._weigh(vocabulary.fit_parts(
        c for c, _ in classifier._count_stream(texts + unlabeled)))
    return tuple(csr_matrix((M.data, M.indices, M.indptr), shape=M.shape)
                 for M in split_rows(X, len(texts)))
