"""The textbooks' worked examples, reproduced to their printed numbers: Mitchell's
LEARN_NAIVE_BAYES_TEXT (Machine Learning, ch. 6) and the two event models, multi-variate
Bernoulli and multinomial (McCallum & Nigam 1998), on eight e-mails."""

from __future__ import annotations

from fractions import Fraction
from math import factorial, log

import numpy as np
import pytest

from textnb import BernoulliNB, MultinomialNB, Tokenizer, Vocabulary
from textbook import TextClassifier


def _eight_emails_classifier(eight_emails, model: str, **kwargs) -> TextClassifier:
    """TextClassifier trained on the eight e-mails' e-mails as texts, with d and e as stop words."""
    texts, labels = eight_emails
    return TextClassifier(model=model, stop_words={"d", "e"}, min_token_length=1,  # words a, b, c
                          **kwargs).fit(texts, labels)


# -- the two event models on eight e-mails (McCallum & Nigam 1998) --------------------------

def test_eight_emails_texts_give_the_printed_count_table(eight_emails, eight_counts):
    """The eight e-mails: with d, e as stop words, e1..e8 give the printed #a #b #c."""
    texts, _ = eight_emails
    expected, _ = eight_counts
    tokenizer = Tokenizer(stop_words={"d", "e"}, min_length=1)  # its words are letters
    assert tokenizer(texts[0]) == ["b", "b", "b"]
    assert tokenizer(texts[7]) == []                      # e8 is all stop words
    vocabulary = Vocabulary()
    X = vocabulary.fit_transform([tokenizer(t) for t in texts])
    assert vocabulary.terms_ == ["a", "b", "c"]
    np.testing.assert_array_equal(X.toarray(), expected)
    presence = Vocabulary(binary=True).fit_transform([tokenizer(t) for t in texts])
    np.testing.assert_array_equal(presence.toarray(), (expected > 0).astype(float))


def test_eight_emails_bernoulli_theta(eight_emails, eight_counts):
    """The eight e-mails: bit-vector sums (2, 3, 1) and (3, 1, 1); with two
    pseudo-documents θ⊕ = (3/6, 4/6, 2/6) = (0.5, 0.67, 0.33), θ⊖ = (4/6, 2/6, 2/6)."""
    X, y = eight_counts
    model = BernoulliNB(alpha=1.0).fit(X, y)
    assert model.classes_.tolist() == ["ham", "spam"]
    np.testing.assert_array_equal(model.feature_count_, [[3, 1, 1], [2, 3, 1]])
    theta = np.exp(model.feature_log_prob_)
    np.testing.assert_allclose(theta, [[4 / 6, 2 / 6, 2 / 6], [3 / 6, 4 / 6, 2 / 6]], rtol=1e-12)
    assert theta.round(2).tolist() == [[0.67, 0.33, 0.33], [0.5, 0.67, 0.33]]
    # The same model through texts, the tokenizer and the vocabulary.
    clf = _eight_emails_classifier(eight_emails, "bernoulli")
    np.testing.assert_array_equal(clf.model_.feature_count_, model.feature_count_)
    np.testing.assert_allclose(np.exp(clf.model_.feature_log_prob_), theta, rtol=1e-12)


def test_eight_emails_bernoulli_likelihoods_and_ml_decision(eight_emails, eight_counts):
    """The eight e-mails: x = (1, 1, 0); P(x|⊕) = 0.5 · 0.67 · (1 − 0.33) = 0.222,
    P(x|⊖) = 0.67 · 0.33 · (1 − 0.33) = 0.148; the ML classification of x is spam."""
    X, y = eight_counts
    model = BernoulliNB(fit_prior=False).fit(X, y)        # uniform prior: the ML rule
    x = np.array([[1, 1, 0]])
    likelihood = np.exp(model.predict_joint_log_proba(x)[0] - model.class_log_prior_)
    np.testing.assert_allclose(likelihood, [4 / 6 * 2 / 6 * 4 / 6, 3 / 6 * 4 / 6 * 4 / 6], rtol=1e-12)
    assert likelihood.round(3).tolist() == [0.148, 0.222]
    assert model.predict(x).tolist() == ["spam"]
    # The document as a text: three a's count once in the Bernoulli model.
    clf = _eight_emails_classifier(eight_emails, "bernoulli", fit_prior=False)
    text_jll = clf.predict_joint_log_proba(["a a a b d e"])[0]
    np.testing.assert_allclose(np.exp(text_jll - np.log(0.5)), likelihood, rtol=1e-12)
    assert clf.predict(["a b"]).tolist() == ["spam"]


def test_eight_emails_likelihood_ratio_and_prior_odds(eight_emails, eight_counts):
    """The eight e-mails: likelihood ratio P(x|⊕)/P(x|⊖) = 3/2; MAP is spam if the prior
    odds exceed 2/3; with 1/3 spam the prior odds are 1/2 and the posterior odds 3/2 · 1/2 = 3/4."""
    X, y = eight_counts
    x = np.array([[1, 1, 0]])
    ml = BernoulliNB(fit_prior=False).fit(X, y)
    jll = ml.predict_joint_log_proba(x)[0]
    assert jll[1] - jll[0] == pytest.approx(log(3 / 2), abs=1e-12)
    # classes_ are ['ham', 'spam']: 1/3 spam is class_prior [2/3, 1/3].
    map_model = BernoulliNB(class_prior=[2 / 3, 1 / 3]).fit(X, y)
    proba = map_model.predict_proba(x)[0]
    assert proba[1] / proba[0] == pytest.approx(3 / 4, rel=1e-12)
    assert map_model.predict(x).tolist() == ["ham"]       # the prior wins
    # The threshold 2/3 on the prior odds: just above it spam, just below it ham.
    for odds, decision in [(0.7, "spam"), (0.6, "ham")]:
        model = BernoulliNB(class_prior=[1.0, odds]).fit(X, y)
        assert model.predict(x).tolist() == [decision]
    # Through texts: the same posterior odds.
    clf = _eight_emails_classifier(eight_emails, "bernoulli", class_prior=[2 / 3, 1 / 3])
    text_proba = clf.predict_proba(["a b e"])[0]
    assert text_proba[1] / text_proba[0] == pytest.approx(3 / 4, rel=1e-12)


def test_eight_emails_multinomial_theta(eight_emails, eight_counts):
    """The eight e-mails: count sums (5, 9, 3) and (11, 3, 3); one pseudo-count per word
    gives 20 per class and θ⊕ = (0.3, 0.5, 0.2), θ⊖ = (0.6, 0.2, 0.2)."""
    X, y = eight_counts
    model = MultinomialNB(alpha=1.0).fit(X, y)
    np.testing.assert_array_equal(model.feature_count_, [[11, 3, 3], [5, 9, 3]])
    np.testing.assert_allclose(np.exp(model.feature_log_prob_),
                               [[0.6, 0.2, 0.2], [0.3, 0.5, 0.2]], rtol=1e-12)
    clf = _eight_emails_classifier(eight_emails, "multinomial")
    np.testing.assert_array_equal(clf.model_.feature_count_, model.feature_count_)
    np.testing.assert_allclose(clf.model_.feature_log_prob_, model.feature_log_prob_, rtol=1e-12)


def test_eight_emails_multinomial_likelihoods_ratio_and_ml_decision(eight_emails, eight_counts):
    """The eight e-mails: x = (3, 1, 0), n = 4; P(x|⊕) = 4!/(3!1!0!) 0.3³ 0.5¹ 0.2⁰ = 0.054,
    P(x|⊖) = 4!/(3!1!0!) 0.6³ 0.2¹ 0.2⁰ = 0.1728; ratio 5/16; the ML classification is ham.

    The model's jll omits the multinomial coefficient, a constant of the document alone that
    cancels between classes: exp(jll − log prior) × coefficient gives the printed likelihoods.
    """
    X, y = eight_counts
    model = MultinomialNB(fit_prior=False).fit(X, y)
    x = np.array([[3, 1, 0]])
    coefficient = factorial(4) // (factorial(3) * factorial(1) * factorial(0))
    assert coefficient == 4
    likelihood = np.exp(model.predict_joint_log_proba(x)[0] - model.class_log_prior_) * coefficient
    np.testing.assert_allclose(likelihood, [0.1728, 0.054], rtol=1e-12)
    assert likelihood[1] / likelihood[0] == pytest.approx(5 / 16, rel=1e-12)
    assert model.predict(x).tolist() == ["ham"]           # opposite of the Bernoulli model
    clf = _eight_emails_classifier(eight_emails, "multinomial", fit_prior=False)
    text = "a d a e a b"                                  # three a's, one b, stop words ignored
    np.testing.assert_allclose(clf.predict_joint_log_proba([text])[0],
                               model.predict_joint_log_proba(x)[0], rtol=1e-12)
    assert clf.predict([text]).tolist() == ["ham"]
    assert clf.predict_proba([text])[0][1] == pytest.approx(5 / 21, rel=1e-12)  # 5/(5+16)


def test_eight_emails_empty_email_trains_and_scores_as_prior(eight_emails):
    """The eight e-mails: e8 ("d e d e d") has no vocabulary word at all; it still counts
    as a ham document (P(⊖) = 4/8), and an empty document is scored by the prior alone."""
    clf = _eight_emails_classifier(eight_emails, "multinomial", class_prior=[0.25, 0.75])
    np.testing.assert_array_equal(clf.model_.class_count_, [4, 4])
    np.testing.assert_allclose(clf.predict_proba(["d e", ""]), [[0.25, 0.75]] * 2, rtol=1e-14)


# -- Mitchell's LEARN_NAIVE_BAYES_TEXT (Machine Learning, ch. 6) ---------------------------------

MITCHELL_TEXTS = ["cheap pills cheap", "cheap offer",                  # +
                  "meeting today", "lunch today", "offer lunch"]       # −
MITCHELL_LABELS = ["+", "+", "-", "-", "-"]


def test_mitchell_learn_naive_bayes_text_estimates():
    """Mitchell, Machine Learning, ch. 6: LEARN_NAIVE_BAYES_TEXT, P(v_j) = |docs_j|/|Examples| and
    P(w_k|v_j) = (n_k + 1)/(n + |Vocabulary|), checked against fractions computed by hand.

    Vocabulary = {cheap, lunch, meeting, offer, pills, today}, |Vocabulary| = 6.
    Text_+ = "cheap pills cheap cheap offer": n = 5, n_cheap = 3, n_offer = n_pills = 1.
    Text_− = "meeting today lunch today offer lunch": n = 6, n_lunch = n_today = 2,
    n_meeting = n_offer = 1.
    """
    clf = TextClassifier(stop_words="none").fit(MITCHELL_TEXTS, MITCHELL_LABELS)
    assert clf.vocabulary_.terms_ == ["cheap", "lunch", "meeting", "offer", "pills", "today"]
    assert clf.classes_.tolist() == ["+", "-"]
    np.testing.assert_allclose(np.exp(clf.model_.class_log_prior_),
                               [float(Fraction(2, 5)), float(Fraction(3, 5))], rtol=1e-14)
    by_hand = [[Fraction(4, 11), Fraction(1, 11), Fraction(1, 11), Fraction(2, 11),
                Fraction(2, 11), Fraction(1, 11)],
               [Fraction(1, 12), Fraction(3, 12), Fraction(2, 12), Fraction(2, 12),
                Fraction(1, 12), Fraction(3, 12)]]
    np.testing.assert_allclose(np.exp(clf.model_.feature_log_prob_),
                               np.array(by_hand, dtype=float), rtol=1e-14)


def test_mitchell_classify_naive_bayes_text_ignores_unknown_positions():
    """Mitchell, Machine Learning, ch. 6: CLASSIFY_NAIVE_BAYES_TEXT uses only positions whose tokens are
    in Vocabulary; v_NB = argmax P(v_j) Π P(a_i|v_j): for "cheap lunch zebra",
    + gives 2/5 · 4/11 · 1/11 = 8/605, − gives 3/5 · 1/12 · 3/12 = 1/80, so v_NB = +."""
    clf = TextClassifier(stop_words="none").fit(MITCHELL_TEXTS, MITCHELL_LABELS)
    jll = clf.predict_joint_log_proba(["cheap lunch zebra"])[0]
    np.testing.assert_allclose(np.exp(jll), [8 / 605, 1 / 80], rtol=1e-12)
    np.testing.assert_array_equal(jll, clf.predict_joint_log_proba(["cheap lunch"])[0])
    assert clf.predict(["cheap lunch zebra"]).tolist() == ["+"]
