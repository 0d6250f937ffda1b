"""The hashed vocabulary (textnb.text.hashing): stable columns, fits equal to fits on the hashed
count matrix, pruning by column, model files, explanations and the --hash-bits option."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
import zlib

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.sparse import csr_matrix

from textnb import TextClassifier
from textnb.store.text_model import load_model, save_model
from textnb.cli.app import main
from textnb.errors import ModelFileError
from textnb.text.hashing import HashedVocabulary, hash_columns
from textnb.nb.discrete import MultinomialNB
from textnb.store.scorer import score

from conftest import EIGHT_EMAILS_LABELS, EIGHT_EMAILS_TEXTS

TEXTS = ["cheap pills now", "cheap money now now", "meeting at noon", "lunch at noon",
         "cheap lunch offer", "noon meeting moved", "pills offer money", "lunch moved"]
LABELS = ["spam", "spam", "ham", "ham", "spam", "ham", "spam", "ham"]


def test_columns_are_crc32_of_utf8_in_every_process():
    # 0xCBF43926 is CRC-32's published check value, of b"123456789"; its low 20 bits, 0x43926.
    assert hash_columns(["123456789"], 20).tolist() == [0x43926]
    assert hash_columns(["123456789", "é"], 8).tolist() == [0x26, zlib.crc32("é".encode()) & 0xFF]
    # Python's own str hash is salted per process; these columns must not be.
    code = "from textnb.text.hashing import hash_columns; print(hash_columns(['python', 'spam'], 22))"
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout
            for seed in ("1", "2")}
    assert seen == {str(hash_columns(["python", "spam"], 22)) + "\n"}


def _hashed_matrix(token_lists, bits):
    """The hashed count matrix built directly, with scipy: every term's count in its column."""
    rows = [i for i, tokens in enumerate(token_lists) for _ in tokens]
    columns = hash_columns([t for tokens in token_lists for t in tokens], bits)
    X = csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(len(token_lists), 2 ** bits))
    X.sum_duplicates()
    return X


@pytest.mark.parametrize("bits", [3, 16])
def test_fit_equals_a_fit_on_the_hashed_count_matrix(bits):
    clf = TextClassifier(model="multinomial", alpha=1.0, norm=None, fit_prior=True,
                         stop_words="none", hash_bits=bits).fit(TEXTS, LABELS)
    X = _hashed_matrix(clf.tokenize(TEXTS), bits)
    used = np.flatnonzero(X.getnnz(axis=0))
    if bits == 3:
        assert used.size < len({t for text in TEXTS for t in text.split()})  # collisions
    assert clf.vocabulary_.columns_.tolist() == used.tolist()
    reference = MultinomialNB(alpha=1.0).fit(X[:, used], LABELS)
    np.testing.assert_array_equal(clf.model_.feature_count_, reference.feature_count_)
    tests = ["cheap noon pills", "meeting offer", "unseen words only"]
    np.testing.assert_allclose(
        clf.predict_log_proba(tests),
        reference.predict_log_proba(_hashed_matrix(clf.tokenize(tests), bits)[:, used]))


def test_pruning_applies_to_columns():
    # With 1 bit there are two columns; a column's document frequency is that of the union of
    # its terms, so a column of rare terms survives min_df when the terms together are common.
    tokens = [["a"], ["b"], ["c"], ["d"], ["a", "b"]]
    columns = hash_columns(list("abcd"), 1).tolist()
    v = HashedVocabulary(hash_bits=1, min_df=3)
    X = v.fit_count(tokens)
    df = {c: sum(any(columns["abcd".index(t)] == c for t in doc) for doc in tokens)
          for c in (0, 1)}
    assert v.columns_.tolist() == [c for c in (0, 1) if df[c] >= 3]
    assert X.shape == (5, len(v.columns_))
    # max_features keeps the columns of the largest total counts, lower column on ties.
    docs = [["x"] * 5 + ["y"] * 3 + ["z"]]
    wide = HashedVocabulary(hash_bits=16).fit(docs)
    top = HashedVocabulary(hash_bits=16, max_features=2).fit(docs)
    assert len(wide) == 3
    assert top.columns_.tolist() == sorted(hash_columns(["x", "y"], 16).tolist())
    assert top.count([["z", "x", "x"]]).data.tolist() == [2.0]
    with pytest.raises(ValueError, match="empty vocabulary"):
        HashedVocabulary(hash_bits=8, min_df=10).fit(docs)


def test_classifier_with_pruning_and_predict():
    clf = TextClassifier(stop_words="none", hash_bits=18, min_df=2).fit(TEXTS, LABELS)
    twice = {t for t in {t for x in TEXTS for t in x.split()}
             if sum(t in x.split() for x in TEXTS) >= 2}
    assert sorted(clf.vocabulary_.columns_.tolist()) == sorted(set(hash_columns(sorted(twice), 18).tolist()))
    assert clf.predict(["cheap pills", "lunch at noon"]).tolist() == ["spam", "ham"]


def test_save_load_roundtrip_keeps_no_terms(tmp_path):
    clf = TextClassifier(stop_words="none", hash_bits=12, min_token_length=1).fit(
        EIGHT_EMAILS_TEXTS, EIGHT_EMAILS_LABELS)
    path = tmp_path / "hashed.model"
    save_model(clf, path)
    with zipfile.ZipFile(path) as z:
        meta = json.loads(z.read("meta.json"))
        assert meta["params"]["hash_bits"] == 12
        assert np.load(z.open("terms.npy"), allow_pickle=False).size == 0
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.vocabulary_.columns_, clf.vocabulary_.columns_)
    np.testing.assert_array_equal(loaded.model_.feature_count_, clf.model_.feature_count_)
    np.testing.assert_array_equal(loaded.predict_proba(EIGHT_EMAILS_TEXTS), clf.predict_proba(EIGHT_EMAILS_TEXTS))
    # The mail filter's numpy-free scorer declines a hashed model; load_model scores it.
    classes, row, _, _ = score(path, "b c b a")
    np.testing.assert_allclose(row, clf.predict_log_proba(["b c b a"])[0])
    assert classes == clf.classes_.tolist()


def test_load_refuses_bad_hash_bits_and_columns(tmp_path):
    clf = TextClassifier(stop_words="none", hash_bits=4).fit(TEXTS, LABELS)
    for bad in (0, 40, "8"):
        with pytest.raises(ValueError, match="hash_bits must be"):
            TextClassifier(hash_bits=bad).fit(TEXTS, LABELS)
    path = tmp_path / "m.model"
    save_model(clf, path)
    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    meta = json.loads(members["meta.json"])
    meta["params"]["hash_bits"] = 2  # the columns of 4 bits do not fit in 2
    members["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(ModelFileError, match="corrupt.*hashed columns"):
        load_model(path)


def test_partial_fit_and_unlearn_and_on_error():
    whole = TextClassifier(stop_words="none", hash_bits=10).fit(TEXTS, LABELS)
    pieces = TextClassifier(stop_words="none", hash_bits=10)
    pieces.partial_fit(TEXTS[:3], LABELS[:3]).partial_fit(TEXTS[3:], LABELS[3:])
    np.testing.assert_array_equal(pieces.vocabulary_.columns_, whole.vocabulary_.columns_)
    np.testing.assert_allclose(pieces.model_.feature_count_, whole.model_.feature_count_)
    pieces.unlearn(TEXTS[-1:], LABELS[-1:])
    fewer = TextClassifier(stop_words="none", hash_bits=10).fit(TEXTS[:-1], LABELS[:-1])
    np.testing.assert_array_equal(pieces.vocabulary_.columns_, fewer.vocabulary_.columns_)
    np.testing.assert_allclose(pieces.model_.feature_count_, fewer.model_.feature_count_)
    with pytest.raises(ValueError, match="cannot merge classifiers with hashed"):
        whole.merge(fewer)
    on_error = TextClassifier(stop_words="none", hash_bits=10, training="on-error",
                              spam_class="spam", ngram_range=(1, 1)).fit(TEXTS * 3, LABELS * 3)
    assert 0 < len(on_error.vocabulary_) <= len(whole.vocabulary_)
    assert set(on_error.vocabulary_.columns_) <= set(whole.vocabulary_.columns_)


def test_explanations_name_tokens_or_columns():
    clf = TextClassifier(stop_words="none", hash_bits=16).fit(TEXTS, LABELS)
    why = clf.explain("cheap cheap pills", top=5)
    assert {c.term for c in why.terms} == {"cheap", "pills"}
    assert why.log_odds == pytest.approx(why.prior_log_odds + why.baseline
                                         + sum(c.log_odds for c in why.terms) + why.rest)
    terms = clf.informative_terms(3)
    labels = {f"#{c}" for c in clf.vocabulary_.columns_.tolist()}
    assert all(term in labels for per_class in terms.values() for term, _ in per_class)
    # Tokens that share a column are named together.
    tiny = TextClassifier(stop_words="none", hash_bits=1).fit(TEXTS, LABELS)
    names = tiny.vocabulary_.names(["cheap", "pills", "noon"])
    assert sorted("|".join(names.values()).split("|")) == ["cheap", "noon", "pills"]


def _write_corpus(root):
    for label in ("spam", "ham"):
        (root / label).mkdir()
        for i, (text, y) in enumerate(zip(TEXTS * 2, LABELS * 2)):
            if y == label:
                (root / label / f"{i}.txt").write_text(text + "\n")


def test_cli_hash_bits(tmp_path):
    _write_corpus(tmp_path)
    model = tmp_path / "h.model"
    runner = CliRunner()
    result = runner.invoke(main, ["train", "-q", "--hash-bits", "14", "--stop-words", "none",
                                  "--training", "full", "-m", str(model),
                                  str(tmp_path / "spam"), str(tmp_path / "ham")])
    assert result.exit_code == 0, result.output
    assert load_model(model).hash_bits == 14
    info = runner.invoke(main, ["info", "-m", str(model)])
    assert info.exit_code == 0
    assert "hashed columns of 2**14 (the terms are not kept)" in info.output
    assert "#" in info.output.split("most informative for ham")[1]
    doc = tmp_path / "doc.txt"
    doc.write_text("cheap pills offer\n")
    classified = runner.invoke(main, ["classify", "-m", str(model), "--explain", str(doc)])
    assert classified.exit_code == 0 and "spam" in classified.output
    assert "pills" in classified.output
    bad = runner.invoke(main, ["train", "--hash-bits", "0", "-m", str(model),
                               str(tmp_path / "spam"), str(tmp_path / "ham")])
    assert bad.exit_code != 0 and "--hash-bits" in bad.output


@pytest.mark.parametrize("bits", [None, 12])
def test_cli_train_in_chunks_equals_fit(tmp_path, monkeypatch, bits):
    # Without a spam class (no cutoffs to learn), pruning or a decision threshold to learn,
    # textnb train learns as it reads, part by part (partial_fit), which gives fit's model:
    # here parts of 3 documents, the classes arriving one after the other.
    import textnb.classifier
    monkeypatch.setattr(textnb.text.features, "_PART_DOCUMENTS", 3)
    _write_corpus(tmp_path)
    paths = [tmp_path / label / name for label in ("spam", "ham")
             for name in sorted(os.listdir(tmp_path / label))]
    labels = ["one" if p.parent.name == "spam" else "two" for p in paths]
    whole = TextClassifier(stop_words="none", hash_bits=bits, decision_threshold=None).fit(
        [p.read_bytes() for p in paths], labels)

    def no_fit(*args, **kwargs):
        raise AssertionError("fit called: textnb train did not stream")

    monkeypatch.setattr(TextClassifier, "fit", no_fit)
    model = tmp_path / "chunks.model"
    result = CliRunner().invoke(main, ["train", "-q", "-m", str(model), "--stop-words", "none",
                                       "--decision-threshold", "none",
                                       *(["--hash-bits", str(bits)] if bits else []),
                                       f"--label=one={tmp_path / 'spam'}",
                                       f"--label=two={tmp_path / 'ham'}"])
    assert result.exit_code == 0, result.output
    chunked = load_model(model)
    assert chunked.classes_.tolist() == whole.classes_.tolist() == ["one", "two"]
    assert chunked.vocabulary_.terms_ == whole.vocabulary_.terms_
    # Unit-length documents make fractional counts, added in the same order: the same bits.
    np.testing.assert_array_equal(chunked.model_.feature_count_, whole.model_.feature_count_)
    np.testing.assert_array_equal(chunked.model_.class_count_, whole.model_.class_count_)
    np.testing.assert_array_equal(chunked.digests_, whole.digests_)
    assert chunked.cutoffs_ is None and whole.cutoffs_ is None
