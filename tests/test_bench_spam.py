"""bench.spam's own arithmetic: Robinson–Fisher scoring, as --cv --fisher compares it with
textnb's, and the figures --seeds pools over several splits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.sparse import csr_matrix


@pytest.fixture(scope="module")
def bench():
    import bench.spam
    return bench.spam


def test_chi_square_survival_against_hand_computed_values(bench):
    # Q(χ² ≥ 4 | 4 dof) = e^−2 (1 + 2) = 0.406006; Q(χ² ≥ 10 | 6 dof) = e^−5 (1 + 5 + 12.5).
    got = np.exp(bench.chi2_log_sf(np.array([4.0, 10.0]), np.array([4, 6])))
    np.testing.assert_allclose(got, [3 * math.exp(-2), 18.5 * math.exp(-5)], rtol=1e-12)
    # Far in the tail, where the probability underflows, its log stays finite.
    assert -5000 < bench.chi2_log_sf(np.array([1e4]), np.array([200]))[0] < -4000


def test_fisher_combining_by_hand(bench):
    # Terms: "cheap" in both spam, "meeting" in the ham. s = 1, x = 0.5:
    # f(cheap) = (0.5 + 2·1)/(1 + 2) = 5/6, f(meeting) = (0.5 + 1·0)/(1 + 1) = 1/4.
    X_train = csr_matrix(np.array([[1, 0], [2, 0], [0, 1]]))
    is_spam = np.array([True, True, False])
    held = csr_matrix(np.array([[1, 1]]))
    f = np.array([5 / 6, 1 / 4])
    h = -2 * np.log(f).sum()          # χ² of the hamminess, 4 degrees of freedom
    s = -2 * np.log1p(-f).sum()
    q = lambda x2: math.exp(-x2 / 2) * (1 + x2 / 2)  # Q(χ² ≥ x2 | 4 dof)
    expected = math.log(q(h)) - math.log(q(s))
    got = bench.fisher_scores(X_train, is_spam, held, s=1.0, x=0.5)
    assert got[0] == pytest.approx(expected, rel=1e-12)
    # A spammier message scores higher.
    assert bench.fisher_scores(X_train, is_spam, csr_matrix(np.array([[1, 0]])), s=1.0)[0] > got[0]


def _result(name, one_minus_auc, fp, unsure, not_caught, best, promised=None):
    return {"name": name, "one_minus_auc": one_minus_auc, "fp": fp, "unsure": unsure,
            "not_caught": not_caught, "best_not_caught": best,
            **({"promised": {"spam_not_caught": promised}} if promised is not None else {})}


def test_pooled_figures_over_splits(bench):
    splits = [{"n_ham": 1000, "results": [_result("textnb default", 0.0001, 1, 0.01, 0.05, 0.03, 0.04),
                                          _result("bogofilter", 0.0002, 0, 0.10, 0.20, 0.04)]},
              {"n_ham": 1200, "results": [_result("textnb default", 0.0006, 3, 0.03, 0.09, 0.05, 0.06),
                                          _result("bogofilter", 0.0004, 2, 0.12, 0.18, 0.06)]}]
    lines = bench.pooled_table(splits, 0.001).splitlines()
    textnb = " ".join(next(line for line in lines if "textnb default" in line).split())
    # Mean 1 − AUC 0.035 %; ratios 0.5 and 1.5; 4 of 2,200 ham; means 2 %, 7 % (5–9), promised
    # 5 %, best 4 %.
    assert textnb == ("textnb default 0.0350 % 0.50-1.50x, below on 1 of 2 4 of 2200 (at most 3) "
                      "2.00 % 7.00 % (5.0-9.0) 5.00 % 4.00 %")
    bogofilter = " ".join(next(line for line in lines if line.lstrip().startswith("bogofilter"))
                          .split())
    assert bogofilter == ("bogofilter 0.0300 % 1.00-1.00x, below on 0 of 2 2 of 2200 (at most 2) "
                          "11.00 % 19.00 % (18.0-20.0) - 5.00 %")


def test_the_scikit_learn_references_rank_by_their_own_scores(bench):
    """--sklearn-linear adds logistic regression and a linear SVM beside MultinomialNB: each
    ranks new messages by its decision score (higher: spam) and decides at 0."""
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    spam_words, ham_words = ["cheap", "pills", "offer", "win"], ["meeting", "notes", "agenda", "lunch"]

    def message(words):
        return " ".join(rng.choice(words + ["the", "a", "today"], 8)).encode()

    train = [message(spam_words) for _ in range(20)] + [message(ham_words) for _ in range(20)]
    labels = ["spam"] * 20 + ["ham"] * 20
    test = [b"cheap pills win offer", b"meeting notes agenda lunch"]
    results = bench.run_sklearn(train, labels, test, linear=True)
    assert [r.name for r in results] == ["sklearn Count+MNB", "sklearn TF-IDF+LR",
                                        "sklearn TF-IDF 1-2+SVM"]
    for r in results:
        assert r.score[0] > 0 > r.score[1]
        assert r.status.tolist() == ["spam", "ham"]
    assert [r.name for r in bench.run_sklearn(train, labels, test)] == ["sklearn Count+MNB"]


def test_the_scales_left_out_scores_are_those_of_a_model_of_the_other_texts(bench):
    """--scales' left-out scores of a fully trained model: each text as a model of the others
    (its copy left out with it) scores it; trained on error, a text the walks did not learn as
    the trained model itself scores it."""
    from textnb import TextClassifier
    texts = ["cheap pills cheap offer now", "win cash prize now claim", "cheap watches offer",
             "claim your free prize today zebra", "free cash offer limited",
             "meeting notes attached for monday", "lunch on monday with the team",
             "lunch on monday with the team", "notes from the team meeting",
             "monday meeting moved to noon quokka"]
    labels = np.array(["spam"] * 5 + ["ham"] * 5)
    settings = {"spam_class": "spam", "training": "full", "ngram_range": (1, 1),
                "keep_suspects": True, "decision_threshold": None}

    def spam_log_odds(classifier, some):
        rows = classifier.predict_log_proba(some)
        s = list(classifier.classes_).index("spam")
        return rows[:, s] - rows[:, 1 - s]

    got = bench.left_out_scores(TextClassifier(**settings).fit(texts, labels), texts, labels)
    for i, text in enumerate(texts):
        others = [j for j in range(len(texts)) if texts[j] != text]
        alone = TextClassifier(**settings).fit([texts[j] for j in others], labels[others])
        assert got[i] == pytest.approx(spam_log_odds(alone, [text])[0], abs=1e-9), text
    walked = TextClassifier(**{**settings, "training": "on-error"}).fit(texts, labels)
    learned = set(walked.digests_.tolist())
    got = bench.left_out_scores(walked, texts, labels)
    from textnb.text.features import noting_digests, text_iterable
    found = []
    list(noting_digests(walked._count_stream(text_iterable(texts)), found))
    unlearned = [i for i, d in enumerate(np.concatenate(found).tolist()) if d not in learned]
    assert unlearned     # the walks skipped some, else the comparison could not tell
    np.testing.assert_allclose(got[unlearned], spam_log_odds(walked, [texts[i] for i in unlearned]),
                               atol=1e-9)


def test_the_scales_decisions_on_test_scores_by_hand(bench):
    score = np.array([-3.0, -1.0, 0.5, 2.0, 2.5, 1.0, 3.0, 4.0])
    is_spam = np.array([False] * 5 + [True] * 3)
    # Ham at 2.0 and 2.5 called spam at 2.0 (A = 1 of 5 ham: over); spam at 1.0 not caught;
    # unsure between 0 and 2: the ham at 0.5 and the spam at 1.0.
    assert bench.at_cutoffs(score, is_spam, 2.0, 0.0, 0.001) == {
        "ham_spam": 2, "over": True, "not_caught": pytest.approx(1 / 3), "unsure": 0.25}
    # Linear percentiles: of the 5 ham, at 3.96 and 3.996 of the gap 2 → 2.5; of the 3 spam
    # at 0.2 of the gap 1 → 3.
    assert bench.scale_row(score, is_spam) == pytest.approx([2.48, 2.498, 2.5, 1.4])
