"""labelled texts → the TextClassifier settings that cross-validate best: ``train --tune``.

The texts are tokenized once, with word pairs and stop words kept, and counted once, a pair as
its two words' numbers, the pairs of one document dropped before any is made a string
(:func:`prune_pairs`, :meth:`~textnb.text.vocabulary.Vocabulary.fit_pairs`); every candidate
is a view of that one count matrix (its unigram columns, without the stop words' columns, or
all), weighed (raw counts, log(1 + count) or presence; unit length or not), and counted per
class once per weighing, for all its event models: a fold's model is those counts less its
held part's, scored from the parts of its weights (:class:`_Parts`), and the smoothing α
changes only the logarithms, not the counts. Every
weighing and model is tried on single words at the classifier's α with stop words kept, the
best three with the classifier's stop words removed too; every α for the best three of those;
and word pairs, stop words kept, for the best two at the best α and its neighbours, and where
removing the stop words won on single words, the pairs of the words left for the best two
without them, counted a second time (Reuters' one-topic stories: CV 0.918 → 0.928): a
coordinate search, which costs a few plain trainings. The weighings are scored one at a time,
fold by fold, and raced (after Maron & Moore 1994, "Hoeffding Races", with the CV's own spread
for a bound): a candidate whose mean over its first folds trails the best complete candidate's
mean over the same folds by more than ``RACE`` of that one's fold-to-fold standard deviations
is not scored on the rest, and its row says after how many folds it stopped (``stopped``).
Dropping the stop words' columns gives exactly the counts of a tokenizer that removes them
(not of its pairs: "prices of oil" pairs "prices oil" once "of" is gone, hence the second
count); with stemming or ``max_features`` it would not, and the classifier's own stop words are
then the only ones tried (docs/design/text-classification.md; ``python -m bench.sentiment``).

The score is the accuracy of the most probable class; for two-class mail (a spam class among
two) it is the ROC AUC of the spam log-odds, which is what learned cutoffs act on. Classes
smaller than the folds are dealt by :func:`textnb.folds.small_class_folds`. Of the best
setting's α values, the largest within one standard error of the best score is chosen
(:func:`smoothest`).
"""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..folds import small_class_folds, stratified_folds
from ..heap import give_back
from ..nb.sparse import StoredCounts
from ..store.schema import MAX_CELLS, MAX_COMPARISONS
from ..text.stopwords import load_stop_words

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
# A candidate stops when it trails the leader on the same folds by more than this many of the
# leader's fold-to-fold standard deviations: the folds' scores of two settings rise and fall
# together, so a gap of one standard deviation after one fold is already far (20 Newsgroups:
# multinomial NB trails complement NB by 0.02, some seven of them). At 2 the choice is full CV's
# on 20 Newsgroups and SpamAssassin (docs/design/training-speed.md).
RACE = 2.0
# A tuning row's stop words when the classifier was given a collection of words, not a name.
GIVEN = "given"


@dataclass
class Tuning:
    """What ``tune`` found: the rows (settings, mean, sd per fold) best first, and the one
    chosen (``rows[chosen]``, :func:`smoothest`)."""

    metric: str
    folds: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    # The count the chosen row's stop words were scored on: its vocabulary, the counts (CSR,
    # before weighing), the documents' digests, and the (ngram_range, stop_words) counted.
    counted: tuple[Any, Any, np.ndarray, tuple] | None = field(default=None, repr=False)
    chosen: int = 0
    # What the search did otherwise than asked: with classes smaller than the folds
    # (:func:`small_classes`), without word pairs a model file could not hold; or "".
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
        counted them, if its tokenizer's counts are these — words and pairs with the chosen
        row's stop words (kept, or removed where their pairs were counted apart), less the
        pairs of one document (:func:`prune_pairs`) — the same model,
        digests and cutoffs as ``fit`` on those terms, without reading, tokenizing and
        building the vocabulary again; False if they are not. A subset of the columns (single
        words, stop words removed) is not refitted: its documents' digests are of other tokens
        than these, and ``learn`` would not know the documents again."""
        if self.counted is None:
            return False
        vocabulary, digests, counter = (self.counted[i] for i in (0, 2, 3))
        params = classifier.get_params()
        stop = params["stop_words"]
        if (tuple(params["ngram_range"] or ()), stop if isinstance(stop, str) else GIVEN) \
                != counter:
            return False
        classifier.ngram_range_ = classifier.default_ngram_range(labels)
        classifier._build(labels)
        # The counts handed over, not held here: the fit lets them go once weighed, before it
        # makes the model's counts (20 Newsgroups' words and pairs: 44 MB, then 13 MB stored).
        counts, self.counted = [self.counted[1]], None
        classifier._fit_vocabulary(vocabulary, counts.pop(), list(labels), digests)
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
    from types import SimpleNamespace
    from ..text.vocabulary import to_scipy
    from ..workers import n_workers

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
    vocabulary, matrix, digests = _count(counter, texts)
    give_back()
    counts = to_scipy(matrix)
    single = np.array([" " not in term for term in vocabulary.terms_])
    # The single words' columns for each stop-word setting (a header token is "name:word"):
    # 19 of 21 settings score them (20 Newsgroups: 1.8 million of the 3.7 million entries).
    masks = {kept: single}
    if kept != own:
        masks[own] = single & ~np.array([t.split(":", 1)[-1] in stops for t in vocabulary.terms_])
    # One stop-word setting's single words, taken when a weighing needs them, let go for the
    # other setting's and before pairs: each is 21 MB (20 Newsgroups) and 80 ms to take.
    words: dict[str, Any] = {}
    layouts: dict[str, _Layout] = {}   # and where their entries go in each fold
    # Word pairs only where the model file could hold them (MAX_COMPARISONS: info compares
    # every class with every other, term by term).
    n_classes = classes.size

    def holds(terms: int) -> bool:
        return n_classes * n_classes * terms <= MAX_COMPARISONS and n_classes * terms <= MAX_CELLS
    roomy = holds(len(vocabulary))
    if not roomy:
        ngrams = [n for n in ngrams if n[1] == 1] or [(1, 1)]
    # Mail's folds each hold both classes (an AUC needs them); other classes may be smaller
    # than the folds, and a class of one document stays in training (small_class_folds).
    if spam:
        k = int(min(folds, sizes.min()))
        fold = stratified_folds(y, k, seed)
    else:
        fold, k = small_class_folds(y, folds, seed)
    metric = "1 - ROC AUC" if spam else "accuracy"
    rows: list[dict[str, Any]] = []

    leader: dict[str, Any] = {}  # the best candidate scored on every fold: mean, sd, scores
    # A worker process readied for a search's last weighing (search).
    ready = _Elsewhere(_ready, (), classifier.n_jobs) if n_workers(classifier.n_jobs) > 1 else None

    def behind(per_fold: list[float]) -> bool:
        """Whether a candidate's scores on its first folds trail the leader's on the same folds
        by more than RACE of the leader's standard deviations over the folds (none of a leader
        whose folds agree exactly: no spread to judge by)."""
        if not leader or leader["sd"] == 0 or len(per_fold) >= k:
            return False
        gap = statistics.fmean(leader["scores"][:len(per_fold)]) - statistics.fmean(per_fold)
        return (-gap if spam else gap) > RACE * leader["sd"]

    def search(ngram: tuple[int, int], settings: Sequence[tuple[str, str, str | None, str]],
               alphas: Sequence[float] = alphas, pairs: Any = None) -> None:
        """Score ``settings`` (stop words, tf, norm, model) at ``alphas``: of single words, or
        of ``pairs`` (a count of words and pairs) for ``ngram`` (1, 2)."""
        if not alphas or not settings:
            return
        # The settings of one weighing share its counts and each fold's model counts: their
        # event models are scored together. One weighing at a time in this process: each
        # holds its weighed counts and a fold's (single words some 75 MB, pairs 100 MB), and a
        # race needs the leader of those before (docs/design/training-speed.md); the last in a
        # worker process meanwhile, on every fold, raced afterwards (_Elsewhere, _raced).
        models_of: dict[tuple, list[str]] = {}
        for stop, tf, norm, model in dict.fromkeys(settings):
            models_of.setdefault((stop, tf, norm), []).append(model)
        if ngram[1] > 1:
            words.clear()
            layouts.clear()
        elsewhere = None
        if len(models_of) > 1 and ready is not None:
            (stop, tf, norm), models = list(models_of.items())[-1]
            count = (pairs if ngram[1] > 1 else words[stop] if stop in words else
                     counts[:, masks[stop]])
            settings = SimpleNamespace(fit_prior=classifier.fit_prior,
                                       class_prior=classifier.class_prior)
            elsewhere = _Elsewhere(_weighing_scores, (count, tf, norm, settings, y, fold, k,
                                                      models, tuple(alphas), spam),
                                   classifier.n_jobs, after=ready)
            del count
        for i, ((stop, tf, norm), models) in enumerate(models_of.items()):
            began = time.perf_counter()
            if elsewhere and i == len(models_of) - 1:
                scores, cost, seconds = elsewhere.result()
                scores = _raced(scores, behind)
            else:
                if ngram[1] == 1 and stop not in words:   # one setting's columns at a time
                    words.clear()
                    layouts.clear()
                    words[stop] = counts[:, masks[stop]]
                    layouts[stop] = _Layout()
                scores, cost, _ = _weighing_scores(pairs if ngram[1] > 1 else words[stop], tf,
                                                   norm, classifier, y, fold, k, models,
                                                   alphas, spam, behind, layouts.get(stop))
                seconds = time.perf_counter() - began
            for model, by_alpha in scores.items():
                for alpha, per_fold in by_alpha.items():
                    row = {"model": model, "alpha": alpha, "ngram_range": list(ngram),
                           "stop_words": stop, "tf": tf, "norm": norm,
                           "mean": statistics.fmean(per_fold),
                           "sd": statistics.stdev(per_fold) if len(per_fold) > 1 else 0.0,
                           "seconds": round(seconds / len(scores) / len(by_alpha), 6),
                           "megabytes": round(cost / 1e6, 6)}
                    if len(per_fold) < k:
                        row["stopped"] = len(per_fold)
                    elif not leader or (row["mean"] < leader["mean"] if spam
                                        else row["mean"] > leader["mean"]):
                        leader.update(mean=row["mean"], sd=row["sd"], scores=per_fold)
                    rows.append(row)

    def ranked() -> list[dict[str, Any]]:
        """The rows best first, those stopped early after all others (a mean of other folds)."""
        return sorted(rows, key=lambda r: ("stopped" in r, r["mean"] if spam else -r["mean"]))

    # A coordinate search: every weighing and event model on single words at the classifier's
    # own alpha, stop words kept, and the best few with the classifier's stop words removed;
    # every alpha for the best few of those; word pairs, which cost ten times as much to score,
    # for the best two at the best alpha and its neighbours.
    def best(n: int, stop_words: Sequence[str] = tuple(masks)) -> list[tuple]:
        return list(dict.fromkeys((r["stop_words"], r["tf"], r["norm"], r["model"])
                                  for r in ranked() if r["stop_words"] in stop_words))[:n]

    # The classifier's own weighing first: the leader the others race against.
    weighings = sorted(itertools.product(tfs, norms),
                       key=lambda w: w != (classifier.tf, classifier.norm))
    grid = [(kept, tf, norm, model) for tf, norm in weighings
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
    # Pairs of the words left, where removing the stop words won on single words by more than
    # its standard error (first_best: the folds tell them apart): a second count, their pairs
    # ("oil prices" of "prices of oil") not a subset of the first's columns. Where the folds
    # cannot tell (SpamAssassin), the second count would cost a third of the search for pairs
    # a tie could not choose.
    singles = ranked()
    removed = (own != kept and len(ngrams) > 1 and singles[0]["stop_words"] == own
               and first_best(singles, k, lambda r: r["stop_words"] == own,
                              spam is not None) == 0)
    count = {kept: (vocabulary, matrix, digests)}
    for ngram in ngrams[1:]:
        top = ranked()[0]
        at = sorted(alphas).index(top["alpha"])
        search(ngram, best(WIDER, [kept]), sorted(alphas)[max(at - 1, 0):at + 2], counts)
        if removed:
            if own not in count:
                count[own] = _count(type(classifier)(**{**counter.get_params(),
                                                        "stop_words": named}), texts)
            if not holds(len(count[own][0])):
                del count[own]
                break
            search(ngram, best(WIDER, [own]), sorted(alphas)[max(at - 1, 0):at + 2],
                   to_scipy(count[own][1]))
    rows[:] = ranked()

    # Pairs without the stop words, where counted, only where they beat the rest clearly.
    first = first_best(rows, k, lambda r: r["stop_words"] == own and r["ngram_range"][1] > 1,
                       spam is not None) if own != kept and own in count else 0
    chosen = smoothest(rows, k, lower_is_better=spam is not None, best=first)
    # The count of the chosen row's stop words is the one a fit of its settings would make.
    stop = rows[chosen]["stop_words"] if rows[chosen]["stop_words"] in count else kept
    note = "; ".join(filter(None, [small_classes(y, k), "" if roomy else
                                   f"word pairs not tried: {n_classes} classes × "
                                   f"{len(vocabulary)} terms would make a model file too large "
                                   f"to read"]))
    return Tuning(metric, k, rows, (*count[stop], ((1, wide), stop)), chosen, note)


def _weighing_scores(count: Any, tf: str, norm: str | None, classifier: Any, y: np.ndarray,
                     fold: np.ndarray, k: int, models: Sequence[str], alphas: Sequence[float],
                     spam: str | None, behind: Callable[[list[float]], bool] | None = None,
                     layout: "_Layout | None" = None) -> tuple[dict, int, float]:
    """(:func:`_cross_validate_models` of ``count`` weighed by ``tf`` and ``norm``, the bytes
    it held: its weighed counts and the largest of its folds' arrays, its seconds)."""
    began = time.perf_counter()
    X = _weigh(count, tf, norm)
    give_back()   # the weighing's temporaries (as much again as X's values)
    cost = {"bytes": X.data.nbytes + X.indices.nbytes + X.indptr.nbytes}
    scores = _cross_validate_models(classifier, X, y, fold, k, models, alphas, spam, cost,
                                    behind, layout)
    del X
    give_back()
    return scores, cost["bytes"], time.perf_counter() - began


class _Elsewhere:
    """``function(*job)`` in a worker process (:mod:`textnb.workers`; a thread of this one
    waits for it) while this process goes on; :meth:`result` once it is done. A search's last
    weighing is scored so, on every fold, and raced afterwards (:func:`_raced`); its process
    holds the weighing's counts and folds (20 Newsgroups' pairs: some 120 MB). ``after``:
    another's to wait for first (one pool: its process has imported what this needs)."""

    def __init__(self, function: Callable, job: tuple, n_jobs: int | None,
                 after: "_Elsewhere | None" = None) -> None:
        import threading
        from ..workers import imap
        self.found: list = []

        def wait() -> None:
            if after is not None:
                after.thread.join()
            try:
                self.found.extend(imap(function, [job], n_jobs))   # to its end: the pool kept
            except BaseException as error:   # raised where the result is asked for
                self.found.append(error)
        self.thread = threading.Thread(target=wait, daemon=True)
        self.thread.start()

    def result(self) -> Any:
        self.thread.join()
        if isinstance(self.found[0], BaseException):
            raise self.found[0]
        return self.found[0]


def _ready() -> None:
    """A worker's first job: unpickling it imports this module (numpy, scipy) meanwhile."""


def _raced(scores: dict[str, dict[float, list[float]]],
           behind: Callable[[list[float]], bool] | None) -> dict[str, dict[float, list[float]]]:
    """Each candidate's fold scores up to the fold after which ``behind`` would have stopped
    it (:func:`_cross_validate_models`' race, run on scores of every fold)."""
    raced = {}
    for model, by_alpha in scores.items():
        raced[model] = {}
        for alpha, per_fold in by_alpha.items():
            n = next((f for f in range(1, len(per_fold)) if behind and behind(per_fold[:f])),
                     len(per_fold))
            raced[model][alpha] = per_fold[:n]
    return raced


def _count(counter: Any, texts: Sequence) -> tuple[Any, Any, np.ndarray]:
    """(vocabulary, counts, digests) of ``texts`` by ``counter``'s tokenizer, less the word
    pairs of one document (:func:`prune_pairs`): words and pairs are counted apart, the pairs
    by number (:meth:`~textnb.text.vocabulary.Vocabulary.fit_pairs`), where the vocabulary
    keeps every term and no word holds a space; else as ``fit`` counts them, the pairs'
    strings and all (docs/design/training-speed.md)."""
    from ..text.features import count_stream, noting_digests
    from ..text.vocabulary import SpacedWord, Vocabulary
    vocabulary = Vocabulary(min_df=counter.min_df, max_df=counter.max_df,
                            max_features=counter.max_features)
    found: list[np.ndarray] = []
    if tuple(counter.ngram_range) == (1, 2) and vocabulary.keeps_all:
        try:
            matrix = vocabulary.fit_pairs(noting_digests(count_stream(
                counter._tokenizer(), texts, counter.n_jobs, pairs=True), found))
            return vocabulary, matrix, np.concatenate(found)
        except SpacedWord:
            found.clear()
    matrix = vocabulary.fit_parts(noting_digests(counter._count_stream(texts), found))
    return (*prune_pairs(vocabulary, matrix), np.concatenate(found))


def prune_pairs(vocabulary: Any, X: Any) -> tuple[Any, Any]:
    """(vocabulary, X) without the word pairs of one document: such a pair is in no fold's
    training part when the folds score its document, so it cannot change a held-out score but
    through the smoothing's |V|, and it is most of the pairs (docs/design/text-classification.md).
    Single words are kept, so that a setting of words is fitted on what ``fit`` counts."""
    df = np.bincount(X.indices, minlength=X.shape[1])
    keep = (df >= 2) | np.array([" " not in term for term in vocabulary.terms_])
    return (vocabulary, X) if keep.all() else _columns(vocabulary, X, keep)


def _columns(vocabulary: Any, X: Any, keep: np.ndarray) -> tuple[Any, Any]:
    """A vocabulary of the terms ``keep`` marks (of ``vocabulary``'s settings), and the
    columns of X (CSR) of them."""
    from ..text.vocabulary import relabel
    kept = type(vocabulary)(min_df=vocabulary.min_df, max_df=vocabulary.max_df,
                            max_features=vocabulary.max_features, binary=vocabulary.binary)
    kept.terms_ = [term for term, k in zip(vocabulary.terms_, keep.tolist()) if k]
    column = np.cumsum(keep) - 1 - np.where(keep, 0, keep.size)
    return kept, relabel(X, column, len(kept.terms_))


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
    return "small classes: " + "; ".join(said) if said else ""


def _classes(names: np.ndarray, shown: int = 3) -> str:
    """'N classes (a, b, c, ...)'."""
    listed = ", ".join(map(str, names[:shown])) + (", ..." if names.size > shown else "")
    return f"{names.size} class{'es' if names.size > 1 else ''} ({listed})"


def first_best(rows: Sequence[dict[str, Any]], folds: int, apart: Callable[[dict], bool],
               lower_is_better: bool = False) -> int:
    """The row of ``rows`` (best first) that the choice starts from (:func:`smoothest`): the
    first, unless ``apart`` marks it (scored on a second count: word pairs without the stop
    words) and it beats the best row scored on every fold that ``apart`` does not mark by no
    more than its standard error, sd/√folds; then that row. The one-standard-error rule again:
    between scores the folds cannot tell apart, the setting of one count. IMDB: pairs without
    the stop words 0.8874 ± 0.0035 against 0.8854 with them, the latter chosen; Reuters'
    one-topic stories 0.9284 ± 0.0034 against 0.9178, the former."""
    if not rows or not apart(rows[0]):
        return 0
    first = next((i for i, row in enumerate(rows) if "stopped" not in row and not apart(row)),
                 None)
    if first is None:
        return 0
    gap = rows[0]["mean"] - rows[first]["mean"]
    return first if (-gap if lower_is_better else gap) <= rows[0]["sd"] / folds ** 0.5 else 0


def smoothest(rows: Sequence[dict[str, Any]], folds: int, lower_is_better: bool = False,
              best: int = 0) -> int:
    """The row to choose of ``rows`` (best first; or the best taken to be ``rows[best]``): of
    those that differ from the best in α alone, the one of most smoothing (largest α) whose
    mean is within one standard error of the best's, sd/√folds — the one-standard-error rule
    (Breiman et al. 1984; Hastie, Tibshirani & Friedman, §7.10): between scores the folds
    cannot tell apart, the simpler model. Shuffled folds share threads and authors between
    training and held-out parts, which rewards too little smoothing: 20 Newsgroups chose
    α 0.01 (CV 0.9414 ± 0.0031) over 0.03 (0.9410), whose bydate test accuracy is higher
    (0.8728 → 0.8755); the reviews keep their α 0.1 (Rotten Tomatoes, IMDB: the next, 0.3, is
    more than one standard error worse)."""
    best = rows[best]
    margin = best["sd"] / folds ** 0.5
    bound = best["mean"] + margin if lower_is_better else best["mean"] - margin
    settings = ("model", "ngram_range", "stop_words", "tf", "norm")
    near = [i for i, row in enumerate(rows)
            if all(row[name] == best[name] for name in settings) and "stopped" not in row
            and (row["mean"] <= bound if lower_is_better else row["mean"] >= bound)]
    return max(near, key=lambda i: rows[i]["alpha"])


# Cells (a class, a term) of the weights derived at once in a fold's scoring: a few arrays
# of a block are held at once (Bernoulli's weights: five), 4 MB each.
_BLOCK = 1 << 19


def _cross_validate(classifier: Any, X: Any, y: np.ndarray, fold: np.ndarray, k: int,
                    model: str, alphas: Sequence[float], spam: str | None) -> dict[float, list[float]]:
    """alpha → the score of each fold of the event ``model`` (:func:`_cross_validate_models`)."""
    return _cross_validate_models(classifier, X, y, fold, k, [model], alphas, spam)[model]


def _cross_validate_models(classifier: Any, X: Any, y: np.ndarray, fold: np.ndarray, k: int,
                           models: Sequence[str], alphas: Sequence[float],
                           spam: str | None, cost: dict | None = None,
                           behind: Callable[[list[float]], bool] | None = None,
                           layout: "_Layout | None" = None
                           ) -> dict[str, dict[float, list[float]]]:
    """model → alpha → the score of each fold, of the event ``models`` on X, fold by fold: a
    (model, alpha) for which ``behind`` (its scores so far) is true after a fold is not scored
    on the folds after it, and the folds stop when none is left; ``cost["bytes"]``, if given,
    grows by the largest of the folds' arrays and the whole's counts. A model is its counts,
    and a fold's training part counts what the whole does less what its held part does: X is
    counted once per class, and each fold's model is scored from the parts of its weights
    (:class:`_Parts`), of the held part's terms only: jll = x' @ w.T + bias, whose argmax is
    the prediction and whose difference of two classes the log-odds. Bernoulli NB is scored on
    presence (X's, or X made so). ``layout``: where each fold's entries go, kept for the next
    weighing of the same count (:class:`_Layout`). Documents of fold −1 are in every training
    part and never held out."""
    from scipy.sparse import csr_matrix
    from ..classifier import MODELS as EVENT_MODELS
    from ..nb.discrete import class_log_prior
    from .metrics import roc_auc
    binary = [m for m in models if EVENT_MODELS[m]._binary]
    if binary and not np.all(X.data == 1.0):
        found = {}
        if len(binary) < len(models):  # two kinds of values: apart
            found = _cross_validate_models(classifier, X, y, fold, k,
                                           [m for m in models if m not in binary], alphas, spam,
                                           cost, behind, layout)
            cost = None
        presence = csr_matrix((np.ones(X.nnz), X.indices, X.indptr), shape=X.shape)
        found.update(_cross_validate_models(classifier, presence, y, fold, k, binary, alphas,
                                            spam, cost, behind, layout))
        return {model: found[model] for model in models}
    classes, row_class = np.unique(y, return_inverse=True)
    indicator = csr_matrix((np.ones(y.size), (row_class, np.arange(y.size))),
                           shape=(classes.size, y.size))
    total = (indicator @ X).tocsc()
    total.sort_indices()
    whole = _Whole(StoredCounts(total.indptr.astype(np.int64), total.indices, total.data,
                                total.shape), np.bincount(row_class, minlength=classes.size))
    del total, indicator
    layout = layout or _Layout(keep=False)
    s = int(np.flatnonzero(classes == spam)[0]) if spam else 0
    scores = {model: {alpha: [] for alpha in alphas} for model in models}
    live = {(model, alpha) for model in models for alpha in alphas}
    largest = 0
    for f in range(k):
        if not live:
            break
        held = fold == f
        parts = _Parts(layout.fold(f, X, held, row_class, whole.counts), X.data, whole)
        # Each model's bias: the class prior (TextClassifier's complement NB keeps it too).
        prior = class_log_prior(parts.documents, classifier.fit_prior, classifier.class_prior)
        for model, alpha in sorted(live, key=lambda c: (models.index(c[0]), c[1])):
            jll = parts.jll(model, alpha)
            jll += prior
            if spam:
                score = 1.0 - roc_auc(y[held] == spam, jll[:, s] - jll[:, 1 - s])
            else:
                score = float(np.mean(classes[jll.argmax(axis=1)] == y[held]))
            scores[model][alpha].append(score)
        largest = max(largest, parts.nbytes + parts.fold.nbytes)
        parts = None   # let go before the next fold's
        if behind is not None:
            live = {(model, alpha) for model, alpha in live if not behind(scores[model][alpha])}
    if cost is not None:
        cost["bytes"] += largest + whole.nbytes
    return scores


class _Whole:
    """A weighing's counts (:class:`StoredCounts`), its documents per class, and what every
    fold's :class:`_Parts` takes of them: n_c and N = Σ_c n_c."""

    def __init__(self, counts: StoredCounts, documents: np.ndarray) -> None:
        self.counts, self.documents = counts, documents
        self.n_c = np.bincount(counts.classes, weights=counts.values, minlength=counts.shape[0])
        self.n = counts.values.sum()
        self.nbytes = sum(a.nbytes for a in counts[:3])


class _Fold:
    """Where a fold's held entries of a count go, whatever their values: the held part by term
    (CSC) over its own terms (those alone get weights), and the whole's cells of those terms,
    term by term (the rows of d.T in :class:`_Parts`), each held entry's cell among them. The
    same for every weighing of one count (:class:`_Layout`)."""

    def __init__(self, X: Any, held: np.ndarray, row_class: np.ndarray, whole: StoredCounts
                 ) -> None:
        from scipy.sparse import csr_matrix
        n_classes, n_terms = whole.shape
        rows = np.flatnonzero(held)
        # The held rows' entries, found by their places in X.data, put in term order (a CSC
        # conversion, a counting sort: within a term, the documents in order).
        starts, lengths = X.indptr[rows], np.diff(X.indptr)[rows]
        indptr = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        at = np.arange(indptr[-1], dtype=np.float64)
        at += np.repeat(starts - indptr[:-1], lengths)
        held_X = csr_matrix((at, X.indices[at.astype(np.int64)], indptr),
                            shape=(rows.size, n_terms)).tocsc()
        del at
        self.entries = held_X.data.astype(_index(X.nnz))   # places in X.data, term by term
        self.rows = held_X.indices.astype(np.int32)   # a held document's number, 0 up
        present = np.diff(held_X.indptr) > 0
        used = np.flatnonzero(present)
        self.indptr = held_X.indptr[np.append(used, n_terms)]
        del held_X
        self.shape = (rows.size, used.size)
        self.row_class = row_class[rows]
        entry_class = self.row_class[self.rows]
        # The whole's cells of the used terms, and each held entry's among them, by its
        # (term, class) key: the keys of both are in term order.
        counted = present[np.repeat(np.arange(n_terms, dtype=np.int32), np.diff(whole.indptr))]
        self.cells = np.flatnonzero(counted).astype(_index(counted.size))
        del counted
        lengths = np.diff(whole.indptr)[used]
        self.cell_indptr = np.zeros(used.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.cell_indptr[1:])
        keys = np.repeat(np.arange(used.size, dtype=np.int64) * n_classes, lengths)
        keys += whole.classes[self.cells]
        held_keys = np.repeat(np.arange(used.size, dtype=np.int64) * n_classes,
                              np.diff(self.indptr))
        held_keys += entry_class
        self.places = np.searchsorted(keys, held_keys).astype(np.int32)
        del keys, held_keys
        step = max(1, _BLOCK // n_classes)
        self.chunks = [(lo, min(lo + step, used.size)) for lo in range(0, used.size, step)]
        self.nbytes = sum(a.nbytes for a in (self.entries, self.rows, self.indptr, self.cells,
                                             self.cell_indptr, self.places, self.row_class))


def _index(size: int) -> type:
    """The smallest of int32 and int64 that numbers ``size`` things."""
    return np.int32 if size < 2 ** 31 else np.int64


class _Layout:
    """Each fold's :class:`_Fold` of one count, made when first asked for; ``keep``: held for
    the next weighing of the count (single words: some 9 MB a fold), else let go after it
    (word pairs: some 20 MB)."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.cells = 0   # the count's cells: another count's layout is not this one's
        self.folds: dict[int, _Fold] = {}

    def fold(self, f: int, X: Any, held: np.ndarray, row_class: np.ndarray,
             whole: StoredCounts) -> _Fold:
        if self.cells != whole.values.size:
            self.folds.clear()
        self.cells = whole.values.size
        found = self.folds.get(f) or _Fold(X, held, row_class, whole)
        if self.keep:
            self.folds[f] = found
        return found


class _Parts:
    """A fold's scores of its held documents, x' @ w.T of each event model, summed from the
    parts of its weights: w_ck = a_c + b_k + d_ck, where d_ck is 0 unless class c counted term
    k (20 Newsgroups' word pairs: 1.1 of 9.7 million cells), so x' @ w.T = (Σ_k x_k) a_c +
    x' @ b + x' @ d.T, and the logarithms are taken of the counted cells alone.

    Complement NB (:meth:`~textnb.nb.discrete.ComplementNB._weights`, no weight normalisation):
    w_ck = log S_c − log(max(n_k − n_kc, 0) + α), S_c = Σ_k max(n_k − n_kc, 0) + α|V|, so
    a_c = log S_c, b_k = −log(n_k + α), d_ck = log(n_k + α) − log(max(n_k − n_kc, 0) + α).
    Multinomial NB: w_ck = log(n_kc + α) − log(n_c + α|V|), so a_c = log α − log(n_c + α|V|),
    b_k = 0, d_ck = log(n_kc + α) − log α. Bernoulli NB (x presence, n_kc documents, N_c the
    class's documents): w_ck = log(n_kc + α) − log(max(N_c − n_kc, 0) + α), so
    a_c = log α − log(N_c + α), b_k = 0, and its Σ_k log(1 − p_kc) over every term, in the
    scores too, is |V| (log(N_c + α) − log(N_c + 2α)) plus, over the cells c counted,
    log(max(N_c − n_kc, 0) + α) − log(N_c + α).

    A fold's n_kc are the whole's less its held part's, cell by cell (a cell's entries added
    in the order of their documents, as (classes × documents) @ X adds them), of the held
    part's terms; S_c = N − n_c (N = Σ_k n_k; the max of a count left negative by rounding is
    taken of the counted cells). The sums are taken in another order than the models' own:
    the same scores to rounding (tests/test_tuning.py). x' @ d.T is summed over chunks of the
    terms in turn, each chunk's d made dense (4 MB)."""

    def __init__(self, fold: _Fold, values: np.ndarray, whole: "_Whole") -> None:
        from scipy.sparse import csc_matrix
        data = values[fold.entries]
        self.length = np.bincount(fold.rows, weights=data, minlength=fold.shape[0])  # Σ_k x_k
        self.n_kc = whole.counts.values[fold.cells]
        self.n_kc -= np.bincount(fold.places, weights=data, minlength=fold.cells.size)
        self.n_k = (np.add.reduceat(self.n_kc, fold.cell_indptr[:-1]) if fold.shape[1] else
                    np.zeros(0))
        self.n_c = whole.n_c - np.bincount(fold.row_class, weights=self.length,
                                           minlength=whole.n_c.size)
        self.n = whole.n - data.sum()
        self.documents = (whole.documents - np.bincount(
            fold.row_class, minlength=whole.documents.size)).astype(float)   # N_c
        self.n_terms = whole.counts.shape[1]
        self.whole = whole
        X = csc_matrix((data, fold.rows, fold.indptr), shape=fold.shape)
        self.X, self.fold = X, fold
        # Each chunk's columns: views of X's arrays, not copies.
        self.chunks = [csc_matrix((data[X.indptr[lo]:X.indptr[hi]],
                                   fold.rows[X.indptr[lo]:X.indptr[hi]],
                                   X.indptr[lo:hi + 1] - X.indptr[lo]),
                                  shape=(fold.shape[0], hi - lo), copy=False)
                       for lo, hi in fold.chunks]
        self.classes = whole.counts.classes[fold.cells]
        self.cell_term = np.repeat(np.arange(fold.shape[1], dtype=np.int32),
                                   np.diff(fold.cell_indptr))
        # A cell's place in its chunk's dense d (less the chunk's first term's), and
        # max(n_k − n_kc, 0), the complement's count of the cell, for every α.
        n_classes = whole.n_c.size
        self.place = self.cell_term.astype(_index(fold.shape[1] * n_classes), copy=False) \
            * n_classes
        self.place += self.classes
        self.complement = self.n_k[self.cell_term]
        self.complement -= self.n_kc
        np.maximum(self.complement, 0.0, out=self.complement)
        self.nbytes = 2 * data.nbytes + 3 * self.n_kc.nbytes + self.n_k.nbytes + \
            self.classes.nbytes + self.cell_term.nbytes + self.place.nbytes

    def jll(self, model: str, alpha: float) -> np.ndarray:
        """x' @ w.T of the held documents, ndarray of shape (documents, classes)."""
        fold, n_classes = self.fold, self.n_c.size
        if model == "complement":
            a = np.log(self.n - self.n_c + alpha * self.n_terms)
            jll = np.outer(self.length, a)
            jll -= (self.X @ np.log(self.n_k + alpha))[:, None]   # b_k
            d = np.log(self.n_k + alpha)[self.cell_term]
            complement = self.complement + alpha
            d -= np.log(complement, out=complement)
        elif model == "multinomial":
            a = np.log(alpha) - np.log(self.n_c + alpha * self.n_terms)
            jll = np.outer(self.length, a)
            d = np.log(self.n_kc + alpha)
            d -= np.log(alpha)
        else:   # Bernoulli
            documents = self.documents
            a = np.log(alpha) - np.log(documents + alpha)
            jll = np.outer(self.length, a)
            d = np.log(self.n_kc + alpha)
            d -= self._log_absent(self.n_kc, self.classes, alpha)
            d -= a[self.classes]
            # Σ_k log(1 − p_kc): the fold's counts of every cell, not of the used terms alone.
            counts = self.whole.counts
            n_kc = counts.values.copy()
            n_kc[self.fold.cells] = self.n_kc
            absent = self._log_absent(n_kc, counts.classes, alpha)
            absent -= np.log(documents + alpha)[counts.classes]
            jll += self.n_terms * (np.log(documents + alpha) - np.log(documents + 2 * alpha)) \
                + np.bincount(counts.classes, weights=absent, minlength=n_classes)
        for (lo, hi), X in zip(fold.chunks, self.chunks):
            cells = slice(fold.cell_indptr[lo], fold.cell_indptr[hi])
            dense = np.zeros((hi - lo, n_classes))
            dense.ravel()[self.place[cells] - lo * n_classes] = d[cells]
            jll += X @ dense
        return jll

    def _log_absent(self, n_kc: np.ndarray, classes: np.ndarray, alpha: float) -> np.ndarray:
        """log(max(N_c − n_kc, 0) + α) of the cells (the max guards float residue)."""
        absent = self.documents[classes] - n_kc
        np.maximum(absent, 0.0, out=absent)
        absent += alpha
        return np.log(absent, out=absent)


def _weigh(X: Any, tf: str, norm: str | None) -> Any:
    """X (scipy CSR counts) weighed as TextClassifier weighs documents
    (:func:`textnb.text.features.weigh`): new values, X's indices and row pointers shared."""
    from scipy.sparse import csr_matrix
    from ..nb.sparse import CSR
    from ..text.features import weigh
    W = weigh(CSR(X.data.astype(float, copy=False), X.indices, X.indptr, X.shape),
              "multinomial", tf, norm)
    return csr_matrix((W.data, W.indices, W.indptr), shape=W.shape)
