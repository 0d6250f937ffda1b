"""textnb.nb.em: semi-supervised NB and clustering by EM; train --unlabeled, cluster; NMI/ARI/purity."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import SPAMASSASSIN, spamassassin_sample
from scipy.sparse import csr_matrix

from textnb.classifier import TextClassifier
from textnb.store.text_model import load_model, save_model
from textnb.cli.app import main
from textnb.nb.em import MixtureNB, SemiSupervisedNB, expectation_maximization, log_prior
from textnb.cluster import cluster_texts
from textnb.evaluation.metrics import adjusted_rand_index, normalized_mutual_info, purity
from textnb.nb.discrete import ComplementNB, MultinomialNB
from textnb.nb.sparse import logsumexp

_PER_CLASS = 250


@pytest.fixture(scope="module")
def mail():
    """250 SpamAssassin spam and 250 easy ham messages (the first of each in the archive),
    as counts over their vocabulary, and their labels."""
    sample = spamassassin_sample(_PER_CLASS)
    if sample is None:
        pytest.skip(f"{SPAMASSASSIN} is absent (the shared corpora)")
    texts = sample["spam"] + sample["ham"]
    y = np.array(["spam"] * _PER_CLASS + ["ham"] * _PER_CLASS)
    clf = TextClassifier(model="multinomial", norm=None, n_jobs=1).fit(texts, y)
    return texts, clf.transform(texts), y


def _semi(y: np.ndarray, per_class: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    semi = np.full(len(y), -1, dtype=object)
    for label in np.unique(y):
        keep = rng.choice(np.flatnonzero(y == label), per_class, replace=False)
        semi[keep] = label
    return semi


def _objective(model, X, semi, weight) -> float:
    """L recomputed from the fitted model's public outputs."""
    jll = model.predict_joint_log_proba(X)
    labeled = semi != -1
    rows = np.searchsorted(model.classes_, semi[labeled].astype(str))
    return (jll[labeled][np.arange(labeled.sum()), rows].sum()
            + weight * logsumexp(jll[~labeled], axis=1).sum() + log_prior(model))


@pytest.mark.parametrize("event", ["multinomial", "bernoulli"])
@pytest.mark.parametrize("weight", [1.0, 0.1])
def test_log_likelihood_never_decreases_on_real_mail(mail, event, weight):
    _, X, y = mail
    semi = _semi(y, 10)
    model = SemiSupervisedNB(model=event, alpha=0.03, unlabeled_weight=weight,
                             max_iter=40, tol=0).fit(X, semi)
    history = np.array(model.em_history_)
    assert len(history) >= 3
    # Every step, up to float rounding of a sum of ~10^5 terms.
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))
    assert history[-1] - history[0] > 0
    assert model.em_history_[-1] == pytest.approx(_objective(model.model_, X, semi, weight),
                                                  rel=1e-12)


def test_em_beats_supervised_with_ten_labels_per_class_on_mail(mail):
    _, X, y = mail
    semi = _semi(y, 10)
    labeled = semi != -1
    matrix = csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)
    supervised = MultinomialNB(alpha=0.03).fit(matrix[labeled], y[labeled])
    em = SemiSupervisedNB(alpha=0.03).fit(X, semi)
    unlabeled = ~labeled
    matrix = matrix[unlabeled]
    sup_acc = (supervised.predict(matrix) == y[unlabeled]).mean()
    em_acc = (em.predict(matrix) == y[unlabeled]).mean()
    assert em_acc > 0.9
    assert em_acc >= sup_acc


def test_the_fixed_point_is_an_m_step_on_its_own_posteriors(random_counts):
    X, y = random_counts
    semi = y.astype(object)
    semi[::2] = -1
    model = SemiSupervisedNB(alpha=0.5, unlabeled_weight=0.3, max_iter=500, tol=0).fit(X, semi)
    unlabeled = semi == -1
    proba = model.predict_proba(X[unlabeled])
    expected = MultinomialNB(alpha=0.5).fit(X[~unlabeled], y[~unlabeled]).feature_count_
    expected = expected + 0.3 * (X[unlabeled].T @ proba).T
    np.testing.assert_allclose(model.model_.feature_count_, expected, rtol=1e-6)
    np.testing.assert_allclose(model.model_.class_count_,
                               np.bincount(np.searchsorted(model.classes_, y[~unlabeled]))
                               + 0.3 * proba.sum(axis=0), rtol=1e-6)


def test_weight_zero_gives_the_supervised_model(random_counts):
    X, y = random_counts
    semi = y.astype(object)
    semi[:40] = -1
    em = SemiSupervisedNB(unlabeled_weight=0.0).fit(X, semi)
    supervised = MultinomialNB().fit(X[40:], y[40:])
    np.testing.assert_array_equal(em.model_.feature_count_, supervised.feature_count_)
    np.testing.assert_array_equal(em.predict_log_proba(X), supervised.predict_log_proba(X))


def test_minus_one_and_none_mark_unlabeled_rows(random_counts):
    X, y = random_counts
    codes = np.searchsorted(np.unique(y), y)
    numeric = codes.copy()
    numeric[:30] = -1
    with_none = y.astype(object)
    with_none[:30] = None
    a = SemiSupervisedNB().fit(X, numeric)
    b = SemiSupervisedNB().fit(X, with_none)
    assert a.classes_.tolist() == [0, 1, 2]
    np.testing.assert_allclose(a.model_.feature_count_, b.model_.feature_count_)
    assert a.model_.feature_count_.sum() == pytest.approx(X.sum())   # λ = 1: every count is in


def test_refusals(random_counts):
    X, y = random_counts
    with pytest.raises(ValueError, match="every document is unlabeled"):
        SemiSupervisedNB().fit(X, [-1] * X.shape[0])
    with pytest.raises(ValueError, match="generative"):
        expectation_maximization(ComplementNB(), X[:10], y[:10], X[10:])
    with pytest.raises(ValueError, match="unlabeled_weight"):
        SemiSupervisedNB(unlabeled_weight=-1).fit(X, np.where(np.arange(80) < 20, -1, 1))
    with pytest.raises(ValueError, match="model must be"):
        SemiSupervisedNB(model="complement").fit(X, y)
    with pytest.raises(ValueError, match="EM needs a generative"):
        TextClassifier(stop_words="none").fit(["aa bb", "cc dd"], ["x", "y"], unlabeled=["aa cc"])


def test_hard_em_assigns_wholly_and_never_decreases(mail):
    _, X, y = mail
    model = SemiSupervisedNB(alpha=0.03, hard=True, tol=0, max_iter=20).fit(X, _semi(y, 10))
    assert np.all(np.diff(model.em_history_) >= -1e-9 * abs(model.em_history_[-1]))
    fractional = model.model_.class_count_ - np.round(model.model_.class_count_)
    np.testing.assert_array_equal(fractional, 0)   # whole documents only


def test_text_classifier_with_unlabeled_saves_fractional_counts_exactly(tmp_path, mail):
    texts, _, y = mail
    semi = _semi(y, 5)
    labeled = np.flatnonzero(semi != -1)
    clf = TextClassifier(model="multinomial", norm=None, n_jobs=1, spam_class="spam")
    reported = []
    clf.fit([texts[i] for i in labeled], y[labeled],
            unlabeled=[t for i, t in enumerate(texts) if semi[i] == -1], em_weight=0.5,
            callback=lambda i, v: reported.append((i, v)))
    assert [v for _, v in reported] == clf.em_history_
    counts = clf.model_.feature_count_
    assert np.any(counts != np.round(counts))                  # fractional
    assert clf.digests_.size == labeled.size                   # only labeled ones can be unlearned
    assert clf.cutoffs_ is not None and clf.cutoffs_["messages"] == labeled.size
    save_model(clf, tmp_path / "em.model")
    loaded = load_model(tmp_path / "em.model")
    np.testing.assert_array_equal(loaded.model_.feature_count_, counts)
    np.testing.assert_array_equal(loaded.model_.class_count_, clf.model_.class_count_)
    np.testing.assert_array_equal(loaded.predict_log_proba(texts[:20]),
                                  clf.predict_log_proba(texts[:20]))
    loaded.unlearn([texts[labeled[0]]], [y[labeled[0]]])


_GROUPS = {"space": ["orbit rocket launch nasa", "moon orbit shuttle launch", "nasa rocket moon",
                     "shuttle orbit nasa mission", "launch pad rocket moon"],
           "cooking": ["bake bread flour oven", "oven pasta sauce garlic", "garlic bread oven",
                       "flour sugar bake cake", "pasta garlic sauce basil"]}


def test_mixture_recovers_two_topics_and_keeps_the_best_start():
    texts = [t for group in _GROUPS.values() for t in group]
    X = TextClassifier(model="multinomial", norm=None, stop_words="none").fit(
        texts, [0] * 5 + [1] * 5).transform(texts)
    mixture = MixtureNB(n_clusters=2, alpha=0.1, n_init=4, random_state=3).fit(X)
    assert adjusted_rand_index([0] * 5 + [1] * 5, mixture.labels_) == 1.0
    assert mixture.log_likelihood_ == max(mixture.start_log_likelihoods_)
    assert np.all(np.diff(mixture.em_history_) >= 0)
    again = MixtureNB(n_clusters=2, alpha=0.1, n_init=4, random_state=3).fit(X)
    np.testing.assert_array_equal(again.proba_, mixture.proba_)
    np.testing.assert_allclose(mixture.proba_.sum(axis=1), 1)


def test_cluster_texts_removes_the_english_stop_words_by_default():
    clf, _ = cluster_texts(["the rocket is not in orbit", "not the car engine"] * 2, 2,
                           random_state=0)
    assert "not" in clf.stop_words_ and not {"the", "not"} & set(clf.vocabulary_.terms_)


def test_cluster_texts_names_clusters_by_size():
    texts = [t for group in _GROUPS.values() for t in group] + ["rocket orbit nasa"] * 2
    clf, result = cluster_texts(texts, 2, classifier=TextClassifier(
        model="multinomial", norm=None, stop_words="none", alpha=0.1), random_state=0)
    assert clf.classes_.tolist() == ["cluster-1", "cluster-2"]
    assert np.bincount(result.labels_).tolist() == [7, 5]      # space, the larger, is cluster-1
    assert clf.predict(["nasa launch"]).tolist() == ["cluster-1"]
    np.testing.assert_array_equal(clf.model_.predict(clf.transform(texts)),
                                  clf.classes_[result.labels_])


def test_cli_cluster_writes_a_model_classify_and_info_read(tmp_path):
    for group, texts in _GROUPS.items():
        (tmp_path / group).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / group / f"{i}.txt").write_text(text)
    model = tmp_path / "c.model"
    runner = CliRunner()
    result = runner.invoke(main, ["cluster", str(tmp_path / "space"), str(tmp_path / "cooking"),
                                  "-k", "2", "-m", str(model), "--seed", "1", "--alpha", "0.1",
                                  "--min-df", "1", "--stop-words", "none", "--evaluate",
                                  "--top", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len([line for line in lines if not line.startswith("#")]) == 10
    assert "# NMI 1.0000  ARI 1.0000  purity 1.0000" in lines
    assert any("iteration 1: log-likelihood" in line for line in result.stderr.splitlines())
    result = runner.invoke(main, ["classify", "-m", str(model), "--format", "tsv",
                                  str(tmp_path / "space" / "0.txt")])
    assert result.exit_code == 0
    assert result.output.split("\t")[1].startswith("cluster-")
    result = runner.invoke(main, ["info", "-m", str(model), "--format", "json"])
    assert sorted(json.loads(result.output)["classes"]) == ["cluster-1", "cluster-2"]
    result = runner.invoke(main, ["cluster", str(tmp_path / "space"), "-k", "9", "-m",
                                  str(model)])
    assert result.exit_code == 1
    assert result.stderr == "Error: 5 readable documents cannot make 9 clusters\n"


def test_cli_train_unlabeled_prints_the_log_likelihood_per_iteration(tmp_path):
    for name, texts in {"spam": ["cheap pills now", "cheap offer pills"],
                        "ham": ["meeting at noon", "lunch meeting"],
                        "unl": ["cheap viagra pills", "viagra offer", "noon lunch team"]}.items():
        (tmp_path / name).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / name / str(i)).write_text(text)
    model = tmp_path / "m.model"
    args = ["train", str(tmp_path / "spam"), str(tmp_path / "ham"), "-m", str(model),
            "--unlabeled", str(tmp_path / "unl"), "--stop-words", "none", "--em-weight", "0.5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    iterations = [line for line in result.stderr.splitlines() if line.startswith("EM iteration")]
    assert iterations and iterations[0].startswith("EM iteration 1: log-likelihood -")
    assert load_model(model).model == "multinomial"
    assert load_model(model).predict(["viagra"]).tolist() == ["spam"]
    result = CliRunner().invoke(main, args + ["--training", "on-error"])
    assert result.exit_code != 0
    assert result.stderr == "Error: --unlabeled and --training on-error cannot be combined\n"


# -- metrics ---------------------------------------------------------------------------------------

def test_clustering_metrics_by_hand():
    truth, found = [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]
    # n_ij = [[2,1,0],[0,1,2]]: Σ C(n_ij,2) = 2; rows: C(3,2)·2 = 6; columns: 1·3 = 3;
    # C(6,2) = 15, so expected = 6·3/15 = 1.2 and max = (6 + 3)/2 = 4.5.
    assert adjusted_rand_index(truth, found) == pytest.approx((2 - 1.2) / (4.5 - 1.2))
    assert purity(truth, found) == pytest.approx(5 / 6)
    assert normalized_mutual_info(truth, [5, 5, 5, 7, 7, 7]) == 1.0
    assert normalized_mutual_info([0, 0, 1, 1], [0, 1, 0, 1]) == 0.0   # independent


def test_clustering_metrics_equal_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    for _ in range(20):
        truth = rng.integers(0, 6, 300)
        found = np.where(rng.random(300) < 0.5, truth, rng.integers(0, 4, 300))
        assert normalized_mutual_info(truth, found) == pytest.approx(
            metrics.normalized_mutual_info_score(truth, found), abs=1e-12)
        assert adjusted_rand_index(truth, found) == pytest.approx(
            metrics.adjusted_rand_score(truth, found), abs=1e-12)


# -- choosing λ and α (train --unlabeled) ---------------------------------------------------------

def _topic_texts(rng, words: list[str], n: int, length: int) -> list[str]:
    return [" ".join(rng.choice(words, length)) for _ in range(n)]


def _two_topics(seed: int = 0):
    """Two classes of 8-word documents, each half of its own 40 words, half of 40 shared ones:
    6 labeled documents a class, too few to know the classes' words, and 300 unlabeled of the
    same two classes, in which EM finds them."""
    rng = np.random.default_rng(seed)
    shared = [f"common{i}" for i in range(40)]
    words = {c: [f"{c}word{i}" for i in range(40)] for c in ("alpha", "beta")}

    def texts(c, n):
        return [f"{a} {b}" for a, b in zip(_topic_texts(rng, words[c], n, 4),
                                           _topic_texts(rng, shared, n, 4))]
    labeled = texts("alpha", 6) + texts("beta", 6)
    y = ["alpha"] * 6 + ["beta"] * 6
    unlabeled = texts("alpha", 150) + texts("beta", 150)
    return rng, words, labeled, y, unlabeled


def test_em_is_chosen_when_the_unlabeled_documents_share_the_classes():
    from textnb.semisupervised import choose
    _, _, labeled, y, unlabeled = _two_topics()
    choice = choose(TextClassifier(stop_words="none", n_jobs=1), labeled, y, unlabeled, folds=3)
    assert choice.folds == 3
    assert choice.weight is not None and choice.weight > 0, choice
    assert choice.accuracy > choice.plain_accuracy
    assert choice.scores[choice.alpha, choice.weight] == choice.accuracy
    # EM's classes of the unlabeled documents, which plain training then learns: the topics.
    truth = np.array(["alpha"] * 150 + ["beta"] * 150)
    assert np.mean(choice.unlabeled_classes == truth) >= 0.95


def test_em_falls_back_when_the_unlabeled_documents_come_from_elsewhere():
    """Unlabeled documents of a third topic that borrow one word in ten from class alpha: EM
    gives them all to alpha, whose own words drown in theirs, and held-out alpha documents go to
    beta. The choice is plain training, or λ = 0."""
    from textnb.semisupervised import choose
    rng, words, labeled, y, _ = _two_topics()
    other = [f"{a} {b}" for a, b in zip(_topic_texts(rng, words["alpha"], 400, 1),
                                        _topic_texts(rng, [f"gamma{i}" for i in range(40)],
                                                     400, 9))]
    choice = choose(TextClassifier(stop_words="none", n_jobs=1), labeled, y, other, folds=3)
    assert choice.weight in (None, 0.0), choice
    # No candidate with EM beat plain training (some lost to it: 0.5 against 0.83, measured).
    with_em = [score for (_, weight), score in choice.scores.items() if weight > 0]
    assert max(with_em) <= choice.plain_accuracy and min(with_em) < choice.plain_accuracy


def test_em_choice_on_mail_never_raises_the_false_positive_rate():
    from textnb.semisupervised import choose
    rng, words, labeled, y, unlabeled = _two_topics()
    y = ["spam" if c == "alpha" else "ham" for c in y]
    choice = choose(TextClassifier(stop_words="none", n_jobs=1), labeled, y, unlabeled, folds=3)
    assert choice.plain_false_positive_rate is not None
    assert choice.false_positive_rate <= choice.plain_false_positive_rate
    # EM wins here (CV accuracy 1.0 against 0.92 for λ 0), as EM's own multinomial: with a spam
    # class plain training would learn its cutoffs from EM's guesses as if they were labels.
    assert choice.weight > 0 and choice.unlabeled_classes is None
    assert choice.settings["model"] == "multinomial"


def test_cli_train_unlabeled_prints_the_choice(tmp_path):
    _, _, labeled, y, unlabeled = _two_topics()
    for name in ("alpha", "beta", "unl"):
        (tmp_path / name).mkdir()
    for i, (text, label) in enumerate(zip(labeled, y)):
        (tmp_path / label / str(i)).write_text(text)
    for i, text in enumerate(unlabeled):
        (tmp_path / "unl" / str(i)).write_text(text)
    model = tmp_path / "m.model"
    result = CliRunner().invoke(main, ["train", str(tmp_path / "alpha"), str(tmp_path / "beta"),
                                       "-m", str(model), "--unlabeled", str(tmp_path / "unl"),
                                       "--stop-words", "none"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith("EM "))
    assert "-fold CV on the labeled documents" in line and "(plain training accuracy 0." in line
    assert "then plain training on every document, the unlabeled ones in EM's classes" in line
    saved = load_model(model)
    # Plain training's own model, on the 12 labeled documents and the 300 in EM's classes.
    assert saved.model == TextClassifier().model != "multinomial"
    counts = dict(zip(saved.classes_, saved.model_.class_count_))
    assert counts["alpha"] + counts["beta"] == 312 and abs(counts["alpha"] - 156) <= 8


def test_complement_start_guesses_by_complement_nb_on_normalised_counts():
    from sklearn.naive_bayes import ComplementNB as Reference  # noqa: the yardstick
    from textnb.nb.em import complement_start
    rng = np.random.default_rng(0)
    X = csr_matrix(rng.poisson(0.7, (30, 12)).astype(float))
    y = np.array(["b", "a", "c"] * 4)
    first = complement_start(X[:12], y, X[12:])
    assert first.shape == (18, 3) and np.all(first.sum(axis=1) == 1)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).ravel()
    unit = csr_matrix(X.multiply(1 / np.where(norms > 0, norms, 1)[:, None]))
    want = Reference(alpha=0.03, norm=False).fit(unit[:12], y).predict(unit[12:])
    assert np.array(["a", "b", "c"])[first.argmax(axis=1)].tolist() == want.tolist()


def test_fit_em_start_complement_starts_from_those_guesses():
    _, _, labeled, y, unlabeled = _two_topics()
    clf = TextClassifier(model="multinomial", norm=None, stop_words="none", n_jobs=1)
    with pytest.raises(ValueError, match="em_start must be"):
        clf.fit(labeled, y, unlabeled=unlabeled, em_start="kmeans")
    first = clf.fit(labeled, y, unlabeled=unlabeled, em_iterations=1, em_start="complement")
    counts_first = first.model_.class_count_.copy()
    plain = TextClassifier(model="multinomial", norm=None, stop_words="none", n_jobs=1).fit(
        labeled, y, unlabeled=unlabeled, em_iterations=1)
    assert not np.allclose(counts_first, plain.model_.class_count_)


# -- clustering's starts ---------------------------------------------------------------------------

def _uneven_topics():
    """20 documents of one topic, nearly alike, and 3 each of two others: a random start puts
    two of its three seed documents in the big topic nearly always (93 % of draws)."""
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(["rocket", "orbit", "launch", "nasa"], 8)) for _ in range(20)]
    texts += [" ".join(rng.choice(["flour", "bake", "oven", "bread", "yeast"], 4)) for _ in range(3)]
    texts += [" ".join(rng.choice(["goal", "match", "team", "score", "league"], 4)) for _ in range(3)]
    truth = [0] * 20 + [1] * 3 + [2] * 3
    X = TextClassifier(model="multinomial", norm=None, stop_words="none").fit(
        texts, truth).transform(texts)
    return X, truth


def test_kmeans_starts_find_small_clusters_random_starts_miss():
    X, truth = _uneven_topics()

    def agreement(init: str) -> list[float]:
        return [adjusted_rand_index(truth, MixtureNB(n_clusters=3, alpha=0.1, n_init=3,
                                                     init=init, random_state=seed).fit(X).labels_)
                for seed in range(10)]
    assert agreement("kmeans") == [1.0] * 10
    # Measured: 6 of 10 seeds' random starts merge the two small topics (ARI 0.941).
    assert sum(a < 1.0 for a in agreement("random")) >= 3
    with pytest.raises(ValueError, match="init must be"):
        MixtureNB(n_clusters=3, init="spectral").fit(X)


def test_several_starts_are_deterministic_for_a_seed(tmp_path):
    X, _ = _uneven_topics()
    runs = [MixtureNB(n_clusters=4, alpha=0.1, n_init=3, random_state=7).fit(X) for _ in range(2)]
    assert len(runs[0].start_log_likelihoods_) == 3
    assert runs[0].start_log_likelihoods_ == runs[1].start_log_likelihoods_
    np.testing.assert_array_equal(runs[0].proba_, runs[1].proba_)
    for group, texts in _GROUPS.items():
        (tmp_path / group).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / group / f"{i}.txt").write_text(text)
    outputs = [CliRunner().invoke(main, ["cluster", str(tmp_path / "space"),
                                         str(tmp_path / "cooking"), "-k", "3", "-q", "--seed",
                                         "5", "--min-df", "1", "-m", str(tmp_path / f"{n}.model")])
               for n in range(2)]
    assert outputs[0].exit_code == 0, outputs[0].output
    assert outputs[0].stdout.replace("1.model", "0.model") == outputs[1].stdout.replace("1.model", "0.model")

