"""raw texts with sets of labels → one count matrix → Naive Bayes per label: MultiLabelClassifier.

A document may carry several labels (a news story about oil prices and shipping has both
topics). All labels are counted from ONE vocabulary and ONE document-term matrix X: the counts
of label l are row l of Yᵀ X (Y the documents' label indicators). A label's score is a
log-odds, compared with a threshold of its own chosen by cross-validation on the training
documents to maximise that label's F1 (:func:`choose_thresholds`). Two scorings; the default
(``"auto"``) keeps the one of better cross-validated micro-F1, or gives each label the one of
its better cross-validated F1 ("per-label") when that is better still:

* ``"posterior"``: one multinomial NB over the labels as classes, a document counted under
  each of its labels; the score of l is the log-odds of its posterior,
  ln P(l|x) − ln Σ_{m≠l} P(m|x). Labels compete for a document, as the classes of the text
  classifier do; on Reuters-21578 this ranks most topics better than one-vs-rest
  (docs/design/unlabeled-multilabel.md).
* ``"one-vs-rest"``: a binary NB per label, "l" against "not l" (its counts the column totals
  of X minus l's), the score ln P(l|x) − ln P(¬l|x): scikit-learn's
  OneVsRestClassifier(MultinomialNB()), and what model files without a scoring hold.

Also the model file of a MultiLabelClassifier (kind ``multi-label-classifier``, written and
read by :mod:`textnb.store.container`; the text classifier's format is untouched), a label file
reader (Reuters-21578's ``cats.txt`` layout) and :func:`model_kind`, which tells the two kinds
of model file apart by their meta.json.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Iterable, Sequence

import numpy as np


from . import settings
from .classifier import TextClassifier
from .text.features import text_list
from .errors import DocumentError
from .text.tokens import MAX_TOKEN_LENGTH, MIN_TOKEN_LENGTH
from .nb.estimator import Parameters, not_fitted
from .text.vocabulary import Vocabulary, to_scipy

# Folds of the cross-validation that chooses the thresholds: 5, as the text classifier's cutoffs.
FOLDS = 5
# A label absent from a fold's training part (a rare Reuters topic has one or two documents)
# would get the prior log 0 = −inf; it is counted as half a document there instead, so that
# every score stays finite. Counts of at least one document are used as they are, so the full
# model equals scikit-learn's OneVsRestClassifier(MultinomialNB()) (tests/test_multilabel.py).
_LEAST_COUNT = 0.5
# SCutFBR (Yang, 2001): a label of fewer documents than this, or whose best out-of-fold F1 is
# below FLOOR, gets a threshold of at least 0 instead of its CV cut. On 20 Newsgroups made
# multi-label with 30 rare labels of 1–20 documents (python -m bench.multilabel) the CV cuts
# gave micro-F1 0.054, these 0.755; floors 0.1–0.3 and 1–5 documents gave the same.
MIN_DOCUMENTS = 3
FLOOR = 0.3
# scoring="auto" chooses among the scorings, for all labels or per label, by cross-validation;
# alpha=None is each one's α: Laplace's for one-vs-rest (the textbook model), 0.1 for the
# posterior (the best of 0.05–1 by CV on Reuters-21578's training stories:
# docs/design/unlabeled-multilabel.md).
SCORINGS = ("auto", "posterior", "one-vs-rest")
ALPHAS = {"posterior": 0.1, "one-vs-rest": 1.0}
# ±745: a posterior log-odds beyond it is a probability of 0 or 1 in doubles (e^−745 is the
# smallest); capped so that a model of one label (no other to compete) scores finite.
_MAX_LOG_ODDS = 745.0


class MultiLabelClassifier(Parameters):
    """Multinomial Naive Bayes per label on raw texts with sets of labels.

    P(w|l) = (n_wl + α) / (n_l + α|V|) over the (weighted) counts n_wl of the documents
    carrying label l. With ``scoring="posterior"``, z_l = ln P(l) + Σ_w x_w ln P(w|l), P(l)
    ∝ the documents of l, and a document's score for l is z_l − ln Σ_{m≠l} e^{z_m}, the
    log-odds of l's posterior among the labels. With ``scoring="one-vs-rest"``, P(w|¬l) is
    counted likewise over the documents not carrying l, and the score is ln P(l)/P(¬l) +
    Σ_w x_w (ln P(w|l) − ln P(w|¬l)). l is predicted when its score reaches
    ``thresholds_[l]``; when none does, the label whose score is nearest its threshold (the
    largest score − threshold), so that every document gets at least one.

    Parameters
    ----------
    alpha : smoothing α > 0, or None (the default): 0.1 for the posterior, 1 for one-vs-rest
        (ALPHAS; ``alphas_`` holds those used).
    scoring : "posterior", "one-vs-rest" (above), or "auto" (the default): the best by
        cross-validated micro-F1 on the training documents of the two and of "per-label", each
        label the one of its better cross-validated F1 (``scoring_``; ``one_vs_rest_``, bool a
        label; ``cv_["choice"]``).
    stop_words, stemmer, ngram_range, lowercase, max_token_length, min_token_length, min_df, max_df,
    max_features, tf, norm, n_jobs : tokenizing, vocabulary and term weights, as in
        :class:`~textnb.classifier.TextClassifier`. With scoring="one-vs-rest", alpha=1 and
        raw counts this is the textbook model that scikit-learn's
        OneVsRestClassifier(MultinomialNB()) computes; python -m bench.multilabel compares the
        two.
    folds : folds of the cross-validation choosing the thresholds (fewer with fewer documents).
    seed : seed of those folds.

    >>> clf = MultiLabelClassifier(stop_words="none", folds=2).fit(
    ...     ["oil price rises", "oil tanker shipping", "ship sinks at sea", "crude oil price",
    ...      "shipping lanes at sea", "oil shipping by tanker"],
    ...     [["oil"], ["oil", "ship"], ["ship"], ["oil"], ["ship"], ["oil", "ship"]])
    >>> clf.predict(["oil tanker", "crude oil price"])
    [['oil', 'ship'], ['oil']]
    """

    def __init__(self, *, alpha: float | None = None, scoring: str = "auto",
                 stop_words: Any = "english",
                 stemmer: str | None = None, ngram_range: Sequence[int] = (1, 1),
                 lowercase: bool = True, max_token_length: int = MAX_TOKEN_LENGTH,
                 min_token_length: int = MIN_TOKEN_LENGTH,
                 min_df: int | float = 1, max_df: int | float = 1.0,
                 max_features: int | None = None, tf: str = "raw", norm: str | None = None,
                 n_jobs: int | None = None, folds: int = FOLDS, seed: int = 0) -> None:
        self.alpha = alpha
        self.scoring = scoring
        self.stop_words = stop_words
        self.stemmer = stemmer
        self.ngram_range = ngram_range
        self.lowercase = lowercase
        self.max_token_length = max_token_length
        self.min_token_length = min_token_length
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.tf = tf
        self.norm = norm
        self.n_jobs = n_jobs
        self.folds = folds
        self.seed = seed

    def set_params(self, **params: Any) -> "MultiLabelClassifier":
        super().set_params(**params)
        self.__dict__.pop("_text", None)  # the text classifier is built again from them
        return self

    @property
    def classes_(self) -> np.ndarray:
        return self.labels_

    # -- learning ----------------------------------------------------------------------

    def fit(self, texts: Iterable[Any], y: Iterable[Iterable[str]]) -> "MultiLabelClassifier":
        """Count ``texts`` (str, bytes or Documents) under their label sets ``y`` (one
        non-empty collection of label names per text), then choose each label's threshold by
        cross-validation (``cv_`` keeps the out-of-fold precision, recall and F1 per label)."""
        params = self.get_params()
        del params["scoring"]  # "auto" is no file's value (settings.RULES): checked here
        if params["alpha"] is None:  # chosen below
            del params["alpha"]
        problem = (settings.problem(params, not_none=settings.MULTILABEL_NOT_NONE)
                   or (None if self.scoring in SCORINGS else
                       f"scoring must be one of {', '.join(SCORINGS)}, not {self.scoring!r}"))
        if problem:
            raise ValueError(problem)
        texts = text_list(texts)
        labels, Y = label_matrix(y)
        if len(texts) != Y.shape[0]:
            raise ValueError(f"got {len(texts)} texts but {Y.shape[0]} label sets")
        if len(texts) < 2:
            raise ValueError("need at least two documents to train")
        text = self._text_classifier()
        text._build()
        self.stop_words_ = text.stop_words_
        vocabulary = Vocabulary(min_df=self.min_df, max_df=self.max_df,
                                max_features=self.max_features)
        parts = text._count(texts, digests=False)
        X = to_scipy(text._weigh(vocabulary.fit_parts(counts for counts, _ in parts)))
        self.vocabulary_, self.labels_ = vocabulary, labels
        self.thresholds_, self.cv_ = self._choose(X, Y)
        self.label_count_, self.feature_count_, self.total_count_ = _counts(X, Y)
        self.n_documents_ = float(X.shape[0])
        self._update()
        return self

    def _choose(self, X: Any, Y: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """Thresholds and CV record of the scoring given, or with "auto" of the best by
        out-of-fold micro-F1 (each one's labels cut at its own CV thresholds, at least one a
        document) of the posterior, one-vs-rest and "per-label": each label the scoring of its
        better out-of-fold F1 (ties: the posterior). Sets ``scoring_``, ``one_vs_rest_`` and
        ``alphas_`` (ALPHAS' when alpha is None); the record's "choice" lists the candidates'
        micro-F1."""
        tried, found = [], []
        for scoring in tuple(ALPHAS) if self.scoring == "auto" else (self.scoring,):
            alpha = ALPHAS[scoring] if self.alpha is None else float(self.alpha)
            self._set_scoring(np.full(Y.shape[1], scoring == "one-vs-rest"), {scoring: alpha})
            scores = self._out_of_fold(X, Y)
            thresholds, cv = choose_thresholds(scores, Y)
            tried.append({"scoring": scoring, "alpha": alpha,
                          "micro_f1": _micro_f1(decide(scores, thresholds), Y)})
            found.append((self.one_vs_rest_, self.alphas_, scores, thresholds, cv))
        if len(found) == 2:
            # Each label the scoring of its better CV F1: on Reuters-21578 the posterior suits
            # most topics, one-vs-rest some (docs/design/unlabeled-multilabel.md).
            (_, post_alpha, post_scores, post_thresholds, post_cv), \
                (_, rest_alpha, rest_scores, rest_thresholds, rest_cv) = found
            rest = np.array(rest_cv["f1"]) > np.array(post_cv["f1"])
            thresholds = np.where(rest, rest_thresholds, post_thresholds)
            cv = {name: np.where(rest, rest_cv[name], post_cv[name]).tolist()
                  for name in ("precision", "recall", "f1", "fallback")}
            scores = np.where(rest, rest_scores, post_scores)
            tried.append({"scoring": "per-label", "one_vs_rest": int(rest.sum()),
                          "micro_f1": _micro_f1(decide(scores, thresholds), Y)})
            found.append((rest, {**post_alpha, **rest_alpha}, scores, thresholds,
                          {**cv, "documents": post_cv["documents"]}))
        best = max(range(len(tried)), key=lambda i: (tried[i]["micro_f1"], -i))
        rest, alphas, _, thresholds, cv = found[best]
        self._set_scoring(rest, alphas)
        return thresholds, {**cv, "choice": tried}

    def _set_scoring(self, one_vs_rest: np.ndarray, alphas: dict[str, float]) -> None:
        """Each label's scoring (``one_vs_rest_``, bool a label), the α of each scoring used
        (``alphas_``) and their name (``scoring_``: one of them, or "per-label")."""
        self.one_vs_rest_ = np.asarray(one_vs_rest, dtype=bool)
        used = {"one-vs-rest" if rest else "posterior" for rest in self.one_vs_rest_.tolist()}
        self.alphas_ = {scoring: float(alpha) for scoring, alpha in alphas.items()
                        if scoring in used}
        self.scoring_ = used.pop() if len(used) == 1 else "per-label"

    def _out_of_fold(self, X: Any, Y: np.ndarray) -> np.ndarray:
        """Each document's log-odds (n_documents, n_labels) under the counts of the other
        folds: all counts once, minus each fold's. The folds share the vocabulary of all of X:
        a held-out document's terms are known, its counts are not."""
        k = int(min(self.folds, X.shape[0]))
        if k < 2:
            raise ValueError(f"folds must be at least 2, not {self.folds!r}")
        rng = np.random.default_rng(self.seed)
        fold = rng.permutation(X.shape[0]) % k
        label_count, feature_count, total_count = _counts(X, Y)
        scores = np.empty(Y.shape, dtype=float)
        for f in range(k):
            held = fold == f
            held_label, held_feature, held_total = _counts(X[held], Y[held])
            parts = self._model(label_count - held_label, feature_count - held_feature,
                                total_count - held_total, float((~held).sum()))
            scores[held] = self._scores(X[held], parts)
        return scores

    def _model(self, label_count: np.ndarray, feature_count: np.ndarray,
               total_count: np.ndarray, n_documents: float
               ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{scoring: (bias, weights)} of these counts for the scorings used: the posterior's
        over all labels (each competes with them all), one-vs-rest's for its labels alone."""
        rest = self.one_vs_rest_
        parts = {}
        if not rest.all():
            parts["posterior"] = _class_model(label_count, feature_count,
                                              self.alphas_["posterior"])
        if rest.any():
            parts["one-vs-rest"] = _log_odds_model(
                label_count[rest], feature_count[rest], total_count, n_documents,
                self.alphas_["one-vs-rest"])
        return parts

    def _scores(self, X: Any, parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Each label's score of documents X under ``parts`` (:meth:`_model`): (n_documents,
        n_labels), each column of its label's scoring."""
        scores = np.empty((X.shape[0], self.one_vs_rest_.size))
        if "posterior" in parts:
            bias, weights = parts["posterior"]
            scores[:] = posterior_log_odds(np.asarray(X @ weights.T) + bias)
        if "one-vs-rest" in parts:
            bias, weights = parts["one-vs-rest"]
            scores[:, self.one_vs_rest_] = np.asarray(X @ weights.T) + bias
        return scores

    def _update(self) -> None:
        self.parts_ = self._model(self.label_count_, self.feature_count_,
                                  self.total_count_, self.n_documents_)

    # -- prediction --------------------------------------------------------------------

    def transform(self, texts: Iterable[Any]) -> Any:
        """Weighted counts of the vocabulary's terms: csr_matrix (n_documents, n_terms)."""
        self._check_fitted()
        text = self._text_classifier()
        parts = text._count(text_list(texts), digests=False)
        return to_scipy(text._weigh(self.vocabulary_.count_parts(c for c, _ in parts)))

    def decision_function(self, texts: Iterable[Any]) -> np.ndarray:
        """Each label's log-odds (of its posterior, or against "not l"; ``scoring``): ndarray
        (n_documents, n_labels), columns in ``labels_`` order."""
        return self.decision_function_counts(self.transform(texts))

    def decision_function_counts(self, X: Any) -> np.ndarray:
        """The log-odds of documents given as weighted counts X (n_documents, n_terms)."""
        self._check_fitted()
        return self._scores(X, self.parts_)

    def predict_indicator(self, texts: Iterable[Any]) -> np.ndarray:
        """bool ndarray (n_documents, n_labels): the labels each text is given."""
        return decide(self.decision_function(texts), self.thresholds_)

    def predict(self, texts: Iterable[Any]) -> list[list[str]]:
        """The labels of each text, at least one, in ``labels_`` order."""
        chosen = self.predict_indicator(texts)
        return [self.labels_[row].tolist() for row in chosen]

    def _text_classifier(self) -> TextClassifier:
        """The tokenizer, counting and term weights of a TextClassifier of these settings."""
        cached = self.__dict__.get("_text")
        if cached is None:
            params = {k: v for k, v in self.get_params().items()
                      if k not in ("folds", "seed", "scoring", "alpha")}
            cached = self._text = TextClassifier(model="multinomial", fit_prior=True, **params)
            if hasattr(self, "stop_words_"):
                cached.stop_words_ = list(self.stop_words_)
        return cached

    def _check_fitted(self) -> None:
        if not hasattr(self, "parts_"):
            raise not_fitted(self)


def label_matrix(y: Iterable[Iterable[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(labels sorted, bool indicator ndarray (n_documents, n_labels)) of label sets; each set
    must be a non-empty collection of names (a single str is refused, not split)."""
    sets = []
    for i, labels in enumerate(y):
        if isinstance(labels, (str, bytes)):
            raise ValueError(f"document {i}: labels must be a list of names, not a single "
                             f"{type(labels).__name__}; wrap it in a list: [label]")
        labels = [str(label) for label in labels]
        if not labels:
            raise ValueError(f"document {i} has no labels")
        sets.append(labels)
    names = np.array(sorted({label for labels in sets for label in labels}), dtype=str)
    if names.size < 1:
        raise ValueError("cannot fit on an empty training set")
    rows = np.repeat(np.arange(len(sets)), [len(labels) for labels in sets])
    cols = np.searchsorted(names, [label for labels in sets for label in labels])
    Y = np.zeros((len(sets), names.size), dtype=bool)
    Y[rows, cols] = True
    return names, Y


def _counts(X: Any, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(documents per label (n_labels,), counts per label and term (n_labels, n_terms), counts
    per term (n_terms,)): Yᵀ 1, Yᵀ X and 1ᵀ X, one sparse product for all labels."""
    feature = np.asarray((X.T @ Y.astype(float)).T)
    return Y.sum(axis=0).astype(float), feature, np.asarray(X.sum(axis=0)).ravel()


def _log_odds_model(label_count: np.ndarray, feature_count: np.ndarray, total_count: np.ndarray,
                    n_documents: float, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(bias (n_labels,), weights (n_labels, n_terms)) of the log-odds b + X Wᵀ: b = ln n_l −
    ln (n − n_l), W = ln P(w|l) − ln P(w|¬l), P(w|l) = (n_wl + α) / (n_l + α|V|)."""
    n_terms = feature_count.shape[1]
    rest = np.maximum(total_count - feature_count, 0.0)  # ≥ 0: float sums may round below

    def log_theta(counts: np.ndarray) -> np.ndarray:
        smoothed = counts + alpha
        return np.log(smoothed) - np.log(counts.sum(axis=1) + alpha * n_terms)[:, None]

    bias = (np.log(np.maximum(label_count, _LEAST_COUNT))
            - np.log(np.maximum(n_documents - label_count, _LEAST_COUNT)))
    return bias, log_theta(feature_count) - log_theta(rest)


def _class_model(label_count: np.ndarray, feature_count: np.ndarray, alpha: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(bias (n_labels,), weights (n_labels, n_terms)) of z = b + X Wᵀ, the labels as the
    classes of one multinomial NB: b = ln n_l − ln Σ_m n_m, W = ln P(w|l), P(w|l) = (n_wl + α)
    / (n_l + α|V|). A label absent from a fold's training part counts as half a document."""
    smoothed = feature_count + alpha
    weights = np.log(smoothed) - np.log(smoothed.sum(axis=1))[:, None]
    documents = np.maximum(label_count, _LEAST_COUNT)
    return np.log(documents) - np.log(documents.sum()), weights


def posterior_log_odds(z: np.ndarray) -> np.ndarray:
    """z_l − ln Σ_{m≠l} e^{z_m} per row of z (n_documents, n_labels): the log-odds of each
    label's posterior softmax(z)_l, capped at ±745. For every label but the row's largest the
    sum leaving out l is the row's sum minus e^{z_l}, which the largest keeps ≥ 1 (scaled by
    it); the largest label's is summed again without it, scaled by the second largest, since
    1 − P cancels there."""
    n, k = z.shape
    if k == 1:  # no other label: P = 1
        return np.full(z.shape, _MAX_LOG_ODDS)
    rows = np.arange(n)
    top = np.argmax(z, axis=1)
    peak = z[rows, top][:, None]
    e = np.exp(z - peak)
    rest = np.log(np.maximum(e.sum(axis=1)[:, None] - e, np.finfo(float).tiny)) + peak
    without = z.copy()
    without[rows, top] = -np.inf
    second = without.max(axis=1)[:, None]
    rest[rows, top] = (np.log(np.exp(without - second).sum(axis=1)[:, None]) + second)[:, 0]
    return np.clip(z - rest, -_MAX_LOG_ODDS, _MAX_LOG_ODDS)


def choose_thresholds(scores: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """Per label, the threshold on the log-odds that maximises F1 = 2TP / (TP + FP + P) on
    ``scores`` (n_documents, n_labels) against the indicators Y, with Yang's (2001) fallback
    for labels the cross-validation cannot judge (SCutFBR), and the precision, recall and F1
    the cut gives there: ({"precision": [...], "recall": [...], "f1": [...], "fallback":
    [reason or "", ...], "documents": n}).

    Deciding "l" for the top k scores of a label, for every k at once: sort each column,
    accumulate its true positives, keep the cuts between two distinct scores (a cut inside a
    run of equal scores cannot be made) that take at most half of the documents, or twice as
    many as carry the label when more: a threshold most documents pass is never chosen. The
    threshold is the midpoint of the cut, or 1 below the lowest score when every document is
    taken. A label of fewer than MIN_DOCUMENTS documents or of a best F1 below FLOOR falls back
    to a threshold of at least 0 (P(l|x) ≥ 0.5): an F1 of one or two held-out documents says
    nothing, and a cut chosen on it gave Reuters' rare topics to every story.
    """
    n = scores.shape[0]
    order = np.argsort(-scores, axis=0, kind="stable")
    ranked = np.take_along_axis(scores, order, axis=0)
    tp = np.cumsum(np.take_along_axis(Y, order, axis=0), axis=0, dtype=float)
    taken = np.arange(1, n + 1, dtype=float)[:, None]
    positives = Y.sum(axis=0).astype(float)
    f1 = 2 * tp / (taken + positives)
    cuttable = np.ones_like(f1, dtype=bool)
    cuttable[:-1] = ranked[:-1] > ranked[1:]
    cuttable &= taken <= np.maximum(n / 2, 2 * positives)
    best = np.argmax(np.where(cuttable, f1, -1.0), axis=0)
    columns = np.arange(scores.shape[1])
    below = ranked[np.minimum(best + 1, n - 1), columns]
    thresholds = np.where(best + 1 < n, (ranked[best, columns] + below) / 2,
                          ranked[-1] - 1.0)
    none = positives == 0
    thresholds[none] = ranked[0, none] + 1.0
    hits = tp[best, columns]
    precision = np.where(none, 0.0, hits / (best + 1))
    recall = np.where(none, 0.0, hits / np.maximum(positives, 1))
    best_f1 = np.where(none, 0.0, f1[best, columns])
    fallback = [f"{int(p)} document{'s' * (p != 1)} < {MIN_DOCUMENTS}" if p < MIN_DOCUMENTS else
                f"CV F1 {f:.3f} < {FLOOR}" if f < FLOOR else ""
                for p, f in zip(positives.tolist(), best_f1.tolist())]
    back = np.array([bool(reason) for reason in fallback], dtype=bool)
    thresholds[back] = np.maximum(thresholds[back], 0.0)
    return thresholds, {"precision": precision.tolist(), "recall": recall.tolist(),
                        "f1": best_f1.tolist(), "fallback": fallback, "documents": int(n)}


def _micro_f1(chosen: np.ndarray, Y: np.ndarray) -> float:
    """2 TP / (labels given + labels carried) over all documents and labels."""
    return float(2 * (chosen & Y).sum() / (chosen.sum() + Y.sum()))


def decide(scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """bool (n_documents, n_labels): score ≥ threshold, and where no label of a document
    reaches its threshold, the one of the largest score − threshold."""
    margin = scores - thresholds
    chosen = margin >= 0
    rows = np.flatnonzero(~chosen.any(axis=1))
    chosen[rows, np.argmax(margin[rows], axis=1)] = True
    return chosen


# -- reading labelled documents --------------------------------------------------------------

def read_label_file(path: str | os.PathLike) -> list[tuple[str, list[str]]]:
    """(document path, labels) of each line of a label file: a path, then one or more labels,
    separated by white space (Reuters-21578's ``cats.txt``: ``training/9865 earn``). A
    relative path is relative to the file's directory. Blank lines and lines starting with #
    are skipped; a path named on several lines gets the labels of them all. DocumentError for
    a line with no label or a file that names no document."""
    name = os.fspath(path)
    base = os.path.dirname(os.path.abspath(name))
    try:
        with open(name, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise DocumentError(f"cannot read label file '{name}': {error.strerror or error}") from None
    found: dict[str, list[str]] = {}
    for number, text in enumerate(lines, 1):
        fields = text.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 2:
            raise DocumentError(f"{name}, line {number}: {fields[0]!r} has no label; "
                                f"expected PATH LABEL [LABEL ...]")
        if "\0" in fields[0]:  # no file is named so: said here, not as "embedded null byte"
            raise DocumentError(f"{name}, line {number}: the path holds a NUL byte")
        document = os.path.normpath(os.path.join(base, fields[0]))
        labels = found.setdefault(document, [])
        labels += [label for label in fields[1:] if label not in labels]
    if not found:
        raise DocumentError(f"label file '{name}' names no document")
    return list(found.items())


def merge_duplicates(texts: Sequence[bytes], label_sets: Sequence[Sequence[str]],
                     ) -> tuple[list[bytes], list[list[str]]]:
    """Identical documents (the same bytes) as one, with the union of their labels, in the
    order first seen: a post cross-posted to several groups, found in several class
    directories, is one document of several labels."""
    index: dict[bytes, int] = {}
    merged_texts: list[bytes] = []
    merged_labels: list[list[str]] = []
    for text, labels in zip(texts, label_sets):
        key = hashlib.blake2b(bytes(text), digest_size=16).digest()
        i = index.setdefault(key, len(merged_texts))
        if i == len(merged_texts):
            merged_texts.append(text)
            merged_labels.append([])
        merged_labels[i] += [label for label in labels if label not in merged_labels[i]]
    return merged_texts, merged_labels


# -- model file --------------------------------------------------------------------------


