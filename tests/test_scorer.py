"""textnb.store.scorer, the mail filter's numpy-free scores, agrees with TextClassifier."""

from __future__ import annotations

import json
import os
import sys
import zipfile

import numpy as np
import pytest

from textnb import TextClassifier as Library, save_model
from textnb.documents.message import parse_message
from textnb.errors import ModelFileError
from textnb.store.scorer import Scorer

TEXTS = ["cheap pills now", "cheap money now!!! $500", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting",
         "the football results", "football tonight, results at noon"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham", "sport", "sport"]
MAIL = parse_message(b"Subject: cheap pills\nFrom: x@example.com\n\ncheap cheap noon results\n")


def TextClassifier(**settings) -> Library:  # noqa: N802 — stands in for the class
    """The scorer's models drop words outside the vocabulary, as mail models do by default;
    one that scores them is left to load_model (tests/test_unseen.py)."""
    return Library(**{"unseen": "drop", **settings})


# A format-2 file of TextClassifier().fit(TEXTS[:8], LABELS[:8]), by the save_model of then
# (and the tokenizer: "$500" had no shape, so its tests take the no_shapes fixture).
FORMAT_2 = os.path.join(os.path.dirname(__file__), "data", "models", "v2-complement.model")
PROBES = [MAIL, parse_message(b"Subject: nothing known\n\nzebra\n"), parse_message(b""),
          parse_message(b"Subject: noon\n\n" + b"football results " * 5000)]


@pytest.mark.parametrize("settings", [
    {}, {"model": "multinomial", "alpha": 1.0, "norm": None, "fit_prior": True},
    {"model": "bernoulli"}, {"tf": "log"}, {"ngram_range": (1, 2), "stop_words": "none"},
    {"tf": "binary"}, {"tf": "binary", "norm": None, "model": "multinomial"},
    {"class_prior": [0.2, 0.3, 0.5], "model": "multinomial"},
])
def test_scores_agree_with_the_classifier(tmp_path, settings):
    clf = TextClassifier(**settings).fit(TEXTS + [MAIL], LABELS + ["spam"])
    save_model(clf, tmp_path / "m.model")
    scorer = Scorer(tmp_path / "m.model")
    assert scorer.classes == clf.classes_.tolist()
    expected = clf.predict_log_proba(PROBES)
    for document, row in zip(PROBES, expected):
        np.testing.assert_allclose(scorer.log_proba(document.text, document.fields), row,
                                   rtol=1e-12, atol=1e-12)


def test_a_mail_model_whose_documents_chose_word_pairs(tmp_path):
    # Subject-and-body mail without a Received field: the setting stays None in the file, the
    # pairs counted are in meta's own ngram_range, and the filter's tokenizer makes them too.
    texts = [f"Subject: {t}\n\n{t} again".encode() for t in TEXTS[:6]]
    clf = TextClassifier(spam_class="spam").fit(texts, LABELS[:6])
    assert clf.ngram_range_ == (1, 2) and clf.ngram_range is None
    save_model(clf, tmp_path / "m.model")
    with zipfile.ZipFile(tmp_path / "m.model") as archive:
        meta = json.loads(archive.read("meta.json"))
    assert meta["params"]["ngram_range"] is None and meta["ngram_range"] == [1, 2]
    probe = parse_message(b"Subject: cheap pills\n\ncheap money at noon")
    np.testing.assert_allclose(Scorer(tmp_path / "m.model").log_proba(probe.text, probe.fields),
                               clf.predict_log_proba([probe])[0], rtol=1e-12, atol=1e-12)


def test_two_class_integer_labels(tmp_path):
    clf = TextClassifier().fit(TEXTS[:6], [1, 1, 1, 0, 0, 0])
    save_model(clf, tmp_path / "m.model")
    scorer = Scorer(tmp_path / "m.model")
    assert scorer.classes == [0, 1]
    np.testing.assert_allclose(scorer.log_proba(MAIL.text, MAIL.fields),
                               clf.predict_log_proba([MAIL])[0], rtol=1e-12)


def test_scoring_imports_no_numpy(tmp_path):
    import subprocess
    save_model(TextClassifier().fit(TEXTS, LABELS), tmp_path / "m.model")
    code = ("import sys; from textnb.store.scorer import Scorer; from textnb.documents.message import "
            f"parse_message; d = parse_message(b'Subject: cheap\\n\\npills'); "
            f"print(Scorer({str(tmp_path / 'm.model')!r}).log_proba(d.text, d.fields)); "
            "print(sorted(m for m in ('numpy', 'click', 'email.parser', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"


def test_files_the_scorer_leaves_to_load_model_are_scored_there(tmp_path, no_shapes):
    """Format 1 (terms in meta.json) and a hashed vocabulary: sound files the numpy-free
    scorer does not read itself."""
    from textnb.store.scorer import Declined, score
    path = tmp_path / "m.model"
    clf = TextClassifier(stop_words="english").fit(TEXTS, LABELS)  # as FORMAT_2 was written
    save_model(clf, path)
    with zipfile.ZipFile(FORMAT_2) as archive:     # format 1 is format 2 less these members
        files = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(files["meta.json"])
    old, hashed = tmp_path / "old.model", tmp_path / "hashed.model"
    with zipfile.ZipFile(old, "w") as archive:
        for name, data in files.items():
            if name not in ("terms.npy", "term_ends.npy", "score_bias.npy", "score_weights.npy"):
                archive.writestr(name, json.dumps({**meta, "version": 1,
                                                   "terms": clf.vocabulary_.terms_})
                                 if name == "meta.json" else data)
    hashing = TextClassifier(stop_words="english", hash_bits=12).fit(TEXTS, LABELS)
    save_model(hashing, hashed)
    for declined, reason, expected in ((old, "format 1", clf), (hashed, "hashed", hashing)):
        with pytest.raises(Declined, match=reason):
            Scorer(declined)
        classes, row, _, _ = score(declined, MAIL.text, MAIL.fields)
        assert classes == ["ham", "spam", "sport"]
        np.testing.assert_allclose(row, expected.predict_log_proba([MAIL])[0], rtol=1e-12)


def test_a_repacked_file_is_refused_by_every_reader(tmp_path):
    """Members deflated (a model re-zipped): textnb stores them, and no reader inflates any."""
    from textnb import load_model
    from textnb.store.scorer import score
    path, packed = tmp_path / "m.model", tmp_path / "deflated.model"
    save_model(TextClassifier().fit(TEXTS, LABELS), path)
    with zipfile.ZipFile(path) as archive, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as out:
        for name in archive.namelist():
            out.writestr(name, archive.read(name))
    for read in (Scorer, load_model, lambda p: score(p, "text")):
        with pytest.raises(ModelFileError, match=r"deflated.model' is truncated or corrupt "
                                                 r"\(meta.json is not stored as textnb stores"):
            read(packed)


def test_bad_files_are_refused_with_the_reason(tmp_path):
    from textnb.store.scorer import score
    path = tmp_path / "m.model"
    save_model(TextClassifier().fit(TEXTS, LABELS), path)
    truncated = tmp_path / "cut.model"
    truncated.write_bytes(path.read_bytes()[:200])
    for bad in (truncated, tmp_path / "nowhere.model"):
        with pytest.raises(ModelFileError, match=bad.name):
            Scorer(bad)
        with pytest.raises(ModelFileError, match=bad.name):
            score(bad, "text")
    corrupt = bytearray(path.read_bytes())
    at = corrupt.index(b'"classes"')
    corrupt[at + 1] = ord("C")                                 # meta.json fails its CRC-32
    (tmp_path / "crc.model").write_bytes(bytes(corrupt))
    with pytest.raises(ModelFileError, match="meta.json is truncated or corrupt"):
        Scorer(tmp_path / "crc.model")


def test_terms_are_found_in_code_point_order(tmp_path):
    texts = ["Zürich zebra éclair", "東京 ábc z", "e\u0301 ÿ !!! $500", "a b"]
    clf = TextClassifier(stop_words="none", min_token_length=1).fit(texts, ["x", "y", "x", "y"])
    save_model(clf, tmp_path / "m.model")
    scorer = Scorer(tmp_path / "m.model")
    terms = clf.vocabulary_.terms_
    assert terms == sorted(terms) and len(terms) > 10
    for k, term in enumerate(terms):
        assert scorer._counts([term, term, "unknown"]) == {k: 2}


@pytest.mark.parametrize("model", ["complement", "multinomial", "bernoulli"])
def test_many_classes_and_large_counts(tmp_path, model):
    """300 classes (class numbers of two bytes) and a count of 70,000 (four bytes)."""
    texts = [f"word{i} shared common{i % 7}" for i in range(300)] + ["shared " * 70_000]
    labels = [f"c{i:03d}" for i in range(300)] + ["c000"]
    clf = TextClassifier(model=model, norm=None, stop_words="none").fit(texts, labels)
    save_model(clf, tmp_path / "m.model")
    with zipfile.ZipFile(tmp_path / "m.model") as archive:
        dtypes = {name: np.lib.format.read_array(archive.open(f"{name}.npy")).dtype
                  for name in ("count_classes", "count_values")}
    assert dtypes == {"count_classes": np.uint16,
                      "count_values": np.uint8 if model == "bernoulli" else np.uint32}
    scorer = Scorer(tmp_path / "m.model")
    probes = ["word7 shared common3 shared", "common0 unknown", "word299"]
    for text, row in zip(probes, clf.predict_log_proba(probes)):
        np.testing.assert_allclose(scorer.log_proba(text), row, rtol=1e-12, atol=1e-12)


C_PARTS = pytest.mark.skipif(
    __import__("textnb.store.scorer", fromlist=["_fast"])._fast is None
    or __import__("textnb.store.plain", fromlist=["_fast"])._fast is None,
    reason="textnb's C parts were not built")


@C_PARTS
@pytest.mark.parametrize("settings", [
    {}, {"model": "multinomial", "alpha": 1.0, "norm": None}, {"model": "bernoulli"},
    {"tf": "log"}, {"tf": "binary", "norm": None, "model": "multinomial"},
    {"ngram_range": (1, 2), "stop_words": "none", "alpha": 0.03},
])
def test_the_c_sums_and_lookup_are_the_pythons_to_the_bit(tmp_path, monkeypatch, settings):
    """term_sums and columns (textnb/_scores.c, textnb/_modelfile.c) against their Python
    definitions (Scorer._rows with log_proba's loop, plain.term_index): the same floats, the
    same columns, on every probe and on words the vocabulary has not (a prefix of a term, a
    term with more after it, an empty one, a lone surrogate, a term in another script)."""
    import textnb.store.scorer as scorer_module
    import textnb.store.plain as plain
    clf = TextClassifier(**settings).fit(TEXTS + [MAIL], LABELS + ["spam"])
    save_model(clf, tmp_path / "m.model")
    scorer = Scorer(tmp_path / "m.model")
    probes = PROBES + [parse_message("Subject: café\n\nchea cheapest pill \ud800 noon日本 x".encode(
        "utf-8", "surrogatepass"))]
    in_c = [scorer.log_proba(d.text, d.fields) for d in probes]
    keys = ["", "chea", "cheap", "cheapest", "\ud800", "zzzz", "noon", "日本", "$###"]
    found = plain.term_columns(scorer._terms, scorer._ends, keys)
    assert found[2] >= 0 and found[6] >= 0 and found[1] == found[3] == found[4] == -1
    monkeypatch.setattr(scorer_module, "_fast", None)
    monkeypatch.setattr(plain, "_fast", None)
    assert [scorer.log_proba(d.text, d.fields) for d in probes] == in_c
    assert plain.term_columns(scorer._terms, scorer._ends, keys) == found


def test_a_checked_file_is_read_by_its_verdict_alone(tmp_path, monkeypatch):
    """A file its sidecar vouches for, without a journal, is scored from the members it needs,
    read by textnb.store.verdict.read without the rules' modules; the same scores as the file
    read by the rules. A journal beside it, or no verdict, and the rules read it."""
    import subprocess
    from textnb.store import verdict
    monkeypatch.setattr(verdict, "SETTLED", 0.0)  # the first reader records its verdict
    path = tmp_path / "m.model"
    save_model(TextClassifier().fit(TEXTS, LABELS), path)
    assert verdict.read(str(path), ("terms",)) is None  # no verdict yet
    checked = Scorer(path).log_proba(MAIL.text, MAIL.fields)
    meta, members = verdict.read(str(path), ("terms", "score_bias"))
    assert meta["classes"] == ["ham", "spam", "sport"] and set(members) == {"terms", "score_bias"}
    assert bytes(members["terms"].data).split(b"\n")[:2] == [b"!!!", b"$###"]
    code = ("import sys; from textnb.store.scorer import Scorer; "
            f"print(Scorer({str(path)!r}).log_proba({MAIL.text!r}, {MAIL.fields!r})); "
            "print(sorted(m for m in sys.modules if m.startswith('textnb.store')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == [str(checked), "['textnb.store', 'textnb.store.plain', 'textnb.store.scorer', "
                                 "'textnb.store.verdict']"]
    (tmp_path / "m.model.journal").write_bytes(b"")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == str(checked) and "textnb.store.container" in out[1]
