"""raw texts → TextClassifier: fit, partial_fit, merge, unlearn, predictions, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from textnb import load_model, save_model
from textbook import TextClassifier
from textnb.nb.discrete import BernoulliNB, ComplementNB, MultinomialNB

# Why scikit-learn tests skip: it is no dependency of textnb, only a yardstick.
NO_SKLEARN = "scikit-learn is optional (the bench extra): no yardstick to compare with"

MODEL_NAMES = ["multinomial", "bernoulli", "complement"]

TEXTS = ["cheap pills now", "cheap money now!!!", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting",
         "the football results", "football tonight, results at noon"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham", "sport", "sport"]


def _same_model(a: TextClassifier, b: TextClassifier) -> None:
    """Same terms, classes, counts and log parameters, exactly."""
    assert a.vocabulary_.terms_ == b.vocabulary_.terms_
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_array_equal(a.model_.class_count_, b.model_.class_count_)
    np.testing.assert_array_equal(a.model_.feature_count_, b.model_.feature_count_)
    np.testing.assert_array_equal(a.model_.feature_log_prob_, b.model_.feature_log_prob_)
    np.testing.assert_array_equal(a.model_.class_log_prior_, b.model_.class_log_prior_)


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_fit_predict_and_probability_identities(model):
    clf = TextClassifier(model=model, stop_words="english").fit(TEXTS, LABELS)
    assert isinstance(clf.model_, {"multinomial": MultinomialNB, "bernoulli": BernoulliNB,
                                   "complement": ComplementNB}[model])
    assert clf.classes_.tolist() == ["ham", "spam", "sport"]
    assert "the" not in clf.vocabulary_.index_ and "cheap" in clf.vocabulary_.index_
    new = ["cheap pills", "meeting notes", "football results", "", "zzz unknown"]
    assert clf.predict(new[:3]).tolist() == ["spam", "ham", "sport"]
    proba, log_proba = clf.predict_proba(new), clf.predict_log_proba(new)
    np.testing.assert_array_equal(np.exp(log_proba), proba)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    # Documents without known terms get the same scores: the prior (and absent words).
    np.testing.assert_array_equal(proba[3], proba[4])


def test_texts_bytes_and_documents_are_accepted():
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)

    class Doc:                                         # what textnb.documents.message provides
        text = "cheap pills"
        fields = [("subject", "zzz")]

    jll = clf.predict_joint_log_proba(["cheap pills", b"cheap pills", Doc()])
    np.testing.assert_array_equal(jll[0], jll[1])
    np.testing.assert_array_equal(jll[0], jll[2])     # "zzz", "subject:zzz" are not known terms
    with pytest.raises(ValueError, match="a text must be str, bytes or Document, not int"):
        clf.predict([42])


@pytest.mark.parametrize("texts, labels, message", [
    # None ended the look-ahead's reading: dropped, it read "got 1 texts but 2 labels"
    ([None, "cheap pills"], ["ham", "spam"], "a text must be str, bytes or Document, not NoneType"),
    (["a b", "c d", None, "e f"], ["x", "y", "x", "y"], "not NoneType"),
    # a TypeError of sorting None with str, or of set() on lists, further in
    (["aa bb", "cc dd"], [None, "x"], "y must hold one class label per text, not None"),
    (["aa bb", "cc dd"], [["x"], ["y", "z"]], "MultiLabelClassifier"),
])
def test_a_text_or_label_of_the_wrong_kind_is_named(texts, labels, message):
    with pytest.raises(ValueError, match=message):
        TextClassifier(stop_words="none").fit(texts, labels)
    with pytest.raises(ValueError, match=message):
        TextClassifier(stop_words="none").fit(iter(texts), labels)


def test_bytes_are_read_as_file_contents_mail_parsed():
    from textnb.documents.message import read_bytes
    mail = (b"From: Jo <jo@example.com>\nSubject: =?utf-8?q?cheap_pills?=\n"
            b"Content-Type: text/plain; charset=latin-1\n\ncheap K\xf6ln pills\n")
    clf = TextClassifier(stop_words="none").fit([mail, b"meeting at noon"], ["spam", "ham"])
    assert {"subject:cheap", "from:jo@example.com", "köln", "content-type:text"} \
        <= set(clf.vocabulary_.terms_)
    assert clf.tokenize([mail]) == clf.tokenize([read_bytes(mail)])
    np.testing.assert_array_equal(clf.predict_proba([mail, b"meeting at noon"]),
                                  clf.predict_proba([read_bytes(mail), "meeting at noon"]))


def test_hostile_bytes_train_and_predict():
    rng = np.random.default_rng(3)
    binary = bytes(rng.integers(0, 256, 4000, dtype=np.uint8)) + b"\x00" * 50
    latin1 = "Gr\xfc\xdfe aus K\xf6ln, caf\xe9 \x80 5".encode("latin-1")
    clf = TextClassifier(stop_words="none").fit([binary, latin1, b"", "plain text"],
                                                 ["spam", "ham", "ham", "spam"])
    assert "köln" in clf.vocabulary_.index_ and "café" in clf.vocabulary_.index_
    proba = clf.predict_proba([binary, latin1, b"\xff\xfe\x00"])
    assert not np.isnan(proba).any()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


def test_empty_documents_in_training_and_prediction():
    clf = TextClassifier(stop_words="none", class_prior=[0.3, 0.7]).fit(
        ["", "cheap pills", "   ", "meeting notes", "!?.,"], ["ham", "spam", "spam", "ham", "ham"])
    np.testing.assert_array_equal(clf.model_.class_count_, [3, 2])
    # An empty document under the multinomial model: exactly the class prior.
    np.testing.assert_allclose(clf.predict_proba(["", "nothing known"]), [[0.3, 0.7]] * 2,
                               rtol=1e-15)


def test_long_document_through_the_classifier(eight_emails):
    """The eight e-mails' θ on a 100 000-token text: finite scores and the right class."""
    texts, labels = eight_emails
    clf = TextClassifier(stop_words={"d", "e"}, min_token_length=1).fit(texts, labels)
    text = "a " * 56932 + "b d e " * 43068
    jll = clf.predict_joint_log_proba([text])
    assert np.all(np.isfinite(jll)) and jll.max() < -6e4
    log_odds = 43068 * np.log(2.5) - 56932 * np.log(2)
    proba = clf.predict_proba([text])[0]
    assert proba[1] == pytest.approx(1 / (1 + np.exp(-log_odds)), rel=1e-8)
    assert clf.predict([text]).tolist() == ["spam"]


# -- learning in pieces, merging, unlearning --------------------------------------------------

@pytest.mark.parametrize("model", MODEL_NAMES)
def test_partial_fit_in_pieces_equals_fit(model):
    whole = TextClassifier(model=model, stop_words="none").fit(TEXTS, LABELS)
    pieces = TextClassifier(model=model, stop_words="none")
    # The first piece has one class and few terms; "sport" and new terms arrive later.
    for start, stop in [(0, 2), (2, 3), (3, 6), (6, 8)]:
        pieces.partial_fit(TEXTS[start:stop], LABELS[start:stop])
    _same_model(pieces, whole)
    np.testing.assert_array_equal(pieces.predict_proba(TEXTS), whole.predict_proba(TEXTS))


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_partial_fit_takes_every_class_at_its_first_call_as_scikit_learn_s_does(model):
    """classes= names classes not seen yet: predict_proba has their columns from the first
    call, with no documents counted for them, and the pieces still add up to fit's model."""
    whole = TextClassifier(model=model, stop_words="none").fit(TEXTS, LABELS)
    pieces = TextClassifier(model=model, stop_words="none")
    pieces.partial_fit(TEXTS[:3], LABELS[:3], classes=["sport", "ham", "spam"])
    assert pieces.classes_.tolist() == ["ham", "spam", "sport"]
    assert pieces.model_.class_count_.tolist() == [0, 3, 0]
    assert pieces.predict_proba(["cheap pills"]).shape == (1, 3)
    # a class of no documents: α/(α|V|) a term (multinomial), α/2α present (Bernoulli)
    log_prob = pieces.model_.feature_log_prob_
    expected = {"multinomial": -np.log(log_prob.shape[1]), "bernoulli": np.log(0.5)}
    if model in expected:
        np.testing.assert_allclose(log_prob[0], expected[model])
    pieces.partial_fit(TEXTS[3:], LABELS[3:], classes=["ham", "spam", "sport"])
    _same_model(pieces, whole)
    with pytest.raises(ValueError, match="label 'news' of y is not among the classes given"):
        pieces.partial_fit(["the evening news"], ["news"], classes=["ham", "spam", "sport"])
    _same_model(pieces, whole)


def test_partial_fit_of_an_iterator_counts_part_by_part_as_fit_does(monkeypatch):
    """partial_fit reads an iterator once, its labels filled as it is read, and adds each part
    (here 3 documents) before reading the next: fit's counts, bit for bit, fractional ones
    (unit-length documents) too."""
    import textnb.text.features
    monkeypatch.setattr(textnb.text.features, "_PART_DOCUMENTS", 3)
    settings = {"model": "complement", "alpha": 0.03, "norm": "l2", "stop_words": "none"}
    whole = TextClassifier(**settings).fit(TEXTS, LABELS)
    labels: list[str] = []

    def texts():
        for text, label in zip(TEXTS, LABELS):
            labels.append(label)
            yield text

    streamed = TextClassifier(**settings).partial_fit(texts(), labels)
    _same_model(streamed, whole)
    np.testing.assert_array_equal(streamed.digests_, whole.digests_)
    np.testing.assert_array_equal(streamed.predict_log_proba(TEXTS), whole.predict_log_proba(TEXTS))


def test_partial_fit_that_fails_leaves_the_classifier_as_it_was():
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    before = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    with pytest.raises(ValueError, match="got 2 texts but 1 labels"):
        clf.partial_fit(iter(["brand new words", "more new words"]), ["spam"])
    _same_model(clf, before)
    assert clf.vocabulary_.index_ == before.vocabulary_.index_


def test_partial_fit_in_pieces_equals_fit_with_weights_and_ngrams():
    settings = {"stop_words": "none", "tf": "log", "norm": "l2", "ngram_range": (1, 2)}
    whole = TextClassifier(**settings).fit(TEXTS, LABELS)
    pieces = TextClassifier(**settings)
    for start, stop in [(0, 4), (4, 8)]:
        pieces.partial_fit(TEXTS[start:stop], LABELS[start:stop])
    assert pieces.vocabulary_.terms_ == whole.vocabulary_.terms_
    assert "cheap pills" in whole.vocabulary_.index_
    np.testing.assert_allclose(pieces.model_.feature_count_, whole.model_.feature_count_,
                               rtol=1e-14)
    np.testing.assert_allclose(pieces.predict_proba(TEXTS), whole.predict_proba(TEXTS), rtol=1e-12)


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_merge_with_a_different_vocabulary_equals_fit_on_the_union(model):
    whole = TextClassifier(model=model, stop_words="none").fit(TEXTS, LABELS)
    # The two halves share some terms ("noon", "cheap") and not others; each has two classes.
    first = TextClassifier(model=model, stop_words="none").fit(
        [TEXTS[i] for i in (0, 3, 4)], [LABELS[i] for i in (0, 3, 4)])
    second = TextClassifier(model=model, stop_words="none").fit(
        [TEXTS[i] for i in (1, 2, 5, 6, 7)], [LABELS[i] for i in (1, 2, 5, 6, 7)])
    assert first.vocabulary_.terms_ != second.vocabulary_.terms_
    first.merge(second)
    _same_model(first, whole)
    np.testing.assert_array_equal(first.predict_proba(TEXTS), whole.predict_proba(TEXTS))
    # The merged classifier knows every document: each can be unlearned.
    first.unlearn([TEXTS[6]], ["sport"])
    np.testing.assert_array_equal(first.model_.class_count_, [3, 3, 1])


def test_merge_refuses_different_settings():
    a = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    b = TextClassifier(stop_words="none", alpha=0.5).fit(TEXTS, LABELS)
    with pytest.raises(ValueError, match=r"cannot merge classifiers with different settings: \['alpha'\]"):
        a.merge(b)
    c = TextClassifier(stop_words="none", n_jobs=2).fit(TEXTS, LABELS)
    a.merge(c)                                        # n_jobs is not a setting of the model
    np.testing.assert_array_equal(a.model_.class_count_, [6, 6, 4])


def test_merge_with_a_loaded_classifier(tmp_path):
    settings = {"stop_words": {"the", "at"}, "ngram_range": [1, 2], "class_prior": (0.2, 0.5, 0.3)}
    part = [0, 3, 6, 7]
    a = TextClassifier(**settings).fit([TEXTS[i] for i in part], [LABELS[i] for i in part])
    b = TextClassifier(**settings).fit(TEXTS, LABELS)
    save_model(b, tmp_path / "b.model")
    a.merge(load_model(tmp_path / "b.model"))
    whole = TextClassifier(**settings).fit(TEXTS + [TEXTS[i] for i in part],
                                           LABELS + [LABELS[i] for i in part])
    _same_model(a, whole)


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_unlearn_restores_the_previous_model_exactly(model):
    before = TextClassifier(model=model, stop_words="none").fit(TEXTS, LABELS)
    clf = TextClassifier(model=model, stop_words="none").fit(TEXTS, LABELS)
    extra = ["cheap cheap watches", "meeting at noon", "brand new words here"]
    clf.partial_fit(extra, ["spam", "ham", "sport"])
    clf.unlearn(extra, ["spam", "ham", "sport"])
    _same_model(clf, before)
    np.testing.assert_array_equal(clf.predict_proba(TEXTS + extra), before.predict_proba(TEXTS + extra))


def test_unlearn_part_of_the_training_set_equals_fit_on_the_rest():
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    clf.unlearn([TEXTS[0], TEXTS[7]], [LABELS[0], LABELS[7]])
    rest = TextClassifier(stop_words="none").fit(TEXTS[1:7], LABELS[1:7])
    _same_model(clf, rest)


def test_unlearning_a_never_learned_document_raises_and_changes_nothing():
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    before = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    with pytest.raises(ValueError, match="cannot unlearn a document as 'spam': it was never learned as 'spam'"):
        clf.unlearn(["cheap pills now", "never seen before"], ["spam", "spam"])
    with pytest.raises(ValueError, match="never learned as 'ham'"):
        clf.unlearn(["cheap pills now"], ["ham"])        # learned, but as spam
    _same_model(clf, before)
    np.testing.assert_array_equal(clf.digests_, before.digests_)
    # A document learned once can be unlearned once.
    clf.unlearn(["cheap pills now"], ["spam"])
    with pytest.raises(ValueError, match="never learned as 'spam'"):
        clf.unlearn(["cheap pills now"], ["spam"])


# -- settings and bad input ---------------------------------------------------------------------

def test_stop_words_auto_are_the_english_ones_for_mail_and_none_for_short_texts():
    texts = ["the cheap pills", "not very good at noon"]
    mail = TextClassifier(spam_class="spam").fit(texts, ["spam", "ham"])
    short = TextClassifier(spam_class="spam").fit(texts, ["pos", "neg"])
    padding = " ".join(["filler"] * 100)  # 699 characters more: not short
    other = TextClassifier(spam_class="spam").fit([f"{t} {padding}" for t in texts],
                                                 ["pos", "neg"])
    assert "not" in mail.stop_words_ and {"cheap", "noon", "pills"} <= set(mail.vocabulary_.terms_)
    assert not {"the", "not", "very", "at"} & set(mail.vocabulary_.terms_)
    assert short.stop_words_ == [] and {"the", "not", "very", "at"} <= set(short.vocabulary_.terms_)
    assert "the" in other.stop_words_ and not {"not", "very"} & set(other.stop_words_)
    assert {"not", "very"} <= set(other.vocabulary_.terms_)
    assert not {"the", "at"} & set(other.vocabulary_.terms_)
    auto = TextClassifier(spam_class="spam")
    assert auto.default_stop_words(["spam", "ham"]) == "english"
    assert auto.default_stop_words(["spam", "ham"], texts) == "english"
    assert auto.default_stop_words(["pos", "neg"], texts) == "none"
    assert auto.default_stop_words(["pos", "neg"], [padding]) == "english-without-negations"
    assert auto.default_stop_words(["pos", "neg"]) == "english-without-negations"  # none read
    assert auto.default_stop_words([]) == "english"  # no label known yet: the spam class says
    assert TextClassifier().default_stop_words([]) == "english-without-negations"
    assert TextClassifier().default_stop_words(["spam", "ham"]) == "english-without-negations"
    assert TextClassifier(stop_words="english").default_stop_words(["a", "b"]) == "english"
    assert TextClassifier(stop_words={"x"}).default_stop_words(["spam"]) == {"x"}


def test_get_params_and_set_params():
    clf = TextClassifier(model="bernoulli", alpha=0.5)
    params = clf.get_params()
    assert params["model"] == "bernoulli" and params["alpha"] == 0.5
    assert params["stop_words"] == "auto" and params["ngram_range"] is None
    assert len(params) == 28 and params["keep_suspects"] is False  # hash_bits: test_hashing.py
    assert params["decision_threshold"] == "auto"
    clf.set_params(alpha=2.0, model="complement")
    assert clf.get_params()["alpha"] == 2.0 and clf.model == "complement"
    with pytest.raises(ValueError, match="invalid parameter 'beta'"):
        clf.set_params(beta=1)
    sklearn_base = pytest.importorskip("sklearn.base", reason=NO_SKLEARN)
    copy = sklearn_base.clone(clf)
    assert copy.get_params() == clf.get_params() and copy is not clf


def test_bad_training_sets():
    with pytest.raises(ValueError, match="cannot fit on an empty training set"):
        TextClassifier().fit([], [])
    with pytest.raises(ValueError, match="cannot fit on an empty training set"):
        TextClassifier().partial_fit([], [])
    with pytest.raises(ValueError, match=r"need at least two classes to train, got only \['spam'\]"):
        TextClassifier().fit(["a b", "c d"], ["spam", "spam"])
    with pytest.raises(ValueError, match="got 3 texts but 2 labels"):
        TextClassifier().fit(["a", "b", "c"], ["x", "y"])
    with pytest.raises(ValueError, match="empty vocabulary"):
        TextClassifier(stop_words="english").fit(["the a an", "of the"], ["x", "y"])
    with pytest.raises(ValueError, match="not fitted yet"):
        TextClassifier().predict(["text"])


@pytest.mark.parametrize("settings, message", [
    ({"model": "svm"}, "model must be one of multinomial, bernoulli, complement, not 'svm'"),
    ({"tf": "presence"}, "tf must be 'raw', 'log' or 'binary', not 'presence'"),
    ({"norm": "l1"}, "norm must be None or 'l2', not 'l1'"),
    ({"alpha": 0}, "alpha must be a finite number > 0"),
    ({"alpha": -0.5}, "alpha must be a finite number > 0"),
    ({"stemmer": "lovins"}, "stemmer must be None, 'porter' or 'snowball'"),
    ({"min_df": 0}, "min_df must be a whole number of documents"),
])
def test_bad_settings(settings, message):
    with pytest.raises(ValueError, match=message):
        TextClassifier(stop_words="none", **settings).fit(TEXTS, LABELS)


def test_a_single_string_is_refused_not_split_into_characters():
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    for call in (clf.predict, clf.predict_proba, clf.transform, clf.tokenize):
        with pytest.raises(ValueError, match="expected a list of texts, got a single str"):
            call("cheap pills")
    with pytest.raises(ValueError, match="got a single bytes; wrap it in a list"):
        clf.partial_fit(b"cheap pills", ["spam"])
    with pytest.raises(ValueError, match="got a single str"):
        TextClassifier().fit("ab", ["x", "y"])
    for call in (clf.predict, clf.predict_proba, clf.transform):  # was a TypeError, deep in
        with pytest.raises(ValueError, match="expected a list of texts, got None"):
            call(None)


@pytest.mark.parametrize("settings", [{}, {"min_df": 2, "max_features": 5},
                                      {"model": "bernoulli"}])
def test_counting_in_worker_processes_gives_the_same_model(monkeypatch, settings):
    import textnb.text.features
    monkeypatch.setattr(textnb.text.features, "_PARALLEL_MIN_DOCUMENTS", 1)
    monkeypatch.setattr(textnb.text.features, "_PART_DOCUMENTS", 3)
    # 8 parts of 3 documents each, every part with terms of its own and terms shared.
    texts = [f"{text} part{i // 3} doc{i}" for i, text in enumerate(TEXTS * 6)][:24]
    labels = (LABELS * 6)[:24]
    serial = TextClassifier(stop_words="none", **settings).fit(texts, labels)
    parallel = TextClassifier(stop_words="none", n_jobs=2, **settings).fit(texts, labels)
    assert parallel.vocabulary_.terms_ == serial.vocabulary_.terms_
    np.testing.assert_array_equal(parallel.model_.feature_count_, serial.model_.feature_count_)
    np.testing.assert_array_equal(parallel.digests_, serial.digests_)
    new = texts[::-1] + ["nothing known here", ""]
    for a, b in zip(parallel.transform(new), serial.transform(new)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(parallel.predict_proba(new), serial.predict_proba(new))
    # partial_fit and unlearn in parts too.
    parallel.partial_fit(new, ["spam"] * len(new))
    serial.partial_fit(new, ["spam"] * len(new))
    assert parallel.vocabulary_.terms_ == serial.vocabulary_.terms_
    np.testing.assert_array_equal(parallel.model_.feature_count_, serial.model_.feature_count_)
    parallel.unlearn(new, ["spam"] * len(new))
    serial.unlearn(new, ["spam"] * len(new))
    _same_model(parallel, serial)
    np.testing.assert_array_equal(parallel.digests_, serial.digests_)


def test_an_iterator_of_texts_is_counted_as_it_is_read(monkeypatch):
    import textnb.text.features
    monkeypatch.setattr(textnb.text.features, "_PARALLEL_MIN_DOCUMENTS", 3)
    monkeypatch.setattr(textnb.text.features, "_PART_DOCUMENTS", 3)
    texts = [f"{text} part{i // 3} doc{i}" for i, text in enumerate(TEXTS * 3)]
    labels = LABELS * 3
    read, read_when_counted = [], []

    def stream():  # a reader that learns each label as it reads the text (the CLI's)
        for text, label in zip(texts, labels):
            read.append(label)
            yield text

    count_part = textnb.text.features.counted_part

    def spy(tokenizer, part, digests):
        read_when_counted.append(len(read))
        return count_part(tokenizer, part, digests)

    monkeypatch.setattr(textnb.text.features, "counted_part", spy)
    streamed = TextClassifier(stop_words="none", n_jobs=1).fit(stream(), read)
    # Each part was counted once read, before the next was read: never all texts at once.
    assert read_when_counted == list(range(3, 25, 3))
    at_once = TextClassifier(stop_words="none", n_jobs=1).fit(texts, labels)
    _same_model(streamed, at_once)
    np.testing.assert_array_equal(streamed.digests_, at_once.digests_)
    np.testing.assert_array_equal(streamed.predict_proba(iter(texts[:5])),
                                  at_once.predict_proba(texts[:5]))
    assert streamed.predict(iter([])).shape == (0,)
    with pytest.raises(ValueError, match="got 24 texts but 23 labels"):
        TextClassifier(stop_words="none", n_jobs=1).fit(iter(texts), labels[:-1])


def test_parts_hold_a_bounded_number_of_bytes_and_large_texts_go_to_the_workers(monkeypatch):
    """A part ends at _PART_DOCUMENTS texts or at the text that brings it to _PART_BYTES, so
    that large documents (mail with attachments) are never held a thousand at a time; and as
    few texts as hold _PARALLEL_MIN_BYTES are worth the worker processes."""
    import textnb.text.features
    monkeypatch.setattr(textnb.text.features, "_PART_DOCUMENTS", 4)
    monkeypatch.setattr(textnb.text.features, "_PART_BYTES", 100)
    texts = [f"{text} doc{i}" + " long" * (i % 5) for i, text in enumerate(TEXTS * 3)]
    labels = LABELS * 3
    parts = list(textnb.text.features.in_parts(iter(texts), 4))
    assert [text for part in parts for text in part] == texts
    sizes = [[len(text) for text in part] for part in parts]
    assert all(len(part) <= 4 and sum(part[:-1]) < 100 for part in sizes)
    assert all(len(part) == 4 or sum(part) >= 100 for part in sizes[:-1])
    assert [len(part) for part in sizes] == [4, 3, 3, 4, 3, 3, 4]  # 124, 106, 126, 141, ...
    # 24 texts, 883 characters: below the documents' bound, above the bytes' one.
    monkeypatch.setattr(textnb.text.features, "_PARALLEL_MIN_DOCUMENTS", 1000)
    monkeypatch.setattr(textnb.text.features, "_PARALLEL_MIN_BYTES", 800)
    imap, jobs = textnb.text.features.imap, []

    def spy(function, parts, n_jobs):
        return imap(function, (jobs.append(part) or part for part in parts), n_jobs)

    monkeypatch.setattr(textnb.text.features, "imap", spy)
    parallel = TextClassifier(stop_words="none", n_jobs=2).fit(texts, labels)
    assert [len(part) for _, part, _ in jobs] == [len(part) for part in sizes]
    _same_model(parallel, TextClassifier(stop_words="none", n_jobs=1).fit(texts, labels))
    monkeypatch.setattr(textnb.text.features, "_PARALLEL_MIN_BYTES", 900)
    jobs.clear()
    TextClassifier(stop_words="none", n_jobs=2).fit(texts, labels)
    assert jobs == []


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", 10_000, -10_000])
def test_bad_n_jobs_is_refused_whatever_the_size(n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be None or a number of processes"):
        TextClassifier(n_jobs=n_jobs).fit(TEXTS, LABELS)


def test_modules_imported_meanwhile_load_or_fail_without_a_word(monkeypatch):
    """Training imports what its cross-validations will need in a thread while the workers
    count; a module that cannot be imported there reports nothing (the caller's own import
    will), and none is imported twice."""
    import sys
    import threading
    from textnb.text.features import import_meanwhile
    raised = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    thread = import_meanwhile("colorsys", "textnb_no_such_module")
    thread.join()
    assert "colorsys" in sys.modules and "textnb_no_such_module" not in sys.modules
    assert raised == []
    assert import_meanwhile("colorsys", "numpy") is None   # all there: no thread


def test_one_letter_words_do_not_outweigh_real_ones_on_spelled_out_spam():
    """Spam that spells its words out ("f r e e  m o n e y") and ham that quotes letters (a
    linguistics list): counted, the letters e, n, h, l are spam's most frequent words and call
    a ham that quotes them spam; dropped (min_token_length 2, the default), its own words decide."""
    phrases = ["the hollander offer", "free money now", "click here to win", "cheap pills online",
               "you are a winner", "meet hot singles", "lowest mortgage rates", "claim your prize today"]
    spam = [" ".join(" ".join(p) for p in (phrases[i % 8], phrases[(i * 3 + 1) % 8])) + " offer"
            for i in range(20)]
    words = ["phonology", "syllable", "morpheme", "dialect", "vowel", "consonant", "stress", "grammar"]
    ham = [f"in the {words[i % 8]} example the letter {'aeiou'[i % 5]} is quoted in "
           f"{words[(i + 3) % 8]} and {words[(i + 5) % 8]}" for i in range(20)]
    probes = ["the letters l e n h in hollander show the dialect stress of the vowel",
              "quote the letters e n and h from the syllable example in our grammar note"]
    labels = ["spam"] * 20 + ["ham"] * 20
    from textnb import TextClassifier as Library   # the library's defaults, not the textbook's
    letters = Library(spam_class="spam", min_token_length=1).fit(spam + ham, labels)
    assert letters.predict(probes).tolist() == ["spam", "spam"]
    default = Library(spam_class="spam").fit(spam + ham, labels)
    assert default.min_token_length == 2
    assert default.predict(probes).tolist() == ["ham", "ham"]
    assert (default.decision_function(probes) < -3).all()
