"""X, y → MultinomialNB, BernoulliNB, ComplementNB: identities, learning arithmetic, bad input."""

from __future__ import annotations

from math import log

import numpy as np
import pytest
import scipy.sparse as sp

import textnb.nb.discrete
import textnb.nb.sparse
import textnb.text.vocabulary
from textnb.nb.sparse import CSR, StoredCounts, as_csr, logsumexp
from textnb.nb.discrete import BernoulliNB, ComplementNB, MultinomialNB, class_log_prior

# Why scikit-learn tests skip: it is no dependency of textnb, only a yardstick.
NO_SKLEARN = "scikit-learn is optional (the bench extra): no yardstick to compare with"
NO_HYPOTHESIS = "hypothesis (the test extra) is needed for property tests"

MODELS = [MultinomialNB, BernoulliNB, ComplementNB]


def _state(model) -> dict:
    """Every learned array of a model, copied, for exact before/after comparisons."""
    return {k: np.array(v, copy=True) for k, v in vars(model).items() if k.endswith("_")}


def _assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


# -- helpers ----------------------------------------------------------------------------------

def test_logsumexp_does_not_overflow_or_underflow():
    a = np.array([[1000.0, 1000.0], [-1000.0, -1000.0 + log(3)], [-np.inf, 0.0]])
    np.testing.assert_allclose(logsumexp(a, axis=1), [1000 + log(2), -1000 + log(4), 0.0],
                               rtol=1e-15)
    assert logsumexp(np.array([[-np.inf, -np.inf]]), axis=1)[0] == -np.inf


def test_class_log_prior_modes():
    counts = np.array([1.0, 3.0])
    np.testing.assert_allclose(np.exp(class_log_prior(counts)), [0.25, 0.75], rtol=1e-15)
    np.testing.assert_allclose(np.exp(class_log_prior(counts, fit_prior=False)), [0.5, 0.5])
    np.testing.assert_allclose(np.exp(class_log_prior(counts, class_prior=[2, 6])), [0.25, 0.75])
    with pytest.raises(ValueError, match="class_prior must be 2 non-negative numbers"):
        class_log_prior(counts, class_prior=[0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="not all zero"):
        class_log_prior(counts, class_prior=[0, 0])


def test_as_csr_accepts_scipy_dense_and_csr_and_sums_duplicates():
    dense = np.array([[0, 2, 0], [0, 0, 0], [1, 0, 3]])
    from_dense = as_csr(dense)
    assert from_dense.indptr.tolist() == [0, 1, 1, 3]
    assert from_dense.indices.tolist() == [1, 0, 2]
    assert from_dense.data.tolist() == [2, 1, 3]
    # A COO matrix with a repeated entry: its CSR sums the two values.
    coo = sp.coo_matrix(([1.0, 4.0, 3.0], ([0, 0, 2], [1, 1, 2])), shape=(3, 3))
    from_coo = as_csr(coo)
    assert from_coo.data.tolist() == [5.0, 3.0] and from_coo.indices.tolist() == [1, 2]
    csr = CSR(np.ones(1), np.array([0]), np.array([0, 1]), (1, 1))
    assert as_csr(csr) is csr
    with pytest.raises(ValueError, match="X must be 2-dimensional.*Reshape your data"):
        as_csr([1, 2, 3])
    with pytest.raises(ValueError, match="Complex data not supported"):
        as_csr(np.array([[1 + 1j, 0]]))
    with pytest.raises(ValueError, match="Complex data not supported"):
        as_csr(sp.csr_matrix(np.array([[1 + 1j, 0]])))


# -- identities, shared by every model ----------------------------------------------------

@pytest.mark.parametrize("Model", MODELS)
def test_probability_identities(Model, random_counts):
    X, y = random_counts
    model = Model(alpha=0.5).fit(X, y)
    log_proba = model.predict_log_proba(X)
    proba = model.predict_proba(X)
    assert proba.shape == (80, 3)
    np.testing.assert_array_equal(np.exp(log_proba), proba)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(log_proba <= 0) and np.all(np.isfinite(log_proba))
    jll = model.predict_joint_log_proba(X)
    np.testing.assert_allclose(log_proba, jll - logsumexp(jll, axis=1)[:, None], rtol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])
    # Dense, scipy and CSR-tuple inputs are scored alike.
    np.testing.assert_allclose(model.predict_joint_log_proba(X.toarray()), jll, rtol=1e-12)


@pytest.mark.parametrize("Model", MODELS)
def test_decomposition_equals_dense_scoring(Model, random_counts):
    """jll = bias + x' @ weights.T, with x' the presence bits for Bernoulli."""
    X, y = random_counts
    model = Model().fit(X, y)
    bias, weights = model.decomposition()
    dense = X.toarray()
    used = (dense > 0).astype(float) if Model is BernoulliNB else dense
    np.testing.assert_allclose(model.predict_joint_log_proba(X), used @ weights.T + bias,
                               rtol=1e-12)


@pytest.mark.parametrize("Model", MODELS)
def test_scoring_by_the_used_terms_equals_the_whole_table(Model, random_counts):
    """Scoring derives the weights of the terms X uses only: the same numbers, bit for bit, as
    scipy's product with every weight (the sums in the same order), in any batch of rows."""
    X, y = random_counts
    expected = Model().fit(X, y).predict_joint_log_proba(X)   # nothing derived before
    model = Model().fit(X, y)
    bias, weights = model.decomposition()   # now the whole table is at hand
    used = (X > 0).astype(float) if Model is BernoulliNB else X.astype(float)
    np.testing.assert_array_equal(np.asarray(used @ np.ascontiguousarray(weights.T)) + bias,
                                  expected)
    np.testing.assert_array_equal(model.predict_joint_log_proba(X), expected)
    for rows in (slice(0, 1), slice(7, 9), slice(79, 80)):
        np.testing.assert_array_equal(Model().fit(X, y).predict_joint_log_proba(X[rows]),
                                      expected[rows])


@pytest.mark.parametrize("Model", [*MODELS, lambda **k: ComplementNB(norm=True, **k)])
def test_counts_as_stored_score_as_the_dense_counts_do(Model, random_counts):
    """A model given its counts as a model file stores them (non-zero ones, by term) scores
    with them, bit for bit as with the dense counts, and builds feature_count_ only if asked."""
    X, y = random_counts
    # Fractional counts, as unit-length documents give, and terms no document has.
    X = sp.hstack([X.astype(float) / 3, sp.csr_matrix((X.shape[0], 3))]).tocsr()
    fitted = Model(alpha=0.5).fit(X, y)
    stored = StoredCounts.of(fitted.feature_count_)
    assert stored.values.size == np.count_nonzero(fitted.feature_count_) < fitted.feature_count_.size
    np.testing.assert_array_equal(stored.dense(), fitted.feature_count_)
    np.testing.assert_array_equal(stored.total(), fitted.feature_count_.sum(axis=0))
    columns = np.array([24, 0, 7, 7, 26, 3])
    np.testing.assert_array_equal(stored.columns(columns), fitted.feature_count_[:, columns])
    restored = Model(alpha=0.5)
    restored.classes_ = fitted.classes_
    restored.restore_counts(fitted.class_count_.copy(), stored)
    np.testing.assert_array_equal(restored.predict_joint_log_proba(X),
                                  fitted.predict_joint_log_proba(X))
    np.testing.assert_array_equal(restored.decomposition()[0], fitted.decomposition()[0])
    np.testing.assert_array_equal(restored.decomposition()[1], fitted.decomposition()[1])
    assert "_feature_count" not in vars(restored)   # scoring needed no dense counts
    np.testing.assert_array_equal(restored.feature_count_, fitted.feature_count_)
    np.testing.assert_array_equal(restored.feature_log_prob_, fitted.feature_log_prob_)


@pytest.mark.parametrize("Model", MODELS)
def test_a_large_first_fit_counts_into_the_stored_form_the_dense_fits_numbers(
        Model, random_counts, monkeypatch):
    """Past _DENSE_CELLS a first fit keeps its counts as stored (no dense array made), the same
    numbers bit for bit, with sample weights too; a later partial_fit makes the dense counts
    and goes on as a dense model does."""
    from textnb.nb import discrete
    X, y = random_counts
    X = X.astype(float) / 3
    weight = np.linspace(0.5, 2.0, X.shape[0])
    dense = Model(alpha=0.5).fit(X, y, sample_weight=weight)
    monkeypatch.setattr(discrete, "_DENSE_CELLS", 0)
    stored = Model(alpha=0.5).fit(X, y, sample_weight=weight)
    assert "_feature_count" not in vars(stored) and "_stored_counts" in vars(stored)
    np.testing.assert_array_equal(stored.class_count_, dense.class_count_)
    np.testing.assert_array_equal(stored.predict_joint_log_proba(X),
                                  dense.predict_joint_log_proba(X))
    np.testing.assert_array_equal(stored.feature_count_, dense.feature_count_)
    stored.partial_fit(X[:5], y[:5])
    dense.partial_fit(X[:5], y[:5])
    np.testing.assert_array_equal(stored.feature_count_, dense.feature_count_)


def test_bernoulli_sparse_scoring_equals_dense_formula():
    """log P(x|c) = Σ_k x_k log p_kc + (1 − x_k) log(1 − p_kc), computed directly and densely."""
    X = np.array([[1, 0, 2, 0], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 1], [3, 0, 0, 1]])
    y = ["a", "a", "b", "b", "b"]
    model = BernoulliNB(alpha=0.5).fit(X, y)
    test = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [5, 1, 1, 1], [0, 2, 0, 1]])
    bits = (test > 0).astype(float)
    # p_kc = (df_kc + α)/(N_c + 2α), by hand from the table above.
    p = np.array([[(1 + .5) / 3, (1 + .5) / 3, (2 + .5) / 3, (0 + .5) / 3],
                  [(2 + .5) / 4, (1 + .5) / 4, (0 + .5) / 4, (2 + .5) / 4]])
    prior = np.array([2 / 5, 3 / 5])
    dense = np.log(prior) + bits @ np.log(p).T + (1 - bits) @ np.log(1 - p).T
    np.testing.assert_allclose(model.predict_joint_log_proba(test), dense, rtol=1e-12)
    np.testing.assert_allclose(model.predict_joint_log_proba(sp.csr_matrix(test)), dense, rtol=1e-12)


def test_bernoulli_absent_probability_keeps_precision_near_one():
    """log(1 − p) from counts: with p = (N + 1)/(N + 2) and N = 1e17, 1 − exp(log p) is 0."""
    X = np.array([[1, 0], [0, 1]])
    model = BernoulliNB().fit(X, ["a", "b"], sample_weight=[1e17, 1.0])
    assert 1 - np.exp(model.feature_log_prob_[0, 0]) == 0.0          # the naive way fails
    assert model.feature_log_absent_prob_[0, 0] == pytest.approx(-log(1e17 + 2), rel=1e-15)
    assert np.all(np.isfinite(model.predict_joint_log_proba(np.array([[0, 0], [0, 1]]))))


@pytest.mark.parametrize("Model", [MultinomialNB, ComplementNB])
def test_long_document_does_not_underflow(Model, eight_counts):
    """A 100 000-token document over the eight e-mails' terms: Π P(w|c) is 0.0 in
    floats; its log is finite and decides."""
    X, y = eight_counts
    model = Model().fit(X, y)
    # Multinomial seed-003 θ: each a is log 2 towards ham, each b log 2.5 towards spam;
    # 56 932 a's and 43 068 b's nearly balance.
    doc = np.array([[56932, 43068, 0]])
    jll = model.predict_joint_log_proba(doc)
    assert np.all(np.isfinite(jll)) and np.abs(jll).min() > 7e4     # far beyond exp()
    log_odds = 43068 * log(2.5) - 56932 * log(2)                    # spam vs ham, ≈ 0.94
    proba = model.predict_proba(doc)[0]
    assert not np.any(np.isnan(proba))
    assert proba[1] == pytest.approx(1 / (1 + np.exp(-log_odds)), rel=1e-8)
    assert model.predict(doc).tolist() == ["spam"]
    # One more a per 1000 tips it to ham, decisively.
    heavy = np.array([[60000, 40000, 0]])
    assert model.predict(heavy).tolist() == ["ham"]
    np.testing.assert_array_equal(model.predict_proba(heavy), [[1.0, 0.0]])


def test_empty_document_gets_exactly_the_class_prior():
    X = np.array([[2, 0, 1], [0, 1, 0], [0, 0, 0], [3, 1, 1]])
    model = MultinomialNB(class_prior=[0.2, 0.8]).fit(X, ["ham", "spam", "spam", "ham"])
    np.testing.assert_allclose(model.predict_proba(np.zeros((2, 3))), [[0.2, 0.8]] * 2,
                               rtol=1e-15)
    learned = MultinomialNB().fit(X, ["ham", "spam", "spam", "spam"])
    np.testing.assert_allclose(learned.predict_proba(np.zeros((1, 3))), [[0.25, 0.75]], rtol=1e-15)


# -- learning arithmetic ------------------------------------------------------------------

@pytest.mark.parametrize("Model", MODELS)
def test_partial_fit_in_pieces_equals_fit(Model, random_counts):
    X, y = random_counts
    whole = Model().fit(X, y)
    # The first piece has one class only; the others arrive later.
    order = np.argsort(y != "ham", kind="stable")
    X, y = X[order], y[order]
    pieces = Model()
    for start, stop in [(0, 10), (10, 11), (11, 50), (50, 80)]:
        pieces.partial_fit(X[start:stop], y[start:stop])
    assert pieces.classes_.tolist() == ["ham", "news", "spam"]
    np.testing.assert_array_equal(pieces.class_count_, whole.class_count_)
    np.testing.assert_array_equal(pieces.feature_count_, whole.feature_count_)
    np.testing.assert_array_equal(pieces.predict_log_proba(X), whole.predict_log_proba(X))


def test_partial_fit_with_declared_classes_and_new_terms():
    X = np.array([[1, 0], [0, 2], [1, 1]])
    model = MultinomialNB().partial_fit(X[:1], ["a"], classes=["a", "b"])
    assert model.classes_.tolist() == ["a", "b"]
    np.testing.assert_array_equal(model.class_count_, [1, 0])
    model.partial_fit(X[1:], ["b", "a"])
    # A new term inserted before column 1 (zero counts), then a document using it.
    model.insert_terms(np.array([1]))
    model.partial_fit(np.array([[0, 4, 1]]), ["b"])
    whole = MultinomialNB().fit(np.array([[1, 0, 0], [0, 0, 2], [1, 0, 1], [0, 4, 1]]),
                                ["a", "b", "a", "b"])
    np.testing.assert_array_equal(model.feature_count_, whole.feature_count_)
    np.testing.assert_array_equal(model.feature_log_prob_, whole.feature_log_prob_)


@pytest.mark.parametrize("Model", MODELS)
def test_merge_equals_fit_on_the_union(Model, random_counts):
    X, y = random_counts
    whole = Model().fit(X, y)
    first = Model().fit(X[:30], y[:30])
    second = Model().fit(X[30:][y[30:] != "news"], y[30:][y[30:] != "news"])
    third = Model().fit(X[30:][y[30:] == "news"], y[30:][y[30:] == "news"])
    first.merge(second).merge(third)
    np.testing.assert_array_equal(first.class_count_, whole.class_count_)
    np.testing.assert_array_equal(first.feature_count_, whole.feature_count_)
    np.testing.assert_allclose(first.predict_log_proba(X), whole.predict_log_proba(X), rtol=1e-14)


def test_merge_adds_a_class_the_model_lacked():
    a = MultinomialNB().fit(np.array([[1, 0], [0, 1]]), ["x", "z"])
    b = MultinomialNB().fit(np.array([[2, 2]]), ["y"])
    a.merge(b)
    assert a.classes_.tolist() == ["x", "y", "z"]
    np.testing.assert_array_equal(a.feature_count_, [[1, 0], [2, 2], [0, 1]])
    np.testing.assert_array_equal(a.class_count_, [1, 1, 1])


def test_merge_refuses_other_models_and_other_terms():
    X = np.array([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="cannot merge a BernoulliNB into a MultinomialNB"):
        MultinomialNB().fit(X, [0, 1]).merge(BernoulliNB().fit(X, [0, 1]))
    with pytest.raises(ValueError, match="cannot merge models over 2 and 3 terms"):
        MultinomialNB().fit(X, [0, 1]).merge(MultinomialNB().fit(np.eye(3), [0, 1, 1]))


@pytest.mark.parametrize("Model", MODELS)
def test_unlearn_restores_the_previous_model_exactly(Model, random_counts):
    X, y = random_counts
    before = Model().fit(X[:60], y[:60])
    expected = _state(before)
    expected_proba = before.predict_proba(X)
    model = Model().fit(X[:60], y[:60]).partial_fit(X[60:], y[60:])
    model.unlearn(X[60:], y[60:])
    _assert_same_state(_state(model), expected)
    np.testing.assert_array_equal(model.predict_proba(X), expected_proba)


@pytest.mark.parametrize("Model", MODELS)
def test_unlearning_what_was_not_learned_raises_and_changes_nothing(Model):
    X = np.array([[1, 0, 2], [0, 1, 0], [1, 1, 0]])
    model = Model().fit(X, ["ham", "spam", "spam"])
    saved = _state(model)
    with pytest.raises(ValueError, match="cannot unlearn documents the model did not learn"):
        model.unlearn(np.array([[0, 1, 5]]), ["ham"])      # ham never had term 1
    with pytest.raises(ValueError, match="cannot unlearn documents the model did not learn"):
        model.unlearn(np.array([[0, 0, 0], [0, 0, 0]]), ["ham", "ham"])
    with pytest.raises(ValueError, match="cannot unlearn class 'news'"):
        model.unlearn(np.array([[1, 0, 0]]), ["news"])
    _assert_same_state(_state(model), saved)


def test_weighted_fit_equals_repeated_documents():
    X = np.array([[1, 2, 0], [0, 1, 3], [2, 0, 0]])
    weighted = MultinomialNB().fit(X, ["a", "b", "a"], sample_weight=[3, 1, 2])
    repeated = MultinomialNB().fit(np.repeat(X, [3, 1, 2], axis=0), ["a"] * 3 + ["b"] + ["a"] * 2)
    np.testing.assert_array_equal(weighted.feature_count_, repeated.feature_count_)
    np.testing.assert_array_equal(weighted.class_count_, repeated.class_count_)
    with pytest.raises(ValueError, match="sample_weight must have one weight per document"):
        MultinomialNB().fit(X, ["a", "b", "a"], sample_weight=[1, 2])


# -- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("Model", MODELS)
@pytest.mark.parametrize("alpha", [0, -1.0, float("nan"), float("inf"), 1e308, "1"])
def test_alpha_must_be_positive(Model, alpha):
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        Model(alpha=alpha).fit(np.eye(2), [0, 1])


@pytest.mark.parametrize("Model", MODELS)
def test_a_bad_alpha_leaves_no_half_fitted_model(Model):
    model = Model(alpha=0)
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        model.fit(np.eye(2), [0, 1])
    assert not hasattr(model, "classes_")
    with pytest.raises(ValueError, match="is not fitted yet"):
        model.predict(np.eye(2))
    fitted = Model().fit(np.eye(2), [0, 1])
    counts = fitted.feature_count_.copy()
    fitted.alpha = -1
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        fitted.partial_fit(np.eye(2), [0, 1])
    np.testing.assert_array_equal(fitted.feature_count_, counts)


@pytest.mark.parametrize("Model", MODELS)
def test_bad_training_input(Model):
    with pytest.raises(ValueError, match="X has 2 documents but y has 3 labels"):
        Model().fit(np.eye(2), [0, 1, 1])
    with pytest.raises(ValueError, match="Negative values in data passed to X"):
        Model().fit(np.array([[1, -1], [0, 1]]), [0, 1])
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=r"X holds NaN or inf"):
            Model().fit(np.array([[1, bad], [0, 1]]), [0, 1])
        with pytest.raises(ValueError, match=r"X holds NaN or inf"):
            Model().fit(np.eye(2), [0, 1]).predict(sp.csr_matrix([[1, bad]]))
    with pytest.raises(ValueError, match="cannot fit on an empty training set"):
        Model().fit(np.zeros((0, 3)), [])
    with pytest.raises(ValueError, match=r"X has 0 feature\(s\) \(shape=\(2, 0\)\)"):
        Model().fit(np.zeros((2, 0)), [0, 1])
    with pytest.raises(ValueError, match="is not fitted yet"):
        Model().predict(np.eye(2))
    model = Model().fit(np.eye(2), [0, 1])
    with pytest.raises(ValueError, match=f"X has 3 features, but {Model.__name__} is expecting 2"):
        model.predict(np.eye(3))
    with pytest.raises(ValueError, match=f"X has 3 features, but {Model.__name__} is expecting 2"):
        model.partial_fit(np.eye(3), [0, 1, 1])
    with pytest.raises(ValueError, match="Reshape your data"):
        model.predict([1, 0])
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        Model().fit(np.eye(2), None)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        Model().fit(np.eye(3), [0.5, 1.0, 2.0])
    with pytest.raises(ValueError, match="y should be a 1d array"):
        Model().fit(np.eye(2), [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="sample_weight must hold finite numbers >= 0"):
        Model().fit(np.eye(2), [0, 1], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="sample_weight is all zero"):
        Model().fit(np.eye(2), [0, 1], sample_weight=[0, 0])


@pytest.mark.parametrize("Model", MODELS)
def test_bad_input_leaves_no_half_fitted_model(Model):
    model = Model()
    with pytest.raises(ValueError, match="sample_weight must have one weight per document"):
        model.fit(np.eye(2), [0, 1], sample_weight=[1])
    assert not hasattr(model, "classes_") and not hasattr(model, "n_features_in_")
    model.fit(np.eye(2), [0, 1])
    assert model.n_features_in_ == 2
    counts = model.feature_count_.copy()
    with pytest.raises(ValueError, match="sample_weight must hold finite numbers"):
        model.partial_fit(np.eye(2), [0, 1], sample_weight=[1, np.nan])
    np.testing.assert_array_equal(model.feature_count_, counts)


def test_not_fitted_error_is_a_value_and_attribute_error():
    """Without scikit-learn loaded it is textnb's own; check_estimator (with it loaded) requires
    scikit-learn's NotFittedError, which tests/test_sklearn_conformance.py checks."""
    with pytest.raises(textnb.nb.estimator.NotFittedError) as caught:
        MultinomialNB().predict_proba(np.eye(2))
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, AttributeError)


def test_column_vector_y_is_flattened_with_a_warning():
    X = np.array([[2, 0], [0, 3], [1, 0]])
    flat = MultinomialNB().fit(X, np.array(["a", "b", "a"]))
    with pytest.warns(UserWarning, match="A column-vector y was passed when a 1d array"):
        column = MultinomialNB().fit(X, np.array([["a"], ["b"], ["a"]]))
    np.testing.assert_array_equal(column.feature_count_, flat.feature_count_)
    assert column.classes_.tolist() == ["a", "b"]


def test_labels_from_a_generator_and_whole_floats():
    X = np.array([[2, 0], [0, 3], [1, 0]])
    model = MultinomialNB().fit(X, (label for label in "aba"))
    assert model.classes_.tolist() == ["a", "b"]
    np.testing.assert_array_equal(MultinomialNB().fit(X, [1.0, 2.0, 1.0]).classes_, [1.0, 2.0])


def test_single_class_model_predicts_that_class_with_certainty():
    model = MultinomialNB().fit(np.array([[1, 2], [0, 1]]), ["only", "only"])
    np.testing.assert_array_equal(model.predict_proba(np.array([[5, 0]])), [[1.0]])
    assert model.predict(np.array([[5, 0]])).tolist() == ["only"]


# -- scikit-learn conventions and agreement ---------------------------------------------------

@pytest.mark.parametrize("Model", MODELS)
def test_get_params_and_set_params(Model, random_counts):
    X, y = random_counts
    model = Model(alpha=0.3, fit_prior=False)
    extra = {"norm": False} if Model is ComplementNB else {}
    assert model.get_params() == {"alpha": 0.3, "fit_prior": False, "class_prior": None, **extra}
    # The settings changed from the defaults only, as scikit-learn prints them.
    assert repr(model) == f"{Model.__name__}(alpha=0.3, fit_prior=False)"
    assert repr(Model()) == f"{Model.__name__}()"
    model.fit(X, y)
    # set_params on a fitted model re-derives the log parameters from the counts.
    model.set_params(alpha=2.0, fit_prior=True)
    refit = Model(alpha=2.0).fit(X, y)
    np.testing.assert_allclose(model.predict_log_proba(X), refit.predict_log_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="invalid parameter 'beta' for"):
        model.set_params(beta=1)


@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB", "ComplementNB"])
def test_agrees_with_scikit_learn(name, random_counts):
    sk = pytest.importorskip("sklearn.naive_bayes", reason=NO_SKLEARN)
    X, y = random_counts
    ours = {"MultinomialNB": MultinomialNB, "BernoulliNB": BernoulliNB,
            "ComplementNB": ComplementNB}[name](alpha=0.7)
    theirs = getattr(sk, name)(alpha=0.7)
    ours.fit(X, y)
    theirs.fit(X, y)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


POISSON_SETTINGS = [
    {"alpha": 1.0}, {"alpha": 0.03, "fit_prior": False}, {"alpha": 0.5, "norm": True},
    {"alpha": 2.0, "class_prior": [0.7, 0.2, 0.1]}, {"alpha": 0.1, "fit_prior": False, "norm": True}]


@pytest.mark.parametrize("params", POISSON_SETTINGS)
def test_complement_nb_equals_scikit_learn_on_poisson_counts(params):
    """The issue's case: random Poisson counts (200 × 50, 3 classes). Before the fix ours added
    log P(c) to the score, scikit-learn does not: 8 % of predictions differed, probabilities by
    up to 0.05. Now every setting of the same parameters gives the same model."""
    sk = pytest.importorskip("sklearn.naive_bayes", reason=NO_SKLEARN)
    rng = np.random.default_rng(14)
    X = rng.poisson(1.5, size=(200, 50))
    y = rng.choice([0, 1, 2], size=200, p=[0.6, 0.3, 0.1])
    test = rng.poisson(1.5, size=(300, 50))
    ours = ComplementNB(**params).fit(X, y)
    theirs = sk.ComplementNB(**params).fit(X, y)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    np.testing.assert_allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(test), theirs.predict(test))
    np.testing.assert_allclose(ours.predict_log_proba(test), theirs.predict_log_proba(test),
                               rtol=1e-10, atol=1e-12)
    # Sparse input, scored in blocks by our own code path: the same numbers.
    np.testing.assert_allclose(ours.predict_log_proba(sp.csr_matrix(test[:40])),
                               theirs.predict_log_proba(test[:40]), rtol=1e-10, atol=1e-12)
    if params.get("fit_prior", True) and "class_prior" not in params:
        # The prior is learned (0.6/0.3/0.1) but, as in scikit-learn, not part of the score;
        # ComplementNBWithPrior adds it, and then disagrees on some documents.
        with_prior = textnb.nb.discrete.ComplementNBWithPrior(**params).fit(X, y)
        jll = ours.predict_joint_log_proba(test) + ours.class_log_prior_
        np.testing.assert_allclose(with_prior.predict_joint_log_proba(test), jll, rtol=1e-13)
        assert (with_prior.predict(test) != ours.predict(test)).sum() > 0


def test_a_new_alpha_keeps_what_follows_from_the_counts_alone():
    """Tuning tries several α on each fold: the complement's per-class sums are kept (they
    follow from the counts), and the model then equals one fitted with that α."""
    rng = np.random.default_rng(5)
    X, y = rng.poisson(1.2, size=(80, 30)), rng.choice(["a", "b", "c"], size=80)
    model = ComplementNB(alpha=1.0).fit(X, y)
    model.predict_log_proba(X)
    sums = model._derived["complement_sums"]
    for alpha in (0.1, 0.01):
        model.alpha = alpha
        model._update(counts_changed=False)
        assert model._derived["complement_sums"] is sums
        np.testing.assert_allclose(model.predict_log_proba(X),
                                   ComplementNB(alpha=alpha).fit(X, y).predict_log_proba(X),
                                   rtol=1e-12)
    model.partial_fit(X[:5], y[:5])  # new counts: derived again
    assert model._derived.get("complement_sums") is not sums


def test_complement_with_uniform_prior_equals_complement():
    """TextClassifier's default (uniform priors): the prior cancels, predictions are the same."""
    rng = np.random.default_rng(3)
    X, y = rng.poisson(1.0, size=(60, 20)), rng.choice(["a", "b", "c"], size=60)
    plain = ComplementNB(alpha=0.03, fit_prior=False).fit(X, y)
    with_prior = textnb.nb.discrete.ComplementNBWithPrior(alpha=0.03, fit_prior=False).fit(X, y)
    np.testing.assert_allclose(with_prior.predict_log_proba(X), plain.predict_log_proba(X),
                               rtol=1e-13)
    np.testing.assert_allclose(with_prior.predict_joint_log_proba(X),
                               plain.predict_joint_log_proba(X) - log(3), rtol=1e-14)
    # One class: scikit-learn adds the prior then (its only use); θ_~c,k = α/(α|V|) = 1/20.
    one = ComplementNB(class_prior=[1.0]).fit(X[:3], ["a"] * 3)
    np.testing.assert_allclose(one.predict_joint_log_proba(X[:2]),
                               X[:2].sum(axis=1, keepdims=True) * log(20), rtol=1e-14)
    np.testing.assert_array_equal(one.decomposition()[0], [0.0])


def test_scikit_learn_clone_pipeline_and_cross_val_score():
    pytest.importorskip("sklearn", reason=NO_SKLEARN)
    from sklearn.base import clone
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import Pipeline
    model = MultinomialNB(alpha=0.5, class_prior=[0.4, 0.6])
    copy = clone(model)
    assert copy is not model and copy.get_params() == model.get_params()
    texts = ["cheap pills now", "cheap money now", "win money now", "free pills",
             "meeting at noon", "lunch at noon", "notes from the meeting", "lunch tomorrow"] * 3
    y = ["spam"] * 4 + ["ham"] * 4
    y = y * 3
    pipe = Pipeline([("counts", CountVectorizer()), ("nb", MultinomialNB())])
    pipe.fit(texts, y)
    assert pipe.predict(["cheap pills", "lunch meeting"]).tolist() == ["spam", "ham"]
    scores = cross_val_score(pipe, texts, y, cv=3)
    np.testing.assert_array_equal(scores, [1.0, 1.0, 1.0])
    assert cross_val_score(pipe, texts, y, cv=3, scoring="neg_log_loss").max() < 0


def test_score_is_mean_accuracy():
    model = MultinomialNB().fit(np.array([[3, 0], [0, 3]]), ["a", "b"])
    X = np.array([[5, 0], [0, 5], [4, 1], [1, 4]])
    assert model.predict(X).tolist() == ["a", "b", "a", "b"]
    assert model.score(X, ["a", "b", "b", "b"]) == 0.75
    assert model.score(X, ["a", "b", "b", "b"], sample_weight=[1, 1, 2, 0]) == 0.5


@pytest.mark.parametrize("Model", MODELS)
def test_delete_terms_undoes_insert_terms(Model, random_counts):
    X, y = random_counts
    model = Model().fit(X, y)
    expected = _state(model)
    model.insert_terms(np.array([0, 3, 3, 25]))
    assert model.feature_count_.shape == (3, 29)
    np.testing.assert_array_equal(model.feature_count_[:, [0, 4, 5, 28]], 0.0)
    model.delete_terms(np.array([0, 4, 5, 28]))
    _assert_same_state(_state(model), expected)


@pytest.mark.parametrize("Model", MODELS)
def test_any_counts_split_anywhere_fit_alike(Model):
    """Property: for any counts, labels and split, partial_fit and merge equal fit, and the
    probabilities are finite, sum to 1 and follow the dense formula."""
    hypothesis = pytest.importorskip("hypothesis", reason=NO_HYPOTHESIS)
    st = hypothesis.strategies
    hnp = pytest.importorskip("hypothesis.extra.numpy", reason=NO_HYPOTHESIS)

    @hypothesis.settings(max_examples=60, deadline=None)
    @hypothesis.given(hnp.arrays(np.int64, st.tuples(st.integers(2, 12), st.integers(1, 6)),
                                 elements=st.integers(0, 1000)),
                      st.data())
    def check(X, data):
        n = X.shape[0]
        y = np.array(data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n)))
        split = data.draw(st.integers(1, n - 1))
        alpha = data.draw(st.sampled_from([0.01, 0.5, 1.0, 3.0]))
        whole = Model(alpha=alpha).fit(X, y)
        pieces = Model(alpha=alpha).partial_fit(X[:split], y[:split]).partial_fit(X[split:], y[split:])
        merged = Model(alpha=alpha).fit(X[:split], y[:split]).merge(Model(alpha=alpha).fit(X[split:], y[split:]))
        for other in (pieces, merged):
            np.testing.assert_array_equal(other.classes_, whole.classes_)
            np.testing.assert_array_equal(other.feature_count_, whole.feature_count_)
            np.testing.assert_array_equal(other.class_count_, whole.class_count_)
        proba = whole.predict_proba(X)
        assert np.all(np.isfinite(whole.predict_log_proba(X)))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        bias, weights = whole.decomposition()
        used = (X > 0).astype(float) if Model is BernoulliNB else X.astype(float)
        np.testing.assert_allclose(whole.predict_joint_log_proba(X), used @ weights.T + bias,
                                   rtol=1e-9, atol=1e-9)
        whole.unlearn(X[split:], y[split:])
        first = Model(alpha=alpha).fit(X[:split], y[:split])
        np.testing.assert_array_equal(whole.feature_count_[np.isin(whole.classes_, first.classes_)],
                                      first.feature_count_)

    check()


@pytest.mark.skipif(textnb.nb.discrete._fast is None,
                    reason="textnb's C parts were not built (no C compiler at install time)")
@pytest.mark.parametrize("Model", MODELS)
def test_scores_summed_in_c_equal_numpys_to_the_bit(Model, monkeypatch):
    """textnb/_scores.c sums each document's products in the order numpy.bincount does: the
    same joint log-likelihoods, bit for bit, for counts and presence, scipy's int32 and textnb's
    int64 index arrays, empty rows, a cached decomposition and none."""
    rng = np.random.default_rng(7)
    X = sp.random(300, 500, density=0.05, random_state=3, format="csr",
                  data_rvs=lambda n: rng.integers(1, 9, n).astype(float))
    X.data[X.indptr[5]:X.indptr[6]] = 0  # an empty document
    X.eliminate_zeros()
    model = Model(alpha=0.3).fit(X, rng.choice(["a", "b", "c"], 300))
    wide = CSR(X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64), X.shape)
    for given in (X, wide):
        c = model.predict_joint_log_proba(given)
        with monkeypatch.context() as patch:
            patch.setattr(textnb.nb.discrete, "_fast", None)
            python = model.predict_joint_log_proba(given)
        np.testing.assert_array_equal(c, python)
    model.decomposition()  # the weights of every term cached, then taken from there
    np.testing.assert_array_equal(model.predict_joint_log_proba(X), c)
    with pytest.raises(ValueError):
        textnb.nb.discrete._fast.jll(X.data, np.zeros(X.nnz, dtype=np.int64), X.indptr,
                                np.zeros((3, 0)), np.empty((300, 3)))  # a column past the weights
    with pytest.raises(ValueError):
        textnb.nb.discrete._fast.jll(X.data.astype(np.float32), np.zeros(X.nnz, dtype=np.int64),
                                X.indptr, np.zeros((3, 1)), np.empty((300, 3)))


@pytest.mark.skipif(textnb.nb.discrete._fast is None,
                    reason="textnb's C parts were not built (no C compiler at install time)")
@pytest.mark.parametrize("Model", MODELS)
def test_counting_row_sums_and_relabelling_in_c_equal_numpys_to_the_bit(Model, monkeypatch):
    """textnb/_scores.c's class counts, row sums, row division, used terms and relabelling give
    numpy's numbers bit for bit (sums in the entries' order from 0.0): a model fitted, then
    unlearning a part, with sample weights; documents weighed by l2; columns renamed and
    dropped; int32 and int64 index arrays, an empty row."""
    from textnb.classifier import TextClassifier
    from textnb.text.vocabulary import relabel
    rng = np.random.default_rng(11)
    X = sp.random(400, 300, density=0.04, random_state=5, format="csr",
                  data_rvs=lambda n: rng.random(n) * 3)
    X.data[X.indptr[7]:X.indptr[8]] = 0  # an empty document
    X.eliminate_zeros()
    y, weight = rng.choice(["a", "b", "c"], 400), rng.random(400) + 0.5
    wide = CSR(X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64), X.shape)
    column = np.where(rng.random(300) < 0.3, -1, 0)
    column[column == 0] = np.arange((column == 0).sum())
    clf = TextClassifier(norm="l2")
    found = {}
    for name, fast in (("C", textnb.nb.discrete._fast), ("numpy", None)):
        with monkeypatch.context() as patch:
            patch.setattr(textnb.nb.discrete, "_fast", fast)
            patch.setattr(textnb.nb.sparse, "_fast", fast)
            patch.setattr(textnb.text.vocabulary, "_scores", fast)
            model = Model(alpha=0.3).fit(X, y, sample_weight=weight)
            model.unlearn(X[:50], y[:50], sample_weight=weight[:50])
            weighed = clf._weigh(CSR(X.data.copy(), X.indices, X.indptr, X.shape))
            found[name] = (model.feature_count_, model.class_count_, weighed.data,
                           textnb.nb.sparse.row_sums(X.data, X.indptr),
                           textnb.nb.sparse.used_terms(wide.indices, 300),
                           [(part.data, part.indices, part.indptr)
                            for part in (relabel(X, column, int(column.max()) + 1),
                                         relabel(wide, np.arange(300), 300))])
    c, numpy = found["C"], found["numpy"]
    for ours, theirs in zip(c[:4], numpy[:4]):
        np.testing.assert_array_equal(ours, theirs)
    for ours, theirs in zip(c[4], numpy[4]):
        np.testing.assert_array_equal(ours, theirs)
        assert ours.dtype == theirs.dtype
    for ours, theirs in zip(c[5], numpy[5]):
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)
    assert c[5][0][0].size < X.nnz  # some entries were dropped
    with pytest.raises(ValueError):
        textnb.nb.discrete._fast.relabel(X.data, X.indices, X.indptr, np.arange(10))  # too few columns
    with pytest.raises(ValueError):
        textnb.nb.discrete._fast.used_terms(X.indices, 10)  # indices past n_terms


@pytest.mark.parametrize("n_terms, n_entries", [(124_523, 200_000), (124_523, 300), (50, 0),
                                                (7, 3), (1, 5), (1 << 20, 40_000)])
def test_the_terms_a_batch_uses_are_numpys_unique(n_terms, n_entries):
    """Marked (many entries) or sorted (few beside many terms): np.unique's terms and inverse,
    the same dtypes."""
    indices = np.random.default_rng(n_entries).integers(0, n_terms, n_entries).astype(np.int32)
    used, inverse = textnb.nb.sparse.used_terms(indices, n_terms)
    expected_used, expected_inverse = np.unique(indices, return_inverse=True)
    np.testing.assert_array_equal(used, expected_used)
    np.testing.assert_array_equal(inverse, expected_inverse)
    assert (used.dtype, inverse.dtype) == (expected_used.dtype, expected_inverse.dtype)


@pytest.mark.parametrize("fast", [True, False])
def test_a_fit_reads_the_counts_it_is_given_without_changing_them(fast, monkeypatch):
    # Its float64 values are not copied first (20 Newsgroups' words and pairs: 30 MB).
    if not fast:
        monkeypatch.setattr(textnb.nb.discrete, "_fast", None)
    X = sp.csr_matrix(np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [1.0, 1.0, 0.0]]))
    before = X.data.copy()
    model = MultinomialNB().fit(X, ["a", "b", "a"], sample_weight=[3.0, 1.0, 2.0])
    np.testing.assert_array_equal(X.data, before)
    np.testing.assert_array_equal(model.feature_count_, [[8.0, 2.0, 3.0], [0.0, 3.0, 0.0]])
