"""The Python API as a scikit-learn user expects it, and refusing at the call what it cannot
honour (issue #44 point 7, issue #46 point 7): NotFittedError, one-line errors for the wrong
shape or kind of input, the public class named in a TypeError, a repr of the changed settings;
a string y, mixed label types, non-finite alpha, n-grams a model file cannot hold and absurd
n_jobs refused before any work, by the one rule a setting (textnb.settings.RULES) that the
model file's check and the command line apply too."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings as hypothesis_settings, strategies as st

from textnb import (BernoulliNB, ComplementNB, ComplementNBWithPrior, ModelFileError,
                    MultinomialNB, TextClassifier, TextnbError, load_model, save_model)
from textnb import settings
from textnb.cli.app import main
from textnb.multilabel import MultiLabelClassifier
from textnb.nb.estimator import NotFittedError
from textnb.store import schema
from textnb.tables.model import TableNB

TEXTS = ["cheap pills now", "cheap money now", "win cheap pills", "meeting at noon",
         "lunch at noon", "the noon meeting moved"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham"]


def unread(texts=TEXTS):
    """The texts as an iterator that fails the test if fit reads one: a refusal at the call
    comes before any work."""
    def texts_never_read():
        raise AssertionError("fit read a text before refusing its settings")
        yield  # pragma: no cover
    return texts_never_read()


# -- scikit-learn's conventions (#44.7) ------------------------------------------------------

@pytest.mark.parametrize("estimator, call", [
    (TextClassifier(), lambda m: m.predict(["x"])),
    (TextClassifier(), lambda m: m.predict_proba(["x"])),
    (TextClassifier(), lambda m: m.transform(["x"])),
    (TextClassifier(), lambda m: m.decision_function(["x"])),
    (MultiLabelClassifier(), lambda m: m.predict(["x"])),
    (TableNB(), lambda m: m.predict([[1.0]])),
    (MultinomialNB(), lambda m: m.predict(np.eye(2))),
])
def test_an_unfitted_estimator_raises_not_fitted_error(estimator, call):
    with pytest.raises(NotFittedError, match=f"this {type(estimator).__name__} is not fitted "
                                             f"yet; call fit first"):
        call(estimator)
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


def test_an_unfitted_estimator_is_scikit_learns_not_fitted_too():
    """check_is_fitted and scikit-learn code catching its own exception catch ours."""
    sklearn_exceptions = pytest.importorskip("sklearn.exceptions")
    with pytest.raises(sklearn_exceptions.NotFittedError):
        TextClassifier().predict(["x"])


@pytest.mark.parametrize("texts", [np.array([["cheap", "pills"], ["lunch", "noon"]]),
                                   np.zeros((2, 3))])
def test_fit_on_a_2d_array_says_what_it_wants(texts):
    with pytest.raises(ValueError) as error:
        TextClassifier().fit(texts, ["spam", "ham"])
    message = str(error.value)
    assert message == (f"expected a list of texts (str, bytes or Document), one a document: a "
                       f"1-D sequence, not an array of shape {texts.shape}")


def test_fit_on_a_1d_array_of_texts_works():
    """An array's truth is ambiguous: fit no longer asks it."""
    clf = TextClassifier(stop_words="none").fit(np.array(TEXTS), np.array(LABELS))
    assert clf.predict(["cheap pills"]).tolist() == ["spam"]


@pytest.mark.parametrize("Model", [MultinomialNB, BernoulliNB, ComplementNB,
                                   ComplementNBWithPrior, TextClassifier, MultiLabelClassifier])
def test_a_misspelt_setting_names_the_public_class(Model):
    with pytest.raises(TypeError, match=rf"^{Model.__name__}\.__init__\(\) got an unexpected "
                                        r"keyword argument 'alpah'$"):
        Model(alpah=1)


def test_an_inherited_constructor_still_works():
    model = ComplementNBWithPrior(alpha=0.5, norm=True)
    assert model.get_params() == {"alpha": 0.5, "fit_prior": True, "class_prior": None,
                                  "norm": True}


def test_repr_prints_the_changed_settings_only():
    assert repr(TextClassifier()) == "TextClassifier()"
    assert repr(TextClassifier(alpha=1.0, ngram_range=(1, 2), norm=None)) == (
        "TextClassifier(alpha=1.0, ngram_range=(1, 2), norm=None)")
    assert repr(TextClassifier().set_params(n_jobs=1)) == "TextClassifier(n_jobs=1)"
    assert repr(MultinomialNB(class_prior=np.array([0.5, 0.5]))) == (
        "MultinomialNB(class_prior=array([0.5, 0.5]))")
    assert repr(MultiLabelClassifier(folds=3)) == "MultiLabelClassifier(folds=3)"


def test_repr_agrees_with_scikit_learns():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.naive_bayes import MultinomialNB as TheirNB
    with sklearn.config_context(print_changed_only=True):
        assert repr(MultinomialNB(alpha=0.5, fit_prior=False)) == repr(
            TheirNB(alpha=0.5, fit_prior=False))
        assert repr(MultinomialNB()) == repr(TheirNB())


# -- labels ---------------------------------------------------------------------------------

def test_a_string_y_is_refused_not_read_as_its_letters():
    texts = ["a b", "c d", "e f", "g h"]   # as many texts as "spam" has letters
    for call in (lambda: TextClassifier().fit(texts, "spam"),
                 lambda: TextClassifier().fit(iter(texts), "spam"),
                 lambda: TextClassifier().partial_fit(texts, "spam", classes=["s", "p", "a", "m"]),
                 lambda: MultinomialNB().fit(np.eye(4), "spam")):
        with pytest.raises(ValueError, match=r"y must be a sequence of labels, one a document, "
                                             r"not a single str \('spam'\); for one document"):
            call()
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    with pytest.raises(ValueError, match="not a single str"):
        clf.score(TEXTS[:4], "spam")
    with pytest.raises(ValueError, match="not a single str"):
        clf.unlearn(TEXTS[:4], "spam")


@pytest.mark.parametrize("labels", [[1, "1", 1, "1", 2, 2], ["1", "1", "1", 2, 2, 2],
                                    [True, "spam", True, "ham", "ham", "ham"]])
def test_labels_mixing_strings_and_numbers_are_refused(labels):
    """[1, "1"] was one class: str(1) == "1"."""
    message = r"y mixes strings and numbers: labels must be all strings or all numbers"
    with pytest.raises(ValueError, match=message):
        TextClassifier().fit(TEXTS, labels)
    with pytest.raises(ValueError, match=message):
        TextClassifier().fit(iter(TEXTS), iter(labels))   # read after the texts
    with pytest.raises(ValueError, match=message):
        MultinomialNB().fit(np.eye(6), labels)


def test_em_marks_unlabeled_documents_with_minus_one_among_string_labels():
    """scikit-learn's convention for semi-supervised learning, kept: -1 is no label."""
    from textnb.nb.em import SemiSupervisedNB
    X = np.array([[3, 0], [0, 3], [2, 1], [1, 2]])
    model = SemiSupervisedNB().fit(X, ["spam", "ham", -1, -1])
    assert model.classes_.tolist() == ["ham", "spam"]
    with pytest.raises(ValueError, match="y mixes strings and numbers"):
        SemiSupervisedNB().fit(X, ["spam", "ham", 1, -1])


def test_numbers_of_one_kind_stay_labels():
    clf = TextClassifier(stop_words="none").fit(TEXTS, [1, 1, 1.0, 0, 0, 0])
    assert clf.classes_.tolist() == [0, 1]
    assert MultinomialNB().fit(np.eye(4), [True, False, 1, 0]).classes_.tolist() == [0, 1]


# -- settings refused at the call ----------------------------------------------------------

@pytest.mark.parametrize("setting, value, message", [
    ("alpha", math.inf, "alpha must be a finite number > 0 and at most 1e+06, not inf"),
    ("alpha", math.nan, "alpha must be a finite number > 0 and at most 1e+06, not nan"),
    ("alpha", 1e308, "alpha must be a finite number > 0 and at most 1e+06, not 1e+308"),
    ("alpha", -1, "alpha must be a finite number > 0 and at most 1e+06, not -1"),
    ("ngram_range", (1, 1000), "ngram_range must be None or (min_n, max_n) with 1 <= min_n "
                               "<= max_n <= 10, not (1, 1000)"),
    ("ngram_range", (1, 11), "not (1, 11)"),
    ("ngram_range", (2, 1), "not (2, 1)"),
    ("ngram_range", (0, 1), "not (0, 1)"),
    ("ngram_range", "12", "not '12'"),
    ("n_jobs", 10_000, "n_jobs must be None or a number of processes, 1 to 256, or -1 (every "
                       "core) to -256 (all but n - 1), not 10000"),
    ("n_jobs", 0, "n_jobs must be None or a number of processes"),
    ("n_jobs", True, "not True"),
    ("max_token_length", 0, "max_token_length must be a whole number from 1 to 10000, not 0"),
    ("margin", math.inf, "margin must be a number from 0 to 1e+06, not inf"),
    ("target_fpr", 1.0, "target_fpr must be 0 or a rate from 1e-09 to below 1, not 1.0"),
    ("cutoff_folds", 1, "cutoff_folds must be a whole number from 2 to 1000, not 1"),
    ("fit_prior", "yes", "fit_prior must be True or False, not 'yes'"),
    ("stemmer", "lancaster", "stemmer must be None, 'porter' or 'snowball', not 'lancaster'"),
    ("class_prior", [0, 0], "class_prior must be None or a positive number per class"),
    ("class_prior", [1, 0], "class_prior must be None or a positive number per class"),
    ("class_prior", [0.5, math.nan], "class_prior must be None or a positive number"),
    ("hash_bits", 32, "hash_bits must be None or a whole number from 1 to 31, not 32"),
    ("decision_threshold", math.inf, "decision_threshold must be 'auto', None or a number"),
])
def test_a_setting_it_cannot_honour_is_refused_before_any_work(setting, value, message):
    clf = TextClassifier(**{setting: value})
    with pytest.raises(ValueError) as error:
        clf.fit(unread(), LABELS)
    text = str(error.value)
    assert text.startswith(f"{setting} must be ") and message in text and "\n" not in text


def test_absurd_n_jobs_set_after_fit_is_refused_before_a_process_starts(monkeypatch):
    import textnb.workers
    monkeypatch.setattr(textnb.workers, "_Worker", None)   # a process started would fail
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS).set_params(n_jobs=10_000)
    with pytest.raises(ValueError, match="^n_jobs must be None or a number of processes"):
        clf.predict(TEXTS * 1000)


def test_the_largest_settings_a_file_holds_are_fitted_saved_and_loaded(tmp_path):
    clf = TextClassifier(stop_words="none", alpha=settings.MAX_ALPHA,
                         ngram_range=(1, settings.MAX_NGRAM), n_jobs=1).fit(TEXTS, LABELS)
    probabilities = clf.predict_proba(TEXTS)
    assert np.isfinite(probabilities).all()
    save_model(clf, tmp_path / "m.model")
    np.testing.assert_array_equal(load_model(tmp_path / "m.model").predict_proba(TEXTS),
                                  probabilities)


def test_multilabel_settings_follow_the_same_rules():
    for setting, value in (("alpha", math.inf), ("ngram_range", (1, 50)), ("n_jobs", 10_000),
                           ("folds", 1), ("ngram_range", None)):
        with pytest.raises(ValueError, match=f"^{setting} must be "):
            MultiLabelClassifier(**{setting: value}).fit(TEXTS, [["a"], ["b"]] * 3)


def test_the_command_line_refuses_by_the_same_rules(tmp_path):
    for option, value, message in (("--alpha", "inf", "alpha must be a finite number > 0"),
                                   ("--ngrams", "11", "ngram_range must be None or (min_n, max_n)"),
                                   ("--jobs", "10000", "n_jobs must be None or a number of "),
                                   ("--target-fpr", "1e-12", "target_fpr must be 0 or a rate")):
        result = CliRunner().invoke(main, ["train", "-q", "-m", str(tmp_path / "m"), option,
                                           value, str(tmp_path)])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "m").exists()


# One JSON value of every kind a model file's settings could hold, and then some.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4), max_leaves=6)
# Values near each setting's bounds, where a rule is most easily written twice.
edges = st.sampled_from([0, 1, 2, -1, 10, 11, 256, 257, -256, -257, 4096, 31, 32, 1000, 1001,
                         1e-9, 1e-10, 0.999, 1.0, 1e6, 1e6 + 1, 2.0 ** 40, [1, 10], [1, 11],
                         [2, 1], [0, 1], [1, 2, 3], "auto", "l2", "porter", "log", "on-error",
                         "complement", "english", ["a", "b"], [0.2, 0.8], [0, 0]])


@hypothesis_settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(settings.RULES)), value=json_values | edges)
def test_the_file_check_and_the_estimator_read_one_rule(name, value):
    """A value a model file could hold is refused by the file's check exactly when the
    estimator's rule refuses it: one rule, not two written alike."""
    table = schema.TEXT_SETTINGS if name in schema.TEXT_SETTINGS else schema.MULTILABEL_SETTINGS
    params = {key: TextClassifier().get_params().get(key) for key, required in table.items()
              if required and key != name}
    if table is schema.MULTILABEL_SETTINGS:
        # A file holds the scoring and α the fit chose, never "auto" or None.
        params = {**MultiLabelClassifier().get_params(), "ngram_range": [1, 1],
                  "scoring": "posterior", "alpha": 0.1}
        params.pop(name)
    file_verdict = schema.settings_problem({**params, name: value}, table)
    assert (file_verdict is None) == (settings.setting_problem(name, value) is None), file_verdict
    if table is schema.MULTILABEL_SETTINGS:   # and the whole file's check, as fit's
        meta = {"params": {**params, name: value}, "labels": ["a"], "stop_words": []}
        fit_verdict = settings.problem(meta["params"], not_none=settings.MULTILABEL_NOT_NONE)
        assert (schema.multilabel_problem(meta) is None) == (fit_verdict is None)


# -- fuzz: random settings and inputs, only clear errors -----------------------------------

# Each setting's values: those it takes, then those it refuses.
SETTING_VALUES = {
    "model": (["multinomial", "bernoulli", "complement"], ["gaussian", None]),
    "alpha": ([1e-9, 0.03, 1.0, 1e6], [0, -1, math.inf, math.nan, 1e7, "1"]),
    "ngram_range": ([None, (1, 1), (1, 3), (2, 2), (1, 10)], [(1, 11), (3, 1), (1, 1000), (1,)]),
    "n_jobs": ([None, 1, -1], [0, 10_000, -10_000, 1.5, "2"]),
    "max_token_length": ([1, 5, 40], [0, 10_001]),
    "tf": (["raw", "log", "binary"], ["tfidf"]),
    "norm": ([None, "l2"], ["l1"]),
    "training": (["full", "on-error", "auto"], ["sometimes"]),
    "stop_words": (["none", "english", None, ["cheap"]], [3]),
    "min_df": ([1, 2, 0.5], [-1, math.inf]),
    "hash_bits": ([None, 4, 20], [0, 40]),
    "decision_threshold": (["auto", None, 0.5], [math.nan, "never"]),
    "fit_prior": ([True, False], ["no"]),
    "class_prior": ([None, [0.5, 0.5], [1, 3]], [[0, 0], [1, 0], [-1, 2]]),
    "spam_class": ([None, "spam", "0"], [3]),
}


@st.composite
def fuzzed_settings(draw):
    """Mostly settings it takes (so that most examples fit), now and then one it refuses."""
    chosen = draw(st.fixed_dictionaries(
        {}, optional={name: st.sampled_from(good) for name, (good, _) in SETTING_VALUES.items()}))
    bad = draw(st.sampled_from([None] * len(SETTING_VALUES) + sorted(SETTING_VALUES)))
    if bad is not None:
        chosen[bad] = draw(st.sampled_from(SETTING_VALUES[bad][1]))
    return chosen


# A document: words or bytes (a message's too).
words = (st.text(alphabet="abcdefgh !.\n", max_size=30) | st.binary(max_size=30)
         | st.just(b"Subject: cheap pills\n\nbuy now"))


@st.composite
def fuzzed_training(draw):
    """Texts and as many labels of one kind, or now and then a y that is wrong."""
    texts = draw(st.lists(words, min_size=2, max_size=10))
    kind = draw(st.sampled_from([["spam", "ham", "x"], [0, 1, 2], [True, False]]))
    labels = draw(st.lists(st.sampled_from(kind), min_size=len(texts), max_size=len(texts)))
    fault = draw(st.sampled_from([None] * 6 + ["one string", "mixed", "short", "junk text"]))
    if fault == "one string":
        labels = "spam"
    elif fault == "mixed":
        labels = [*labels[:-1], "1" if not isinstance(labels[0], str) else 1]
    elif fault == "short":
        labels = labels[:-1]
    elif fault == "junk text":
        texts = [*texts[:-1], draw(st.sampled_from([None, 3, ["cheap", "pills"]]))]
    return texts, labels


@hypothesis_settings(max_examples=300, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(chosen=fuzzed_settings(), training=fuzzed_training(),
       queries=st.lists(words, max_size=5))
def test_fuzz_fit_predict_save_load_only_clear_errors(tmp_path, chosen, training, queries):
    """Whatever the settings and inputs: a fitted model that predicts, saves and loads to the
    same probabilities, or a ValueError or TextnbError of one line saying why; never another
    exception, NaN probabilities or a file that does not load."""
    def clear(error):
        assert isinstance(error, (ValueError, TextnbError)), repr(error)
        assert str(error) and "\n" not in str(error), repr(error)

    texts, labels = training
    try:
        clf = TextClassifier(**chosen).fit(texts, labels)
    except (ValueError, TextnbError) as error:
        clear(error)
        event(f"fit refused: {str(error)[:30]}")
        return
    try:
        probabilities = clf.predict_proba(queries)
        predicted = clf.predict(queries)
    except (ValueError, TextnbError) as error:
        clear(error)
        event(f"predict refused: {str(error)[:30]}")
        return
    assert np.isfinite(probabilities).all()
    assert set(predicted.tolist()) <= set(clf.classes_.tolist())
    event("fitted, predicted, saved and loaded")
    path = tmp_path / "fuzz.model"
    save_model(clf, path)          # what fit accepted, a file holds
    np.testing.assert_allclose(load_model(path).predict_proba(queries), probabilities,
                               rtol=1e-12, atol=1e-300)


def test_a_model_file_with_absurd_settings_is_refused_with_the_rules_words(tmp_path):
    import zipfile
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    save_model(clf, tmp_path / "good.model")
    for name, value in (("n_jobs", 10_000), ("ngram_range", [1, 1000]), ("alpha", 1e308)):
        with zipfile.ZipFile(tmp_path / "good.model") as old, \
                zipfile.ZipFile(tmp_path / "bad.model", "w") as new:
            for item in old.infolist():
                data = old.read(item)
                if item.filename == "meta.json":
                    meta = json.loads(data)
                    meta["params"][name] = value
                    data = json.dumps(meta).encode()
                new.writestr(item, data)
        with pytest.raises(ModelFileError,
                           match=re.escape(f"{name} must be {settings.RULES[name][1]})")):
            load_model(tmp_path / "bad.model")


# -- stemming needs NLTK only --------------------------------------------------------------

def test_stemming_without_nltk_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "nltk", None)   # as if not installed: find_spec says None
    with pytest.raises(TextnbError, match=r"^stemming needs NLTK, which is not installed: "
                                          r"pip install 'textnb\[stem\]'$"):
        TextClassifier(stemmer="porter").fit(unread(), LABELS)
    corpus = Path(__file__).resolve().parent.parent / "corpora" / "spamassassin"
    result = CliRunner().invoke(main, ["train", "-q", "--stem", "porter", "-m",
                                       str(tmp_path / "m"), str(corpus / "spam"),
                                       str(corpus / "ham")])
    assert (result.exit_code, result.stderr) == (
        1, "Error: stemming needs NLTK, which is not installed: pip install 'textnb[stem]'\n")
    # Without stemming nothing needs it: the stop words come from the packaged copy.
    clf = TextClassifier(stop_words="english").fit(TEXTS, LABELS)
    assert "the" in clf.stop_words_ and clf.predict(["cheap pills"]).tolist() == ["spam"]
