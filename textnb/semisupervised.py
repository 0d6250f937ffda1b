"""labeled and unlabeled texts → whether to learn from the unlabeled ones by EM, with which λ
and α: cross-validation on the labeled documents against plain training (``train --unlabeled``).

EM helps when the unlabeled documents come from the classes' own mixture and the labeled ones
are few (Nigam et al., 2000: multinomial NB, α around 0.01–1, λ below 1 when labels are
plentiful); it hurts when they do not, and its gain depends on α. So the labeled documents are
split into k stratified folds; each candidate, plain training with the classifier's own
settings, or multinomial NB on raw counts of terms in at least EM_MIN_DF documents, fitted by
EM with weight λ ∈ WEIGHTS on the unlabeled documents (λ = 0: the labeled documents alone)
and α ∈ ALPHAS, starting from the classes complement NB gives them
(:func:`textnb.nb.em.complement_start`), is trained on k − 1 folds (with every unlabeled
document) and scores the held-out fold; so does, for each λ > 0, plain training on the labeled
documents and the unlabeled ones in the classes EM gives them (its likeliest class of each):
EM's multinomial finds the classes in the unlabeled documents, the classifier's own model
(complement NB on normalised counts by default) scores new documents better than it. EM is
used only when a candidate's CV accuracy beats plain training's, and, for two classes one of them a spam class, only if its CV
false-positive rate (ham called spam) is no higher, both at the likelier class and at the spam
status the filter decides by (the best candidate fitted as ``train`` fits it, cutoffs too, in
each fold): else plain training, as without unlabeled documents.
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
    """What cross-validation chose. ``weight`` None: plain training (no EM); else λ (0: the
    labeled documents alone, multinomial) and ``alpha``, and ``settings`` the classifier's
    settings for it (fit with ``em_start="complement"``); or, with ``relabel``, plain training
    on the labeled documents and the unlabeled ones in ``unlabeled_classes``, the classes EM
    at (α, λ) gives them. Accuracies and false-positive rates are the out-of-fold ones over
    the labeled documents (the rates None without a spam class); ``scores`` maps (α, λ) to EM's
    CV accuracy, ``relabel_scores`` (α, λ > 0) to that of plain training on EM's classes;
    ``reason`` says why, in a phrase."""
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
    relabel: bool = False
    relabel_scores: dict[tuple[float, float], float] = field(default_factory=dict)
    unlabeled_classes: np.ndarray | None = None

    def summary(self) -> dict[str, Any]:
        """The choice as plain data (a model file's meta.json, ``info``)."""
        return {"weight": self.weight, "alpha": self.alpha, "folds": self.folds,
                "cv_accuracy": self.accuracy, "plain_cv_accuracy": self.plain_accuracy,
                "cv_false_positive_rate": self.false_positive_rate,
                "plain_cv_false_positive_rate": self.plain_false_positive_rate,
                "relabel": self.relabel, "reason": self.reason}


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
    P, PU = _counts(TextClassifier(**params), y, texts, unlabeled)
    predicted = {(a, w): np.empty(len(y), dtype=object) for a in alphas for w in weights}
    relabeled = {key: np.empty(len(y), dtype=object) for key in predicted if key[1] > 0}
    found_classes: dict[tuple[float, float], list[np.ndarray]] = {key: [] for key in relabeled}
    for f in range(k):
        train, held = fold != f, fold == f
        first = complement_start(L[train], y[train], U)
        for a in alphas:
            for w in weights:
                model = em.set_params(alpha=a).new_model()
                if w == 0:
                    model.fit(L[train], y[train])
                else:
                    _, proba = expectation_maximization(
                        model, L[train], y[train], U, unlabeled_weight=w,
                        max_iter=CV_ITERATIONS, initial_proba=first)
                    classes_u = model.classes_[proba.argmax(axis=1)].astype(str)
                    found_classes[a, w].append(classes_u)
                    plain_model = classifier.new_model().fit(
                        vstack([P[train], PU]).tocsr(), np.concatenate([y[train], classes_u]))
                    relabeled[a, w][held] = plain_model.predict(P[held])
                predicted[a, w][held] = model.predict(L[held])
    scores, fprs, relabel_scores, relabel_fprs = {}, {}, {}, {}
    for key, found in predicted.items():
        scores[key], fprs[key] = rates(found.astype(str))
        if progress:
            progress(f"α {key[0]:g}, λ {key[1]:g}: CV accuracy {scores[key]:.4f}")
    for key, found in relabeled.items():
        relabel_scores[key], relabel_fprs[key] = rates(found.astype(str))
        if progress:
            progress(f"plain training on the classes of EM at α {key[0]:g}, λ {key[1]:g}: "
                     f"CV accuracy {relabel_scores[key]:.4f}")
    # Candidates (accuracy, FPR at the likelier class, relabel, α, λ).
    candidates = ([(scores[key], fprs[key], False, *key) for key in scores] +
                  [(relabel_scores[key], relabel_fprs[key], True, *key) for key in relabel_scores])
    allowed = [c for c in candidates if spam is None or c[1] <= plain_fpr]
    # The best accuracy; among equals, the least EM, EM's own model, and the largest α.
    best = max(allowed, key=lambda c: (c[0], -c[4], not c[2], c[3]), default=None)
    kept = dict(scores=scores, relabel_scores=relabel_scores)
    if best is None or best[0] <= plain_accuracy:
        why = ("no EM setting beats plain training's CV accuracy" if best is not None or
               spam is None else "every EM setting raises the CV false-positive rate")
        return Choice(None, None, k, plain_accuracy, plain_accuracy, plain_fpr, plain_fpr,
                      reason=why, **kept)
    accuracy, fpr, relabel, a, w = best
    chosen = {} if relabel else {**settings, "alpha": a}
    classes_u = None
    if relabel:
        # EM on every labeled document, as in the folds, for the unlabeled ones' classes.
        model = em.set_params(alpha=a).new_model()
        _, proba = expectation_maximization(model, L, y, U, unlabeled_weight=w,
                                            max_iter=CV_ITERATIONS,
                                            initial_proba=complement_start(L, y, U))
        classes_u = model.classes_[proba.argmax(axis=1)].astype(str)
    if spam is not None:
        # Mail is filtered by its spam status (the cutoffs), not by the likelier class: the
        # chosen setting must not call more held-out ham spam there than plain training does.
        # On 30 + 30 SpamAssassin messages with 1,400 unlabeled, EM chosen without this check
        # called 5.6 % of the test ham spam, plain training none.
        plain_fpr = plain_status_fpr
        if relabel:
            fpr = cross_validate({}, extra=found_classes[a, w])[1]
        else:
            fit = ({"unlabeled": unlabeled, "em_weight": w, "em_start": "complement"}
                   if w else {})
            fpr = cross_validate(chosen, **fit)[1]
        if fpr > plain_fpr:
            return Choice(None, None, k, plain_accuracy, plain_accuracy, plain_fpr, plain_fpr,
                          reason=f"the best EM setting (α {a:g}, λ {w:g}"
                                 f"{', then plain training' if relabel else ''}) calls more "
                                 f"ham spam: CV false-positive rate {fpr:.4f}", **kept)
    why = ("plain training on EM's classes wins" if relabel else
           "EM wins" if w else "multinomial NB without EM wins")
    return Choice(w, a, k, accuracy, plain_accuracy, fpr, plain_fpr, reason=why,
                  settings=chosen, relabel=relabel, unlabeled_classes=classes_u, **kept)


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
