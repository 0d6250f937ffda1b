"""Words outside the vocabulary scored as terms no class counted (``unseen="score"``), as a
cross-validation fold scores a held-out document's words that its training lacks."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from textnb import TextClassifier, load_model, save_model
from textnb.cli.app import main
from textnb.store import scorer
from textnb.nb.discrete import BernoulliNB, ComplementNB, MultinomialNB
from textnb.nb.sparse import CSR, Unseen, as_csr, logsumexp

sklearn = pytest.importorskip("sklearn.naive_bayes")

TEXTS = ["cheap pills now", "cheap money now cheap", "win money win cheap pills now",
         "meeting at noon", "lunch at noon", "the football results tonight at noon",
         "football tonight"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "sport", "sport"]
FORMAT_2 = os.path.join(os.path.dirname(__file__), "data", "models", "v2-complement.model")

# Training counts over 6 terms of which the last two have no count: a fold's vocabulary holds
# the terms of every training document, so its held-out documents' own words are such columns.
X_TRAIN = np.array([[3, 0, 1, 2, 0, 0], [0, 2, 1, 0, 0, 0], [1, 3, 0, 1, 0, 0],
                    [4, 1, 0, 0, 0, 0], [0, 0, 5, 1, 0, 0]], dtype=float)
Y_TRAIN = ["a", "b", "b", "c", "a"]
# Test documents: counts of the four counted terms, and of the two never counted.
SEEN = np.array([[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 1], [2, 0, 0, 0]], dtype=float)
NEVER = np.array([[2, 0], [1, 4], [0, 0], [1, 1]], dtype=float)


def _with_unseen(seen: np.ndarray, never: np.ndarray, n_terms: int) -> CSR:
    """``seen`` as CSR over ``n_terms`` columns, ``never``'s non-zero counts as its unseen words."""
    X = as_csr(np.hstack([seen, np.zeros((seen.shape[0], n_terms - seen.shape[1]))]))
    rows, _ = np.nonzero(never)
    indptr = np.zeros(never.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=never.shape[0]), out=indptr[1:])
    return X._replace(unseen=Unseen(never[never > 0], indptr))


@pytest.mark.parametrize("ours, theirs", [
    (MultinomialNB(alpha=1.0), sklearn.MultinomialNB(alpha=1.0)),
    (MultinomialNB(alpha=0.03, fit_prior=False),
     sklearn.MultinomialNB(alpha=0.03, fit_prior=False)),
    (ComplementNB(alpha=0.3), sklearn.ComplementNB(alpha=0.3)),
    (ComplementNB(alpha=0.3, norm=True), sklearn.ComplementNB(alpha=0.3, norm=True)),
    (BernoulliNB(alpha=0.5), sklearn.BernoulliNB(alpha=0.5)),
])
def test_unseen_words_score_as_scikit_learn_scores_zero_count_terms(ours, theirs):
    # Ours counts the first four columns only (the last two dropped from its vocabulary's
    # count would be the same numbers: none has a count) and is told of the words it never
    # counted; scikit-learn's vocabulary has them as columns of zero count, and the document
    # holds them there.
    ours.fit(X_TRAIN, Y_TRAIN)
    theirs.fit(X_TRAIN, Y_TRAIN)
    X = _with_unseen(SEEN, NEVER, 6)
    expected = theirs.predict_log_proba(np.hstack([SEEN, NEVER]))
    np.testing.assert_allclose(ours.predict_log_proba(X), expected, rtol=1e-12, atol=1e-12)
    # Dropped, they change the scores: the test compares something.
    dropped = ours.predict_log_proba(X._replace(unseen=None))
    assert np.abs(dropped - expected).max() > 0.05


def test_the_unseen_weight_is_a_zero_count_term_s():
    model = MultinomialNB(alpha=0.5).fit(X_TRAIN, Y_TRAIN)
    n_c = X_TRAIN[[0, 4]].sum(), X_TRAIN[[1, 2]].sum(), X_TRAIN[3].sum()
    np.testing.assert_allclose(model.unseen_weight_, np.log(0.5 / (np.array(n_c) + 0.5 * 6)))
    np.testing.assert_allclose(model.unseen_weight_, model.feature_log_prob_[:, 5])
    bernoulli = BernoulliNB(alpha=0.5).fit(X_TRAIN, Y_TRAIN)
    N_c = np.array([2, 2, 1])
    np.testing.assert_allclose(bernoulli.unseen_weight_, np.log(0.5 / (N_c + 0.5)))


def _texts(unseen: str, **settings) -> TextClassifier:
    return TextClassifier(stop_words="none", unseen=unseen, n_jobs=1, **settings).fit(TEXTS, LABELS)


@pytest.mark.parametrize("settings", [{}, {"model": "multinomial", "tf": "log"},
                                      {"model": "bernoulli"}, {"norm": None, "alpha": 1.0}])
def test_a_document_s_unseen_words_weigh_as_its_other_words(settings):
    """Through the classifier's vectorising: the words outside the vocabulary, weighed as the
    document's other words (log tf, and in its l2 length), add u_c each."""
    clf = _texts("score", **settings)
    model, document = clf.model_, "cheap zebra zebra noon quagga"
    X = clf.counts([document])[0]
    unseen = np.array([2.0, 1.0])  # zebra twice, quagga once
    tf = clf.tf if clf.model != "bernoulli" else "binary"
    weigh = {"raw": lambda c: c, "log": np.log1p, "binary": np.sign}[tf]
    seen, never = weigh(X.data), weigh(unseen)
    if clf.norm == "l2" and clf.model != "bernoulli":
        length = np.sqrt((seen ** 2).sum() + (never ** 2).sum())
        seen, never = seen / length, never / length
    bias, weights = model.decomposition()
    jll = bias + weights[:, X.indices] @ seen + never.sum() * model.unseen_weight_
    np.testing.assert_allclose(clf.predict_joint_log_proba([document])[0], jll, rtol=1e-12)
    assert not np.allclose(_texts("drop", **settings).predict_joint_log_proba([document])[0], jll)


def test_a_document_of_unseen_words_only():
    """Multinomial, Laplace, learned priors: n unseen words score n·log(1/(n_c + |V|)) beside
    the prior; dropped, the prior alone decides."""
    settings = {"model": "multinomial", "alpha": 1.0, "norm": None, "fit_prior": True}
    clf, dropped = _texts("score", **settings), _texts("drop", **settings)
    n_terms = len(clf.vocabulary_.terms_)
    tokens = clf.model_.feature_count_.sum(axis=1)
    jll = clf.model_.class_log_prior_ + 3 * np.log(1 / (tokens + n_terms))
    expected = jll - logsumexp(jll)
    np.testing.assert_allclose(clf.predict_log_proba(["zebra quagga zebra"])[0], expected)
    np.testing.assert_allclose(dropped.predict_log_proba(["zebra quagga zebra"])[0],
                               dropped.model_.class_log_prior_)
    # The class with the fewest words learned is the likeliest source of a word never seen.
    assert clf.predict(["zebra quagga zebra"])[0] == clf.classes_[np.argmin(tokens)] == "ham"
    why = clf.explain("zebra quagga zebra")
    assert why.unseen == 2 and why.terms == []
    assert why.log_odds == pytest.approx(why.prior_log_odds + why.unseen_log_odds)
    assert dropped.explain("zebra quagga zebra").unseen == 0


def test_explain_adds_the_unseen_words_up():
    clf = _texts("score")
    why = clf.explain("cheap cheap zebra noon quagga", top=1)
    assert why.unseen == 2 and why.unseen_log_odds != 0
    assert why.log_odds == pytest.approx(why.prior_log_odds + why.baseline + why.unseen_log_odds
                                         + sum(t.log_odds for t in why.terms) + why.rest)


def test_the_setting_is_saved_and_old_files_drop_unseen_words(tmp_path):
    clf = _texts("score")
    save_model(clf, tmp_path / "m.model")
    loaded = load_model(tmp_path / "m.model")
    assert loaded.unseen == "score"
    probes = ["cheap zebra", "quagga", "noon football"]
    np.testing.assert_allclose(loaded.predict_log_proba(probes), clf.predict_log_proba(probes),
                               rtol=1e-12)
    # A file of before the setting: its words outside the vocabulary are dropped, as then.
    old = load_model(FORMAT_2)
    assert old.unseen == "drop"
    X = old.transform(["cheap zebra quagga"])
    assert X.unseen is None


def test_the_mail_filter_leaves_a_model_that_scores_unseen_words_to_load_model(tmp_path):
    save_model(_texts("score"), tmp_path / "score.model")
    save_model(_texts("drop"), tmp_path / "drop.model")
    with pytest.raises(scorer.Declined):
        scorer.Scorer(tmp_path / "score.model")
    scorer.Scorer(tmp_path / "drop.model")  # the cold path as before
    text = "cheap zebra quagga now"
    classes, log_proba, _, _ = scorer.score(tmp_path / "score.model", text)
    np.testing.assert_allclose(log_proba, _texts("score").predict_log_proba([text])[0],
                               rtol=1e-10)


def test_auto_scores_them_with_more_than_two_classes(tmp_path):
    """"auto" (the default): a model of more than two classes scores them, as --tune's folds
    do; one of two (mail, or a decision threshold) drops them, as the held-out scores its
    cutoffs and threshold are set on drop them."""
    two = [t for t, l in zip(TEXTS, LABELS) if l != "sport"], [l for l in LABELS if l != "sport"]
    mail = TextClassifier(stop_words="none", spam_class="spam", n_jobs=1).fit(*two)
    plain = TextClassifier(stop_words="none", n_jobs=1).fit(two[0], [
        "a" if label == "spam" else "b" for label in two[1]])
    topics = TextClassifier(stop_words="none", spam_class="spam", n_jobs=1).fit(TEXTS, LABELS)
    assert TextClassifier().unseen == "auto"
    assert not mail._scores_unseen() and not plain._scores_unseen() and topics._scores_unseen()
    assert mail.transform(["zebra"]).unseen is None
    assert topics.transform(["zebra"]).unseen.data.size == 1
    for name, clf in (("mail", mail), ("topics", topics)):
        save_model(clf, tmp_path / name)
        assert load_model(tmp_path / name)._scores_unseen() is clf._scores_unseen()
    scorer.Scorer(tmp_path / "mail")  # the mail filter's cold path, as before
    with pytest.raises(scorer.Declined):
        scorer.Scorer(tmp_path / "topics")


def test_the_setting_is_refused_when_unknown():
    with pytest.raises(ValueError, match="unseen"):
        TextClassifier(unseen="keep").fit(TEXTS, LABELS)


def test_the_command_explains_the_unseen_words(tmp_path):
    clf = _texts("score")
    save_model(clf, tmp_path / "m.model")
    (tmp_path / "doc.txt").write_text("cheap zebra quagga quagga now\n")
    runner = CliRunner()
    text = runner.invoke(main, ["classify", "-m", str(tmp_path / "m.model"), "--explain",
                                str(tmp_path / "doc.txt")])
    assert text.exit_code == 0, text.output
    assert "(2 unseen words)" in text.output
    record = json.loads(runner.invoke(main, ["classify", "-m", str(tmp_path / "m.model"),
                                             "--format", "json", "--explain",
                                             str(tmp_path / "doc.txt")]).output)["explanation"]
    assert record["unseen_words"] == 2
    assert record["unseen_log_odds"] == pytest.approx(clf.explain("cheap zebra quagga quagga now")
                                                      .unseen_log_odds)


def test_vectorising_keeps_each_part_s_unseen_words():
    clf = _texts("score")
    vocabulary = clf.vocabulary_
    parts = [counts for counts, _ in clf._count_stream(["zebra cheap zebra", "", "noon"],
                                                        digests=False, size=1)]
    assert len(parts) == 3
    X = vocabulary.count_parts(parts, unseen=True)
    np.testing.assert_array_equal(X.unseen.indptr, [0, 1, 1, 1])
    np.testing.assert_array_equal(X.unseen.data, [2.0])
    assert vocabulary.count_parts(parts).unseen is None


def _class_dirs(top, texts, labels):
    for i, (text, label) in enumerate(zip(texts, labels)):
        (top / label).mkdir(parents=True, exist_ok=True)
        (top / label / f"{i:03d}").write_text(text + "\n")
    return [str(top / label) for label in sorted(set(labels))]


@pytest.mark.parametrize("given, scored", [([], True), (["--unseen", "drop"], False),
                                           (["--unseen", "score"], True)])
def test_train_takes_the_setting(tmp_path, given, scored):
    dirs = _class_dirs(tmp_path / "train", TEXTS, LABELS)
    result = CliRunner().invoke(main, ["train", "-q", "-m", str(tmp_path / "m.model"), *given,
                                       *dirs])
    assert result.exit_code == 0, result.output
    assert load_model(tmp_path / "m.model")._scores_unseen() is scored


def test_train_refuses_the_setting_for_a_multi_label_model(tmp_path):
    dirs = _class_dirs(tmp_path / "train", TEXTS, LABELS)
    (tmp_path / "labels.txt").write_text("")
    result = CliRunner().invoke(main, ["train", "-m", str(tmp_path / "m.model"), "--unseen",
                                       "score", "--labels", str(tmp_path / "labels.txt"), *dirs])
    assert result.exit_code == 2 and "--unseen does not apply" in result.output
    assert not (tmp_path / "m.model").exists()
