"""Multi-label documents: textnb.multilabel, metrics.multilabel_summary, train --labels and the
multi-label branches of classify, evaluate and info, on corpora/multilabel (20 Newsgroups posts
made multi-label by python -m bench.multilabel --sample)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from textnb.cli.app import main
from textnb.errors import DocumentError, ModelFileError
from textnb.evaluation.metrics import multilabel_summary
from textnb.store.multilabel_model import KIND, load_model, model_kind, save_model
from textnb.multilabel import (MultiLabelClassifier, _class_model, _counts, _log_odds_model,
                               choose_thresholds, decide, label_matrix, merge_duplicates,
                               posterior_log_odds, read_label_file)

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "corpora", "multilabel")
TRAINING = os.path.join(SAMPLE, "training.txt")
TEST = os.path.join(SAMPLE, "test.txt")


def run(*args, **kwargs):
    return CliRunner().invoke(main, list(map(str, args)), **kwargs)


@pytest.fixture(scope="module")
def sample_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("ml") / "ml.model"
    result = run("train", "-q", "-m", path, "--labels", TRAINING)
    assert result.exit_code == 0, result.output
    return path


def test_log_odds_equal_scikit_learn_one_vs_rest():
    sklearn = pytest.importorskip("sklearn")  # noqa: F841 — the yardstick only
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.naive_bayes import MultinomialNB
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.5, (200, 50)).astype(float))
    Y = rng.random((200, 4)) < 0.3
    label_count, feature_count, total_count = _counts(X, Y)
    bias, weights = _log_odds_model(label_count, feature_count, total_count, 200.0, 0.5)
    ours = X @ weights.T + bias
    theirs = OneVsRestClassifier(MultinomialNB(alpha=0.5)).fit(X, Y)
    want = np.column_stack([np.diff(e.predict_log_proba(X), axis=1)[:, 0]
                            for e in theirs.estimators_])
    np.testing.assert_allclose(ours, want, atol=1e-10)


def test_posterior_log_odds_are_exact_where_one_minus_p_cancels():
    z = np.array([[0.0, -1.0, -2.0], [3.0, 3.0, 3.0], [0.0, -50.0, -60.0], [0.0, -1e4, -2e4]])
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    got = posterior_log_odds(z)
    np.testing.assert_allclose(got[:2], np.log(p[:2] / (1 - p[:2])), rtol=1e-12)
    # 1 − P = e^−50 + e^−60 is lost to rounding (P is 1.0 in doubles); the log-odds are not.
    assert got[2, 0] == pytest.approx(-np.log(np.exp(-50.0) + np.exp(-60.0)), rel=1e-12)
    assert got[2, 1] == pytest.approx(-50.0 - np.log(1 + np.exp(-60.0)), rel=1e-12)
    assert got[3].tolist() == [745.0, -745.0, -745.0]     # capped, finite
    assert posterior_log_odds(np.array([[-3.0], [7.0]])).tolist() == [[745.0], [745.0]]


def test_posterior_scoring_is_multinomial_nb_over_the_labels():
    """With one label a document, the posterior scoring is scikit-learn's MultinomialNB over
    the labels as classes: the log-odds of its predict_proba."""
    pytest.importorskip("sklearn")
    from sklearn.naive_bayes import MultinomialNB
    rng = np.random.default_rng(1)
    X = sp.csr_matrix(rng.poisson(0.7, (120, 30)).astype(float))
    y = rng.integers(0, 4, 120)
    Y = np.eye(4, dtype=bool)[y]
    label_count, feature_count, _ = _counts(X, Y)
    bias, weights = _class_model(label_count, feature_count, 0.1)
    ours = posterior_log_odds(np.asarray(X @ weights.T) + bias)
    p = MultinomialNB(alpha=0.1).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(ours, np.log(p) - np.log1p(-p), atol=1e-8)


def _sample_training():
    entries = [line.split() for line in open(TRAINING).read().splitlines()]
    texts = [open(os.path.join(SAMPLE, fields[0]), "rb").read() for fields in entries]
    return texts, [fields[1:] for fields in entries]


def _micro(chosen, Y):
    return 2 * (chosen & Y).sum() / (chosen.sum() + Y.sum())


def test_auto_scoring_is_the_candidate_of_best_cv_micro_f1():
    """"auto" keeps the best by out-of-fold micro-F1 of the posterior, one-vs-rest and each
    label the scoring of its better out-of-fold F1; on this sample one-vs-rest (0.815, the
    posterior 0.744, per label 0.811)."""
    texts, y = _sample_training()
    Y = label_matrix(y)[1]
    auto = MultiLabelClassifier().fit(texts, y)
    tried = {t["scoring"]: t for t in auto.cv_["choice"]}
    assert sorted(tried) == ["one-vs-rest", "per-label", "posterior"]
    assert tried["posterior"]["alpha"] == 0.1 and tried["one-vs-rest"]["alpha"] == 1.0
    for scoring in ("posterior", "one-vs-rest"):
        given = MultiLabelClassifier(scoring=scoring).fit(texts, y)
        chosen = decide(given._out_of_fold(given.transform(texts), Y), given.thresholds_)
        assert tried[scoring]["micro_f1"] == pytest.approx(_micro(chosen, Y))
    assert [round(tried[s]["micro_f1"], 3) for s in ("posterior", "one-vs-rest", "per-label")
            ] == [0.744, 0.815, 0.811]
    assert auto.scoring_ == "one-vs-rest" and auto.one_vs_rest_.all()
    assert auto.alphas_ == {"one-vs-rest": 1.0}
    given = MultiLabelClassifier(scoring="one-vs-rest").fit(texts, y)
    assert given.thresholds_.tolist() == auto.thresholds_.tolist()
    with pytest.raises(ValueError, match="scoring must be one of auto, posterior, one-vs-rest"):
        MultiLabelClassifier(scoring="per-label").fit(texts, y)


def test_per_label_gives_each_label_the_scoring_of_its_better_cv_f1():
    """With 4 folds the sample's CV prefers per label (0.790; the posterior 0.771, one-vs-rest
    0.760): each label's threshold, CV record and scores are those of its scoring's own model,
    the posterior's labels still competing with every label, one-vs-rest's with none."""
    texts, y = _sample_training()
    auto = MultiLabelClassifier(folds=4).fit(texts, y)
    given = {scoring: MultiLabelClassifier(folds=4, scoring=scoring).fit(texts, y)
             for scoring in ("posterior", "one-vs-rest")}
    tried = {t["scoring"]: round(t["micro_f1"], 3) for t in auto.cv_["choice"]}
    assert tried == {"posterior": 0.771, "one-vs-rest": 0.76, "per-label": 0.79}
    post_f1, rest_f1 = (np.array(given[s].cv_["f1"]) for s in ("posterior", "one-vs-rest"))
    assert auto.one_vs_rest_.tolist() == (rest_f1 > post_f1).tolist()
    assert auto.one_vs_rest_.sum() == 2 and auto.scoring_ == "per-label"
    assert auto.alphas_ == {"posterior": 0.1, "one-vs-rest": 1.0}
    X, Y = auto.transform(texts), label_matrix(y)[1]
    scores, oof = auto.decision_function(texts), auto._out_of_fold(X, Y)
    for j, rest in enumerate(auto.one_vs_rest_.tolist()):
        own = given["one-vs-rest" if rest else "posterior"]
        assert auto.thresholds_[j] == own.thresholds_[j]
        assert auto.cv_["f1"][j] == own.cv_["f1"][j]
        np.testing.assert_allclose(scores[:, j], own.decision_function(texts)[:, j], atol=1e-9)
        np.testing.assert_allclose(oof[:, j], own._out_of_fold(X, Y)[:, j], atol=1e-9)
    assert auto.cv_["choice"][2]["micro_f1"] == pytest.approx(
        _micro(decide(oof, auto.thresholds_), Y))


def test_a_model_of_both_scorings_is_saved_and_loaded_as_it_scores(tmp_path):
    texts, y = _sample_training()
    auto = MultiLabelClassifier(folds=4).fit(texts, y)
    path = tmp_path / "m.model"
    save_model(auto, path)
    loaded = load_model(path)
    assert loaded.scoring_ == "per-label" and loaded.alphas_ == auto.alphas_
    assert loaded.one_vs_rest_.tolist() == auto.one_vs_rest_.tolist()
    np.testing.assert_allclose(loaded.decision_function(texts), auto.decision_function(texts))
    with zipfile.ZipFile(path) as source:
        meta = json.loads(source.read("meta.json"))
    assert meta["params"]["scoring"] == "per-label" and meta["params"]["alpha"] == 0.1
    assert meta["one_vs_rest"] == {"labels": auto.labels_[auto.one_vs_rest_].tolist(),
                                   "alpha": 1.0}
    from textnb.store import schema
    assert schema.multilabel_problem({**meta, "one_vs_rest": None}) == (
        "one_vs_rest must be given for scoring per-label, and only there")
    assert "one_vs_rest must be" in schema.multilabel_problem(
        {**meta, "one_vs_rest": {"labels": ["no.such.label"], "alpha": 1.0}})
    assert "one_vs_rest must be" in schema.multilabel_problem(
        {**meta, "one_vs_rest": {"labels": [], "alpha": 0}})
    result = run("info", "-m", path)
    assert result.exit_code == 0, result.output
    assert ("scoring     each label the better by CV F1: posterior, alpha 0.1 (2 labels), "
            "one-vs-rest, alpha 1 (2 labels) (CV micro-F1: posterior 0.7707, one-vs-rest 0.7600, "
            "per-label 0.7902)") in result.output
    for label, rest in zip(auto.labels_, auto.one_vs_rest_):
        assert f"{'one-vs-rest' if rest else 'posterior'}" in next(
            line for line in result.output.splitlines() if line.startswith(label + " "))


def test_a_model_file_of_before_the_scoring_loads_as_one_vs_rest(tmp_path):
    texts = ["oil price rises", "oil tanker shipping", "ship sinks at sea", "crude oil price",
             "shipping lanes at sea", "oil shipping by tanker"]
    y = [["oil"], ["oil", "ship"], ["ship"], ["oil"], ["ship"], ["oil", "ship"]]
    clf = MultiLabelClassifier(stop_words="none", folds=2, scoring="one-vs-rest").fit(texts, y)
    path, old = tmp_path / "m.model", tmp_path / "old.model"
    save_model(clf, path)
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(old, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "meta.json":
                meta = json.loads(data)
                assert meta["params"].pop("scoring") == "one-vs-rest"
                data = json.dumps(meta).encode()
            target.writestr(item, data)
    loaded = load_model(old)
    assert loaded.scoring_ == "one-vs-rest" and loaded.alphas_ == {"one-vs-rest": 1.0}
    np.testing.assert_allclose(loaded.decision_function(texts), clf.decision_function(texts))


def test_counts_are_one_product_of_the_label_indicators():
    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [1, 1, 1]], dtype=float))
    Y = np.array([[True, False], [True, True], [False, True]])
    label_count, feature_count, total_count = _counts(X, Y)
    assert label_count.tolist() == [2, 2]
    assert feature_count.tolist() == [[1, 3, 2], [1, 4, 1]]
    assert total_count.tolist() == [2, 4, 3]


def test_thresholds_maximise_f1_between_distinct_scores():
    scores = np.array([[5.0, 1.0], [4.0, 1.0], [3.0, 1.0], [2.0, 0.0], [1.0, 0.0]])
    Y = np.array([[1, 1], [1, 0], [0, 1], [1, 0], [0, 0]], dtype=bool)
    thresholds, cv = choose_thresholds(scores, Y)
    # Label 0: top 2 gives F1 2·2/(2+3) = 0.8, top 4 gives 2·3/(4+3) = 0.857: cut at 1.5.
    assert thresholds[0] == pytest.approx(1.5)
    assert cv["f1"][0] == pytest.approx(6 / 7)
    # Label 1: the three tied 1.0 scores are taken together (2·2/(3+2) = 0.8), cut at 0.5.
    assert thresholds[1] == pytest.approx(0.5)
    assert cv["precision"][1] == pytest.approx(2 / 3) and cv["recall"][1] == 1.0
    assert (scores[:, 0] >= thresholds[0]).tolist() == [True, True, True, True, False]


def test_decide_gives_at_least_the_label_nearest_its_threshold():
    chosen = decide(np.array([[-5.0, -1.0, 3.0], [0.0, 2.0, 9.0]]), np.array([0.0, 1.0, 10.0]))
    assert chosen.tolist() == [[False, True, False], [True, True, False]]


def test_label_matrix_and_bad_label_sets():
    labels, Y = label_matrix([["b", "a"], ["a"]])
    assert labels.tolist() == ["a", "b"] and Y.tolist() == [[True, True], [True, False]]
    with pytest.raises(ValueError, match="document 1 has no labels"):
        label_matrix([["a"], []])
    with pytest.raises(ValueError, match="not a single str"):
        label_matrix(["a", "b"])


def test_merge_duplicates_unites_labels():
    texts, labels = merge_duplicates([b"x", b"y", b"x"], [["a"], ["b"], ["c", "a"]])
    assert texts == [b"x", b"y"] and labels == [["a", "c"], ["b"]]


def test_read_label_file_paths_relative_to_the_file(tmp_path):
    (tmp_path / "sub").mkdir()
    labels = tmp_path / "sub" / "cats.txt"
    labels.write_text("# comment\ntraining/1 earn\n\ntraining/2 oil ship\n/abs/3 grain\n"
                      "training/1 acq earn\n")
    got = read_label_file(labels)
    assert got == [(str(tmp_path / "sub" / "training" / "1"), ["earn", "acq"]),
                   (str(tmp_path / "sub" / "training" / "2"), ["oil", "ship"]),
                   ("/abs/3", ["grain"])]
    labels.write_text("training/1 earn\ntraining/2\n")
    with pytest.raises(DocumentError, match="line 2: 'training/2' has no label"):
        read_label_file(labels)
    labels.write_text("training/1 earn\ntrain\0ing/2 oil\n")  # was "embedded null byte"
    with pytest.raises(DocumentError, match="line 2: the path holds a NUL byte"):
        read_label_file(labels)


def test_fit_predict_save_load_round_trip(tmp_path):
    texts = ["oil price rises", "oil tanker shipping", "ship sinks at sea", "crude oil price",
             "shipping lanes at sea", "oil shipping by tanker"]
    y = [["oil"], ["oil", "ship"], ["ship"], ["oil"], ["ship"], ["oil", "ship"]]
    clf = MultiLabelClassifier(stop_words="none", folds=2).fit(texts, y)
    path = tmp_path / "m.model"
    save_model(clf, path)
    assert model_kind(path) == KIND
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.decision_function(texts), clf.decision_function(texts))
    assert loaded.thresholds_.tolist() == clf.thresholds_.tolist()
    assert loaded.predict(["oil tanker", "crude oil price"]) == [["oil", "ship"], ["oil"]]
    with zipfile.ZipFile(path) as archive:
        meta = json.loads(archive.read("meta.json"))
    assert meta["kind"] == "multi-label-classifier" and meta["labels"] == ["oil", "ship"]


def test_a_corrupt_multilabel_model_is_refused(tmp_path):
    clf = MultiLabelClassifier(stop_words="none", folds=2).fit(
        ["aa bb", "cc dd", "aa cc", "bb dd"], [["x"], ["y"], ["x", "y"], ["y"]])
    path = tmp_path / "m.model"
    save_model(clf, path)
    clf.label_count_ = clf.label_count_ + 10  # more documents of a label than there are
    save_model(clf, path)
    with pytest.raises(ModelFileError, match="more documents than there are"):
        load_model(path)
    with pytest.raises(ModelFileError, match="not a 'multi-label-classifier'"):
        from textnb.classifier import TextClassifier
        from textnb.store.text_model import save_model as save_text
        save_text(TextClassifier(stop_words="none").fit(["aa", "bb"], ["x", "y"]), path)
        load_model(path)


def test_multilabel_summary_matches_scikit_learn():
    pytest.importorskip("sklearn")
    from sklearn.metrics import f1_score, hamming_loss, precision_score
    rng = np.random.default_rng(1)
    truth, predicted = rng.random((100, 5)) < 0.3, rng.random((100, 5)) < 0.3
    predicted[:, 4] = False  # a label never predicted: its precision is 0/0, counted 0
    r = multilabel_summary(truth, predicted, list("abcde"))
    assert r["micro"]["f1"] == pytest.approx(f1_score(truth, predicted, average="micro"))
    assert r["macro"]["f1"] == pytest.approx(
        f1_score(truth, predicted, average="macro", zero_division=0))
    assert r["macro"]["precision"] == pytest.approx(
        precision_score(truth, predicted, average="macro", zero_division=0))
    assert r["hamming_loss"] == pytest.approx(hamming_loss(truth, predicted))


def test_multilabel_summary_by_hand():
    truth = np.array([[1, 1], [1, 0]], dtype=bool)
    predicted = np.array([[1, 0], [1, 1]], dtype=bool)
    r = multilabel_summary(truth, predicted, ["a", "b"])
    # TP 2, FP 1, FN 1: micro P = R = F1 = 2/3; label b: TP 0 → F1 0; label a: F1 1.
    assert r["micro"]["f1"] == pytest.approx(2 / 3)
    assert r["macro"]["f1"] == pytest.approx(0.5)
    assert r["hamming_loss"] == pytest.approx(0.5) and r["subset_accuracy"] == 0.0


def test_cli_train_info_evaluate_classify_on_the_sample(sample_model):
    info = run("info", "-m", sample_model, "--format", "json")
    assert info.exit_code == 0, info.output
    data = json.loads(info.output)
    assert data["kind"] == "multi-label" and data["documents"] == 72
    assert sorted(data["labels"]) == ["comp.graphics", "rec.autos", "sci.med", "sci.space"]
    assert all(d["documents"] == 24 for d in data["labels"].values())

    evaluation = run("evaluate", "-m", sample_model, "--labels", TEST, "--format", "json")
    assert evaluation.exit_code == 0, evaluation.output
    r = json.loads(evaluation.output)
    assert r["documents"] == 24 and r["label_cardinality"] == pytest.approx(32 / 24)
    # Measured: micro-F1 0.678, macro-F1 0.689, Hamming loss 0.198 on 24 short test posts;
    # a constant guess of every label scores micro-F1 0.5 and Hamming loss 0.667.
    assert r["micro"]["f1"] > 0.55 and r["macro"]["f1"] > 0.55 and r["hamming_loss"] < 0.3
    text = run("evaluate", "-m", sample_model, "--labels", TEST)
    assert "micro F1" in text.output and "Hamming loss" in text.output

    documents = [os.path.join(SAMPLE, "test", str(n)) for n in (1, 2, 3)]
    out = run("classify", "-m", sample_model, "--format", "json", *documents)
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in out.output.splitlines()]
    model = load_model(sample_model)
    scores = model.decision_function([open(d, "rb").read() for d in documents])
    for row, score in zip(rows, scores):
        assert row["labels"], "at least one label"
        assert set(row["scores"]) == set(model.labels_)
        for label in row["labels"]:
            j = model.labels_.tolist().index(label["label"])
            assert label["log_odds"] == pytest.approx(score[j])
            assert label["probability"] == pytest.approx(1 / (1 + np.exp(-score[j])))
        above = {str(l) for l, s, t in zip(model.labels_, score, model.thresholds_) if s >= t}
        assert {x["label"] for x in row["labels"]} == (above or {row["labels"][0]["label"]})
    tsv = run("classify", "-m", sample_model, "--format", "tsv", "--header", documents[0])
    assert tsv.output.splitlines()[0] == "source\tlabels\tlog_odds"


def test_cli_a_document_in_several_class_directories_is_multi_label(tmp_path):
    for group in ("a", "b"):
        (tmp_path / group).mkdir()
    shutil.copy(os.path.join(SAMPLE, "training", "10"), tmp_path / "a" / "1")
    shutil.copy(os.path.join(SAMPLE, "training", "10"), tmp_path / "b" / "1")
    for n in range(11, 20):
        shutil.copy(os.path.join(SAMPLE, "training", str(n)), tmp_path / ("a" if n % 2 else "b") / str(n))
    labels = tmp_path / "labels.txt"
    labels.write_text(f"{os.path.join(SAMPLE, 'training', '20')} c\n"
                      f"{os.path.join(SAMPLE, 'training', '21')} c a\n")
    model = tmp_path / "m.model"
    result = run("train", "-m", model, "--labels", labels, tmp_path / "a", tmp_path / "b")
    assert result.exit_code == 0, result.output
    # 11 files in a/ and b/, one of them in both (10 documents), and 2 in the label file.
    assert "trained 12 documents (2 with several labels), 3 labels" in result.output


def test_cli_a_label_file_labels_each_copy_of_a_document(tmp_path):
    """Two identical files a label file names with different labels stay two documents (it
    labels each, as Reuters-21578 labels its duplicate stories), not one of both labels."""
    lines = [f"{os.path.join(SAMPLE, 'training', str(n))} {'a' if n % 2 else 'b'}"
             for n in range(11, 21)]
    shutil.copy(os.path.join(SAMPLE, "training", "11"), tmp_path / "copy")
    lines.append(f"{tmp_path / 'copy'} b")
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.model"
    result = run("train", "-m", model, "--labels", labels)
    assert result.exit_code == 0, result.output
    assert "trained 11 documents (0 with several labels), 2 labels" in result.output
    assert "scoring     " in result.output and "CV micro-F1: posterior 0." in result.output


def test_cli_errors_are_one_line(tmp_path, sample_model):
    bad = tmp_path / "bad.txt"
    bad.write_text("training/1\n")
    result = run("train", "-m", tmp_path / "m.model", "--labels", bad)
    assert result.exit_code != 0 and "has no label" in result.output
    result = run("train", "-m", tmp_path / "m.model", "--labels", TRAINING, "--prior", "uniform")
    assert result.exit_code != 0 and "--prior does not apply" in result.output
    result = run("classify", "-m", sample_model, "--exit-code", os.path.join(SAMPLE, "test", "1"))
    assert result.exit_code != 0 and "do not apply" in result.output
    result = run("evaluate", "-m", sample_model, "--labels", TEST, "--sweep")
    assert result.exit_code != 0 and "do not apply" in result.output
    unknown = tmp_path / "unknown.txt"
    unknown.write_text(f"{os.path.join(SAMPLE, 'test', '1')} talk.politics\n")
    result = run("evaluate", "-m", sample_model, "--labels", unknown)
    assert result.exit_code != 0 and "'talk.politics' is not in the model" in result.output


def test_thresholds_fall_back_for_rare_or_unlearnable_labels():
    rng = np.random.default_rng(0)
    n = 200
    Y = np.zeros((n, 3), dtype=bool)
    Y[:100, 0] = True                       # learnable: its scores separate it
    Y[7, 1] = True                          # one document: its best CV cut takes everything
    Y[rng.choice(n, 40, replace=False), 2] = True   # noise: scores unrelated to the label
    scores = np.column_stack([np.where(Y[:, 0], 3.0, -3.0) + rng.normal(0, 1, n),
                              rng.normal(-50, 10, n), rng.normal(-20, 5, n)])
    scores[7, 1] = -90.0                    # the lowest: F1 is best when every document is taken
    thresholds, cv = choose_thresholds(scores, Y)
    assert cv["fallback"][0] == "" and -3 < thresholds[0] < 3
    assert cv["fallback"][1] == "1 document < 3" and thresholds[1] == 0.0
    assert cv["fallback"][2].startswith("CV F1 0.") and cv["fallback"][2].endswith("< 0.3")
    # Without the fallback, the cut for label 2 would be the one of best F1 among the cuts that
    # take at most half the documents (or twice the label's): never most of them.
    assert (scores[:, 2] >= thresholds[2]).sum() <= 100 and thresholds[2] >= 0.0


def test_a_cut_never_takes_most_documents_of_a_minority_label():
    # 10 of 100 documents, ranked 61st to 70th: F1 is best (2·10 / (70 + 10) = 0.25) taking the
    # top 70, but a cut may take at most half the documents (or twice the label's).
    scores = np.arange(100, 0, -1, dtype=float)[:, None]
    Y = np.zeros((100, 1), dtype=bool)
    Y[60:70, 0] = True
    thresholds, _ = choose_thresholds(scores, Y)
    assert (scores[:, 0] >= thresholds[0]).sum() <= 50


def test_rare_labels_are_not_given_to_every_document(tmp_path):
    """The committed sample with labels of one and two training documents added (posts picked
    at random, so nothing predicts them): the model gives them to almost no test post, and
    ``info`` says why their thresholds fell back."""
    lines = open(TRAINING).read().splitlines()
    rng = np.random.default_rng(1)
    rare = {"rare-one": rng.choice(len(lines), 1, replace=False),
            "rare-two": rng.choice(len(lines), 2, replace=False)}
    for label, rows in rare.items():
        for row in rows:
            lines[row] += f" {label}"
    labels = tmp_path / "training.txt"
    labels.write_text("".join(f"{os.path.join(SAMPLE, line)}\n" for line in lines))
    model = tmp_path / "rare.model"
    trained = run("train", "-m", model, "--labels", labels)
    assert trained.exit_code == 0, trained.output
    assert "fallback    2 labels" in trained.output and "rare-one, rare-two" in trained.output
    out = run("classify", "-m", model, "--format", "json", os.path.join(SAMPLE, "test"))
    rows = [json.loads(line) for line in out.output.splitlines()]
    assert len(rows) == 24
    given = {label: sum(label in {x["label"] for x in row["labels"]} for row in rows)
             for label in rare}
    assert given["rare-one"] <= 2 and given["rare-two"] <= 2, given
    info = json.loads(run("info", "-m", model, "--format", "json").output)
    assert info["labels"]["rare-one"]["fallback"] == "1 document < 3"
    assert info["labels"]["rare-two"]["fallback"] == "2 documents < 3"
    assert info["labels"]["rare-one"]["threshold"] >= 0
    assert "fallback" in run("info", "-m", model).output
