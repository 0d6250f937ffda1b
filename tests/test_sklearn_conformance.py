"""scikit-learn's own estimator checks on textnb.nb.discrete, and TextClassifier in GridSearchCV.

The whole module skips when scikit-learn (the test extra) is absent: it is no dependency of
textnb. Two checks may report "skipped" inside scikit-learn itself: those needing pandas, which
is not installed, and the array API check, which runs only with SCIPY_ARRAY_API=1.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is optional (the test extra): no checks to run")

from sklearn.exceptions import DataConversionWarning, NotFittedError  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

from textnb import TextClassifier  # noqa: E402
from textnb.nb.discrete import BernoulliNB, ComplementNB, ComplementNBWithPrior, MultinomialNB

# check_estimator notes that these classes do not inherit scikit-learn's BaseEstimator (on
# purpose: the library does not depend on it), and which of its checks it skipped (see above).
pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning"),
              pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from")]

ESTIMATORS = [MultinomialNB(), BernoulliNB(), ComplementNB(), ComplementNBWithPrior(),
              MultinomialNB(alpha=0.1, fit_prior=False), ComplementNB(norm=True)]


with warnings.catch_warnings():   # the same note, given while collecting
    warnings.filterwarnings("ignore", "Estimator .* does not inherit from")
    _every_check = parametrize_with_checks(ESTIMATORS)


@_every_check
def test_scikit_learn_estimator_check(estimator, check):
    check(estimator)


@pytest.mark.parametrize("Model", [MultinomialNB, BernoulliNB, ComplementNB])
def test_check_estimator_reports_no_failure(Model):
    """The count the issue gave (24–25 of 63 checks failed) is now 0."""
    results = check_estimator(Model(), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []
    assert sum(r["status"] == "passed" for r in results) >= 58


def test_errors_are_scikit_learns_when_it_is_loaded():
    with pytest.raises(NotFittedError, match="this MultinomialNB is not fitted yet"):
        MultinomialNB().predict(np.eye(2))
    model = MultinomialNB()
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    model.fit(np.eye(2), [0, 1])
    check_is_fitted(model)
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed"):
        MultinomialNB().fit(np.eye(2), np.array([[0], [1]]))


def test_the_library_does_not_import_scikit_learn():
    """Validation and errors work without importing scikit-learn (it is no dependency)."""
    code = ("import sys, numpy as np, textnb.nb.discrete as m, textnb.nb.estimator as est\n"
            "try:\n    m.MultinomialNB().predict(np.eye(2))\n"
            "except est.NotFittedError as e:\n    print(type(e).__mro__[1].__name__)\n"
            "m.ComplementNB().fit(np.eye(2), [0, 1]).predict(np.eye(2))\n"
            "print('sklearn' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["ValueError", "False"]


TEXTS = ["cheap pills now", "cheap money now", "win money now", "free pills",
         "meeting at noon", "lunch at noon", "notes from the meeting", "lunch tomorrow"] * 3
LABELS = (["spam"] * 4 + ["ham"] * 4) * 3


def test_text_classifier_score_is_accuracy():
    clf = TextClassifier(stop_words="none", n_jobs=1).fit(TEXTS, LABELS)
    texts = ["cheap pills", "lunch meeting", "cheap lunch now", "money"]
    predicted = clf.predict(texts).tolist()
    assert predicted == ["spam", "ham", "spam", "spam"]
    assert clf.score(texts, ["spam", "ham", "ham", "ham"]) == 0.5
    assert clf.score(texts, ["spammy", "ham", "spam", "spam"]) == 0.75   # no truncation to <U4
    assert clf.score(texts, ["spam", "ham", "ham", "ham"], sample_weight=[1, 1, 0, 2]) == 0.5
    assert clf.score(texts, np.array(predicted)) == 1.0
    with pytest.raises(ValueError, match="got 4 texts but 3 labels"):
        clf.score(texts, ["spam", "ham", "ham"])


def test_grid_search_cv_on_text_classifier():
    """scikit-learn's GridSearchCV clones, fits and scores (score = accuracy) each setting."""
    from sklearn.model_selection import GridSearchCV
    texts = TEXTS + ["pills money cheap win", "noon lunch notes"]
    labels = LABELS + ["spam", "ham"]
    search = GridSearchCV(TextClassifier(stop_words="none", n_jobs=1),
                          {"model": ["multinomial", "complement"], "alpha": [0.01, 100.0]}, cv=3)
    search.fit(texts, labels)
    scores = dict(zip(map(str, search.cv_results_["params"]), search.cv_results_["mean_test_score"]))
    assert len(scores) == 4
    # α = 0.01 separates the toy classes in every fold; α = 100 flattens the multinomial model
    # until the unequal document lengths decide instead.
    assert scores[str({"alpha": 0.01, "model": "multinomial"})] == 1.0
    assert scores[str({"alpha": 0.01, "model": "complement"})] == 1.0
    assert search.best_params_["alpha"] == 0.01
    assert search.best_estimator_.predict(["cheap pills"]).tolist() == ["spam"]
