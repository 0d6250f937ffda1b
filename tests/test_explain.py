"""Explanations add up to the model's own scores; informative terms on the eight e-mails' e-mails."""

from __future__ import annotations

from math import log

import numpy as np
import pytest

from textnb import MultinomialNB
from textbook import TextClassifier
from textnb.nb.explain import explain_document, informative_terms

MODEL_NAMES = ["multinomial", "bernoulli", "complement"]

TEXTS = ["cheap pills now", "cheap money now!!!", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting",
         "the football results", "football tonight, results at noon"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham", "sport", "sport"]
DOCUMENTS = ["cheap pills at noon, win!!! notes notes", "football results at the meeting",
             "", "nothing known here"]


def _eight_emails(eight_emails, model: str, **kwargs) -> TextClassifier:
    texts, labels = eight_emails
    return TextClassifier(model=model, stop_words={"d", "e"}, min_token_length=1,  # words a, b, c
                          **kwargs).fit(texts, labels)


@pytest.mark.parametrize("model", MODEL_NAMES)
@pytest.mark.parametrize("settings", [{}, {"tf": "log", "norm": "l2"},
                                      {"class_prior": [0.1, 0.6, 0.3]}])
@pytest.mark.parametrize("top", [1, 3, 1000])
def test_explanation_adds_up_to_the_scores(model, settings, top):
    clf = TextClassifier(model=model, stop_words="none", **settings).fit(TEXTS, LABELS)
    jll = clf.predict_joint_log_proba(DOCUMENTS)
    for document, scores in zip(DOCUMENTS, jll):
        e = clf.explain(document, top=top)
        label, against = (list(clf.classes_).index(e.label), list(clf.classes_).index(e.against))
        assert e.label == clf.predict([document])[0]
        assert e.label != e.against
        assert scores[against] == np.sort(scores)[-2]            # the runner-up
        assert e.log_odds == pytest.approx(scores[label] - scores[against], abs=1e-12)
        assert e.log_odds >= 0
        total = e.prior_log_odds + e.baseline + sum(c.log_odds for c in e.terms) + e.rest
        assert total == pytest.approx(e.log_odds, abs=1e-9)
        prior = clf.model_.class_log_prior_
        assert e.prior_log_odds == pytest.approx(prior[label] - prior[against], abs=1e-12)
        if model != "bernoulli":
            assert e.baseline == 0.0
        assert len(e.terms) <= top
        if top == 1000:
            assert e.rest == 0.0
        # Largest contributions first, by absolute value.
        sizes = [abs(c.log_odds) for c in e.terms]
        assert sizes == sorted(sizes, reverse=True)


def test_contributions_name_the_terms_and_their_weights():
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    e = clf.explain("cheap cheap cheap football zzz", top=10)
    assert e.label == "spam" and e.against == "sport"
    terms = {c.term: c for c in e.terms}
    assert set(terms) == {"cheap", "football"}            # unknown tokens are no terms
    assert terms["cheap"].weight == 3.0 and terms["football"].weight == 1.0
    w = clf.model_.feature_log_prob_
    i, j = clf.vocabulary_.index_["cheap"], clf.vocabulary_.index_["football"]
    assert terms["cheap"].log_odds == pytest.approx(3 * (w[1, i] - w[2, i]), abs=1e-12)
    assert terms["football"].log_odds == pytest.approx(w[1, j] - w[2, j], abs=1e-12)
    assert terms["football"].log_odds < 0 < terms["cheap"].log_odds


def test_eight_emails_multinomial_explanation(eight_emails):
    """The eight e-mails: x = (3, 1, 0); three a's give 3 log(0.6/0.3) towards ham and one b
    gives log(0.2/0.5); the log-odds for ham are log(16/5), the inverse of the ratio 5/16."""
    e = _eight_emails(eight_emails, "multinomial").explain("a a a b d e", top=5)
    assert (e.label, e.against) == ("ham", "spam")
    assert e.log_odds == pytest.approx(log(16 / 5), abs=1e-12)
    assert e.prior_log_odds == 0.0 and e.baseline == 0.0 and e.rest == 0.0
    assert [(c.term, c.weight) for c in e.terms] == [("a", 3.0), ("b", 1.0)]
    assert e.terms[0].log_odds == pytest.approx(3 * log(2), abs=1e-12)
    assert e.terms[1].log_odds == pytest.approx(-log(2.5), abs=1e-12)


def test_eight_emails_bernoulli_explanation_with_prior(eight_emails):
    """The eight e-mails: x = (1, 1, 0), likelihood ratio 3/2 for spam; with 1/3 spam the
    prior odds are 1/2 and the posterior odds 3/4, so ham wins by log(4/3).

    The absent-word baseline is Σ_k log((1 − θ⊖_k)/(1 − θ⊕_k)) = log(2/3 · 2 · 1) for ham.
    """
    e = _eight_emails(eight_emails, "bernoulli", class_prior=[2 / 3, 1 / 3]).explain("a b", top=5)
    assert (e.label, e.against) == ("ham", "spam")
    assert e.log_odds == pytest.approx(log(4 / 3), abs=1e-12)
    assert e.prior_log_odds == pytest.approx(log(2), abs=1e-12)
    assert e.baseline == pytest.approx(log(2 / 3 * 2), abs=1e-12)
    by_term = {c.term: c.log_odds for c in e.terms}
    # log[θ⊖/(1 − θ⊖)] − log[θ⊕/(1 − θ⊕)]: a is log 2 − 0, b is log(1/2) − log 2.
    assert by_term == pytest.approx({"a": log(2), "b": -log(4)}, abs=1e-12)


def test_eight_emails_informative_terms(eight_emails):
    """The eight e-mails: multinomial θ⊕ = (0.3, 0.5, 0.2), θ⊖ = (0.6, 0.2, 0.2): the top
    ham term is a (log 0.6/0.3 = log 2), the top spam term b (log 0.5/0.2 = log 2.5), c is neutral."""
    terms = _eight_emails(eight_emails, "multinomial").informative_terms(top=3)
    assert [t for t, _ in terms["ham"]] == ["a", "c", "b"]
    assert [t for t, _ in terms["spam"]] == ["b", "c", "a"]
    assert terms["ham"][0][1] == pytest.approx(log(2), abs=1e-12)
    assert terms["spam"][0][1] == pytest.approx(log(2.5), abs=1e-12)
    assert terms["spam"][1][1] == pytest.approx(0.0, abs=1e-12)
    # Bernoulli weighs presence: b is in 3 of 4 spam e-mails and 1 of 4 ham ones.
    bernoulli = _eight_emails(eight_emails, "bernoulli").informative_terms(top=1)
    assert bernoulli["spam"] == [("b", pytest.approx(log(4), abs=1e-12))]
    assert bernoulli["ham"] == [("a", pytest.approx(log(2), abs=1e-12))]


def test_informative_terms_with_three_classes_compare_to_the_next_best_class():
    X = np.array([[5, 1, 0, 2], [0, 4, 1, 2], [1, 1, 6, 2]])
    model = MultinomialNB().fit(X, ["x", "y", "z"])
    w = model.feature_log_prob_
    terms = informative_terms(model, ["t0", "t1", "t2", "t3"], top=2)
    assert [t for t, _ in terms["x"]] == ["t0", "t3"]
    assert terms["x"][0][1] == pytest.approx(w[0, 0] - max(w[1, 0], w[2, 0]), abs=1e-12)
    assert [t for t, _ in terms["y"]] == ["t1", "t3"]
    assert [t for t, _ in terms["z"]] == ["t2", "t3"]
    assert len(informative_terms(model, ["t0", "t1", "t2", "t3"], top=99)["x"]) == 4


def test_informative_terms_equal_every_class_against_every_other_with_ties():
    """Best and second-best per term (one pass) give what comparing each class with every
    other gives, exactly: classes sharing a term's best weight (duplicated rows) included."""
    rng = np.random.default_rng(7)
    X = rng.poisson(1.0, size=(9, 300)).astype(float)
    X[[3, 7]] = X[5]                       # three classes alike: ties for the best everywhere
    X[:, :20] = 2.0                        # terms every class weighs the same
    model = MultinomialNB().fit(X, list("abcdefghi"))
    terms = [f"t{k}" for k in range(300)]
    w = model.feature_log_prob_
    for top in (1, 5, 300):
        got = informative_terms(model, terms, top=top)
        for c, label in enumerate("abcdefghi"):
            ratio = w[c] - np.delete(w, c, axis=0).max(axis=0)
            order = sorted(range(300), key=lambda k: (-ratio[k], k))[:top]
            assert got[label] == [(terms[k], float(ratio[k])) for k in order]


def test_explain_refuses_what_it_cannot_explain():
    model = MultinomialNB().fit(np.array([[1, 0], [0, 1]]), ["a", "b"])
    with pytest.raises(ValueError, match="explain one document at a time, got 2"):
        explain_document(model, ["t0", "t1"], np.eye(2))
    single = MultinomialNB().fit(np.array([[1, 0], [0, 1]]), ["a", "a"])
    with pytest.raises(ValueError, match="a model with one class has no decision to explain"):
        explain_document(single, ["t0", "t1"], np.array([[1, 0]]))
    with pytest.raises(ValueError, match="a model with one class has no informative terms"):
        informative_terms(single, ["t0", "t1"])
    with pytest.raises(ValueError, match="not fitted yet"):
        TextClassifier().explain("text")


def test_informative_terms_break_ties_by_term_order():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(3, 300)).astype(float)     # many equal ratios
    model = MultinomialNB().fit(X, ["a", "b", "c"])
    terms = [f"t{i:03d}" for i in range(300)]
    _, w = model.decomposition()
    for top in (1, 5, 40):
        result = informative_terms(model, terms, top=top)
        for c, label in enumerate("abc"):
            ratio = w[c] - np.delete(w, c, axis=0).max(axis=0)
            expected = [terms[k] for k in np.lexsort((np.arange(300), -ratio))[:top]]
            assert [t for t, _ in result[label]] == expected
