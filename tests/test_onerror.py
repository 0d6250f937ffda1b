"""Train on error: convergence, the model it leaves, and the command line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.sparse import csr_matrix

import textnb.decision.cutoffs
import textnb.nb.on_error
from textnb import TextClassifier, load_model, save_model
from textnb.cli.app import main
from textnb.nb.sparse import CSR
from textnb.nb.discrete import BernoulliNB, ComplementNB, ComplementNBWithPrior, MultinomialNB
from textnb.nb.on_error import _Tables, take_rows, train_on_error
from textnb.text.vocabulary import to_scipy

from conftest import NO_C, spamassassin_sample, with_c_and_python

# Every test here runs with the two-class scan in C (textnb/_onerror.c) and with the Python one.
C_SCAN = textnb.nb.on_error._fast
implementation = with_c_and_python(textnb.nb.on_error, "_fast", None, built=C_SCAN)

ROOT = Path(__file__).resolve().parent.parent
SPAM_DIR = ROOT / "corpora" / "spamassassin" / "spam"
HAM_DIR = ROOT / "corpora" / "spamassassin" / "ham"


def test_a_worked_example_learns_only_what_it_gets_wrong():
    # Terms: cheap, pills, meeting, noon. Seeds are the first of each class (rows 0 and 2).
    X = csr_matrix(np.array([[2, 1, 0, 0],    # spam (seed)
                             [1, 1, 0, 0],    # spam: right by a wide margin after the seeds
                             [0, 0, 1, 1],    # ham (seed)
                             [0, 0, 2, 1],    # ham: right by 2.54 after the seeds
                             [1, 0, 1, 1]]))  # spam that looks like ham: learned in pass 1
    y = np.array(["spam", "spam", "ham", "ham", "spam"])
    # After the seeds (α = 1): row 1 leads by 1.48, row 3 by 2.54, row 4 trails by 0.75, so
    # pass 1 learns row 4; that spam holds "meeting" and "noon", so row 3's lead falls below
    # the margin and pass 2 learns it; pass 3 learns nothing.
    model, weight, per_pass = train_on_error(X, y, lambda: MultinomialNB(alpha=1.0), margin=1.0,
                                            orders=1)
    learned = weight > 0
    assert learned.tolist() == [True, False, True, True, True]
    assert per_pass == [1, 1, 0]
    after_pass_1 = MultinomialNB(alpha=1.0).fit(X[[0, 2, 4]], y[[0, 2, 4]]).predict_log_proba(X[3])
    assert after_pass_1[0, 0] - after_pass_1[0, 1] < 1.0
    exact = MultinomialNB(alpha=1.0).fit(X[learned], y[learned])
    np.testing.assert_array_equal(model.feature_count_, exact.feature_count_)
    np.testing.assert_allclose(model.feature_log_prob_, exact.feature_log_prob_)


MODELS = [lambda: MultinomialNB(alpha=0.5), lambda: BernoulliNB(alpha=0.5, fit_prior=True),
          lambda: ComplementNB(alpha=0.5), lambda: ComplementNBWithPrior(alpha=0.5, fit_prior=True),
          lambda: ComplementNB(alpha=0.5, norm=True)]   # the last one: the refitting path


def _random_corpus(seed, n_documents=80, n_terms=30, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.4, size=(n_documents, n_terms)).astype(float)
    y = rng.integers(0, n_classes, n_documents)
    X[np.arange(n_documents), y] += 2            # a term per class, so there is something to learn
    return csr_matrix(X), np.array(["abc"[c] for c in y])


@pytest.mark.parametrize("new_model", MODELS)
def test_the_tables_score_as_the_model_does(new_model):
    X, y = _random_corpus(0)
    rows = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55]
    tables = _Tables(new_model(), X, 3)
    for row in rows:
        tables.learn(row, "abc".index(y[row]))
    expected = new_model().fit(X[rows], y[rows]).predict_joint_log_proba(X)
    values = csr_matrix(tables.X[:3], shape=X.shape)  # counts, or presence (Bernoulli)
    np.testing.assert_array_equal(tables.sums, np.asarray(values.sum(axis=1)).ravel())
    got = tables.scores(values, tables.sums)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _train_on_error_by_definition(X, y, new_model, margin, max_passes):
    """The definition, refitting the model for every document scored."""
    learned = np.zeros(len(y), dtype=bool)
    learned[[int(np.flatnonzero(y == c)[0]) for c in np.unique(y)]] = True
    per_pass = []
    for _ in range(max_passes):
        count = 0
        for i in np.flatnonzero(~learned):
            model = new_model().fit(X[learned], y[learned])
            jll = model.predict_joint_log_proba(X[i])[0]
            t = list(model.classes_).index(y[i])
            if jll[t] - np.delete(jll, t).max() < margin:
                learned[i] = True
                count += 1
        per_pass.append(count)
        if count == 0:
            break
    return learned, per_pass


@pytest.mark.parametrize("new_model", MODELS)
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("n_classes", [2, 3])   # two: the walk's lead from one column difference
def test_the_fast_walk_learns_what_the_definition_learns(new_model, seed, n_classes):
    X, y = _random_corpus(seed, n_classes=n_classes)
    X = csr_matrix(X.toarray() * (np.arange(80) % 37 != 5)[:, None])   # rows 5, 42, 79 empty
    model, weight, per_pass = train_on_error(X, y, new_model, margin=1.0, max_passes=4, orders=1)
    learned = weight > 0
    expected, expected_passes = _train_on_error_by_definition(X, y, new_model, 1.0, 4)
    assert per_pass == expected_passes and per_pass[0] > 0
    np.testing.assert_array_equal(learned, expected)
    np.testing.assert_array_equal(model.feature_count_,
                                  new_model().fit(X[learned], y[learned]).feature_count_)


def _c_walk(X, truth, order, given=None):
    """The C walk of a complement model over the rows of X at ``order`` (``given`` to the walk
    if not None, once the first row of each class is learned): (learned, per_pass)."""
    tables = _Tables(ComplementNB(alpha=0.1), X, 2)
    learned = np.zeros(truth.size, dtype=bool)
    for c in (0, 1):
        place = int(np.flatnonzero(truth[order] == c)[0])
        tables.learn(int(order[place]), c)
        learned[place] = True
    per_pass = C_SCAN.walk(*tables.arrays(truth, learned), True, False, 0.1, 1.0, 10,
                           order if given is None else given)
    return learned, per_pass


@pytest.mark.skipif(C_SCAN is None, reason=NO_C)
def test_the_c_walk_in_an_order_walks_the_rows_as_if_copied_in_it():
    """Rows visited through ``order`` where they lie learn what a copy of X in that order
    learns; an order that is not one row number a place, in range, is refused."""
    X, y = _random_corpus(4)
    X = CSR(X.data.astype(float), X.indices.astype(np.int32), X.indptr.astype(np.int64), X.shape)
    truth = (y == y[0]).astype(np.int64)
    order = np.random.default_rng(5).permutation(y.size)
    learned, per_pass = _c_walk(X, truth, order)
    copied, copied_passes = _c_walk(take_rows(X, order), truth[order], np.arange(y.size))
    np.testing.assert_array_equal(learned, copied)
    assert per_pass == copied_passes and per_pass[0] > 0
    for bad in (order[:-1], np.where(order == 0, y.size, order), order - 1,
                order.astype(np.int32), order.astype(float)):
        with pytest.raises(ValueError, match="order"):
            _c_walk(X, truth, order, given=bad)


@pytest.mark.skipif(C_SCAN is None, reason=NO_C)
def test_the_c_walk_learns_the_same_whatever_the_index_widths():
    """int32 term numbers, checked once before the walk (with int32 or int64 row pointers),
    and int64 ones, checked at each cell, learn the same rows; a term number out of range is
    refused either way."""
    X, y = _random_corpus(6)
    truth = (y == y[0]).astype(np.int64)
    order = np.random.default_rng(2).permutation(y.size)
    walks = [_c_walk(CSR(X.data.astype(float), X.indices.astype(indices), X.indptr.astype(indptr),
                         X.shape), truth, order)
             for indices, indptr in ((np.int32, np.int64), (np.int32, np.int32), (np.int64, np.int64))]
    for learned, per_pass in walks[1:]:
        np.testing.assert_array_equal(learned, walks[0][0])
        assert per_pass == walks[0][1] and per_pass[0] > 0
    for indices in (np.int32, np.int64):
        bad = X.indices.astype(indices)
        bad[-1] = X.shape[1]
        with pytest.raises(ValueError, match="out of range"):
            _c_walk(CSR(X.data.astype(float), bad, X.indptr.astype(np.int64), X.shape), truth,
                    order)


@pytest.mark.skipif(C_SCAN is None, reason=NO_C)
def test_the_c_scan_learns_what_the_python_one_learns_on_real_mail(implementation, monkeypatch):
    """Real mail (the shared archive's first 400 spam and 400 ham, else the bundled sample),
    its counts and presence bits, each model: the same documents learned, pass by pass, with
    the scan in C and in Python, in any order."""
    if implementation == "python":
        pytest.skip("compares the two itself")
    sample = spamassassin_sample(400) or {
        part: [p.read_bytes() for p in sorted(d.iterdir())]
        for part, d in (("spam", SPAM_DIR), ("ham", HAM_DIR))}
    texts = sample["spam"] + sample["ham"]
    y = np.array(["spam"] * len(sample["spam"]) + ["ham"] * len(sample["ham"]))
    classifier = TextClassifier(n_jobs=1, ngram_range=(1, 2)).fit(texts, y)
    counts = to_scipy(classifier.transform(texts))
    models = [lambda: ComplementNB(alpha=0.03), lambda: MultinomialNB(alpha=0.1),
              lambda: ComplementNBWithPrior(alpha=0.03, fit_prior=True),
              lambda: MultinomialNB(alpha=0.1, class_prior=[0.3, 0.7]),
              lambda: BernoulliNB(alpha=0.5, fit_prior=True)]
    for X in (counts, (counts > 0).astype(float)):
        for new_model in models:
            walks = []
            for fast in (C_SCAN, None):
                monkeypatch.setattr(textnb.nb.on_error, "_fast", fast)
                walks.append(train_on_error(X, y, new_model, orders=2, max_passes=10))
            (_, c, c_passes), (_, python, python_passes) = walks
            np.testing.assert_array_equal(c, python)
            assert c_passes == python_passes and c_passes[0] > 0 and (c > 0).sum() < y.size


def test_walks_in_several_orders_average_what_each_learned():
    X, y = _random_corpus(3)
    one = train_on_error(X, y, MultinomialNB, margin=1.0, orders=1)[1]
    model, weight, per_pass = train_on_error(X, y, MultinomialNB, margin=1.0, orders=3)
    # Each document counts for the share of the three walks that learned it; the first walk is
    # the one-order walk, in the given order.
    assert set(np.round(weight * 3, 9).tolist()) <= {0.0, 1.0, 2.0, 3.0}
    assert (weight[one > 0] >= 1 / 3).all() and 0 < (weight == 1).sum() < (weight > 0).sum()
    assert per_pass == train_on_error(X, y, MultinomialNB, margin=1.0, orders=1)[2]
    rows = weight > 0
    expected = MultinomialNB().fit(X[rows], y[rows], sample_weight=weight[rows])
    np.testing.assert_allclose(model.feature_count_, expected.feature_count_)
    assert model.class_count_.sum() == pytest.approx(weight.sum())
    # The same documents give the same model: the shuffles are seeded.
    np.testing.assert_array_equal(weight, train_on_error(X, y, MultinomialNB, margin=1.0,
                                                         orders=3)[1])


# The last model learns by partial_fit; its leads are of normalised weights, hence its margin.
@pytest.mark.parametrize("new_model, margin", [(MultinomialNB, 1.0), (MODELS[-1], 0.01)])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_walks_in_worker_processes_learn_what_walks_here_learn(new_model, margin, n_classes):
    """Two classes walk in threads (with the C walk), more in worker processes; one at a time
    here for n_jobs=1. Each walk starts from an empty model of its own."""
    X, y = _random_corpus(4, n_documents=1200, n_classes=n_classes)
    here = train_on_error(X, y, new_model, margin=margin, orders=4, n_jobs=1)
    there = train_on_error(X, y, new_model, margin=margin, orders=4, n_jobs=2)
    np.testing.assert_array_equal(here[1], there[1])
    assert here[2] == there[2] and len(set((here[1] * 4).tolist())) > 2
    np.testing.assert_array_equal(here[0].feature_count_, there[0].feature_count_)


@pytest.mark.parametrize("new_model, margin", [(MultinomialNB, 1.0), (ComplementNB, 1.0),
                                               (MODELS[-1], 0.01)])
def test_folds_trained_at_once_are_each_trained_on_its_rows(new_model, margin):
    """trained_on_error of a cross-validation's folds (their walks in one pool, over the rows
    where they lie) gives each fold what train_on_error of a copy of its rows gives."""
    X, y = _random_corpus(5, n_documents=600, n_classes=2)
    folds = np.arange(y.size) % 5
    subsets = [np.flatnonzero(folds != fold) for fold in range(5)] + [None]
    found = list(textnb.nb.on_error.trained_on_error(X, y, subsets, new_model, margin=margin,
                                                 orders=4, n_jobs=2))
    assert len(found) == 6
    for rows, (model, weight, per_pass) in zip(subsets, found):
        alone = train_on_error(X if rows is None else take_rows(X, rows),
                               y if rows is None else y[rows], new_model, margin=margin, orders=4)
        np.testing.assert_array_equal(weight, alone[1])
        np.testing.assert_array_equal(model.feature_count_, alone[0].feature_count_)
        assert per_pass == alone[2] and 0 < weight.sum() < weight.size


def test_the_walks_heaps_are_given_back_before_each_fold_is_fitted(implementation, monkeypatch):
    """The walks' tables, freed in their threads' heaps, are given back to the system before
    each fold's model is fitted (glibc keeps a thread's heap: SpamAssassin's --tune peaked
    up to 205 MiB without it). The walks in threads are the C walks."""
    if implementation == "python":
        pytest.skip("the walks in threads are the C walks")
    X, y = _random_corpus(6, n_documents=300, n_classes=2)
    events = []
    monkeypatch.setattr(textnb.nb.on_error, "give_back", lambda: events.append("given back"))
    weighed = textnb.nb.on_error._weighed
    monkeypatch.setattr(textnb.nb.on_error, "_weighed",
                        lambda *args: events.append("fitted") or weighed(*args))
    subsets = [np.flatnonzero(np.arange(y.size) % 3 != fold) for fold in range(3)]
    found = list(textnb.nb.on_error.trained_on_error(X, y, subsets, ComplementNB, n_jobs=2))
    assert len(found) == 3 and events == ["given back", "fitted"] * 3


def test_it_converges_on_the_sample_corpus():
    from textnb.documents.sources import read_documents
    spam = list(read_documents([str(SPAM_DIR)]))
    ham = list(read_documents([str(HAM_DIR)]))
    texts, y = spam + ham, ["spam"] * len(spam) + ["ham"] * len(ham)
    clf = TextClassifier(spam_class="spam", training="on-error", margin=2.0).fit(texts, y)
    report = clf.on_error_
    assert report["passes"][-1] == 0 and len(report["passes"]) < 10   # a pass learned nothing
    assert report["documents"] == 300 and 2 < report["learned"] < 300
    # Each learned document counts for the share of the walks that learned it.
    assert 0.5 * report["learned"] < clf.model_.class_count_.sum() <= report["learned"]
    # The model is fit on the documents it learned, so every document it did not learn is
    # classified right by the margin (the last pass checked each of them).
    lead = clf.predict_log_proba(texts)
    column = [list(clf.classes_).index(label) for label in y]
    right = lead[np.arange(len(y)), column] - lead[np.arange(len(y)), [1 - c for c in column]]
    assert (right > 0).mean() > 0.97
    assert clf.cutoffs_["folds"] == 5 and clf.cutoffs_["ham"] <= clf.cutoffs_["spam"]


def test_a_spam_classifier_chooses_its_training_by_default_as_textnb_train_does(monkeypatch):
    from textnb.documents.sources import read_documents
    spam = list(read_documents([str(SPAM_DIR)]))
    ham = list(read_documents([str(HAM_DIR)]))
    texts, y = spam + ham, ["spam"] * len(spam) + ["ham"] * len(ham)
    full = TextClassifier(spam_class="spam", training="full").fit(texts, y)
    walked = TextClassifier(spam_class="spam", training="on-error").fit(texts, y)
    assert full.cutoffs_["training"] == "full" and full.model_.class_count_.sum() == 300
    assert walked.on_error_ == {"documents": 300, "learned": 176, "walks": 4, "started": 2,
                                "passes": [34, 48, 10, 0], "per_class": {"spam": 150, "ham": 150}}
    # 150 ham are too few to read the spam cutoff off their scores: the default trains on
    # error, without comparing (the comparison would be noise, and the winner the lucky one).
    default = TextClassifier(spam_class="spam").fit(texts, y)
    assert default.cutoffs_ == walked.cutoffs_ and default.on_error_ == walked.on_error_
    # Where there are enough, it keeps the training whose out-of-fold decisions misplace fewer
    # messages (spam or ham called the other, or unsure), full training on a tie: here, with
    # the spam cutoff read off the 150 ham's scores as for 2,995 or more, on error misplaces
    # 10, full training 11.
    monkeypatch.setattr(textnb.decision.cutoffs, "extrapolated", lambda ham, target_fpr: False)
    monkeypatch.setattr(textnb.decision.cutoffs, "bounded", lambda ham, target_fpr: True)
    with monkeypatch.context() as patch:
        # The comparison is of the folds' rates, which full training then reports from its
        # left-out scores instead (textnb.decision.cutoffs.rated): here, the folds' alone.
        patch.setattr(textnb.decision.cutoffs, "rated", lambda classifier, cutoffs, *args: cutoffs)
        full = TextClassifier(spam_class="spam", training="full").fit(texts, y)
        walked = TextClassifier(spam_class="spam", training="on-error").fit(texts, y)
        default = TextClassifier(spam_class="spam").fit(texts, y)
        misplaced = {t: textnb.decision.cutoffs.misplaced(m.cutoffs_)
                     for t, m in (("full", full), ("on-error", walked))}
        assert misplaced == {"full": pytest.approx(11), "on-error": pytest.approx(10)}
        assert default.cutoffs_["training"] == "on-error" and default.on_error_ == walked.on_error_
        assert default.cutoffs_ == walked.cutoffs_
        # On a tie, full training.
        patch.setattr(textnb.decision.cutoffs, "misplaced", lambda cutoffs: 11)
        default = TextClassifier(spam_class="spam").fit(texts, y)
        assert default.cutoffs_["training"] == "full" and default.on_error_ is None
        assert default.cutoffs_ == full.cutoffs_
    # Its decision threshold too, from each document scored by a model of the others; so with
    # two spam filed as ham, which both leave out as mis-sorted.
    full = TextClassifier(spam_class="spam", training="full").fit(texts, y)
    assert full.decision_threshold_ != walked.decision_threshold_
    y[:2] = ["ham", "ham"]
    full = TextClassifier(spam_class="spam", training="full").fit(texts, y)
    assert full.cutoffs_["suspects"] == 2
    assert full.decision_threshold_ == pytest.approx(-1.3615, abs=1e-4)
    # Full mail (Received fields): words alone.
    assert default.ngram_range_ == (1, 1) and default.get_params()["ngram_range"] is None


def test_a_document_some_walks_learned_is_unlearned_exactly(tmp_path):
    # Four walks weigh each learned document 1/4, 1/2, 3/4 or 1: exact in binary floating
    # point, so with whole counts (norm=None) unlearning it (after a save and load, or a dump
    # and restore) subtracts exactly what training added, and the counts are those of training
    # on the rest with its weights.
    from textnb.documents.sources import read_documents
    from textnb.store.dump import dump_lines, read_dump
    spam = list(read_documents([str(SPAM_DIR)]))
    ham = list(read_documents([str(HAM_DIR)]))
    texts, y = spam + ham, ["spam"] * len(spam) + ["ham"] * len(ham)
    settings = {"spam_class": "spam", "training": "on-error", "norm": None}
    clf = TextClassifier(**settings).fit(texts, y)
    weights = clf.digest_weights_
    assert set((weights * 4).tolist()) <= {1.0, 2.0, 3.0, 4.0} and (weights < 1).any()
    path = tmp_path / "oe.model"
    save_model(clf, path)
    for restored in (load_model(path), read_dump(dump_lines(clf))):
        np.testing.assert_array_equal(restored.digest_weights_, weights)
    by_digest = {digest: i for i, digest in enumerate(clf._count(texts)[0][1])}
    part = next(i for i, w in enumerate(weights) if w < 1)
    index = by_digest[int(clf.digests_[part])]
    before = load_model(path)
    before.unlearn([texts[index]], [y[index]])
    assert before.digests_.size == weights.size - 1 and int(clf.digests_[part]) not in before.digests_
    # The counts left are exactly those of the other learned documents with their weights.
    X = clf.transform([texts[by_digest[int(d)]] for d in before.digests_])
    expected = clf.new_model().fit(X, before.digest_labels_, sample_weight=before.digest_weights_)
    columns = [clf.vocabulary_.index_[t] for t in before.vocabulary_.terms_]
    np.testing.assert_array_equal(before.model_.feature_count_, expected.feature_count_[:, columns])
    np.testing.assert_array_equal(before.model_.class_count_, expected.class_count_)
    with pytest.raises(ValueError, match="never learned"):
        before.unlearn([texts[index]], [y[index]])


def test_bad_settings_are_refused():
    X, y = csr_matrix(np.eye(2)), np.array(["a", "b"])
    with pytest.raises(ValueError, match="margin"):
        train_on_error(X, y, MultinomialNB, margin=-1)
    with pytest.raises(ValueError, match="orders"):
        train_on_error(X, y, MultinomialNB, orders=0)
    with pytest.raises(ValueError, match="two classes"):
        train_on_error(X, np.array(["a", "a"]), MultinomialNB)


def test_train_on_error_from_the_command_line(tmp_path):
    path = tmp_path / "oe.model"
    result = CliRunner().invoke(main, ["train", "--training", "on-error", "--passes", "2", "-m",
                                       str(path), str(SPAM_DIR), str(HAM_DIR)])
    assert result.exit_code == 0, result.output
    assert "on error    learned" in result.output and "in its 2 passes" in result.output
    model = load_model(path)
    assert 2 < model.model_.class_count_.sum() < 300 and model.cutoffs_ is not None
    # The summary counts the documents read, not the model's weights of those learned; info
    # says how many of each class were learned, and their weight.
    assert "trained 300 documents (ham: 150, spam: 150)" in result.output
    info = CliRunner().invoke(main, ["info", "-m", str(path)]).output
    learned = re.findall(r"(\w+) \((\d+) documents, weight ([\d.]+)\)", info)
    assert [c for c, _, _ in learned] == ["ham", "spam"]
    assert sum(int(n) for _, n, _ in learned) == int(re.search(r"learned (\d+) of 300",
                                                              result.output)[1])
    np.testing.assert_allclose([float(w) for _, _, w in learned], model.model_.class_count_,
                               rtol=1e-3)


def test_mail_that_is_a_subject_and_a_body_counts_word_pairs_too(tmp_path):
    # The sample's messages as a mailing-list corpus keeps them: no Received field.
    import email
    texts, y = [], []
    for label, directory in (("spam", SPAM_DIR), ("ham", HAM_DIR)):
        (tmp_path / label).mkdir()
        for path in sorted(directory.iterdir()):
            message = email.message_from_bytes(path.read_bytes())
            body = message.get_payload(decode=True) if not message.is_multipart() else b"parts"
            text = b"Subject: " + str(message["Subject"]).encode() + b"\n\n" + (body or b"")
            (tmp_path / label / path.name).write_bytes(text)
            texts.append(text)
            y.append(label)
    assert TextClassifier(spam_class="spam").fit(texts, y).ngram_range_ == (1, 2)
    given = TextClassifier(spam_class="spam", ngram_range=(1, 1)).fit(texts, y)
    assert given.ngram_range_ == (1, 1)
    assert TextClassifier().fit(texts, y).ngram_range_ == (1, 1)  # no spam class: topics
    topics = TextClassifier(spam_class="spam").fit(texts, ["a"] * 150 + ["b"] * 150)
    assert topics.ngram_range_ == (1, 1)  # two classes, neither of them spam
    # textnb train chooses alike, and the model file says what was counted.
    model = tmp_path / "list.model"
    result = CliRunner().invoke(main, ["train", "-q", "-m", str(model), str(tmp_path / "spam"),
                                       str(tmp_path / "ham")])
    assert result.exit_code == 0, result.output
    loaded = load_model(model)
    assert loaded.ngram_range_ == (1, 2) and any(" " in term for term in loaded.vocabulary_.terms_)


def test_two_classes_or_short_texts_count_word_pairs_when_there_are_many(tmp_path):
    # Reviews, two newsgroups, headlines: word pairs for PAIRS_DOCUMENTS documents, of two
    # classes or short texts; fewer (the textbooks' worked examples), more (whose pairs
    # could outgrow memory), long texts of more classes or full mail count words.
    from textnb.defaults import PAIRS_DOCUMENTS, SHORT_TEXT
    low, high = PAIRS_DOCUMENTS
    words = ["good", "bad", "plot", "acting", "not", "great", "boring", "fun"]
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(words, 6)) for _ in range(low)]
    y = ["pos", "neg"] * (low // 2)
    four = ["a", "b", "c", "d"] * (len(y) // 4)
    assert TextClassifier().fit(texts, y).ngram_range_ == (1, 2)
    assert TextClassifier().fit(texts[:-2], y[:-2]).ngram_range_ == (1, 1)
    assert TextClassifier().fit(texts, four).ngram_range_ == (1, 2)  # short texts
    long = [" ".join(rng.choice(words, SHORT_TEXT // 4)) for _ in texts]
    assert TextClassifier().fit(long, four).ngram_range_ == (1, 1)
    assert TextClassifier().fit(long, y).ngram_range_ == (1, 2)
    assert TextClassifier().fit(iter(texts), iter(y)).ngram_range_ == (1, 1)  # labels unknown
    for documents, pairs in ((high, (1, 2)), (high + 1, (1, 1))):
        assert TextClassifier().default_ngram_range(["a", "b", "c"], texts, documents) == pairs
    mail = [b"Received: from a.example\nSubject: x\n\n" + t.encode() for t in texts]
    assert TextClassifier().fit(mail, y).ngram_range_ == (1, 1)
    # textnb train counts the files before it reads them, and chooses alike.
    for i, (text, label) in enumerate(zip(texts, y)):
        (tmp_path / label).mkdir(exist_ok=True)
        (tmp_path / label / f"{i}.txt").write_text(text)
    model = tmp_path / "m"
    for drop, pairs in ((0, (1, 2)), (2, (1, 1))):
        for name in sorted((tmp_path / "pos").iterdir())[:drop]:
            name.unlink()
        result = CliRunner().invoke(main, ["train", "-q", "-m", str(model), str(tmp_path / "pos"),
                                           str(tmp_path / "neg")])
        assert result.exit_code == 0, result.output
        assert load_model(model).ngram_range_ == pairs
    # Four classes (one directory of class directories): short texts pairs, long ones words.
    for kind, documents, pairs in (("short", texts, (1, 2)), ("long", long, (1, 1))):
        for i, (text, label) in enumerate(zip(documents, four)):
            (tmp_path / kind / label).mkdir(parents=True, exist_ok=True)
            (tmp_path / kind / label / f"{i}.txt").write_text(text)
        result = CliRunner().invoke(main, ["train", "-q", "-m", str(model), str(tmp_path / kind)])
        assert result.exit_code == 0, result.output
        assert load_model(model).ngram_range_ == pairs


def test_rows_are_taken_as_scipy_takes_them(implementation):
    """take_rows (textnb/_onerror.c, else numpy): the rows scipy's indexing gives, in the order
    asked, chosen by number or by mask, from int32 or int64 index arrays; no row, every row."""
    X, _ = _random_corpus(4, n_documents=40)
    X.data[X.indptr[7]:X.indptr[8]] = 0  # an empty row
    X.eliminate_zeros()
    wide = CSR(X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64), X.shape)
    narrow = CSR(X.data, X.indices, X.indptr.astype(np.int64), X.shape)
    for rows in (np.array([3, 7, 3, 39, 0]), np.arange(40)[::-1], np.array([], dtype=np.int64),
                 np.arange(40) % 3 == 0):
        expected = X[rows]
        for given in (wide, narrow):
            got = take_rows(given, rows)
            assert got.shape == expected.shape and got.indices.dtype == given.indices.dtype
            np.testing.assert_array_equal(got.data, expected.data)
            np.testing.assert_array_equal(got.indices, expected.indices)
            np.testing.assert_array_equal(got.indptr, expected.indptr)
    with pytest.raises(IndexError):
        take_rows(wide, np.array([40]))


def test_the_on_error_summary_adds_up_and_names_what_it_counts(monkeypatch):
    """train's line says what each number counts, and they are true: the documents held are
    those any walk learned; the first walk's are one of each class, then each pass's."""
    from textnb.cli.output import on_error_line
    texts = [p.read_bytes() for p in sorted(SPAM_DIR.iterdir())] + \
        [p.read_bytes() for p in sorted(HAM_DIR.iterdir())]
    y = ["pos"] * 150 + ["neg"] * 150  # no spam class, no threshold: the one fit's walks alone
    walks = []
    real = textnb.nb.on_error._walk

    def recording(X, truth, model, n_classes, margin, max_passes, order=None, sums=None):
        learned, per_pass = real(X, truth, model, n_classes, margin, max_passes, order, sums)
        # The first walk visits the documents as given (None, or in C their rows in order).
        walks.append((order is None or bool((np.diff(order) > 0).all()), int(learned.sum()),
                      list(per_pass)))
        return learned, per_pass

    monkeypatch.setattr(textnb.nb.on_error, "_walk", recording)
    clf = TextClassifier(training="on-error", decision_threshold=None, n_jobs=1).fit(texts, y)
    report = clf.on_error_
    assert len(walks) == report["walks"] == 4
    [(_, first, passes)] = [walk for walk in walks if walk[0]]
    assert first == 2 + sum(passes) and passes == report["passes"]
    assert report["learned"] == int((clf.digest_weights_ > 0).sum()) > first
    assert on_error_line(report) == (
        f"on error    learned {report['learned']} of 300 documents (those any of 4 walks in "
        f"different orders learned, each weighted by the share of walks that did); the first "
        f"walk learned {first}: 2 to start, then {', '.join(map(str, passes))} in its "
        f"{len(passes)} passes")
