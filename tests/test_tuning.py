"""train --tune: the grid, its cross-validation, and what it leaves in the model."""

from __future__ import annotations

import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.sparse import csr_matrix

from textnb import TextClassifier, load_model
from textnb.cli.app import main
from textnb.evaluation.tuning import first_best, smoothest, _cross_validate, _weigh, tune

ROOT = Path(__file__).resolve().parent.parent
SPAM_DIR = ROOT / "corpora" / "spamassassin" / "spam"
HAM_DIR = ROOT / "corpora" / "spamassassin" / "ham"

TEXTS = ([f"cheap pills offer now {i}" for i in range(8)] + [f"pills pills pills {i}" for i in range(4)]
         + [f"meeting notes lunch {i}" for i in range(8)] + [f"notes pills {i}" for i in range(4)])
LABELS = ["spam"] * 12 + ["ham"] * 12


@pytest.mark.parametrize("model, tf, norm", [("multinomial", "log", "l2"), ("complement", "raw", "l2"),
                                             ("complement", "raw", None), ("bernoulli", "binary", None)])
@pytest.mark.parametrize("spam", [None, "spam"])
@pytest.mark.parametrize("block", [1 << 20, 7])
def test_folds_counted_as_the_whole_less_the_held_part_score_as_fits_of_the_rest(
        random_counts, model, tf, norm, spam, block, monkeypatch):
    from textnb.classifier import MODELS
    from textnb.evaluation import tuning
    from textnb.evaluation.metrics import roc_auc
    # The scores' terms in one chunk, or a term a chunk.
    monkeypatch.setattr(tuning, "_BLOCK", block)
    X, y = random_counts
    if spam:  # two classes: the score is 1 − AUC of the spam log-odds
        y = np.where(y == "spam", "spam", "ham")
    fold = np.arange(y.size) % 3
    classifier = TextClassifier(model=model, fit_prior=True)
    W = _weigh(X, tf, norm)
    scores = _cross_validate(classifier, W, y, fold, 3, model, (0.1, 1.0), spam)
    for alpha, per_fold in scores.items():
        for f in range(3):
            held = fold == f
            fitted = MODELS[model](alpha=alpha, fit_prior=True).fit(W[~held], y[~held])
            if spam:
                log_proba = fitted.predict_log_proba(W[held])
                expected = 1 - roc_auc(y[held] == "spam", log_proba[:, 1] - log_proba[:, 0])
            else:
                expected = np.mean(fitted.predict(W[held]) == y[held])
            assert per_fold[f] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("tf, norm", [("log", "l2"), ("binary", None)])
def test_a_folds_scores_in_chunks_of_any_size_and_its_layout_kept_or_not_are_the_same(
        random_counts, tf, norm, monkeypatch):
    from textnb.evaluation import tuning
    X, y = random_counts
    fold = np.arange(y.size) % 4
    W = _weigh(X, tf, norm)
    before = W.copy()
    models = ["complement", "multinomial", "bernoulli"]
    found = []
    for block in (1 << 20, 7, 60):
        monkeypatch.setattr(tuning, "_BLOCK", block)
        found.append(tuning._cross_validate_models(TextClassifier(), W, y, fold, 4, models,
                                                   (0.01, 0.1, 1.0), None))
    # A layout kept from another weighing of the same count (its values alone differ).
    layout = tuning._Layout()
    other = _weigh(X, "raw", None)
    tuning._cross_validate_models(TextClassifier(), other, y, fold, 4, models, (0.1,), None,
                                  layout=layout)
    assert len(layout.folds) == 4
    found.append(tuning._cross_validate_models(TextClassifier(), W, y, fold, 4, models,
                                               (0.01, 0.1, 1.0), None, layout=layout))
    assert all(scores == found[0] for scores in found[1:])
    assert (W != before).nnz == 0   # the weighed counts are read, never changed


def test_a_folds_layout_places_each_held_entry_in_its_own_cell(random_counts):
    from scipy.sparse import csr_matrix
    from textnb.evaluation.tuning import _Fold
    from textnb.nb.sparse import StoredCounts
    X, y = random_counts
    classes, row_class = np.unique(y, return_inverse=True)
    indicator = csr_matrix((np.ones(y.size), (row_class, np.arange(y.size))))
    total = (indicator @ X).tocsc()
    total.sort_indices()
    whole = StoredCounts(total.indptr.astype(np.int64), total.indices, total.data, total.shape)
    held = np.arange(y.size) % 3 == 1
    fold = _Fold(X, held, row_class, whole)
    term = np.repeat(np.arange(X.shape[1]), np.diff(total.indptr))
    used = np.flatnonzero(np.diff(X[held].tocsc().indptr))
    entry_term = np.repeat(used, np.diff(fold.indptr))
    # Each entry: its value, its document's class and its term's cell.
    rows = np.flatnonzero(held)[fold.rows]
    assert np.array_equal(X.data[fold.entries], np.asarray(X[rows, entry_term]).ravel())
    cell = fold.cells[fold.places]
    assert np.array_equal(term[cell], entry_term)
    assert np.array_equal(whole.classes[cell], row_class[rows])
    assert np.array_equal(np.unique(term[fold.cells]), used)


@pytest.mark.skipif(sys.version_info < (3, 11),
                    reason="an argument is the callee's alone from Python 3.11 (PEP 659 calls)")
def test_the_tunings_counts_are_let_go_before_the_model_is_counted(monkeypatch):
    labels = LABELS[:8] + ["other"] * 8 + LABELS[16:]
    tuned = tune(TextClassifier(), TEXTS, labels, folds=3, alphas=(0.3,))
    counts = weakref.ref(tuned.counted[1].data)
    let_go = []
    fit = TextClassifier.new_model

    def learned(self, *args):
        let_go.append(counts() is None)
        return fit(self, *args)

    monkeypatch.setattr(TextClassifier, "new_model", learned)
    settings = {**tuned.settings, "ngram_range": (1, 2), "stop_words": "none", "tf": "log"}
    assert tuned.refit(TextClassifier(**settings), labels) is True
    assert let_go[-1] is True   # the model about to be fitted


@pytest.mark.parametrize("tf, norm", [("raw", "l2"), ("binary", None)])
def test_the_models_of_one_weighing_scored_together_score_as_each_alone(random_counts, tf, norm):
    from textnb.evaluation.tuning import _cross_validate_models
    X, y = random_counts
    fold = np.arange(y.size) % 4
    W = _weigh(X, tf, norm)
    models = ["complement", "multinomial", "bernoulli"]
    together = _cross_validate_models(TextClassifier(), W, y, fold, 4, models, (0.1, 1.0), None)
    assert list(together) == models
    for model in models:
        assert together[model] == _cross_validate(TextClassifier(), W, y, fold, 4, model,
                                                  (0.1, 1.0), None)
    assert together["bernoulli"] != together["multinomial"]


def test_weighing_matches_the_classifier():
    X = csr_matrix(np.array([[3.0, 0.0, 4.0], [0.0, 1.0, 0.0]]))
    np.testing.assert_allclose(_weigh(X, "raw", "l2").toarray(), [[0.6, 0, 0.8], [0, 1, 0]])
    np.testing.assert_allclose(_weigh(X, "binary", None).toarray(), [[1, 0, 1], [0, 1, 0]])
    np.testing.assert_allclose(_weigh(X, "log", None).toarray(), np.log1p(X.toarray()))


def test_the_grid_is_searched_coordinate_by_coordinate():
    result = tune(TextClassifier(stop_words="none"), TEXTS, LABELS, folds=3)
    assert result.metric == "accuracy" and result.folds == 3
    means = [row["mean"] for row in result.rows]
    assert means == sorted(means, reverse=True) and 0.5 < means[0] <= 1.0
    assert set(result.best) == {"model", "alpha", "ngram_range", "stop_words", "tf", "norm",
                               "mean", "sd", "seconds", "megabytes"}
    key = lambda r: (r["tf"], r["norm"], r["model"])
    ranked = lambda rows: list(dict.fromkeys(key(r) for r in sorted(rows, key=lambda r: -r["mean"])))
    singles = [r for r in result.rows if r["ngram_range"] == [1, 1]]
    # 1. At the classifier's alpha (0.03), every weighing of complement NB and Bernoulli's
    # presence: two classes, where multinomial NB decides as complement NB does.
    first = [r for r in singles if r["alpha"] == 0.03]
    assert {key(r) for r in first} == {(tf, norm, "complement") for tf in ("raw", "log", "binary")
                                       for norm in (None, "l2")} | {("binary", None, "bernoulli")}
    # 2. The other alphas for the best three of those.
    others = [r for r in singles if r["alpha"] != 0.03]
    assert len(others) == 3 * 4 and {key(r) for r in others} == set(ranked(first)[:3])
    # 3. Word pairs for the best two single-word settings, at the best alpha and its neighbours.
    pairs = [r for r in result.rows if r["ngram_range"] == [1, 2]]
    assert {key(r) for r in pairs} == set(ranked(singles)[:2])
    alphas = [0.01, 0.03, 0.1, 0.3, 1.0]
    at = alphas.index(max(singles, key=lambda r: r["mean"])["alpha"])
    assert {r["alpha"] for r in pairs} == set(alphas[max(at - 1, 0):at + 2])
    # More than two classes: multinomial NB is tried too.
    three = tune(TextClassifier(stop_words="none"), TEXTS + ["lunch menu soup"] * 3,
                 LABELS + ["food"] * 3, folds=3, ngrams=((1, 1),))
    assert {r["model"] for r in three.rows if r["alpha"] == 0.03} == \
        {"complement", "multinomial", "bernoulli"}
    spam = tune(TextClassifier(stop_words="none", spam_class="spam"), TEXTS, LABELS, folds=3,
                alphas=(1.0,), ngrams=((1, 1),))
    assert spam.metric == "1 - ROC AUC" and len(spam.rows) == 7
    assert [r["mean"] for r in spam.rows] == sorted(r["mean"] for r in spam.rows)


def test_the_most_smoothing_within_one_standard_error_is_chosen():
    def row(alpha, mean, sd=0.02, tf="raw"):
        return {"model": "complement", "alpha": alpha, "ngram_range": [1, 1],
                "stop_words": "none", "tf": tf, "norm": "l2", "mean": mean, "sd": sd}

    # Best 0.90 ± 0.02 over 4 folds: a standard error of 0.01. α 0.1 is within it, α 0.3 is
    # not, and α 1 of another weighing does not count, however close.
    rows = [row(0.03, 0.90), row(1.0, 0.899, tf="log"), row(0.1, 0.891), row(0.01, 0.89),
            row(0.3, 0.889)]
    assert smoothest(rows, folds=4) == 2
    assert smoothest(rows, folds=1) == 4              # a standard error of 0.02: α 0.3 too
    assert smoothest([row(0.03, 0.90, sd=0.0), row(0.1, 0.8999)], folds=4) == 0
    # Lower is better (1 − AUC): within one standard error above the best.
    low = [row(0.01, 0.10), row(0.03, 0.105), row(0.1, 0.12)]
    assert smoothest(low, folds=4, lower_is_better=True) == 1
    # tune's choice is that row, and its settings those of the chosen row.
    result = tune(TextClassifier(stop_words="none"), TEXTS, LABELS, folds=3)
    assert result.best is result.rows[result.chosen]
    assert result.chosen == smoothest(result.rows, 3)
    assert result.settings["alpha"] == result.best["alpha"] >= result.rows[0]["alpha"]


def test_pairs_counted_apart_are_chosen_only_beyond_one_standard_error():
    def row(stop, ngram, mean, sd=0.02, **more):
        return {"model": "complement", "alpha": 0.1, "ngram_range": [1, ngram], "stop_words": stop,
                "tf": "raw", "norm": "l2", "mean": mean, "sd": sd, **more}
    apart = lambda r: r["stop_words"] == "english" and r["ngram_range"][1] == 2
    # Pairs without the stop words 0.90 ± 0.02 over 4 folds (a standard error of 0.01): within
    # it of 0.891 (a row stopped early does not count), so the pairs with them are chosen;
    # beyond it of 0.889, so they are chosen themselves.
    close = [row("english", 2, 0.90), row("none", 1, 0.895, stopped=1), row("english", 1, 0.891),
             row("none", 2, 0.85)]
    assert first_best(close, 4, apart) == 2
    far = [row("english", 2, 0.90), row("none", 2, 0.889)]
    assert first_best(far, 4, apart) == 0
    assert first_best([row("none", 2, 0.90), row("english", 2, 0.899)], 4, apart) == 0
    # 1 − AUC, lower is better; and the choice's α from the row it starts from.
    assert first_best([row("english", 2, 0.10), row("none", 2, 0.105)], 4, apart, True) == 1
    assert first_best([row("english", 2, 0.10), row("none", 2, 0.12)], 4, apart, True) == 0
    close.append(row("english", 1, 0.8905, alpha=0.3))
    assert smoothest(close, 4, best=first_best(close, 4, apart)) == 4


def test_settings_counted_in_workers_score_as_in_one_process():
    # Every row, in order, the same whether the texts are counted with one job or four.
    texts = TEXTS + [f"lunch offer {i}" for i in range(6)]
    labels = LABELS + ["ham", "spam"] * 3
    alone = tune(TextClassifier(stop_words="english", n_jobs=1), texts, labels, folds=3)
    threads = tune(TextClassifier(stop_words="english", n_jobs=4), texts, labels, folds=3)
    scores = lambda rows: [{k: v for k, v in row.items() if k != "seconds"} for row in rows]
    assert scores(threads.rows) == scores(alone.rows) and len(alone.rows) > 20
    # Each row says what its cross-validation cost: wall seconds and the MB of its arrays.
    assert all(row["seconds"] > 0 and row["megabytes"] > 0 for row in alone.rows)


def test_train_tune_keeps_its_choice_in_the_model(tmp_path):
    path = tmp_path / "tuned.model"
    result = CliRunner().invoke(main, ["train", "--tune", "--tune-folds", "3", "-m", str(path),
                                       str(SPAM_DIR), str(HAM_DIR)])
    assert result.exit_code == 0, result.output
    assert "3-fold cross-validation of " in result.output and "(1 - ROC AUC; best first;" in result.output
    assert sum(line.startswith("* ") for line in result.output.splitlines()) == 1
    model = load_model(path)
    best = model.tuning_["best"]
    assert (model.model, model.alpha, model.tf, list(model.ngram_range)) == \
        (best["model"], best["alpha"], best["tf"], best["ngram_range"])
    info = CliRunner().invoke(main, ["info", "-m", str(path)])
    assert f"tuned       3-fold CV 1 - ROC AUC {best['mean']:.4f}" in info.output


def test_stop_words_are_tried_removed_and_kept_exactly():
    from textnb.folds import stratified_folds
    from textnb.text.vocabulary import Vocabulary, to_scipy
    texts = ([f"it was not good at all, not {i}" for i in range(9)]
             + [f"it was good, very good {i}" for i in range(6)] + ["was it good or not"] * 3)
    labels = ["neg"] * 9 + ["pos"] * 9
    result = tune(TextClassifier(), texts, labels, folds=3, alphas=(0.03,), ngrams=((1, 1),))
    means = {(r["stop_words"], r["tf"], r["norm"], r["model"]): r["mean"] for r in result.rows}
    assert {key[0] for key in means} == {"english", "none"}
    # NLTK's English list holds "not": without it, this corpus cannot be told apart as well.
    assert means["none", "raw", "l2", "complement"] > means["english", "raw", "l2", "complement"]
    # Stop words removed: the best three settings with stop words kept.
    kept = sorted((key for key in means if key[0] == "none"), key=lambda key: -means[key])
    assert {key[1:] for key in means if key[0] == "english"} == {key[1:] for key in kept[:3]}
    # Each row scores what a tokenizer with those stop words counts, not an approximation.
    fold = stratified_folds(np.array(labels), 3, 0)
    for stop in ("english", "none"):
        classifier = TextClassifier(stop_words=stop)
        classifier._build()
        X = to_scipy(Vocabulary().fit_parts(c for c, _ in classifier._count(texts, digests=False)))
        for _, tf, norm, model in (key for key in means if key[0] == stop):
            scores = _cross_validate(classifier, _weigh(X, tf, norm), np.array(labels), fold, 3,
                                     model, (0.03,), None)
            assert means[stop, tf, norm, model] == pytest.approx(np.mean(scores[0.03]))
    # The choice carries its stop words; a classifier given none tries only that.
    assert result.settings["stop_words"] == result.best["stop_words"]
    assert {r["stop_words"] for r in tune(TextClassifier(stop_words="none"), texts, labels,
                                          folds=3, alphas=(0.03,), ngrams=((1, 1),)).rows} == {"none"}


def test_the_chosen_settings_are_fitted_on_the_tunings_own_counts():
    texts = TEXTS + ["not cheap at all", "lunch was not bad"]
    labels = LABELS + ["ham", "ham"]
    tuned = tune(TextClassifier(), texts, labels, folds=3, alphas=(0.03, 0.3))
    # Counted with word pairs and stop words kept: pairs without them count otherwise.
    pairs = {**tuned.settings, "ngram_range": (1, 2), "stop_words": "none"}
    assert tuned.refit(TextClassifier(**{**pairs, "stop_words": "english"}), labels) is False
    refitted = TextClassifier(**pairs)
    assert tuned.refit(refitted, labels) is True
    fitted = TextClassifier(**pairs).fit(texts, labels)
    # The same model less the pairs of one document (prune_pairs).
    once = {t for t, df in zip(fitted.vocabulary_.terms_, np.bincount(
        fitted.counts(texts)[0].indices, minlength=len(fitted.vocabulary_))) if " " in t and df == 1}
    assert once and refitted.vocabulary_.terms_ == [t for t in fitted.vocabulary_.terms_
                                                    if t not in once]
    keep = [i for i, t in enumerate(fitted.vocabulary_.terms_) if t not in once]
    np.testing.assert_array_equal(refitted.model_.feature_count_,
                                  fitted.model_.feature_count_[:, keep])
    np.testing.assert_array_equal(refitted.digests_, fitted.digests_)
    assert tuned.refit(TextClassifier(**pairs), labels) is False  # the parts were let go
    # Single words, with stop words removed or kept: their digests are of other tokens than
    # the pairs' count's (learn would not know the documents again), so fit does it.
    for stop in ("english", "none"):
        tuned = tune(TextClassifier(), texts, labels, folds=3, alphas=(0.03, 0.3))
        words = {**tuned.settings, "ngram_range": (1, 1), "stop_words": stop}
        assert tuned.refit(TextClassifier(**words), labels) is False


# Three topics told apart by two of five words each, with a word of another topic and eight
# stop words drawn at random: noise that removing the stop words takes away (or, for some
# seeds, does not).
STOPS = "the of and to in is it that was for on are with as at be this have from or".split()
TOPICS = {"oil": "oil crude barrel opec refinery".split(),
          "grain": "wheat grain corn harvest crop".split(),
          "gold": "gold ounce mine bullion miner".split()}


def _topic_corpus(seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for label, words in TOPICS.items():
        others = [w for topic, ws in TOPICS.items() if topic != label for w in ws]
        for _ in range(12):
            tokens = [*rng.choice(words, 2), *rng.choice(others, 1), *rng.choice(STOPS, 8)]
            rng.shuffle(tokens)
            texts.append(" ".join(tokens))
            labels.append(label)
    return texts, labels


def test_pairs_without_the_stop_words_are_tried_where_removing_them_won_on_single_words():
    from textnb.evaluation.tuning import _count
    from textnb.folds import small_class_folds
    from textnb.text.vocabulary import to_scipy
    key = lambda r: (r["tf"], r["norm"], r["model"])
    texts, labels = _topic_corpus(2)
    tuned = tune(TextClassifier(), texts, labels, folds=3)
    singles = [r for r in tuned.rows if r["ngram_range"] == [1, 1]]
    assert singles[0]["stop_words"] == "english"      # removing them won on single words
    pairs = {stop: [r for r in tuned.rows if r["ngram_range"] == [1, 2] and r["stop_words"] == stop]
             for stop in ("english", "none")}
    # The best two single-word settings of each stop-word setting, at the same alphas.
    for stop, rows in pairs.items():
        best = list(dict.fromkeys(key(r) for r in singles if r["stop_words"] == stop))[:2]
        assert rows and {key(r) for r in rows} == set(best)
    assert {r["alpha"] for r in pairs["english"]} == {r["alpha"] for r in pairs["none"]}
    # Each scores what a tokenizer that removes the stop words counts, its words and pairs
    # (less the pairs of one document), not a subset of the columns of the stop words' pairs.
    counter = TextClassifier(stop_words="english", ngram_range=(1, 2))
    counter._build()
    X = to_scipy(_count(counter, texts)[1])
    y = np.array(labels)
    fold, k = small_class_folds(y, 3, 0)
    for row in pairs["english"]:
        scores = _cross_validate(TextClassifier(), _weigh(X, row["tf"], row["norm"]), y, fold, k,
                                 row["model"], (row["alpha"],), None)
        scored = scores[row["alpha"]][:row.get("stopped", k)]   # a race stops some early
        assert row["mean"] == pytest.approx(np.mean(scored), abs=1e-12)
    # The count kept for the choice is that of its stop words: pairs without them are fitted on
    # it as fit would count them, less the pairs of one document (unweighed: a document's
    # length differs by those).
    assert tuned.best["stop_words"] == "english"
    settings = {**tuned.settings, "ngram_range": (1, 2), "norm": None}
    refitted = TextClassifier(**settings)
    assert tuned.refit(refitted, labels) is True
    fitted = TextClassifier(**settings).fit(texts, labels)
    df = np.bincount(fitted.counts(texts)[0].indices, minlength=len(fitted.vocabulary_))
    keep = [i for i, t in enumerate(fitted.vocabulary_.terms_) if " " not in t or df[i] > 1]
    assert refitted.vocabulary_.terms_ == [fitted.vocabulary_.terms_[i] for i in keep]
    np.testing.assert_array_equal(refitted.model_.feature_count_,
                                  fitted.model_.feature_count_[:, keep])
    np.testing.assert_array_equal(refitted.digests_, fitted.digests_)
    # Where keeping the stop words won on single words, their pairs alone are tried.
    texts, labels = _topic_corpus(3)
    kept = tune(TextClassifier(), texts, labels, folds=3)
    assert [r for r in kept.rows if r["ngram_range"] == [1, 1]][0]["stop_words"] == "none"
    assert {r["stop_words"] for r in kept.rows if r["ngram_range"] == [1, 2]} == {"none"}


def test_pairs_without_the_stop_words_are_not_counted_where_the_folds_cannot_tell(monkeypatch):
    # Removing the stop words wins on single words, but by no more than its standard error
    # (first_best says so, here made to): no second count, no pairs without them tried.
    from textnb.evaluation import tuning
    texts, labels = _topic_corpus(2)
    real = tuning.first_best
    asked = []

    def within_error(rows, folds, apart, lower_is_better=False):
        if all(r["ngram_range"][1] == 1 for r in rows):    # the single words' verdict
            asked.append(rows[0]["stop_words"])
            return 1
        return real(rows, folds, apart, lower_is_better)
    monkeypatch.setattr(tuning, "first_best", within_error)
    tuned = tune(TextClassifier(), texts, labels, folds=3)
    assert asked == ["english"]
    assert {r["stop_words"] for r in tuned.rows if r["ngram_range"] == [1, 2]} == {"none"}


def test_a_tuned_model_knows_its_training_documents_again(tmp_path):
    from textnb.incremental import learned_as, rows
    texts = TEXTS + ["not cheap at all", "lunch was not bad"]
    labels = LABELS + ["ham", "ham"]
    for ngram_range in ((1, 1), (1, 2)):
        tuned = tune(TextClassifier(), texts, labels, folds=3, alphas=(0.03,),
                     ngrams=((1, 1), (1, 2)))
        classifier = TextClassifier(**{**tuned.settings, "ngram_range": ngram_range,
                                       "stop_words": "none"})
        if not tuned.refit(classifier, labels):
            classifier.fit(texts, labels)
        c = list(classifier.classes_).index(labels[0])
        assert learned_as(classifier, rows(classifier, [texts[0]])[0].digest, c).size > 0
        np.testing.assert_array_equal(classifier.digests_, TextClassifier(
            **classifier.get_params()).fit(texts, labels).digests_)


def test_small_class_folds_hold_out_what_they_can_and_keep_single_documents_in_training():
    from textnb.folds import small_class_folds, stratified_folds
    y = np.array(["big"] * 7 + ["pair"] * 2 + ["one"] + ["few"] * 3)
    fold, k = small_class_folds(y, 5, seed=3)
    assert k == 5
    assert fold[y == "one"].tolist() == [-1]                   # never held out
    assert sorted(set(fold[y == "big"].tolist())) == [0, 1, 2, 3, 4]   # every fold holds some
    assert len(set(fold[y == "pair"].tolist())) == 2 and len(set(fold[y == "few"].tolist())) == 3
    # As many folds as the largest class has documents, at most; classes big enough for the
    # folds are dealt exactly as stratified_folds deals them.
    assert small_class_folds(y[:10], 9)[1] == 7
    even = np.array(["a", "b"] * 6)
    np.testing.assert_array_equal(small_class_folds(even, 3, 1)[0], stratified_folds(even, 3, 1))
    with pytest.raises(ValueError, match="a class of at least two documents"):
        small_class_folds(np.array(["a", "b", "c"]), 5)


def test_a_single_document_class_is_in_every_folds_training_part(random_counts):
    from textnb.classifier import MODELS
    X, y = random_counts
    y = y.copy()
    y[11] = "lone"                                              # a class of one document
    fold = np.where(y == "lone", -1, np.arange(y.size) % 3)
    W = _weigh(X, "raw", "l2")
    scores = _cross_validate(TextClassifier(fit_prior=True), W, y, fold, 3, "complement", (0.3,),
                             None)
    for f in range(3):
        held = fold == f
        fitted = MODELS["complement"](alpha=0.3).fit(W[~held], y[~held])
        assert "lone" in fitted.classes_.tolist()
        assert scores[0.3][f] == pytest.approx(np.mean(fitted.predict(W[held]) == y[held]))


def test_train_tune_on_classes_of_one_and_two_documents(tmp_path):
    topics = {"autos": "car engine wheel brake road", "space": "orbit rocket launch moon nasa",
              "cooking": "oven recipe flour bake sugar"}
    rare = {"chess": ["rook bishop pawn checkmate opening"],
            "sailing": ["mast sail keel harbour wind", "sail wind tide harbour knot"]}
    dirs = []
    for name, words in topics.items():
        (tmp_path / name).mkdir()
        for i in range(8):
            (tmp_path / name / f"{i}.txt").write_text(f"{words} note {i} {words.split()[i % 5]}")
        dirs.append(str(tmp_path / name))
    for name, texts in rare.items():
        (tmp_path / name).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / name / f"{i}.txt").write_text(text)
        dirs.append(str(tmp_path / name))
    path = tmp_path / "tuned.model"
    result = CliRunner().invoke(main, ["train", "--tune", "-m", str(path), *dirs])
    assert result.exit_code == 0, result.output
    assert "5-fold cross-validation" in result.output
    assert ("small classes: 1 class (chess) of one document never held out (in every fold's "
            "training part, not scored); 1 class (sailing) of 2-4 documents held out in as "
            "many folds as they have documents") in result.output
    model = load_model(path)
    assert model.tuning_["note"].startswith("small classes: 1 class (chess) of one document")
    assert model.predict(["checkmate with a rook", "the sail and the mast"]).tolist() == \
        ["chess", "sailing"]
    info = CliRunner().invoke(main, ["info", "-m", str(path)])
    assert "1 class (chess) of one document never held out" in info.output


def _string_counts(counter, texts):
    """What tuning counted before pairs were numbers: fit_parts of the pairs' strings, then
    the pairs of one document dropped."""
    from textnb.evaluation.tuning import prune_pairs
    from textnb.text.features import noting_digests
    from textnb.text.vocabulary import Vocabulary
    found = []
    vocabulary = Vocabulary()
    X = vocabulary.fit_parts(noting_digests(counter._count_stream(texts), found))
    return (*prune_pairs(vocabulary, X), np.concatenate(found))


@pytest.mark.parametrize("stop_words, workers", [("none", False), ("english", True)])
@pytest.mark.parametrize("in_c", [True, False])
def test_pairs_counted_by_number_give_the_terms_counts_and_digests_of_their_strings(
        stop_words, workers, in_c, monkeypatch):
    from textnb.evaluation.tuning import _count
    from textnb.text import counting, features
    if not in_c:  # numbering and counting in Python, as where the C part was not built
        monkeypatch.setattr(counting, "_numbers", counting._python_numbers)
        monkeypatch.setattr(counting, "_count", counting._python_count)
    if workers:  # parts counted in worker processes and sent back: the pairs' arrays too
        monkeypatch.setattr(features, "_PARALLEL_MIN_DOCUMENTS", 1)
        monkeypatch.setattr(features, "_PARALLEL_MIN_BYTES", 1)
        monkeypatch.setattr(features, "_PART_DOCUMENTS", 37)
    texts = ([path.read_bytes() for folder in (SPAM_DIR, HAM_DIR) for path in sorted(folder.iterdir())]
             + TEXTS + ["", "one", "ab cd ef", "ab cd ef xy", "Call 08452810075 or 123 now"])
    counter = TextClassifier(ngram_range=(1, 2), stop_words=stop_words, n_jobs=2 if workers else 1)
    counter._build()
    vocabulary, X, digests = _count(counter, texts)
    expected, expected_X, expected_digests = _string_counts(counter, texts)
    assert vocabulary.terms_ == expected.terms_
    for got, want in zip(X, expected_X):
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and np.array_equal(got, want)
        else:
            assert got == want
    np.testing.assert_array_equal(digests, expected_digests)
    # Pairs were counted, and those of one document left out.
    pairs = [term for term in vocabulary.terms_ if " " in term]
    assert len(pairs) > 1000 and "ab cd" in pairs and "cd ef" in pairs
    assert "ef xy" not in pairs and "xy" in vocabulary.terms_   # in one document


def test_a_word_holding_a_space_is_counted_by_its_pairs_strings():
    from textnb.nb.sparse import CSR
    from textnb.text.features import PairCounts
    from textnb.text.vocabulary import Counts, SpacedWord, Vocabulary
    one = lambda n: CSR(np.ones(n), np.arange(n, dtype=np.int32),
                        np.array([0, n], dtype=np.int64), (1, n))
    # "a b" then "c", and "a" then "b c": both pairs' strings would be "a b c".
    parts = [(Counts(["a b", "c"], one(2)), PairCounts(np.array([[0, 1]]), one(1))),
             (Counts(["a", "b c"], one(2)), PairCounts(np.array([[0, 1]]), one(1)))]
    with pytest.raises(SpacedWord, match="a word holds a space"):
        Vocabulary().fit_pairs(iter(parts))
    with pytest.raises(ValueError, match="every document frequency kept"):
        Vocabulary(min_df=2).fit_pairs(iter(parts))


def _sample_mail():
    texts = [path.read_bytes() for folder in (SPAM_DIR, HAM_DIR) for path in sorted(folder.iterdir())]
    return texts, ["spam"] * len(list(SPAM_DIR.iterdir())) + ["ham"] * len(list(HAM_DIR.iterdir()))


@pytest.mark.parametrize("corpus", ["mail", "classes"])
def test_the_race_chooses_what_full_cross_validation_chooses(corpus, monkeypatch):
    from textnb.evaluation import tuning
    # The bundled SpamAssassin sample: as mail, by 1 − AUC; as two classes, by accuracy, the
    # first message's class swapped (the folds' spread the race judges by is then the best's).
    texts, labels = _sample_mail()
    classifier = TextClassifier(spam_class="spam")
    if corpus == "classes":
        labels = [("junk", "good")[(label == "spam") == (i == 0)] for i, label in enumerate(labels)]
    raced = tune(classifier, texts, labels)
    monkeypatch.setattr(tuning, "RACE", float("inf"))   # every candidate on every fold
    full = tune(classifier, texts, labels)
    assert not any("stopped" in row for row in full.rows)
    assert raced.settings == full.settings
    assert (raced.best["mean"], raced.best["sd"]) == (full.best["mean"], full.best["sd"])
    # The race stopped some candidates, each after fewer folds than all, and listed them after
    # every candidate scored on all folds; those it did not stop score as in full CV.
    stopped = [row for row in raced.rows if "stopped" in row]
    assert stopped and all(1 <= row["stopped"] < raced.folds for row in stopped)
    assert raced.rows[-len(stopped):] == stopped
    key = lambda r: (r["model"], r["alpha"], tuple(r["ngram_range"]), r["stop_words"], r["tf"],
                     r["norm"])
    everything = {key(row): row for row in full.rows}
    for row in raced.rows[:-len(stopped)]:
        if key(row) in everything:
            assert (row["mean"], row["sd"]) == (everything[key(row)]["mean"],
                                                everything[key(row)]["sd"])
    # A stopped candidate scored in full is worse than the choice.
    lower = corpus == "mail"
    for row in stopped:
        if key(row) in everything:
            mean = everything[key(row)]["mean"]
            assert mean > full.best["mean"] if lower else mean < full.best["mean"]


def test_a_candidate_behind_is_not_scored_on_the_folds_after(random_counts):
    from textnb.evaluation.tuning import _cross_validate_models
    X, y = random_counts
    W, fold = _weigh(X, "raw", "l2"), np.arange(y.size) % 4
    models, alphas = ["complement", "multinomial"], (0.1, 1.0)
    full = _cross_validate_models(TextClassifier(), W, y, fold, 4, models, alphas, None)
    # Multinomial NB at α 1 stops after two folds (known by its scores), the rest after three:
    # the folds stop there.
    target = full["multinomial"][1.0][:2]
    assert sum(full[m][a][:2] == target for m in models for a in alphas) == 1
    seen = []

    def behind(scores):
        seen.append(len(scores))
        return len(scores) >= 3 or scores == target

    found = _cross_validate_models(TextClassifier(), W, y, fold, 4, models, alphas, None,
                                   behind=behind)
    assert [len(found[m][a]) for m in models for a in alphas] == [3, 3, 3, 2]
    for model in models:
        for alpha in alphas:
            assert found[model][alpha] == full[model][alpha][:len(found[model][alpha])]
    assert max(seen) == 3


def test_the_cv_table_marks_the_candidates_stopped_early():
    from textnb.cli.output import tuning_table
    from textnb.evaluation.tuning import Tuning
    row = {"model": "complement", "alpha": 0.03, "ngram_range": [1, 1], "stop_words": "none",
           "tf": "raw", "norm": "l2", "mean": 0.9, "sd": 0.01, "seconds": 0.5, "megabytes": 60.0}
    rows = [row, {**row, "alpha": 0.1, "mean": 0.89, "sd": 0.02},
            {**row, "model": "multinomial", "mean": 0.8, "sd": 0.0, "stopped": 1},
            {**row, "tf": "log", "mean": 0.85, "sd": 0.03, "stopped": 2}]
    lines = tuning_table(Tuning("accuracy", 5, rows, chosen=0)).splitlines()[2:]
    assert lines[0].startswith("* complement") and "0.9000 ± 0.0100" in lines[0]
    assert "0.8900 ± 0.0200" in lines[1] and "stopped" not in lines[0] + lines[1]
    assert lines[2].endswith("  stopped after 1 fold") and "±" not in lines[2]
    assert "0.8000" in lines[2] and "multinomial" in lines[2]
    assert lines[3].endswith("  stopped after 2 folds") and "0.8500" in lines[3]
    # The columns after the score stay where they are.
    assert len({line.index(" 0.50 ") for line in lines}) == 1


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_cv_rows_of_the_bundled_sample_are_the_ones_they_were(n_jobs, monkeypatch):
    """Every row's settings, mean and sd, bit for bit, and the choice, as main computed them
    before the folds' cells were placed by term (tests/data/tuning/sample-cv-rows.json): the
    scoring's speed-ups change no score. With workers, each search's last weighing is scored
    in one of them and raced afterwards: the same rows."""
    import json
    from textnb.evaluation import tuning
    elsewhere = []
    started = tuning._Elsewhere.__init__
    monkeypatch.setattr(tuning._Elsewhere, "__init__", lambda self, function, *args, **kw: (
        elsewhere.append(function.__name__), started(self, function, *args, **kw))[1])
    texts, labels = [], []
    for label, folder in (("spam", SPAM_DIR), ("ham", HAM_DIR)):
        for path in sorted(folder.iterdir()):
            texts.append(path.read_bytes())
            labels.append(label)
    found = tune(TextClassifier(n_jobs=n_jobs), texts, labels, folds=3)
    # Each search's last weighing in a worker: the single words' three and the pairs'.
    assert elsewhere == ([] if n_jobs == 1 else ["_ready"] + ["_weighing_scores"] * 4)
    keys = ("model", "alpha", "ngram_range", "stop_words", "tf", "norm", "mean", "sd", "stopped")
    rows = [[row[key] for key in keys if key in row] for row in found.rows]
    expected = json.loads((ROOT / "tests" / "data" / "tuning" / "sample-cv-rows.json").read_text())
    assert rows == expected["rows"] and found.chosen == expected["chosen"]
    assert len(rows) > 20 and any(row[2] == [1, 2] for row in rows)


def test_scores_of_every_fold_raced_afterwards_stop_where_the_race_in_turn_stops():
    from textnb.evaluation.tuning import _raced
    scores = {"complement": {0.1: [0.9, 0.2, 0.2, 0.9], 1.0: [0.9, 0.9, 0.9, 0.9]},
              "multinomial": {0.1: [0.1, 0.9, 0.9, 0.9]}}
    behind = lambda per_fold: sum(per_fold) / len(per_fold) < 0.5
    assert _raced(scores, behind) == {"complement": {0.1: [0.9, 0.2, 0.2], 1.0: [0.9] * 4},
                                      "multinomial": {0.1: [0.1]}}
    assert _raced(scores, None) == scores
