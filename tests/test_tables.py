"""TableNB: the textbooks' worked tables, the model's identities, and bad input."""

from __future__ import annotations

import io
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from textnb.store import container as modelfile
from textnb.errors import ModelFileError
from textnb.tables.reading import Table, TableError, parse_weights, read_csv
from textnb.tables.model import TableNB

TABLES = Path(__file__).resolve().parent.parent / "corpora" / "tables"


def fit_csv(name: str, target: str, weight: str | None = None, **params) -> TableNB:
    t = read_csv(TABLES / name)
    features = [c for c in t.columns if c not in (target, weight)]
    w = parse_weights(t.column(weight), weight) if weight else None
    return TableNB(**params).fit(t.select(features), t.column(target), sample_weight=w,
                                 columns=features, target=target)


def joint(model: TableNB, row) -> dict:
    """P(c) · Π_j p(x_j|c) per class label."""
    return dict(zip(model.classes_, np.exp(model.predict_joint_log_proba([row])[0])))


def prob(model: TableNB, column: str, value: str) -> dict:
    """P(column = value | c) per class label."""
    dist = model.distributions_[column]
    return dict(zip(model.classes_, np.exp(dist.log_prob[:, dist.categories.index(value)])))


# -- the seeds ------------------------------------------------------------------------------

def test_playtennis_mitchell_query():
    """Mitchell, Machine Learning, ch. 6: ⟨sunny, cool, high, strong⟩: .005 vs .021, P(no) = .795."""
    model = fit_csv("playtennis.csv", "play", alpha=0)
    assert prob(model, "wind", "strong") == pytest.approx({"yes": 3 / 9, "no": 3 / 5})
    scores = joint(model, ["sunny", "cool", "high", "strong"])
    assert scores["yes"] == pytest.approx(9 / 14 * 2 / 9 * 3 / 9 * 3 / 9 * 3 / 9)
    assert scores["no"] == pytest.approx(5 / 14 * 3 / 5 * 1 / 5 * 4 / 5 * 3 / 5)
    assert round(scores["yes"], 3) == 0.005 and round(scores["no"], 3) == 0.021
    assert round(scores["yes"], 4) == 0.0053 and round(scores["no"], 4) == 0.0206
    proba = dict(zip(model.classes_, model.predict_proba([["sunny", "cool", "high", "strong"]])[0]))
    assert round(proba["no"], 3) == 0.795
    assert model.predict([["sunny", "cool", "high", "strong"]]).tolist() == ["no"]


def test_playtennis_004_table_and_query():
    """The PlayTennis and flu tables: the P(x|C) table, and ⟨rain, hot, high, false⟩: 0.010582 vs
    0.018286, class n. (004 writes Mitchell's wind weak/strong as windy false/true, and
    misprints P(normal|n) as 2/5: one of the five n days is normal, and 4/5 + 2/5 ≠ 1.)"""
    model = fit_csv("playtennis.csv", "play", alpha=0)
    assert np.exp(model.class_log_prior_).tolist() == pytest.approx([5 / 14, 9 / 14])
    expected = {("outlook", "sunny"): (3 / 5, 2 / 9), ("outlook", "overcast"): (0, 4 / 9),
                ("outlook", "rain"): (2 / 5, 3 / 9), ("temperature", "hot"): (2 / 5, 2 / 9),
                ("temperature", "mild"): (2 / 5, 4 / 9), ("temperature", "cool"): (1 / 5, 3 / 9),
                ("humidity", "high"): (4 / 5, 3 / 9), ("humidity", "normal"): (1 / 5, 6 / 9),
                ("wind", "strong"): (3 / 5, 3 / 9), ("wind", "weak"): (2 / 5, 6 / 9)}
    for (column, value), (p_no, p_yes) in expected.items():
        assert prob(model, column, value) == pytest.approx({"no": p_no, "yes": p_yes})
    scores = joint(model, ["rain", "hot", "high", "weak"])
    assert round(scores["yes"], 6) == 0.010582 and round(scores["no"], 6) == 0.018286
    assert model.predict([["rain", "hot", "high", "weak"]]).tolist() == ["no"]


def test_unsmoothed_zero_rules_a_class_out():
    """004: P(overcast|n) = 0 without smoothing: log-probability −inf, P(no|x) = 0, no crash."""
    model = fit_csv("playtennis.csv", "play", alpha=0)
    row = ["overcast", "hot", "high", "weak"]
    assert model.explain(row)["outlook"][0] == -np.inf
    assert model.predict_log_proba([row])[0].tolist() == [-np.inf, 0.0]
    assert model.predict_proba([row]).tolist() == [[0.0, 1.0]]


def test_laplace_smoothing_k():
    """004: P(f = v|t) = (count + k) / (count(f|t) + k·|domain(f)|), here k = 1 and k = 2."""
    model = fit_csv("playtennis.csv", "play", alpha=1)
    assert prob(model, "outlook", "overcast") == pytest.approx({"no": 1 / 8, "yes": 5 / 12})
    model.set_params(alpha=2)  # derived again from the same counts
    assert prob(model, "humidity", "high") == pytest.approx({"no": 6 / 9, "yes": 5 / 13})


def test_gender_gaussian():
    """The person example (Wikipedia, Naive Bayes classifier): the means and n − 1 variances, p(height|male) ≈ 1.5789,
    numerators 6.1984e-9 (male) and 5.3778e-4 (female) with P(male) = 0.5; female.

    The seed multiplies densities computed from its 5-digit rounded variances, so the exact
    estimates agree with its printed products to 3 digits."""
    model = fit_csv("gender.csv", "sex", class_prior=[0.5, 0.5])
    assert model.classes_.tolist() == ["female", "male"]
    table = {"height": ([5.4175, 5.855], [9.7225e-02, 3.5033e-02]),
             "weight": ([132.5, 176.25], [5.5833e+02, 1.2292e+02]),
             "foot_size": ([7.5, 11.25], [1.6667e+00, 9.1667e-01])}
    for column, (mean, var) in table.items():
        assert model.distributions_[column].mean == pytest.approx(mean)
        assert model.distributions_[column].var == pytest.approx(var, rel=1e-4)
    sample = [6, 130, 8]
    densities = {k: np.exp(v) for k, v in model.explain(sample).items()}
    assert densities["height"][1] == pytest.approx(1.5789, rel=1e-4)
    assert densities["height"][0] == pytest.approx(2.2346e-1, rel=1e-4)
    assert densities["weight"] == pytest.approx([1.6789e-2, 5.9881e-6], rel=1e-3)
    assert densities["foot_size"] == pytest.approx([2.8669e-1, 1.3112e-3], rel=1e-3)
    scores = joint(model, sample)
    assert scores["male"] == pytest.approx(6.1984e-9, rel=1e-3)
    assert scores["female"] == pytest.approx(5.3778e-4, rel=1e-3)
    assert model.predict([sample]).tolist() == ["female"]


def test_gender_ddof_zero_divides_by_n():
    """000: the variance as E[(X − μ)²] divides by n; ddof = 0 gives (n − 1)/n of the n − 1 one."""
    model = fit_csv("gender.csv", "sex", ddof=0)
    assert model.distributions_["height"].var == pytest.approx([9.7225e-02 * 3 / 4,
                                                              3.5033e-02 * 3 / 4], rel=1e-4)


def test_meningitis():
    """The PlayTennis and flu tables: (headache = true, fever = false, vomiting = true) gives
    0.7·(5/7)(4/7)(4/7) ≈ 0.1633 for false. For true, the seed's table (rows 5, 8, 10) gives
    P(fever = false|true) = 2/3, so 0.3·(2/3)(2/3)(2/3) ≈ 0.0889, not the issue's
    0.3·(2/3)(1/3)(2/3) ≈ 0.0444; meningitis = false either way."""
    model = fit_csv("meningitis.csv", "meningitis", alpha=0)
    assert prob(model, "fever", "false") == pytest.approx({"true": 2 / 3, "false": 4 / 7})
    scores = joint(model, ["true", "false", "true"])
    assert scores["true"] == pytest.approx(0.3 * 2 / 3 * 2 / 3 * 2 / 3)
    assert scores["false"] == pytest.approx(0.7 * 5 / 7 * 4 / 7 * 4 / 7)
    assert round(scores["true"], 4) == 0.0889 and round(scores["false"], 4) == 0.1633
    assert model.predict([["true", "false", "true"]]).tolist() == ["false"]


def test_lung_cancer_weighted_rows():
    """The lung cancer count table: 8 weighted rows; priors and conditionals are count ratios,
    Pr(Cancer = Y) = 0.0610 and Pr(Gender = M) = 0.5039."""
    model = fit_csv("lungcancer.csv", "cancer", weight="count", alpha=0)
    assert model.class_count_.tolist() == [30000, 1950]
    assert round(float(np.exp(model.class_log_prior_[1])), 4) == 0.0610
    assert prob(model, "gender", "M") == pytest.approx({"yes": 1100 / 1950, "no": 15000 / 30000})
    assert prob(model, "smoke", "Y") == pytest.approx({"yes": 1800 / 1950, "no": 10000 / 30000})
    by_gender = fit_csv("lungcancer.csv", "gender", weight="count", alpha=0)
    assert round(float(np.exp(by_gender.class_log_prior_[1])), 4) == 0.5039  # classes F, M


def test_lung_cancer_weighted_equals_repeated():
    """002: the 8 weighted rows and the 31950 rows they stand for give the same model."""
    t = read_csv(TABLES / "lungcancer.csv")
    counts = parse_weights(t.column("count"), "count").astype(int)
    X, y = t.select(["gender", "smoke"]), t.column("cancer")
    weighted = TableNB().fit(X, y, sample_weight=counts)
    repeated = TableNB().fit(np.repeat(X, counts, axis=0).tolist(), np.repeat(y, counts))
    assert np.array_equal(weighted.class_count_, repeated.class_count_)
    assert np.allclose(weighted.predict_log_proba(X), repeated.predict_log_proba(X))


def test_restaurant_counts():
    """001: the restaurant table; p(F_i|C) = #(F_i ∧ C)/#(C), e.g. Patrons given Wait."""
    model = fit_csv("restaurant.csv", "wait", alpha=0)
    assert model.class_count_.tolist() == [6, 6]
    assert prob(model, "pat", "Some") == pytest.approx({"T": 4 / 6, "F": 0})
    assert prob(model, "pat", "None") == pytest.approx({"T": 0, "F": 2 / 6})
    assert prob(model, "price", "$$$") == pytest.approx({"T": 1 / 6, "F": 2 / 6})
    assert model.distributions_["est"].categories == ["0-10", "10-30", "30-60", ">60"]


# -- identities -----------------------------------------------------------------------------

MIXED = [  # colour, length, visits, wait, size — one empty cell in each numeric column
    ["red", "1.5", "0", "2.0", "10"], ["red", "2.5", "1", "0.5", "12"],
    ["blue", "2.0", "", "1.0", "15"], ["blue", "4.0", "3", "", "20"],
    ["green", "", "2", "3.5", "30"], ["red", "3.0", "4", "0.25", "8"],
    ["green", "3.5", "5", "4.0", "25"], ["blue", "5.0", "2", "1.5", ""]]
MIXED_Y = ["a", "a", "b", "b", "b", "a", "b", "a"]
MIXED_COLUMNS = ["colour", "length", "visits", "wait", "size"]
MIXED_KINDS = {"visits": "poisson", "wait": "exponential", "size": "equal-frequency:3"}


def mixed(**params) -> TableNB:
    return TableNB(kinds=MIXED_KINDS, **params).fit(MIXED, MIXED_Y, columns=MIXED_COLUMNS)


def test_kinds_are_inferred_or_given():
    model = mixed()
    assert model.kinds_ == ["categorical", "gaussian", "poisson", "exponential",
                            "equal-frequency"]
    assert fit_csv("gender.csv", "sex").kinds_ == ["gaussian"] * 3
    binned = TableNB(kinds=["categorical", "equal-width:2", "categorical", "gaussian",
                            "gaussian"]).fit(MIXED, MIXED_Y)
    assert binned.columns_ == ["x0", "x1", "x2", "x3", "x4"]
    assert binned.kinds_[1:3] == ["equal-width", "categorical"]
    assert binned.distributions_["x2"].categories == ["0", "1", "2", "3", "4", "5"]


def test_probabilities_are_consistent():
    model = mixed()
    rows = MIXED + [["red", "", "", "", ""], ["purple", "9", "7", "0.1", "100"]]
    proba, log_proba = model.predict_proba(rows), model.predict_log_proba(rows)
    assert np.allclose(proba.sum(axis=1), 1)
    assert np.allclose(np.exp(log_proba), proba)
    assert model.predict(rows).tolist() == model.classes_[proba.argmax(axis=1)].tolist()
    for row, jll in zip(rows, model.predict_joint_log_proba(rows)):
        assert np.allclose(model.class_log_prior_ + sum(model.explain(row).values()), jll)


def test_missing_cells_are_skipped():
    """Empty cells count neither in training nor in prediction (Mitchell's missing values)."""
    model = mixed()
    length = model.distributions_["length"]
    assert length.n.tolist() == [4, 3]  # class b has one empty length
    assert length.mean.tolist() == pytest.approx([(1.5 + 2.5 + 3 + 5) / 4, (2 + 4 + 3.5) / 3])
    row = ["red", "", "2", "", "12"]
    contributions = model.explain(row)
    assert contributions["length"].tolist() == [0, 0] and contributions["wait"].tolist() == [0, 0]
    assert np.allclose(model.predict_joint_log_proba([row])[0],
                       model.class_log_prior_ + contributions["colour"]
                       + contributions["visits"] + contributions["size"])


def test_poisson_and_exponential_densities():
    """004's PDFs: Poisson λ^k e^(−λ)/k!, λ the class mean; exponential λe^(−λx), λ = 1/mean."""
    model = mixed()
    visits, wait = model.distributions_["visits"], model.distributions_["wait"]
    assert visits.rate == pytest.approx([(0 + 1 + 4 + 2) / 4, (3 + 2 + 5) / 3])
    assert wait.rate == pytest.approx([4 / (2 + 0.5 + 0.25 + 1.5), 3 / (1 + 3.5 + 4)])
    contributions = model.explain(["red", "", "3", "0.75", ""])
    assert contributions["visits"] == pytest.approx(stats.poisson.logpmf(3, visits.rate))
    assert contributions["wait"] == pytest.approx(stats.expon.logpdf(0.75, scale=1 / wait.rate))


def test_gaussian_matches_normal_pdf_and_floors_variance():
    model = mixed(ddof=0)
    length = model.distributions_["length"]
    assert model.explain(["red", "2.75", "", "", ""])["length"] == pytest.approx(
        stats.norm.logpdf(2.75, length.mean, np.sqrt(length.var)))
    constant = TableNB().fit([[1.0], [1.0], [1.0], [2.0]], ["a", "a", "a", "b"])
    var = constant.distributions_["x0"].var
    # column variance 0.1875: class a is constant, class b has one row (n − 1 = 0)
    assert var.tolist() == pytest.approx([1e-9 * 0.1875] * 2)
    assert np.isfinite(constant.predict_log_proba([[1.0], [1.5]])).all()
    assert constant.predict([[1.0], [2.0]]).tolist() == ["a", "b"]


def test_binning_equal_width_and_equal_frequency():
    """004: equal-width and equal-frequency binning turn a number into a category."""
    x = [[v] for v in range(1, 9)]
    y = ["a"] * 4 + ["b"] * 4
    width = TableNB(kinds=["equal-width:2"], alpha=0).fit(x, y).distributions_["x0"]
    assert width.edges.tolist() == [1, 4.5, 8] and width.count.tolist() == [[4, 0], [0, 4]]
    frequency = TableNB(kinds=["equal-frequency:4"], alpha=0).fit(x, y).distributions_["x0"]
    assert frequency.edges.tolist() == [1, 3, 5, 7, 8]
    assert frequency.count.tolist() == [[2, 2, 0, 0], [0, 0, 2, 2]]
    assert frequency.categories == ["[1, 3)", "[3, 5)", "[5, 7)", "[7, 8]"]
    model = TableNB(kinds=["equal-frequency:4"], alpha=1).fit(x, y)
    # values beyond the training range fall in the end bins
    assert np.allclose(model.explain([-50])["x0"], np.log([3 / 8, 1 / 8]))
    assert np.allclose(model.explain([99])["x0"], np.log([1 / 8, 3 / 8]))


def test_unseen_values_skip_or_error():
    model = fit_csv("playtennis.csv", "play")
    foggy, missing = ["foggy", "cool", "high", "strong"], ["", "cool", "high", "strong"]
    assert np.array_equal(model.predict_log_proba([foggy]), model.predict_log_proba([missing]))
    model.set_params(unseen="error")
    with pytest.raises(TableError, match="row 1, column 'outlook': 'foggy' was never seen"):
        model.predict([foggy])


def test_no_class_left_is_an_error_not_nan():
    """With k = 0 a row can rule out every class; that is a clear error, not NaN."""
    model = TableNB(alpha=0).fit([["x", "p"], ["y", "q"]], ["a", "b"])
    assert model.predict([["x", "p"]]).tolist() == ["a"]
    with pytest.raises(TableError, match="row 2: every class has probability 0"):
        model.predict_proba([["x", "p"], ["x", "q"]])


def test_priors_learned_uniform_given():
    """000: 'P(male) = 0.5 regardless of training set'; uniform priors give the ML rule."""
    X, y = [["1"], ["2"], ["3"], ["4"]], ["m", "m", "m", "f"]
    assert np.exp(TableNB().fit(X, y).class_log_prior_).tolist() == pytest.approx([0.25, 0.75])
    assert np.exp(TableNB(fit_prior=False).fit(X, y).class_log_prior_).tolist() == [0.5, 0.5]
    model = TableNB(class_prior=[0.2, 0.8]).fit(X, y)
    assert np.exp(model.class_log_prior_).tolist() == pytest.approx([0.2, 0.8])
    with pytest.raises(ValueError, match="class_prior must be 2"):
        model.set_params(class_prior=[1.0])


def test_save_load_round_trip(tmp_path):
    model = mixed(alpha=0.5, ddof=0, class_prior=np.array([0.3, 0.7]))
    model.fit(MIXED, MIXED_Y, columns=MIXED_COLUMNS, target="label")
    path = tmp_path / "nested" / "table.model"
    model.save(path)
    loaded = TableNB.load(path)
    rows = MIXED + [["red", "", "", "", ""], ["green", "9", "7", "0.1", "100"]]
    assert np.array_equal(loaded.predict_proba(rows), model.predict_proba(rows))
    assert loaded.get_params() == {**model.get_params(), "class_prior": [0.3, 0.7]}
    assert (loaded.columns_, loaded.kinds_, loaded.target_) == (model.columns_, model.kinds_,
                                                                "label")
    assert loaded.classes_.tolist() == ["a", "b"]
    assert loaded.sample(5, seed=1)[0] == model.sample(5, seed=1)[0]
    meta, arrays = modelfile.load(path, "table")
    assert meta["classes"] == ["a", "b"] and all(a.dtype != object for a in arrays.values())


def test_load_rejects_other_and_broken_files(tmp_path):
    text_model = tmp_path / "text.model"
    modelfile.save(text_model, "multinomial", {}, {"x": np.zeros(2)})
    with pytest.raises(ModelFileError, match="holds a 'multinomial' model, not a 'table' one"):
        TableNB.load(text_model)
    broken = tmp_path / "broken.model"
    mixed().save(broken)
    with zipfile.ZipFile(broken) as archive:
        kept = {n: archive.read(n) for n in archive.namelist() if n != "0.count.npy"}
    with zipfile.ZipFile(broken, "w") as archive:
        for name, data in kept.items():
            archive.writestr(name, data)
    with pytest.raises(ModelFileError, match="is not a valid table model"):
        TableNB.load(broken)


# -- sampling -------------------------------------------------------------------------------

def test_sampling_frequencies_approach_the_model():
    """002: NB is generative: draw the class from P(c), then each column from P(x|c)."""
    model = fit_csv("playtennis.csv", "play", alpha=1)
    rows, labels = model.sample(40000, seed=7)
    assert [len(r) for r in rows[:1]] == [4]
    prior = np.exp(model.class_log_prior_)
    assert [np.mean(labels == c) for c in model.classes_] == pytest.approx(prior, abs=0.01)
    outlook = model.distributions_["outlook"]
    for c, label in enumerate(model.classes_):
        drawn = [r[0] for r, l in zip(rows, labels) if l == label]
        freq = [drawn.count(v) / len(drawn) for v in outlook.categories]
        assert freq == pytest.approx(np.exp(outlook.log_prob[c]), abs=0.015)


def test_sampling_numeric_columns_and_refitting():
    model = mixed(fit_prior=False)
    rows, labels = model.sample(40000, seed=3)
    assert np.mean(labels == "a") == pytest.approx(0.5, abs=0.01)
    refit = TableNB(kinds=MIXED_KINDS).fit(rows, labels, columns=MIXED_COLUMNS)
    for column in ("length", "visits", "wait"):
        assert refit.distributions_[column].mean == pytest.approx(
            model.distributions_[column].mean, rel=0.03)
    assert refit.distributions_["length"].var == pytest.approx(
        model.distributions_["length"].var, rel=0.05)
    assert all(isinstance(r[2], int) and r[2] >= 0 and r[3] > 0 for r in rows[:100])
    edges = model.distributions_["size"].edges
    assert all(edges[0] <= r[4] <= edges[-1] for r in rows)


def test_sampling_is_seeded():
    model = mixed()
    assert model.sample(20, seed=5)[0] == model.sample(20, seed=5)[0]
    assert model.sample(20, seed=5)[0] != model.sample(20, seed=6)[0]
    with pytest.raises(ValueError, match="n must be a whole number"):
        model.sample(-1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("pqr"), st.integers(0, 9), st.integers(0, 5),
                          st.sampled_from("ab")), min_size=4, max_size=12),
       st.lists(st.integers(0, 4), min_size=12, max_size=12))
def test_weighted_rows_equal_repeated_rows(records, counts):
    """A row of weight w is w identical rows, for every kind of column."""
    counts = np.array(counts[:len(records)])
    X = [[p, str(n), str(n % 3)] for p, n, _, _ in records]
    y = [label for *_, label in records]
    if not all(counts[[label == c for label in y]].sum() for c in set(y)):
        return  # a class with weight 0 in total has no values: an error in both fits
    kinds = ["categorical", "gaussian", "equal-frequency:3"]
    try:
        weighted = TableNB(kinds=kinds).fit(X, y, sample_weight=counts)
    except TableError:
        return
    repeated = TableNB(kinds=kinds).fit([r for r, k in zip(X, counts) for _ in range(k)],
                                        [l for l, k in zip(y, counts) for _ in range(k)])
    assert np.allclose(weighted.class_count_, repeated.class_count_)
    for column in weighted.distributions_:
        assert np.allclose(weighted.distributions_[column].n, repeated.distributions_[column].n)
    assert np.allclose(weighted.predict_log_proba(X), repeated.predict_log_proba(X))


# -- bad input ------------------------------------------------------------------------------

def test_read_csv(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("\ufeffname , city\n\nAnna, Köln \n\nJosé,Montréal\n".encode("cp1252",
                                                                                 "ignore"))
    t = read_csv(path)
    assert t.columns == ["name", "city"]
    assert [[c.strip() for c in r] for r in t.rows] == [["Anna", "Köln"], ["José", "Montréal"]]
    assert read_csv(io.BytesIO(b"a,b\n1,2\n")) == Table(["a", "b"], [["1", "2"]])
    with pytest.raises(TableError, match="no column 'c'; the columns are a, b"):
        read_csv(io.StringIO("a,b\n1,2\n")).column("c")


def test_read_csv_rows_end_at_cr_lf_or_crlf():
    """A file of CR-only lines (old Mac software), or a stray CR, made the csv module raise
    "new-line character seen in unquoted field", an internal error to the command line."""
    expected = Table(["a", "play"], [["x", "yes"], ["y", "no"]])
    for end in (b"\r", b"\n", b"\r\n"):
        assert read_csv(io.BytesIO(end.join([b"a,play", b"x,yes", b"y,no", b""]))) == expected
    assert read_csv(io.BytesIO(b'a,play\n"x\ry",yes\n')).rows == [["x\ry", "yes"]]


@pytest.mark.parametrize("text, message", [
    ("a,play\n" + "x" * 200_000 + ",yes\n", "line 2: field larger than field limit"),
    ("", "the table is empty"),
    ("a,b,c\n1,2,3\n4,5\n", "row 2 has 2 cells but the header has 3"),
    ("a,,c\n1,2,3\n", "column 2 of the header has no name"),
    ("a,b,a\n1,2,3\n", "column 'a' appears twice"),
])
def test_read_csv_errors(text, message):
    with pytest.raises(TableError, match=message):
        read_csv(io.StringIO(text))


@pytest.mark.parametrize("X, y, params, error, message", [
    ([["a", "1"], ["b"]], ["p", "q"], {}, TableError, "row 2 has 1 cells, expected 2"),
    ([["5.5"], ["6"], ["tall"]], ["m", "f", "f"], {"kinds": ["gaussian"]}, TableError,
     "row 3, column 'x0': 'tall' is not a number"),
    ([["1"], ["inf"]], ["m", "f"], {"kinds": ["gaussian"]}, TableError, "not a finite number"),
    ([["1"], ["2.5"]], ["m", "f"], {"kinds": ["poisson"]}, TableError,
     "row 2, column 'x0': 2.5 is not a whole number ≥ 0"),
    ([["1"], ["0"]], ["m", "f"], {"kinds": ["exponential"]}, TableError,
     "row 2, column 'x0': 0 is not a number > 0"),
    ([["1"], ["2"]], ["m", ""], {}, TableError, "row 2: the class label is empty"),
    ([["1"], [""], ["3"]], ["m", "f", "m"], {}, TableError,
     "column 'x0' has no values for class 'f'"),
    ([["1"], ["2"]], ["m", "f"], {"kinds": ["normal"]}, ValueError, "unknown column kind 'normal'"),
    ([["1"], ["2"]], ["m", "f"], {"kinds": {"height": "gaussian"}}, ValueError,
     "kinds names 'height', which is not a column"),
    ([["1"], ["2"]], ["m", "f"], {"alpha": -1}, ValueError, "alpha must be a number ≥ 0"),
    ([["1"], ["2"]], ["m", "f"], {"alpha": "1"}, ValueError, "alpha must be a number ≥ 0"),
    ([], [], {}, ValueError, "cannot fit on an empty table"),
    ([["1"], ["2"]], ["m", "f"], {"ddof": 0.5}, ValueError, "ddof must be a whole number"),
    ([["1"], ["2"]], ["m", "f"], {"unseen": "ignore"}, ValueError, "unseen must be"),
    ([["1"], ["2"]], ["m"], {}, ValueError, "X has 2 rows but y has 1 labels"),
    ([[], []], ["m", "f"], {}, TableError, "no feature columns"),
])
def test_fit_errors(X, y, params, error, message):
    with pytest.raises(error, match=message):
        TableNB(**params).fit(X, y)


def test_predict_and_weight_errors():
    model = fit_csv("gender.csv", "sex")
    with pytest.raises(TableError, match="row 2, column 'weight': 'heavy' is not a number"):
        model.predict([[6, 130, 8], [5, "heavy", 7]])
    with pytest.raises(TableError, match="row 1 has 2 cells, expected 3"):
        model.predict([[6, 130]])
    with pytest.raises(TableError, match="row 2, column 'count': -3 is not a weight"):
        parse_weights(["1", "-3"], "count")
    with pytest.raises(TableError, match="row 1, column 'count': an empty cell is not a weight"):
        parse_weights([""], "count")
    with pytest.raises(ValueError, match="sample_weight must be 2 finite numbers"):
        TableNB().fit([["a"], ["b"]], ["p", "q"], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="not fitted yet"):
        TableNB().predict([["a"]])
    assert math.isclose(float(model.predict_proba([[6, "", 8]]).sum()), 1.0)


# -- missing values: EM (issue 12) -------------------------------------------------------------

def test_em_on_missing_classes_reaches_the_maximum_likelihood_found_by_enumeration():
    """One binary column, six labeled rows and four whose class is missing: the likelihood
    Σ_labeled log P(c) P(x|c) + Σ_unlabeled log Σ_c P(c) P(x|c) over (π, θ_yes, θ_no),
    enumerated on a grid of step 1/400, peaks where EM converges."""
    from textnb.tables.model import TableNB, fit_em
    X = [["a"], ["a"], ["b"], ["b"], ["b"], ["a"], ["a"], ["a"], ["a"], ["b"]]
    y = ["yes", "yes", "yes", "no", "no", "no", "?", "", "?", "?"]
    model = TableNB(alpha=0)
    history = fit_em(model, X, y, columns=["x"], tol=0, max_iter=500)
    assert np.all(np.diff(history) >= -1e-12)
    grid = np.arange(1, 400) / 400
    pi, t1, t0 = np.meshgrid(grid, grid, grid, indexing="ij", sparse=True)
    # labeled: yes a,a,b; no b,b,a.  unlabeled: a,a,a,b.
    ll = (3 * np.log(pi) + 2 * np.log(t1) + np.log(1 - t1)
          + 3 * np.log(1 - pi) + np.log(t0) + 2 * np.log(1 - t0)
          + 3 * np.log(pi * t1 + (1 - pi) * t0) + np.log(pi * (1 - t1) + (1 - pi) * (1 - t0)))
    best = np.unravel_index(np.argmax(ll), ll.shape)
    assert history[-1] == pytest.approx(ll.max(), abs=1e-3)
    assert history[-1] >= ll.max() - 1e-9           # EM's answer is at least the grid's best
    p_yes = np.exp(model.class_log_prior_)[model.classes_.tolist().index("yes")]
    theta = np.exp(model.distributions_["x"].log_prob)   # rows: no, yes; columns: a, b
    np.testing.assert_allclose([p_yes, theta[1, 0], theta[0, 0]],
                               [grid[best[0]], grid[best[1]], grid[best[2]]], atol=0.01)


def test_question_marks_are_missing_and_summed_out():
    from textnb.tables.model import TableNB
    X = [["sunny", "hot"], ["rain", "?"], ["rain", "hot"], ["sunny", ""]]
    model = TableNB(alpha=0).fit(X, ["no", "yes", "yes", "no"], columns=["outlook", "temp"])
    assert model.distributions_["temp"].categories == ["hot"]
    np.testing.assert_allclose(model.predict_proba([["rain", "?"]]),
                               model.predict_proba([["rain", ""]]))
    np.testing.assert_allclose(model.predict_proba([["rain", "?"]]), [[0.0, 1.0]])


def test_table_train_fills_missing_classes_by_em(tmp_path):
    from click.testing import CliRunner
    from textnb.cli.app import main
    from textnb.tables.model import TableNB
    (tmp_path / "t.csv").write_text("x,play\na,yes\na,yes\nb,yes\nb,no\nb,no\na,no\n"
                                    "a,?\na,\na,?\nb,?\n")
    result = CliRunner().invoke(main, ["table", "train", str(tmp_path / "t.csv"), "-t", "play",
                                       "-k", "0", "-m", str(tmp_path / "t.model")])
    assert result.exit_code == 0, result.output
    assert "EM iteration 1: log-likelihood" in result.stderr
    model = TableNB.load(tmp_path / "t.model")
    assert model.class_count_.sum() == pytest.approx(10)
