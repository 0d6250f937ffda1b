"""scripts/bench_heldout.py's left-out scores: each text scored by a model of all the others."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from textnb import TextClassifier

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
TEXTS = ["cheap pills cheap offer now", "win cash prize now claim", "cheap watches offer",
         "claim your free prize today zebra", "free cash offer limited", "pills offer cheap cash",
         "meeting notes attached for monday", "lunch on monday with the team",
         "lunch on monday with the team", "notes from the team meeting", "the cheap lunch place",
         "monday meeting moved to noon quokka"]
LABELS = ["spam"] * 6 + ["ham"] * 6


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(SCRIPTS))  # bench_heldout imports bench_spam and tune beside it
    try:
        spec = importlib.util.spec_from_file_location("bench_heldout", SCRIPTS / "bench_heldout.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


def _spam_log_odds(classifier: TextClassifier, texts: list[str]) -> np.ndarray:
    rows = classifier.predict_log_proba(texts)
    s = list(classifier.classes_).index("spam")
    return rows[:, s] - rows[:, 1 - s]


@pytest.mark.parametrize("settings", [{}, {"model": "multinomial", "tf": "log"},
                                      {"tf": "binary", "norm": None}])
def test_left_out_scores_are_those_of_a_model_of_the_other_texts(bench, monkeypatch, settings):
    settings = {"spam_class": "spam", "training": "full", "ngram_range": (1, 1),
                "keep_suspects": True, "decision_threshold": None, **settings}
    kept = {}
    fit = TextClassifier._fit_vocabulary

    def keep(self, vocabulary, X, labels, digests, *rest, **options):
        kept.update(raw=X, digests=digests)
        return fit(self, vocabulary, X, labels, digests, *rest, **options)

    monkeypatch.setattr(TextClassifier, "_fit_vocabulary", keep)
    classifier = TextClassifier(**settings).fit(TEXTS, LABELS)
    monkeypatch.setattr(TextClassifier, "_fit_vocabulary", fit)
    raw = kept["raw"]
    got = bench.left_out_log_odds(classifier, raw, classifier._weigh(raw),
                                  np.array(LABELS) == "spam", kept["digests"])
    assert kept["digests"][7] == kept["digests"][8]  # the copy is left out with its twin
    for i, text in enumerate(TEXTS):
        others = [j for j in range(len(TEXTS)) if TEXTS[j] != text]
        alone = TextClassifier(**settings).fit([TEXTS[j] for j in others],
                                               [LABELS[j] for j in others])
        np.testing.assert_allclose(got[i], _spam_log_odds(alone, [text])[0], rtol=1e-9,
                                   atol=1e-9, err_msg=text)
    # Leaving a text out moves its score (else the comparison above could not fail).
    assert np.ptp(got) > 1 and abs(got[0] - _spam_log_odds(classifier, TEXTS[:1])[0]) > 1e-3
