"""labelled texts → the TextClassifier settings that cross-validate best: ``train --tune``.

The texts are tokenized once, with word pairs and stop words kept, and counted once; every
candidate is a view of that one count matrix (its unigram columns, without the stop words'
columns, or all), weighed (raw counts, log(1 + count) or presence; unit length or not), and
counted per class once per weighing: a fold's model is those counts less its held part's, and
the smoothing α changes only the log probabilities (``_update``), not the counts. Every
weighing and model is tried on single words at the classifier's α with stop words kept, the
best three with the classifier's stop words removed too; every α for the best three of those;
and word pairs, stop words kept, for the best two at the best α and its neighbours: a
coordinate search, which costs a few plain trainings. Dropping the stop words' columns gives
exactly the counts of a tokenizer that removes them (their pairs would differ, so pairs keep
them); with stemming or ``max_features`` it would not, and the classifier's own stop words are
then the only ones tried. Keeping stop words won on every corpus tried
(docs/design/text-classification.md; ``python -m bench.sentiment``).

The score is the accuracy of the most probable class; for two-class mail (a spam class among
two) it is the ROC AUC of the spam log-odds, which is what learned cutoffs act on. Of the best
setting's α values, the largest within one standard error of the best score is chosen
(:func:`smoothest`).
"""

from __future__ import annotations

import itertools
import statistics
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..folds import small_class_folds, stratified_folds
from ..text.stopwords import load_stop_words
from ..workers import n_workers

# The grid: what the textbooks and the literature vary (Rennie et al. 2003; Wang & Manning
# 2012 for presence and word pairs on sentiment).
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0)
MODELS = ("complement", "multinomial", "bernoulli")
TFS = ("raw", "log", "binary")
NORMS = (None, "l2")
NGRAMS = ((1, 1), (1, 2))
FOLDS = 5
# Settings of the unigram search tried again with word pairs.
WIDER = 2
# A tuning row's stop words when the classifier was given a collection of words, not a name.
GIVEN = "given"


@dataclass
class Tuning:
    """What ``tune`` found: the rows (settings, mean, sd per fold) best first, and the one
    chosen (``rows[chosen]``, :func:`smoothest`)."""

    metric: str
    folds: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    # The one count: the tokenizer settings it was made with, its vocabulary, the counts (CSR,
    # before weighing) and the documents' digests.
    counted: tuple[dict[str, Any], Any, Any, np.ndarray] | None = field(default=None, repr=False)
    chosen: int = 0
    # What the folds did with classes smaller than them (:func:`small_classes`), or "".
    note: str = ""

    @property
    def best(self) -> dict[str, Any]:
        """The chosen row."""
        return self.rows[self.chosen]

    @property
    def settings(self) -> dict[str, Any]:
        """The best row as TextClassifier parameters."""
        best = self.best
        settings = {"model": best["model"], "alpha": best["alpha"], "tf": best["tf"],
                    "norm": best["norm"], "ngram_range": tuple(best["ngram_range"])}
        if best["stop_words"] != GIVEN:
            settings["stop_words"] = best["stop_words"]
        return settings

    def refit(self, classifier: Any, labels: Sequence) -> bool:
        """Fit ``classifier`` (given the chosen settings) on the documents as this tuning
        counted them, if they are what its tokenizer counts — the same model, digests and
        cutoffs as ``fit``, without reading, tokenizing and building the vocabulary again;
        False if they are not."""
        if self.counted is None:
            return False
        tokenizing, vocabulary, X, digests = self.counted
        if any(classifier.get_params()[name] != value for name, value in tokenizing.items()):
            return False
        self.counted = None  # let the counts go once the model holds them
        classifier.ngram_range_ = classifier.default_ngram_range(labels)
        classifier._build(labels)
        classifier._fit_vocabulary(vocabulary, X, list(labels), digests)
        return True

    def summary(self, top: int = 10) -> dict[str, Any]:
        """The JSON-able record kept in the model file."""
        summary = {"metric": self.metric, "folds": self.folds, "candidates": len(self.rows),
                   "best": self.best, "top": self.rows[:top]}
        return {**summary, "note": self.note} if self.note else summary


def tune(classifier: Any, texts: Sequence, labels: Sequence, folds: int = FOLDS,
         seed: int = 0, alphas: Sequence[float] = ALPHAS, models: Sequence[str] = MODELS,
         tfs: Sequence[str] = TFS, norms: Sequence[str | None] = NORMS,
         ngrams: Sequence[tuple[int, int]] = NGRAMS) -> Tuning:
    """Cross-validate the grid of settings around ``classifier`` (a TextClassifier whose other
    settings — stemming, pruning, priors, spam_class — stay; its stop words are tried removed
    and kept) on ``texts``."""
    from ..text.features import noting_digests
    from ..text.vocabulary import Vocabulary, to_scipy

    y = np.array(labels, dtype=str)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError("tuning needs at least two classes")
    spam = classifier.spam_class if classes.size == 2 and classifier.spam_class in classes else None
    sizes = np.unique(y, return_counts=True)[1]
    if spam and sizes.min() < 2:
        raise ValueError("tuning two-class mail (by the ROC AUC of its folds) needs at least "
                         "two documents of each class")
    if sizes.max() < 2:
        raise ValueError("tuning needs a class of at least two documents")
    # "auto": the English list is tried removed and kept, whatever the classes.
    named = "english" if classifier.stop_words == "auto" else classifier.stop_words
    stops = load_stop_words(named)
    own = named if isinstance(named, str) else GIVEN
    kept = "none" if stops and classifier.stemmer is None and classifier.max_features is None \
        else own
    wide = max(high for _, high in ngrams)
    counter = type(classifier)(**{**classifier.get_params(), "ngram_range": (1, wide),
                                  "stop_words": named if kept == GIVEN else kept})
    counter._build()
    # With digests: a classifier of the chosen settings is fitted on these counts (Tuning.refit).
    # Each part's terms are numbered as it comes, while the workers count the next.
    found: list[np.ndarray] = []
    vocabulary = Vocabulary(min_df=classifier.min_df, max_df=classifier.max_df,
                            max_features=classifier.max_features)
    matrix = vocabulary.fit_parts(noting_digests(counter._count_stream(texts), found))
    digests = np.concatenate(found)
    counts = to_scipy(matrix)
    single = np.array([" " not in term for term in vocabulary.terms_])
    # The single words' columns for each stop-word setting (a header token is "name:word"),
    # taken once: 19 of 21 settings score them (20 Newsgroups: 80 ms a time, 1.8 million of
    # the 4.5 million entries, 21 MB a view).
    words = {kept: counts[:, single]}
    if kept != own:
        words[own] = counts[:, single & ~np.array([t.split(":", 1)[-1] in stops
                                                    for t in vocabulary.terms_])]
    # Mail's folds each hold both classes (an AUC needs them); other classes may be smaller
    # than the folds, and a class of one document stays in training (small_class_folds).
    if spam:
        k = int(min(folds, sizes.min()))
        fold = stratified_folds(y, k, seed)
    else:
        fold, k = small_class_folds(y, folds, seed)
    metric = "1 - ROC AUC" if spam else "accuracy"
    rows: list[dict[str, Any]] = []

    def search(ngram: tuple[int, int], settings: Sequence[tuple[str, str, str | None, str]],
               alphas: Sequence[float] = alphas) -> None:
        if not alphas or not settings:
            return

        def scored(setting: tuple[str, str, str | None, str]) -> dict[float, list[float]]:
            stop, tf, norm, model = setting
            X = counts if ngram[1] > 1 else words[stop]
            return _cross_validate(classifier, _weigh(X, tf, norm), y, fold, k, model, alphas,
                                   spam)

        # Settings in threads, one per core (n_jobs): numpy and scipy let go of the GIL for
        # most of a fold's work (20 Newsgroups' tuning 27.0 → 21.5 s on 2 cores), and each
        # thread holds one weighing and one fold's counts (word pairs: 190 MB).
        settings = list(dict.fromkeys(settings))
        with ThreadPoolExecutor(n_workers(classifier.n_jobs)) as threads:
            for (stop, tf, norm, model), scores in zip(settings, threads.map(scored, settings)):
                for alpha, per_fold in scores.items():
                    rows.append({"model": model, "alpha": alpha, "ngram_range": list(ngram),
                                 "stop_words": stop, "tf": tf, "norm": norm,
                                 "mean": statistics.fmean(per_fold),
                                 "sd": statistics.stdev(per_fold) if k > 1 else 0.0})

    # A coordinate search: every weighing and event model on single words at the classifier's
    # own alpha, stop words kept, and the best few with the classifier's stop words removed;
    # every alpha for the best few of those; word pairs, which cost ten times as much to score,
    # for the best two at the best alpha and its neighbours.
    def best(n: int, stop_words: Sequence[str] = tuple(words)) -> list[tuple]:
        ranked = sorted(rows, key=lambda r: r["mean"] if spam else -r["mean"])
        return list(dict.fromkeys((r["stop_words"], r["tf"], r["norm"], r["model"])
                                  for r in ranked if r["stop_words"] in stop_words))[:n]

    grid = [(kept, tf, norm, model) for tf, norm in itertools.product(tfs, norms)
            for model in models if model != "bernoulli" or (tf, norm) == ("binary", None)]
    if classes.size == 2 and "complement" in models:
        # Two classes: complement NB ranks and decides as multinomial NB does.
        grid = [g for g in grid if g[3] != "multinomial"]
    ngrams = sorted(ngrams, key=lambda n: n[1])
    start = classifier.alpha if classifier.alpha in alphas else sorted(alphas)[len(alphas) // 2]
    search(ngrams[0], grid, [start])
    if own != kept:
        search(ngrams[0], [(own, *s[1:]) for s in best(WIDER + 1)], [start])
    search(ngrams[0], best(WIDER + 1), [a for a in alphas if a != start])
    for ngram in ngrams[1:]:
        top = sorted(rows, key=lambda r: r["mean"] if spam else -r["mean"])[0]
        at = sorted(alphas).index(top["alpha"])
        search(ngram, best(WIDER, [kept]), sorted(alphas)[max(at - 1, 0):at + 2])
    rows.sort(key=lambda r: r["mean"] if spam else -r["mean"])
    tokenizing = {name: counter.get_params()[name] for name in ("ngram_range", "stop_words")}
    return Tuning(metric, k, rows, (tokenizing, vocabulary, matrix, digests),
                  smoothest(rows, k, lower_is_better=spam is not None), small_classes(y, k))


def small_classes(y: np.ndarray, k: int) -> str:
    """What k folds do with the classes of ``y`` smaller than them, in a sentence ("" if
    none): classes of one document are in every fold's training part and never scored; a class
    of fewer documents than folds is held out in as many folds as it has documents."""
    names, sizes = np.unique(y, return_counts=True)
    said = []
    single = names[sizes == 1]
    if single.size:
        said.append(f"{_classes(single)} of one document never held out (in every fold's "
                    f"training part, not scored)")
    few = names[(sizes > 1) & (sizes < k)]
    if few.size:
        said.append(f"{_classes(few)} of 2-{k - 1} documents held out in as many folds as "
                    f"they have documents")
    return "; ".join(said)


def _classes(names: np.ndarray, shown: int = 3) -> str:
    """'N classes (a, b, c, ...)'."""
    listed = ", ".join(map(str, names[:shown])) + (", ..." if names.size > shown else "")
    return f"{names.size} class{'es' if names.size > 1 else ''} ({listed})"


def smoothest(rows: Sequence[dict[str, Any]], folds: int, lower_is_better: bool = False) -> int:
    """The row to choose of ``rows`` (best first): of those that differ from the best in α
    alone, the one of most smoothing (largest α) whose mean is within one standard error of the
    best's, sd/√folds — the one-standard-error rule (Breiman et al. 1984; Hastie, Tibshirani &
    Friedman, §7.10): between scores the folds cannot tell apart, the simpler model. Shuffled
    folds share threads and authors between training and held-out parts, which rewards too
    little smoothing: 20 Newsgroups chose α 0.01 (CV 0.9414 ± 0.0031) over 0.03 (0.9410),
    whose bydate test accuracy is higher (0.8728 → 0.8755); the reviews keep their α 0.1
    (Rotten Tomatoes, IMDB: the next, 0.3, is more than one standard error worse)."""
    best = rows[0]
    margin = best["sd"] / folds ** 0.5
    bound = best["mean"] + margin if lower_is_better else best["mean"] - margin
    settings = ("model", "ngram_range", "stop_words", "tf", "norm")
    near = [i for i, row in enumerate(rows)
            if all(row[name] == best[name] for name in settings)
            and (row["mean"] <= bound if lower_is_better else row["mean"] >= bound)]
    return max(near, key=lambda i: rows[i]["alpha"])


def _cross_validate(classifier: Any, X: Any, y: np.ndarray, fold: np.ndarray, k: int,
                    model: str, alphas: Sequence[float], spam: str | None) -> dict[float, list[float]]:
    """alpha → the score of each fold. A model is its counts, and a fold's training part counts
    what the whole does less what its held part does: X is counted once, each fold only its held
    part (a fifth of a fit of the rest). Each alpha derives the model's weights again
    (``_update``), of the held part's terms only: jll = x' @ w.T + bias, whose argmax is the
    prediction and whose difference of two classes the log-odds."""
    from scipy.sparse import csr_matrix
    from ..classifier import MODELS as EVENT_MODELS
    from .metrics import roc_auc
    new_model = EVENT_MODELS[model]
    params = {"fit_prior": classifier.fit_prior, "class_prior": classifier.class_prior}
    classes, row_class = np.unique(y, return_inverse=True)
    if new_model._binary:
        X = csr_matrix(((X.data > 0).astype(float), X.indices, X.indptr), shape=X.shape)
    indicator = csr_matrix((np.ones(y.size), (row_class, np.arange(y.size))),
                           shape=(classes.size, y.size))
    # The whole's counts kept sparse, a fold's written into one dense buffer: the model reads
    # every class's row, and each dense (n_classes, n_terms) array of 20 Newsgroups' word
    # pairs is 190 MB.
    total = (indicator @ X).tocoo()
    class_total = np.bincount(row_class, minlength=classes.size)
    counts = np.zeros(total.shape)
    counts[total.row, total.col] = total.data
    s = int(np.flatnonzero(classes == spam)[0]) if spam else 0
    scores: dict[float, list[float]] = {alpha: [] for alpha in alphas}
    for f in range(k):
        held = fold == f
        X_held = X[held]
        held_counts = (indicator[:, held] @ X_held).tocoo()
        # The held part's cells taken out of the whole's counts, and put back after the fold:
        # not the whole written again each fold (word pairs: 190 MB).
        cells = held_counts.row * counts.shape[1] + held_counts.col   # flat: no 2-d fancy index
        flat = counts.reshape(-1)
        whole = flat[cells]
        flat[cells] = whole - held_counts.data
        nb = new_model(alpha=alphas[0], **params)
        nb.classes_ = classes
        nb.restore_counts((class_total - np.bincount(row_class[held], minlength=classes.size))
                          .astype(float), counts)
        # The held part over its own terms: weights are derived for those alone.
        present = np.zeros(X.shape[1], dtype=bool)
        present[X_held.indices] = True
        used = np.flatnonzero(present)
        column = np.cumsum(present) - 1   # a used term's column among the used (no sort)
        X_used = csr_matrix((X_held.data, column[X_held.indices], X_held.indptr),
                            shape=(X_held.shape[0], used.size))
        used_counts = nb._count_columns(used)   # the same for every alpha
        for alpha in alphas:
            nb.alpha = alpha
            nb._update(counts_changed=False)
            jll = X_used @ nb._weights(used_counts, used).T + nb._bias()
            if spam:
                score = 1.0 - roc_auc(y[held] == spam, jll[:, s] - jll[:, 1 - s])
            else:
                score = float(np.mean(classes[jll.argmax(axis=1)] == y[held]))
            scores[alpha].append(score)
        flat[cells] = whole
    return scores


def _weigh(X: Any, tf: str, norm: str | None) -> Any:
    """X (scipy CSR counts) weighed as TextClassifier weighs documents."""
    X = X.astype(float)
    if tf == "log":
        X.data = np.log1p(X.data)
    elif tf == "binary":
        X.data = np.ones_like(X.data)
    if norm == "l2":
        lengths = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        lengths[lengths == 0] = 1.0
        X = X.multiply(1.0 / lengths[:, None]).tocsr()
    return X
