"""token lists → Vocabulary → csr_matrix: pruning, sorted terms, counts, growth."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import textnb.text.counting
import textnb.text.vocabulary
from textnb.text.counting import _python_count, _python_numbers
from textnb.text.vocabulary import Vocabulary

from conftest import with_c_and_python

# Why scikit-learn tests skip: it is no dependency of textnb, only a yardstick.
NO_SKLEARN = "scikit-learn is optional (the bench extra): no yardstick to compare with"
NO_HYPOTHESIS = "hypothesis (the test extra) is needed for property tests"

DOCS = [["spam", "ham", "eggs", "spam"],
        ["spam", "toast"],
        ["spam", "ham", "jam"],
        ["ham", "beans", "beans", "beans"]]
# Document frequencies: spam 3, ham 3, beans 1, eggs 1, jam 1, toast 1.
# Total counts: spam 4, ham 3, beans 3, eggs 1, jam 1, toast 1.


# Every test here four times: tokens numbered, and numbers counted, in C (where built) and in
# Python.
numbering = with_c_and_python(textnb.text.counting, "_numbers", _python_numbers)
counting = with_c_and_python(textnb.text.counting, "_count", _python_count)


def test_terms_are_sorted_and_counts_are_right():
    vocabulary = Vocabulary().fit(DOCS)
    assert vocabulary.terms_ == ["beans", "eggs", "ham", "jam", "spam", "toast"]
    assert vocabulary.index_ == {t: i for i, t in enumerate(vocabulary.terms_)}
    assert len(vocabulary) == 6
    X = vocabulary.transform(DOCS)
    assert isinstance(X, sp.csr_matrix) and X.shape == (4, 6)
    np.testing.assert_array_equal(X.toarray(), [[0, 1, 1, 0, 2, 0],
                                                [0, 0, 0, 0, 1, 1],
                                                [0, 0, 1, 1, 1, 0],
                                                [3, 0, 1, 0, 0, 0]])
    np.testing.assert_array_equal(Vocabulary().fit_transform(DOCS).toarray(), X.toarray())


def test_terms_are_in_python_string_order():
    tokens = ["b", "a\x00", "a", "B", "é", "e\u0301", "\U0001f600", "ab"]
    vocabulary = Vocabulary().fit([tokens])
    assert vocabulary.terms_ == sorted(tokens)
    assert vocabulary.grow([["a\x00\x00", "aa"]]).tolist() == [3, 3]
    assert vocabulary.terms_ == sorted(tokens + ["a\x00\x00", "aa"])


def test_unknown_tokens_are_ignored_and_empty_documents_kept():
    vocabulary = Vocabulary().fit(DOCS)
    X = vocabulary.transform([["spam", "unknown", "spam"], [], ["nothing", "known"]])
    np.testing.assert_array_equal(X.toarray(), [[0, 0, 0, 0, 2, 0], [0] * 6, [0] * 6])
    assert X.indptr.tolist() == [0, 1, 1, 1]


def test_binary_counts_presence():
    vocabulary = Vocabulary(binary=True)
    X = vocabulary.fit_transform(DOCS)
    np.testing.assert_array_equal(X.toarray(), [[0, 1, 1, 0, 1, 0],
                                                [0, 0, 0, 0, 1, 1],
                                                [0, 0, 1, 1, 1, 0],
                                                [1, 0, 1, 0, 0, 0]])
    np.testing.assert_array_equal(vocabulary.transform([["beans"] * 5]).toarray(),
                                  [[1, 0, 0, 0, 0, 0]])


@pytest.mark.parametrize("settings, terms", [
    ({"min_df": 2}, ["ham", "spam"]),
    ({"min_df": 0.5}, ["ham", "spam"]),               # 0.5 · 4 = 2 documents
    ({"min_df": 0.75}, ["ham", "spam"]),              # 3 documents
    ({"min_df": 1.0}, None),                          # in every document: no term is
    ({"max_df": 1}, ["beans", "eggs", "jam", "toast"]),
    ({"max_df": 2}, ["beans", "eggs", "jam", "toast"]),
    ({"max_df": 0.5}, ["beans", "eggs", "jam", "toast"]),
    ({"max_df": 0.75}, ["beans", "eggs", "ham", "jam", "spam", "toast"]),
    ({"min_df": 2, "max_df": 0.75}, ["ham", "spam"]),
])
def test_min_df_and_max_df(settings, terms):
    if terms is None:           # min_df = 1.0 is "in every document": none here
        with pytest.raises(ValueError, match="empty vocabulary"):
            Vocabulary(**settings).fit(DOCS)
        return
    vocabulary = Vocabulary(**settings).fit(DOCS)
    assert vocabulary.terms_ == terms
    # Pruned terms are unknown tokens afterwards; columns follow the kept terms.
    X = vocabulary.transform(DOCS).toarray()
    full = Vocabulary().fit(DOCS)
    columns = [full.index_[t] for t in terms]
    np.testing.assert_array_equal(X, full.transform(DOCS).toarray()[:, columns])


def test_max_features_keeps_most_frequent_with_deterministic_ties():
    # Totals: spam 4, ham 3, beans 3, then eggs = jam = toast = 1.
    assert Vocabulary(max_features=1).fit(DOCS).terms_ == ["spam"]
    # ham and beans tie at 3: both fit in 3.
    assert Vocabulary(max_features=3).fit(DOCS).terms_ == ["beans", "ham", "spam"]
    # eggs, jam, toast tie at 1: the first by term order wins, whatever the input order.
    assert Vocabulary(max_features=4).fit(DOCS).terms_ == ["beans", "eggs", "ham", "spam"]
    assert Vocabulary(max_features=4).fit(DOCS[::-1]).terms_ == ["beans", "eggs", "ham", "spam"]
    shuffled = [list(reversed(d)) for d in DOCS[::-1]]
    assert Vocabulary(max_features=5).fit(shuffled).terms_ == ["beans", "eggs", "ham", "jam", "spam"]
    # max_features applies after min_df/max_df.
    assert Vocabulary(max_df=2, max_features=2).fit(DOCS).terms_ == ["beans", "eggs"]
    with pytest.raises(ValueError, match="max_features must be a positive number, got 0"):
        Vocabulary(max_features=0).fit(DOCS)


@pytest.mark.parametrize("settings", [{"min_df": 0}, {"min_df": 1.5}, {"max_df": -1},
                                      {"max_df": 0.0}, {"min_df": 2.5}])
def test_bad_document_frequencies(settings):
    name = next(iter(settings))
    with pytest.raises(ValueError, match=f"{name} must be a whole number of documents or a "
                                         r"proportion in \(0, 1\]"):
        Vocabulary(**settings).fit(DOCS)


def test_empty_vocabulary_error_says_what_to_do():
    with pytest.raises(ValueError, match="empty vocabulary: every token was a stop word or was "
                                         "pruned by min_df/max_df; try fewer stop words"):
        Vocabulary().fit([[], []])
    with pytest.raises(ValueError, match="cannot build a vocabulary from no documents"):
        Vocabulary().fit([])


def test_transform_equals_scikit_learn_count_vectorizer():
    text = pytest.importorskip("sklearn.feature_extraction.text", reason=NO_SKLEARN)
    rng = np.random.default_rng(5)
    words = ["Zeta", "alpha", "über", "éclair", "a b", "subject:free", "$500", "!!!", "42",
             "3.14", "don't", "e-mail", "東京", "x@y.org", "beta", "alpha2"]
    docs = [list(rng.choice(words, size=rng.integers(0, 12))) for _ in range(30)]
    for binary in (False, True):
        ours = Vocabulary(binary=binary)
        X = ours.fit_transform(docs)
        cv = text.CountVectorizer(analyzer=lambda tokens: tokens, binary=binary)
        expected = cv.fit_transform(docs)
        assert ours.terms_ == list(cv.get_feature_names_out())
        assert isinstance(X, sp.csr_matrix)
        assert (X != expected).nnz == 0
        new = [list(rng.choice(words + ["unseen"], size=8)) for _ in range(5)]
        assert (ours.transform(new) != cv.transform(new)).nnz == 0
    # Pruning agrees too (scikit-learn's max_features breaks ties its own way: avoid ties).
    ours = Vocabulary(min_df=2, max_df=0.5).fit(docs)
    cv = text.CountVectorizer(analyzer=lambda tokens: tokens, min_df=2, max_df=0.5).fit(docs)
    assert ours.terms_ == list(cv.get_feature_names_out())


def test_grow_adds_sorted_terms_and_returns_insert_positions():
    vocabulary = Vocabulary().fit([["b", "d"], ["f"]])
    X_old = vocabulary.count([["b", "d", "f", "f"]])
    positions = vocabulary.grow([["a", "d", "e"], ["g", "c", "a", "e"]])
    assert vocabulary.terms_ == ["a", "b", "c", "d", "e", "f", "g"]
    assert vocabulary.index_["e"] == 4
    # numpy.insert semantics: a before old column 0, c before 1 (d), e before 2 (f), g at the end.
    assert positions.tolist() == [0, 1, 2, 3]
    old_dense = np.array([[1.0, 1.0, 2.0]])
    np.testing.assert_array_equal(np.insert(old_dense, positions, 0.0, axis=1),
                                  vocabulary.transform([["b", "d", "f", "f"]]).toarray())
    assert X_old.data.tolist() == [1.0, 1.0, 2.0]
    assert vocabulary.grow([["a", "g"]]).tolist() == []
    # Several new terms before the same old column keep their sorted order.
    v = Vocabulary().fit([["m"]])
    assert v.grow([["c", "b", "a"]]).tolist() == [0, 0, 0]
    assert v.terms_ == ["a", "b", "c", "m"]


def test_grown_vocabulary_equals_one_fitted_at_once():
    grown = Vocabulary().fit(DOCS[:1])
    for doc in DOCS[1:]:
        grown.grow([doc])
    whole = Vocabulary().fit(DOCS)
    assert grown.terms_ == whole.terms_
    np.testing.assert_array_equal(grown.transform(DOCS).toarray(), whole.transform(DOCS).toarray())


def test_any_tokens_match_count_vectorizer():
    """Property: for any token lists, terms are Python-sorted and counts equal CountVectorizer's."""
    text = pytest.importorskip("sklearn.feature_extraction.text", reason=NO_SKLEARN)
    hypothesis = pytest.importorskip("hypothesis", reason=NO_HYPOTHESIS)
    st = hypothesis.strategies
    tokens = st.text(min_size=1, max_size=4)

    @hypothesis.settings(max_examples=150, deadline=None)
    @hypothesis.given(st.lists(st.lists(tokens, max_size=6), min_size=1, max_size=6))
    def check(docs):
        hypothesis.assume(any(docs))
        ours = Vocabulary()
        X = ours.fit_transform(docs)
        assert ours.terms_ == sorted({t for d in docs for t in d})
        cv = text.CountVectorizer(analyzer=lambda d: d)
        assert (X != cv.fit_transform(docs)).nnz == 0
        first = next(d for d in docs if d)
        grown = Vocabulary().fit([first])
        grown.grow(docs)
        assert grown.terms_ == ours.terms_

    check()


@pytest.mark.parametrize("settings", [{}, {"min_df": 2}, {"max_df": 2, "max_features": 2},
                                      {"binary": True}])
def test_documents_counted_in_parts_give_the_vocabulary_and_counts_of_all(settings):
    from textnb.text.vocabulary import count_tokens
    docs = DOCS + [["toast", "zebra", "aardvark", "toast"], [], ["jam"]]
    parts = [count_tokens(docs[:2]), count_tokens(docs[2:3]), count_tokens(docs[3:])]
    assert parts[0].terms == ["eggs", "ham", "spam", "toast"]   # each part's own sorted terms
    whole = Vocabulary(**settings)
    expected = whole.fit_transform(docs).toarray()
    pieces = Vocabulary(**settings)
    X = pieces.fit_parts(parts)
    assert pieces.terms_ == whole.terms_
    assert X.shape == expected.shape and X.indptr.tolist() == whole.fit_count(docs).indptr.tolist()
    np.testing.assert_array_equal(sp.csr_matrix(X[:3], shape=X.shape).toarray(), expected)
    for row in range(X.shape[0]):                                 # columns sorted in every row
        columns = X.indices[X.indptr[row]:X.indptr[row + 1]]
        assert (np.diff(columns) > 0).all()
    new = [["zebra", "unknown", "spam"], [], ["unknown"], ["ham", "beans", "ham"]]
    counted = pieces.count_parts([count_tokens(new[:1]), count_tokens(new[1:])])
    np.testing.assert_array_equal(sp.csr_matrix(counted[:3], shape=counted.shape).toarray(),
                                  whole.transform(new).toarray())


def test_a_vocabulary_without_its_index_looks_terms_up_by_their_hashes(monkeypatch):
    # A loaded model keeps no dict of its terms (Vocabulary.index_ is built when asked for);
    # its counts must be those the dict gives, tokens before, between and after the terms.
    docs = [["ham", "spam", "köln", "zz", "a", "ham", "café", "spa", "spams", "", "~"]]
    built = Vocabulary().fit([["ham", "köln", "spam", "café"], ["beans"]])
    bare = Vocabulary()
    bare.terms_ = list(built.terms_)
    assert "_index" not in bare.__dict__
    np.testing.assert_array_equal(bare._lookup(docs[0]), [2, 4, 3, -1, -1, 2, 1, -1, -1, -1, -1])
    assert "_hashed" in bare.__dict__  # 11 terms looked up, more than 5 / 8: by the hashes
    few = Vocabulary()
    few.terms_ = [f"t{i:03d}" for i in range(100)]
    np.testing.assert_array_equal(few._lookup(["t005", "t0", "t099", "u"]), [5, -1, 99, -1])
    assert "_hashed" not in few.__dict__  # 4 of 100: by bisection
    np.testing.assert_array_equal(bare.transform(docs).toarray(), built.transform(docs).toarray())
    np.testing.assert_array_equal(bare.transform(docs).toarray(), [[0, 1, 2, 1, 1]])
    assert "_index" not in bare.__dict__          # counting built no index
    assert bare.index_ == built.index_            # asked for, it is built from the terms
    empty = Vocabulary()
    empty.terms_ = []
    np.testing.assert_array_equal(empty._lookup(["a", "b"]), [-1, -1])
    # Terms whose hashes are one ("spam" given the hash of "ham"): the first found by its hash,
    # the other by bisection.
    monkeypatch.setattr(textnb.text.vocabulary, "hash",
                        lambda term: hash("ham" if term in ("spam", "spams") else term),
                        raising=False)
    bare = Vocabulary()
    bare.terms_ = list(built.terms_)
    bare._looked_up = 100  # as if many had been looked up: the hashes are made
    np.testing.assert_array_equal(bare._lookup(["spam", "ham", "spams", "beans"]), [4, 2, -1, 0])
    assert "_hashed" in bare.__dict__
    bare.terms_ = bare.terms_ + ["zz"]  # new terms: the hashes are made again
    np.testing.assert_array_equal(bare._lookup(["zz", "spam"]), [5, 4])
    assert "_index" not in bare.__dict__


def test_a_vocabulary_sent_to_another_process_makes_its_hashes_there():
    # Python's string hashes are seeded per process: a model pickled to a worker (Dask's, say)
    # must not look its terms up by the hashes of the process that sent it.
    import os
    import pickle
    import subprocess
    import sys
    vocabulary = Vocabulary()
    vocabulary.terms_ = [f"term{i}" for i in range(64)]
    vocabulary._lookup(vocabulary.terms_)  # the hashes made here
    sent = pickle.dumps(vocabulary)
    assert "_hashed" not in pickle.loads(sent).__dict__
    script = ("import pickle, sys; v = pickle.loads(sys.stdin.buffer.read()); "
              "print(v._lookup(['term5', 'term63', 'none']).tolist())")
    out = subprocess.run([sys.executable, "-c", script], input=sent, capture_output=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True)
    assert out.stdout.decode().strip() == "[5, 63, -1]"


def test_a_vocabulary_without_its_index_finds_the_same_columns_and_builds_it_when_asked():
    v = Vocabulary().fit([["b", "a", "b"], ["c", "d"]])
    before = v.count([["d", "x", "b"]]).indices.tolist()
    assert v.index_ == {"a": 0, "b": 1, "c": 2, "d": 3}
    v.drop_index()
    assert "_index" not in v.__dict__
    assert v.count([["d", "x", "b"]]).indices.tolist() == before == [1, 3]
    assert v.index_ == {"a": 0, "b": 1, "c": 2, "d": 3}


def test_training_as_the_documents_are_read_keeps_no_index_to_save(tmp_path):
    from textnb import TextClassifier
    from textnb.training import train_streaming
    for label, text in (("spam", "cheap pills now"), ("ham", "meeting at noon")):
        (tmp_path / label).mkdir()
        (tmp_path / label / "1").write_text(text)
    classifier = TextClassifier()
    train_streaming(classifier, [("spam", str(tmp_path / "spam")), ("ham", str(tmp_path / "ham"))],
                    lambda *problem: pytest.fail(str(problem)))
    assert "_index" not in classifier.vocabulary_.__dict__
    assert classifier.predict(["cheap pills", "noon meeting"]).tolist() == ["spam", "ham"]
