"""Full training's left-out scores (textnb.decision.cutoffs.left_out): each text scored by a model
of all the others, as that model scores a new text; the learned cutoffs' rates are read off them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import textnb.decision.cutoffs as drivers
from textnb import TextClassifier
from textnb.decision import cutoffs as rules

SAMPLE = Path(__file__).resolve().parent.parent / "corpora" / "spamassassin"

TEXTS = ["cheap pills cheap offer now", "win cash prize now claim", "cheap watches offer",
         "claim your free prize today zebra", "free cash offer limited", "pills offer cheap cash",
         "meeting notes attached for monday", "lunch on monday with the team",
         "lunch on monday with the team", "notes from the team meeting", "the cheap lunch place",
         "monday meeting moved to noon quokka"]
LABELS = ["spam"] * 6 + ["ham"] * 6
FULL = {"spam_class": "spam", "training": "full", "ngram_range": (1, 1), "keep_suspects": True,
        "decision_threshold": None}


def _spam_log_odds(classifier: TextClassifier, texts: list[str]) -> np.ndarray:
    rows = classifier.predict_log_proba(texts)
    s = list(classifier.classes_).index("spam")
    return rows[:, s] - rows[:, 1 - s]


@pytest.fixture
def left_out(monkeypatch):
    """The left-out scores of each fit or learn_thresholds, as they were computed, five rows
    at a time (textnb's blocks hold 1,000)."""
    found = []
    method = drivers.left_out
    monkeypatch.setattr(drivers, "LEFT_OUT_ROWS", 5)

    def record(*args, **kwargs):
        found.append(method(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(drivers, "left_out", record)
    return found


@pytest.mark.parametrize("settings", [{}, {"model": "multinomial", "tf": "log"},
                                      {"tf": "binary", "norm": None}, {"fit_prior": True},
                                      {"class_prior": [0.3, 0.7], "model": "multinomial"},
                                      {"hash_bits": 8}])
def test_left_out_scores_are_those_of_a_model_of_the_other_texts(left_out, settings):
    settings = {**FULL, **settings}
    classifier = TextClassifier(**settings).fit(TEXTS, LABELS)
    got = left_out[-1]
    for i, text in enumerate(TEXTS):
        others = [j for j in range(len(TEXTS)) if TEXTS[j] != text]  # a copy goes with its twin
        alone = TextClassifier(**settings).fit([TEXTS[j] for j in others],
                                               [LABELS[j] for j in others])
        np.testing.assert_allclose(got[i], _spam_log_odds(alone, [text])[0], rtol=1e-9,
                                   atol=1e-9, err_msg=text)
    # Leaving a text out moves its score (else the comparison above could not fail).
    assert np.ptp(got) > 1 and abs(got[0] - _spam_log_odds(classifier, TEXTS[:1])[0]) > 1e-3


def test_the_folds_choose_the_cutoffs_and_the_left_out_scores_rate_them(left_out, monkeypatch):
    """The bundled sample (150 spam, 150 ham), full training with the default settings."""
    texts = [path.read_bytes() for label in ("spam", "ham")
             for path in sorted((SAMPLE / label).iterdir())]
    labels = ["spam"] * 150 + ["ham"] * 150
    classifier = TextClassifier(spam_class="spam", training="full").fit(texts, labels)
    cutoffs = classifier.cutoffs_
    assert len(left_out) == 1   # once, for the rates and the decision threshold both
    # The cutoffs are the folds' (the same settings without the left-out scores choose them).
    folds = TextClassifier(spam_class="spam", training="full")
    with monkeypatch.context() as patch:
        patch.setattr(drivers, "left_out", lambda *args, **kwargs: None)
        folds.fit(texts, labels)
    assert (cutoffs["spam"], cutoffs["ham"]) == (folds.cutoffs_["spam"], folds.cutoffs_["ham"])
    assert "rated" not in folds.cutoffs_
    kept = np.delete(np.array(labels), classifier.suspects_) == "spam"
    rated = rules.rates(left_out[-1], kept, cutoffs["spam"], cutoffs["ham"])
    assert cutoffs["rated"] == "left out" and {k: cutoffs[k] for k in rated} == rated
    assert rated != {k: folds.cutoffs_[k] for k in rated}  # else this could not fail


def test_a_model_that_learned_more_leaves_each_text_out_with_every_learned_copy(left_out):
    """learn_thresholds (textnb tune-cutoffs, and train on a sample of a large corpus): the
    model learned TEXTS, the first one twice, and more; each text of TEXTS is scored by it
    less the text's every learned copy."""
    more = ["cash offer for monday", "team lunch notes"]
    learned, labels = TEXTS + TEXTS[:1] + more, LABELS + LABELS[:1] + ["spam", "ham"]
    classifier = TextClassifier(**FULL).partial_fit(learned, labels)
    classifier.learn_thresholds(TEXTS, LABELS)
    got = left_out[-1]
    for i, text in enumerate(TEXTS):
        rest = [j for j in range(len(learned)) if learned[j] != text]
        alone = TextClassifier(**FULL).fit([learned[j] for j in rest], [labels[j] for j in rest])
        np.testing.assert_allclose(got[i], _spam_log_odds(alone, [text])[0], rtol=1e-9,
                                   atol=1e-9, err_msg=text)
    assert classifier.cutoffs_["rated"] == "left out"


def test_training_on_error_rates_its_folds_held_out_messages_as_new_ones(left_out,
                                                                          monkeypatch):
    """Training on error has no left-out scores: its cutoffs are rated on the folds' models'
    scores of their held-out messages taken as new ones (cut to the fold model's terms and
    weighted again), which differ from the folds' own; the Bernoulli model keeps the folds'."""
    found = {}
    method = drivers.out_of_fold

    def record(*args, **kwargs):
        found["folds"], found["as_new"] = method(*args, **kwargs)
        return found["folds"], found["as_new"]

    monkeypatch.setattr(drivers, "out_of_fold", record)
    texts = [path.read_bytes() for label in ("spam", "ham")
             for path in sorted((SAMPLE / label).iterdir())]
    labels = ["spam"] * 150 + ["ham"] * 150
    walked = TextClassifier(spam_class="spam", training="on-error",
                            decision_threshold=None).fit(texts, labels)
    assert not left_out and walked.cutoffs_["rated"] == "as new"
    kept = np.delete(np.array(labels), walked.suspects_)
    as_new = np.delete(found["as_new"], walked.suspects_)   # spam over ham ("ham" < "spam")
    rated = rules.rates(as_new, kept == "spam", walked.cutoffs_["spam"], walked.cutoffs_["ham"])
    assert {k: walked.cutoffs_[k] for k in rated} == rated
    folds = rules.rates(np.delete(found["folds"], walked.suspects_), kept == "spam",
                        walked.cutoffs_["spam"], walked.cutoffs_["ham"])
    assert rated != folds   # else this could not fail
    bernoulli = TextClassifier(**{**FULL, "model": "bernoulli"}).fit(TEXTS, LABELS)
    assert left_out == [None] and "rated" not in bernoulli.cutoffs_


def test_full_trainings_decision_threshold_is_read_off_the_left_out_scores(left_out,
                                                                           monkeypatch):
    """Two classes without a spam class (reviews, say): predict's threshold is the accuracy
    threshold of each document's score by a model of the others. The classes' names sort one
    way and their values the other (10 before 9 as names): the scores are turned to match."""
    labels = [10] * 6 + [9] * 6       # the model's classes: [9, 10]; by name "10" < "9"
    settings = {**FULL, "spam_class": None, "decision_threshold": "auto"}
    monkeypatch.setattr(rules, "THRESHOLD_MIN", 3)   # (20 documents of each class)
    classifier = TextClassifier(**settings).fit(TEXTS, labels)
    scores = left_out[-1]            # 9 over 10, by name
    assert list(classifier.classes_) == [9, 10]
    expected = rules.accuracy_threshold(-scores, np.array(labels) == 10)
    assert classifier.decision_threshold_ == expected
    # The scores are the model of the others' log-odds of 10 over 9 for each text, turned.
    others = [j for j in range(len(TEXTS)) if TEXTS[j] != TEXTS[1]]
    alone = TextClassifier(**{**settings, "decision_threshold": None}).fit(
        [TEXTS[j] for j in others], [labels[j] for j in others])
    rows = alone.predict_log_proba(TEXTS[1:2])
    np.testing.assert_allclose(-scores[1], rows[0, 1] - rows[0, 0], rtol=1e-9, atol=1e-9)


def test_a_spam_class_named_first_has_its_rates_turned(left_out):
    """A spam class whose name sorts first ("bulk" before "ham"): the left-out scores are
    ham over bulk, and the rates read off them are the spam class's."""
    labels = ["bulk" if label == "spam" else label for label in LABELS]
    classifier = TextClassifier(**{**FULL, "spam_class": "bulk"}).fit(TEXTS, labels)
    rated = rules.rates(-left_out[-1], np.array(labels) == "bulk", classifier.cutoffs_["spam"],
                        classifier.cutoffs_["ham"])
    assert {k: classifier.cutoffs_[k] for k in rated} == rated


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.sampled_from("ab cd ef gh ij kl mn op".split()), min_size=0, max_size=6),
                min_size=6, max_size=12),
       st.randoms(use_true_random=False),
       st.sampled_from(["complement", "multinomial"]), st.sampled_from(["raw", "log", "binary"]),
       st.sampled_from(["l2", None]), st.booleans())
def test_left_out_scores_of_random_corpora(words, rng, model, tf, norm, fit_prior):
    """Random little corpora (empty texts and copies among them): each text's left-out score is
    the log-odds of a model trained on the texts that are not its copies."""
    texts = [" ".join(w) for w in words]
    labels = ["spam" if rng.random() < 0.5 else "ham" for _ in texts]
    assume(all(len({t for t, l in zip(texts, labels) if l == c}) >= 2 for c in ("spam", "ham")))
    settings = {**FULL, "model": model, "tf": tf, "norm": norm, "fit_prior": fit_prior}
    found = []
    method = drivers.left_out

    def record(*args, **kwargs):
        found.append(method(*args, **kwargs))
        return found[-1]

    drivers.left_out = record
    try:
        TextClassifier(**settings).fit(texts, labels)
    finally:
        drivers.left_out = method
    assume(found)   # the cutoffs need two distinct texts of each class
    for i, text in enumerate(texts):
        others = [j for j in range(len(texts)) if texts[j] != text]
        if {labels[j] for j in others} != {"spam", "ham"} or not any(texts[j] for j in others):
            continue   # no model of the others: a class of none, or no word
        alone = TextClassifier(**{**settings, "keep_suspects": True}).fit(
            [texts[j] for j in others], [labels[j] for j in others])
        np.testing.assert_allclose(found[-1][i], _spam_log_odds(alone, [text])[0], rtol=1e-8,
                                   atol=1e-8, err_msg=repr((text, texts, labels)))
