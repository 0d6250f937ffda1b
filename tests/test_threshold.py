"""Two-class decisions at a threshold learned by cross-validation (decision_threshold)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from textnb import TextClassifier, load_model, save_model
from textnb.cli.app import main
from textnb.decision import cutoffs as drivers
from textnb.decision.cutoffs import THRESHOLD_MIN, accuracy_threshold
from textnb.decision.rules import decide, line
from textnb.errors import ModelFileError

POSITIVE = "good great fine excellent nice happy superb lovely".split()
NEGATIVE = "bad awful poor terrible sad boring dull ugly".split()
COMMON = "movie film plot actor scene story".split()


def reviews(n_pos: int, n_neg: int, seed: int) -> tuple[list[str], list[str]]:
    """Short texts of two classes, one far larger: six common words, one of the class's own
    and two of either class's, so that a fair share of each class looks like the other."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for label, own, n in (("pos", POSITIVE, n_pos), ("neg", NEGATIVE, n_neg)):
        for _ in range(n):
            words = [*rng.choice(COMMON, 6), *rng.choice(own, 1), *rng.choice(POSITIVE + NEGATIVE, 2)]
            texts.append(" ".join(words))
            labels.append(label)
    return texts, labels


def test_the_threshold_with_fewest_mistakes_nearest_zero():
    # Separated classes: 0 already makes no mistake, so it stays.
    assert accuracy_threshold([-2, -1, 1, 2], [False, False, True, True]) == 0.0
    # One positive among the negatives' scores: below it, one mistake fewer.
    assert accuracy_threshold([-2, -1, 1, 2], [False, True, True, True]) == -1.5
    assert accuracy_threshold([1, 2, 3, 4], [False, False, True, True]) == 2.5
    # Equal scores fall on one side together: below both (1 mistake) or above both (1): the
    # tie goes to the threshold nearer 0.
    assert accuracy_threshold([1, 1, 3, 4], [False, True, True, True]) == 0.0
    assert accuracy_threshold([-5, -4, -3], [True, True, True]) == -6.0
    with pytest.raises(ValueError, match="finite"):
        accuracy_threshold([0.0, np.nan], [True, False])
    with pytest.raises(ValueError, match="finite"):
        accuracy_threshold([], [])


def test_fit_learns_a_threshold_that_predict_decides_by():
    """Complement NB leaves the prior out, so with five times as many of one class it calls
    too many documents the smaller one: the threshold learned out of fold makes fewer mistakes
    on new documents than the most probable class does."""
    texts, labels = reviews(300, 60, seed=0)
    test, truth = reviews(1000, 200, seed=1)
    truth = np.array(truth)
    learned = TextClassifier().fit(texts, labels)
    plain = TextClassifier(decision_threshold=None).fit(texts, labels)
    threshold = learned.decision_threshold_
    assert plain.decision_threshold_ is None and threshold < 0  # towards the larger class
    log_proba = learned.predict_log_proba(test)
    predicted = learned.predict(test)
    np.testing.assert_array_equal(predicted, np.where(log_proba[:, 1] - log_proba[:, 0] >= threshold,
                                                      "pos", "neg"))
    np.testing.assert_array_equal(plain.predict(test), learned.classes_[log_proba.argmax(axis=1)])
    mistakes, plain_mistakes = (predicted != truth).sum(), (plain.predict(test) != truth).sum()
    assert mistakes < plain_mistakes
    assert learned.score(test, truth) == pytest.approx(1 - mistakes / truth.size)


def test_a_number_is_the_threshold_and_too_few_documents_learn_none():
    texts, labels = reviews(300, 60, seed=0)
    fixed = TextClassifier(decision_threshold=1.5).fit(texts, labels)
    assert fixed.decision_threshold_ == 1.5
    few, few_labels = reviews(40, THRESHOLD_MIN - 1, seed=0)
    assert TextClassifier().fit(few, few_labels).decision_threshold_ is None
    enough, enough_labels = reviews(40, THRESHOLD_MIN, seed=0)
    assert TextClassifier().fit(enough, enough_labels).decision_threshold_ is not None
    for bad in ("high", float("nan"), True):
        with pytest.raises(ValueError, match="decision_threshold must be 'auto', None or a number"):
            TextClassifier(decision_threshold=bad).fit(texts, labels)
    # Three classes: the most probable decides.
    three = TextClassifier().fit(texts + ["story plot"] * 30, labels + ["other"] * 30)
    assert three.decision_threshold_ is None


def test_the_threshold_is_saved_kept_by_learning_and_dropped_with_a_third_class(tmp_path):
    texts, labels = reviews(300, 60, seed=0)
    classifier = TextClassifier().fit(texts, labels)
    path = tmp_path / "m.model"
    save_model(classifier, path)
    loaded = load_model(path)
    assert loaded.decision_threshold_ == classifier.decision_threshold_
    np.testing.assert_array_equal(loaded.predict(texts), classifier.predict(texts))
    loaded.partial_fit(["great film"], ["pos"])
    assert loaded.decision_threshold_ == classifier.decision_threshold_
    loaded.partial_fit(["a story"], ["other"])
    assert loaded.decision_threshold_ is None
    assert TextClassifier().partial_fit(texts, labels).decision_threshold_ is None


def test_a_model_file_without_a_threshold_decides_by_the_most_probable_class(tmp_path):
    """Files older than the threshold hold none (and no setting): they load and decide as they
    did; a file with a bad one is refused."""
    import zipfile
    texts, labels = reviews(300, 60, seed=0)
    classifier = TextClassifier().fit(texts, labels)
    path = tmp_path / "m.model"
    save_model(classifier, path)

    def rewrite(edit, to):
        with zipfile.ZipFile(path) as old, zipfile.ZipFile(to, "w") as new:
            for item in old.infolist():
                data = old.read(item)
                if item.filename == "meta.json":
                    meta = json.loads(data)
                    edit(meta)
                    data = json.dumps(meta).encode()
                new.writestr(item, data)
        return to

    def older(meta):
        del meta["decision_threshold"], meta["params"]["decision_threshold"]

    old = load_model(rewrite(older, tmp_path / "old.model"))
    assert old.decision_threshold_ is None and old.decision_threshold == "auto"
    log_proba = old.predict_log_proba(texts)
    np.testing.assert_array_equal(old.predict(texts), old.classes_[log_proba.argmax(axis=1)])
    for bad in ("high", float("nan"), [1]):
        with pytest.raises(ModelFileError, match="decision threshold must be a number"):
            load_model(rewrite(lambda meta: meta.update(decision_threshold=bad),
                               tmp_path / "bad.model"))
    with pytest.raises(ModelFileError, match="decision_threshold must be 'auto', None or a number"):
        load_model(rewrite(lambda meta: meta["params"].update(decision_threshold="high"),
                           tmp_path / "bad.model"))


def test_decide_labels_by_the_threshold_without_cutoffs():
    row = [np.log(0.6), np.log(0.4)]   # "neg" more probable, log-odds of "pos" −0.405
    assert decide(["neg", "pos"], row, "-", None)["label"] == "neg"
    chosen = decide(["neg", "pos"], row, "-", None, threshold=-0.5)
    assert chosen["label"] == chosen["verdict"] == "pos"
    assert chosen["probability"] == pytest.approx(0.4)
    assert chosen["log_odds"] == pytest.approx(np.log(0.4 / 0.6))
    assert decide(["neg", "pos"], row, "-", None, threshold=-0.3)["label"] == "neg"
    # Mail: the cutoffs decide, and an unsure message gets the most probable class.
    unsure = decide(["ham", "spam"], row, "-", ("spam", 2.0, -1.0), threshold=-0.5)
    assert unsure["status"] == "unsure" and unsure["label"] == "ham"
    assert unsure["probability"] == pytest.approx(0.6)


def test_a_cutoff_that_calls_the_less_probable_class_gives_that_class_s_numbers():
    row = [np.log(0.45), np.log(0.55)]   # spam more probable: its log-odds +0.2
    ham = decide(["ham", "spam"], row, "-", ("spam", 1.7, 0.5))
    assert (ham["status"], ham["label"], ham["verdict"]) == ("ham", "ham", "ham")
    assert ham["probability"] == pytest.approx(0.45)
    assert ham["log_odds"] == pytest.approx(np.log(0.45 / 0.55))   # below 0, as the text says
    assert ham["spam_probability"] == pytest.approx(0.55)
    assert ham["spam_log_odds"] == pytest.approx(np.log(0.55 / 0.45))
    spam = decide(["ham", "spam"], row[::-1], "-", ("spam", -0.5, -2.0))
    assert (spam["status"], spam["label"]) == ("spam", "spam")
    assert spam["probability"] == pytest.approx(0.45) and spam["log_odds"] < 0
    # Printed, a mail decision gives P(spam) and the spam log-odds whatever its verdict.
    assert line(ham).split() == ["-", "ham", "0.5500", "spam-log-odds", "+0.20"]
    assert line(ham, "tsv").split("\t") == ["-", "ham", "0.550000", "0.2007"]


def test_train_learns_it_and_classify_and_info_use_it(tmp_path):
    texts, labels = reviews(300, 60, seed=0)
    for i, (text, label) in enumerate(zip(texts, labels)):
        (tmp_path / label).mkdir(exist_ok=True)
        (tmp_path / label / f"{i}.txt").write_text(text)
    model = tmp_path / "m.model"
    runner = CliRunner()
    result = runner.invoke(main, ["train", str(tmp_path / "pos"), str(tmp_path / "neg"),
                                  "-m", str(model)])
    assert result.exit_code == 0, result.output
    classifier = load_model(model)
    threshold = classifier.decision_threshold_
    assert threshold is not None and threshold < 0
    said = f"threshold   pos where its log-odds over neg are >= {threshold:+.3f}, else neg"
    assert said in result.output.splitlines()
    assert said in runner.invoke(main, ["info", "-m", str(model)]).output.splitlines()
    test, _ = reviews(100, 100, seed=2)
    files = []
    for i, text in enumerate(test):
        files.append(tmp_path / f"new{i}.txt")
        files[-1].write_text(text)
    result = runner.invoke(main, ["classify", "-m", str(model), "--format", "json",
                                  *map(str, files)])
    assert result.exit_code == 0, result.output
    said = [json.loads(line)["label"] for line in result.output.splitlines()]
    assert said == classifier.predict(test).tolist()
    log_proba = classifier.predict_log_proba(test)
    flipped = (log_proba[:, 1] - log_proba[:, 0] >= threshold) & (log_proba[:, 1] < log_proba[:, 0])
    assert flipped.any()   # some the threshold calls "pos" where "neg" is more probable


def test_explain_explains_the_decision_the_threshold_makes(tmp_path):
    """Where the threshold calls a document the less probable class, `explain` (library and
    command) and `classify --explain` explain that label, against the other, log-odds below 0."""
    texts, labels = reviews(300, 60, seed=0)
    classifier = TextClassifier().fit(texts, labels)
    threshold = classifier.decision_threshold_
    test, _ = reviews(100, 100, seed=2)
    log_proba = classifier.predict_log_proba(test)
    odds = log_proba[:, 1] - log_proba[:, 0]
    flipped = test[int(np.flatnonzero((odds >= threshold) & (odds < 0))[0])]
    why = classifier.explain(flipped)
    assert (why.label, why.against) == ("pos", "neg") == (classifier.predict([flipped])[0], "neg")
    assert why.log_odds == pytest.approx(odds[test.index(flipped)], abs=1e-9) and why.log_odds < 0
    total = why.prior_log_odds + why.baseline + sum(c.log_odds for c in why.terms) + why.rest
    assert total == pytest.approx(why.log_odds, abs=1e-9)
    assert classifier.explain(flipped, label="neg").log_odds == pytest.approx(-why.log_odds)
    with pytest.raises(ValueError, match="'other' is not one of the model's classes"):
        classifier.explain(flipped, label="other")
    model, document = tmp_path / "m.model", tmp_path / "doc.txt"
    save_model(classifier, model)
    document.write_text(flipped)
    runner = CliRunner()
    result = runner.invoke(main, ["explain", "-m", str(model), str(document)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith(f"{document}: pos  probability ")
    assert result.output.splitlines()[0].endswith(
        f"over neg  (pos where its log-odds over neg are >= {threshold:+.3f})")
    as_json = json.loads(runner.invoke(main, ["explain", "-m", str(model), "--format", "json",
                                              str(document)]).output)
    assert as_json["label"] == as_json["explanation"]["label"] == "pos"
    assert as_json["explanation"]["log_odds"] == pytest.approx(why.log_odds, abs=1e-9)
    said = json.loads(runner.invoke(main, ["classify", "-m", str(model), "--explain",
                                           "--format", "json", str(document)]).output)
    assert said["label"] == said["explanation"]["label"] == "pos"
    assert said["explanation"]["against"] == "neg"


@pytest.mark.parametrize("training", ["full", "on-error"])
def test_out_of_fold_scores_are_what_a_model_of_the_other_folds_gives_a_new_document(training):
    """The threshold's out-of-fold scores: each held-out document scored as the model of the
    other folds, trained by itself, scores it (its unknown words left out before its row is
    made unit length), not on every training term as the cutoffs' folds score it."""
    from textnb.folds import stratified_folds
    texts, labels = reviews(150, 60, seed=3)
    texts = [f"{text} rare{i}" for i, text in enumerate(texts)]  # a word no other one has
    y = np.array(labels)
    settings = dict(stop_words="none", ngram_range=(1, 1), decision_threshold=None,
                    training=training)
    counts = TextClassifier(**settings, norm=None).fit(texts, labels).transform(texts)
    classifier = TextClassifier(**settings)
    fit = None if training == "full" else classifier.on_error_model
    on_every_term, as_new = drivers.out_of_fold(classifier, classifier._weigh(counts), counts, y,
                                                    stratified_folds(y, 5), fit)
    expected = np.empty(y.size)
    for fold in range(5):
        held = stratified_folds(y, 5) == fold
        model = TextClassifier(**settings).fit([t for t, h in zip(texts, held) if not h], y[~held])
        log_proba = model.predict_log_proba([t for t, h in zip(texts, held) if h])
        expected[held] = log_proba[:, 1] - log_proba[:, 0]
    # Training on error walks the fold's rows over every training term (α|V| of them all),
    # as the cutoffs' folds do, so its documents' weights differ a little from a walk of the
    # fold's own terms.
    np.testing.assert_allclose(as_new, expected, rtol=0, atol=1e-9 if training == "full" else 0.05)
    assert np.abs(on_every_term - expected).max() > 0.1


def test_evaluate_reports_the_decisions_the_threshold_makes(tmp_path):
    from textnb.evaluation.metrics import summary
    log_proba = np.log([[0.6, 0.4], [0.9, 0.1], [0.3, 0.7], [0.55, 0.45]])
    y = ["pos", "neg", "pos", "pos"]
    assert summary(y, log_proba, ["neg", "pos"])["accuracy"] == 0.5
    assert summary(y, log_proba, ["neg", "pos"], threshold=-0.5)["accuracy"] == 1.0
    per_document = summary(y, log_proba, ["neg", "pos"], threshold=[-0.5, np.nan, np.nan, 0.0])
    assert per_document["accuracy"] == 0.75 and per_document["confusion"] == [[1, 0], [1, 2]]
    texts, labels = reviews(300, 60, seed=0)
    test, truth = reviews(100, 100, seed=4)
    for name, group in (("train", zip(texts, labels)), ("test", zip(test, truth))):
        for i, (text, label) in enumerate(group):
            (tmp_path / name / label).mkdir(parents=True, exist_ok=True)
            (tmp_path / name / label / f"{i}.txt").write_text(text)
    model = tmp_path / "m.model"
    runner = CliRunner()
    assert runner.invoke(main, ["train", "-q", "-m", str(model), str(tmp_path / "train" / "pos"),
                                str(tmp_path / "train" / "neg")]).exit_code == 0
    result = runner.invoke(main, ["evaluate", "-m", str(model), "--format", "json",
                                  str(tmp_path / "test" / "pos"), str(tmp_path / "test" / "neg")])
    assert result.exit_code == 0, result.output
    reported = json.loads(result.output)["accuracy"]
    classifier = load_model(model)
    assert reported == pytest.approx(float(np.mean(classifier.predict(test) == np.array(truth))))
    log_proba = classifier.predict_log_proba(test)
    assert reported != pytest.approx(float(np.mean(
        classifier.classes_[log_proba.argmax(axis=1)] == np.array(truth))))


def test_labels_that_sort_otherwise_as_names_get_the_threshold_of_their_own_order():
    """Numbers 2 and 10 sort 2 < 10, their names "10" < "2": the threshold is on the log-odds
    of the model's second class, 10, whichever way the folds are cut."""
    texts, labels = reviews(300, 60, seed=0)
    named = TextClassifier().fit(texts, labels)
    numbered = TextClassifier().fit(texts, [10 if label == "pos" else 2 for label in labels])
    assert numbered.classes_.tolist() == [2, 10] and named.classes_.tolist() == ["neg", "pos"]
    assert numbered.decision_threshold_ == pytest.approx(named.decision_threshold_)
    test, _ = reviews(200, 200, seed=5)
    np.testing.assert_array_equal(numbered.predict(test) == 10, named.predict(test) == "pos")


def test_a_large_two_class_corpus_trains_as_it_is_read_and_learns_its_threshold_on_a_sample(
        tmp_path, monkeypatch):
    """Beyond THRESHOLD_MAX_BYTES of input, textnb train reads and learns in chunks
    (partial_fit), in bounded memory, and learns the threshold on a sample of the documents,
    read again (TextClassifier.learn_thresholds): on all of them (a sample as large), the
    threshold fit learns holding them all; on fewer, the one their scores give."""
    import textnb.training
    import textnb.training
    texts, labels = reviews(300, 60, seed=0)
    for i, (text, label) in enumerate(zip(texts, labels)):
        (tmp_path / label).mkdir(exist_ok=True)
        (tmp_path / label / f"{i:03d}.txt").write_text(text)
    size = sum(len(text.encode()) for text in texts)
    held, model = tmp_path / "held.model", tmp_path / "m.model"
    monkeypatch.setattr(textnb.training, "THRESHOLD_MAX_BYTES", size)   # all of it: held
    train = ["train", "-q", str(tmp_path / "pos"), str(tmp_path / "neg"), "-m"]
    assert CliRunner().invoke(main, train + [str(held)]).exit_code == 0
    monkeypatch.setattr(textnb.training, "THRESHOLD_MAX_BYTES", size - 1)

    def no_fit(*args, **kwargs):
        raise AssertionError("fit called: textnb train did not stream")

    monkeypatch.setattr(TextClassifier, "fit", no_fit)
    result = CliRunner().invoke(main, train + [str(model)])
    assert result.exit_code == 0, result.output
    streamed, whole = load_model(model), load_model(held)
    assert streamed.decision_threshold_ == pytest.approx(whole.decision_threshold_)
    assert streamed.decision_threshold == "auto" and streamed.cutoffs_ is None
    np.testing.assert_allclose(streamed.model_.feature_count_, whole.model_.feature_count_)
    monkeypatch.setattr(textnb.training, "SAMPLE", 180)   # 150 pos, 30 neg: their shares (the
    # least mail's cutoffs take, 1,999 of a class, does not apply)
    sizes, learn = [], TextClassifier.learn_thresholds

    def learn_counted(self, texts, y):
        texts = list(texts)
        sizes.append(len(texts))
        return learn(self, texts, y)

    monkeypatch.setattr(TextClassifier, "learn_thresholds", learn_counted)
    assert CliRunner().invoke(main, train + [str(model)]).exit_code == 0
    assert sizes == [180]
    sampled = load_model(model).decision_threshold_
    # Each of the 180 is scored by the model of all 360 less itself, as when all are held:
    # the threshold the sample's scores give, here the one all of them give.
    assert sampled == pytest.approx(whole.decision_threshold_)
    result = CliRunner().invoke(main, train + [str(model), "--decision-threshold", "none"])
    assert result.exit_code == 0 and load_model(model).decision_threshold_ is None
