"""Learning at filter speed: one document a row (textnb.incremental), a model file's journal
(textnb.store.journal) read by every reader as one model with its file, and its atomicity
under SIGKILL."""

from __future__ import annotations

import copy
import os
import random
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

import textnb.incremental as incremental_module
from textnb import TextClassifier, incremental
from textnb.documents.message import read_bytes
from textnb.errors import ModelFileError
from textnb.store.scorer import Scorer
from textnb.serve.model import Weights
from textnb.store import container, journal, learning
from textnb.store.text_model import KIND, load_for_update, load_model, save_model
from textnb.decision.rules import ERROR_WEIGHT, error_weight, learned_weight
from textnb.online import learning_weight

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpora" / "spamassassin"


def messages(label: str) -> list[bytes]:
    return [f.read_bytes() for f in sorted((CORPUS / label).iterdir())]


SPAM, HAM = messages("spam"), messages("ham")


def fitted(**settings) -> TextClassifier:
    return TextClassifier(n_jobs=1, spam_class="spam", training="full", **settings).fit(
        SPAM[:40] + HAM[:40], ["spam"] * 40 + ["ham"] * 40)


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "spam.model"
    save_model(fitted(), path)
    return path


NEW = [(raw, "spam") for raw in SPAM[40:50]] + [(raw, "ham") for raw in HAM[40:50]]
PROBES = [read_bytes(raw) for raw in SPAM[60:75] + HAM[60:75]]


def test_one_document_at_a_time_adds_what_the_general_path_adds(monkeypatch):
    """partial_fit of one document (a row, in place) gives the model partial_fit's general
    path gives, document by document: the same terms and the same counts, bit for bit."""
    fast, general = fitted(), fitted()
    for raw, label in NEW:
        fast.partial_fit([raw], [label])
    monkeypatch.setattr(incremental_module, "ONE_BY_ONE", 0)
    for raw, label in NEW:
        general.partial_fit([raw], [label])
    assert fast.vocabulary_.terms_ == general.vocabulary_.terms_
    assert np.array_equal(fast.model_.feature_count_, general.model_.feature_count_)
    assert np.array_equal(fast.model_.class_count_, general.model_.class_count_)
    assert np.array_equal(fast.digests_, general.digests_)
    assert fast.digest_labels_.tolist() == general.digest_labels_.tolist()
    assert np.array_equal(fast.predict_log_proba(PROBES), general.predict_log_proba(PROBES))


def test_a_learned_document_taken_back_leaves_the_model_it_found():
    clf = fitted()
    before = clf.predict_log_proba(PROBES)
    terms = list(clf.vocabulary_.terms_)
    clf.partial_fit([NEW[0][0]], ["spam"])
    assert len(clf.vocabulary_.terms_) > len(terms)
    row = incremental.rows(clf, [NEW[0][0]])[0]
    incremental.apply(clf, row, list(clf.classes_).index("spam"), unlearn=True)
    assert clf.vocabulary_.terms_ == terms
    assert np.allclose(clf.predict_log_proba(PROBES), before, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="never learned"):
        incremental.apply(clf, row, list(clf.classes_).index("spam"), unlearn=True)


def learn_as_learners(clf: TextClassifier, raw: bytes, label: str,
                      weight: float | None = None) -> None:
    """Learn as an update does (textnb.store.learning.Update.learn): weighed by the model as
    it stands, unless ``weight`` was so taken before a move, then one row."""
    if weight is None:
        weight = learning_weight(clf, raw, label)
    row = incremental.rows(clf, [raw])[0]
    incremental.apply(clf, row, list(clf.classes_).index(label), weight)


def take_back(clf: TextClassifier, raw: bytes, label: str) -> None:
    """Unlearn as an update does: the terms it alone had leave (TextClassifier.unlearn also
    drops terms no document had, those of messages left out as suspects)."""
    row = incremental.rows(clf, [raw])[0]
    incremental.apply(clf, row, list(clf.classes_).index(label), unlearn=True)


def _readers_agree(path: Path, expected: TextClassifier) -> None:
    """load_model, the mail filter's scorer and serve's weights score as ``expected``."""
    want = expected.predict_log_proba(PROBES)
    loaded = load_model(path)
    assert loaded.vocabulary_.terms_ == expected.vocabulary_.terms_
    assert np.array_equal(loaded.model_.feature_count_, expected.model_.feature_count_)
    assert np.allclose(loaded.predict_log_proba(PROBES), want, rtol=0, atol=1e-9)
    scorer = Scorer(path)
    got = [scorer.log_proba(d.text, d.fields) for d in PROBES]
    assert np.allclose(got, want, rtol=0, atol=1e-9)
    weights = Weights(loaded)
    got = [weights.log_proba(loaded.tokenize([d])[0]) for d in PROBES]
    assert np.allclose(got, want, rtol=0, atol=1e-9)


def test_learning_appends_to_the_journal_and_every_reader_reads_the_two_as_one(model,
                                                                               monkeypatch):
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 20)
    snapshot = model.read_bytes()
    expected = load_model(model)
    for raw, label in NEW:
        assert learning.learn(model, raw, label, None) is True
        learn_as_learners(expected, raw, label)
    assert model.read_bytes() == snapshot  # not rewritten: its journal holds the messages
    size = os.path.getsize(journal.path_of(model))
    assert 0 < size < 20 * 20_000  # a few kilobytes a message
    _readers_agree(model, expected)
    # Learned again: counted once, nothing written.
    assert learning.learn(model, NEW[0][0], "spam", None) is False
    assert os.path.getsize(journal.path_of(model)) == size
    # Unlearned, and moved from one class to the other, by journal records too.
    assert learning.forget(model, NEW[1][0], ["ham", "spam"]) is True
    take_back(expected, NEW[1][0], "spam")
    assert learning.learn(model, NEW[2][0], "ham", "spam") is True
    weight = learning_weight(expected, NEW[2][0], "ham")  # as the model stood: called spam
    assert weight > 1  # an error, weighed by the share of errors among the 20 learned
    take_back(expected, NEW[2][0], "spam")
    learn_as_learners(expected, NEW[2][0], "ham", weight)
    assert model.read_bytes() == snapshot
    loaded = load_model(model)
    assert np.allclose(loaded.predict_log_proba(PROBES), expected.predict_log_proba(PROBES),
                       rtol=0, atol=1e-9)
    scorer = Scorer(model)
    assert np.allclose([scorer.log_proba(d.text, d.fields) for d in PROBES],
                       loaded.predict_log_proba(PROBES), rtol=0, atol=1e-9)


def test_a_hashed_model_learns_into_its_journal_too(tmp_path):
    path = tmp_path / "hashed.model"
    save_model(fitted(hash_bits=16), path)
    expected = load_model(path)
    for raw, label in NEW[:6]:
        assert learning.learn(path, raw, label, None)
        learn_as_learners(expected, raw, label)
    assert os.path.exists(journal.path_of(path))
    loaded = load_model(path)
    assert np.array_equal(loaded.vocabulary_.columns_, expected.vocabulary_.columns_)
    assert np.allclose(loaded.predict_log_proba(PROBES), expected.predict_log_proba(PROBES),
                       rtol=0, atol=1e-9)


def test_the_learner_leaves_the_compaction_to_its_caller_until_the_hard_limit(model,
                                                                             monkeypatch):
    """Over COMPACT_BYTES the learner appends and returns (the file untouched); the fold,
    journal.compact, is the caller's; over HARD_BYTES the learner folds it itself."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 5_000)
    monkeypatch.setattr(journal, "HARD_BYTES", 30_000)
    snapshot = model.read_bytes()
    expected = load_model(model)
    sizes = []
    for raw, label in NEW:
        learning.learn(model, raw, label, None, detach=False)
        learn_as_learners(expected, raw, label)
        sizes.append(journal.size_of(model))
        assert sizes[-1] <= 30_000
    assert max(sizes) > 5_000  # left over COMPACT_BYTES by the learner ...
    assert 0 in sizes  # ... folded by it over HARD_BYTES
    _readers_agree(model, expected)
    learning.learn(model, SPAM[55], "spam", None, detach=False)
    learn_as_learners(expected, SPAM[55], "spam")
    snapshot = model.read_bytes()
    assert journal.size_of(model) > 5_000 or learning.compact(model) is False
    if journal.size_of(model) > 5_000:
        assert learning.compact(model) is True
        assert model.read_bytes() != snapshot and journal.size_of(model) == 0
    assert learning.compact(model) is False  # nothing left to fold
    _readers_agree(model, expected)


def test_a_fold_carries_exactly_the_records_appended_since_it_read(model, tmp_path,
                                                                   monkeypatch):
    """journal.compact reads the model and writes the new file before the update lock: two
    messages learned between its reading and its lock are the new file's journal (its tail),
    not folded, not lost, not counted twice; the model is the one a fold done alone makes."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 5_000)
    alone = tmp_path / "alone.model"
    alone.write_bytes(model.read_bytes())
    expected = load_model(model)
    for raw, label in NEW[:5]:
        learning.learn(alone, raw, label, None, detach=False)
        learn_as_learners(expected, raw, label)
    assert learning.compact(alone, over=0) is True and journal.size_of(alone) == 0
    for raw, label in NEW[:3]:
        learning.learn(model, raw, label, None, detach=False)
    real = learning.locked

    def learn_then_lock(path):  # between the fold's reading and its lock, learners come
        monkeypatch.setattr(learning, "locked", real)
        for raw, label in NEW[3:5]:
            learning.learn(model, raw, label, None, detach=False)
        return real(path)
    monkeypatch.setattr(learning, "locked", learn_then_lock)
    snapshot = model.read_bytes()
    assert learning.compact(model) is True
    assert learning.locked is real  # the learners came
    assert model.read_bytes() != snapshot
    from textnb.store.container import read
    folded = read(model, "text-classifier", writable=False)
    carried = journal.read(folded)
    # The file holds the three read before the lock; its journal, from its first line, the two
    assert [int(r["digest"], 16) for r in carried.documents] == list(
        load_model(model).digests_[-2:])
    assert carried.start == 0 and carried.end == carried.size == journal.size_of(model)
    assert load_model(model).digests_.size == load_model(alone).digests_.size
    assert np.array_equal(load_model(model).digests_, load_model(alone).digests_)
    _readers_agree(model, expected)
    _readers_agree(alone, expected)
    # The next update appends after the tail; the next fold folds it all.
    learning.learn(model, NEW[5][0], NEW[5][1], None, detach=False)
    learn_as_learners(expected, NEW[5][0], NEW[5][1])
    _readers_agree(model, expected)
    assert learning.compact(model, over=0) is True and journal.size_of(model) == 0
    _readers_agree(model, expected)


def test_a_learner_over_the_limit_starts_a_detached_compaction(model, monkeypatch):
    """learn() returns once its commit is durable; a process of its own folds the journal."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 5_000)
    expected = load_model(model)
    snapshot = model.read_bytes()
    for raw, label in NEW[:3]:
        learning.learn(model, raw, label, None)
        learn_as_learners(expected, raw, label)
    deadline = time.monotonic() + 120
    while journal.size_of(model) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert journal.size_of(model) == 0 and model.read_bytes() != snapshot
    _readers_agree(model, expected)


def test_textnb_learns_general_path_also_starts_a_detached_compaction(tmp_path, monkeypatch):
    """textnb learn into a model the journal writer declines (Bernoulli) learns through the
    whole model; over COMPACT_BYTES it too leaves the fold to a process of its own."""
    from click.testing import CliRunner
    from textnb.cli.app import main
    monkeypatch.setattr(journal, "COMPACT_BYTES", 5_000)
    path = tmp_path / "bernoulli.model"
    save_model(fitted(model="bernoulli"), path)
    snapshot = path.read_bytes()
    files = []
    for i, (raw, _) in enumerate(NEW[:6]):
        files.append(tmp_path / f"m{i}.eml")
        files[-1].write_bytes(raw)
    expected = load_model(path)
    for raw, _ in NEW[:6]:
        learn_as_learners(expected, raw, "spam")
    result = CliRunner().invoke(main, ["learn", "-q", "-m", str(path), "--class", "spam",
                                       *map(str, files)])
    assert result.exit_code == 0, result.output
    deadline = time.monotonic() + 120
    while journal.size_of(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert journal.size_of(path) == 0 and path.read_bytes() != snapshot
    np.testing.assert_allclose(load_model(path).model_.feature_count_,
                               expected.model_.feature_count_, rtol=0, atol=1e-9)


def test_a_crash_between_the_journal_and_the_file_reads_back_exactly(model):
    """Killed after the journal's commit and before the file is written: the message is
    read back; killed after the file was written and before the journal was removed: the
    journal, naming the old file, is not read again (no message counted twice)."""
    expected = load_model(model)
    learning.learn(model, NEW[0][0], "spam", None)
    learn_as_learners(expected, NEW[0][0], "spam")
    _readers_agree(model, expected)  # in the journal only: the file was never rewritten
    old_journal = Path(journal.path_of(model)).read_bytes()
    save_model(load_model(model), model)  # compacted ...
    Path(journal.path_of(model)).write_bytes(old_journal)  # ... but the journal left behind
    _readers_agree(model, expected)
    assert load_model(model).digests_.size == expected.digests_.size
    # The next update starts the stale journal anew.
    learning.learn(model, NEW[1][0], "spam", None)
    learn_as_learners(expected, NEW[1][0], "spam")
    _readers_agree(model, expected)


def test_records_after_the_last_commit_or_cut_short_are_not_read(model):
    expected = load_model(model)
    learning.learn(model, NEW[0][0], "spam", None)
    learn_as_learners(expected, NEW[0][0], "spam")
    path = Path(journal.path_of(model))
    whole = path.read_bytes()
    # An update killed while appending: a record without its commit, then half a record.
    uncommitted = journal.lines([{"op": "learn", "class": 0, "digest": "0" * 16, "weight": 1.0,
                                  "keys": ["zzqx"], "values": [1.0]}], ([0.0, 0.0], [1, 1, -1, -1]))
    path.write_bytes(whole + uncommitted.splitlines(keepends=True)[0] + uncommitted[:30])
    _readers_agree(model, expected)
    learning.learn(model, NEW[1][0], "ham", None)  # cut off, then appended after the commit
    learn_as_learners(expected, NEW[1][0], "ham")
    assert b"zzqx" not in path.read_bytes()
    _readers_agree(model, expected)


@pytest.mark.parametrize("change", [
    lambda r: {**r, "class": 7},
    lambda r: {**r, "values": [-1.0] * len(r["values"])},
    lambda r: {**r, "values": [float("inf")] * len(r["values"])},
    lambda r: {**r, "keys": list(reversed(r["keys"]))},
    lambda r: {**r, "digest": "xyz"},
    lambda r: {**r, "extra": 1},
    lambda r: {**r, "op": "unlearn", "digest": "f" * 16},
], ids=["class", "negative", "infinite", "unsorted", "digest", "unknown-key", "never-learned"])
def test_every_reader_refuses_a_journal_record_that_breaks_the_rules(model, change):
    import json
    learning.learn(model, NEW[0][0], "spam", None)
    path = Path(journal.path_of(model))
    header, record, commit = path.read_bytes().splitlines(keepends=True)
    body = json.dumps(change(json.loads(record[9:])), separators=(",", ":")).encode()
    path.write_bytes(header + b"%08x " % zlib.crc32(body) + body + b"\n" + commit)
    with pytest.raises(ModelFileError, match="journal .* is corrupt"):
        load_model(model)
    with pytest.raises(ModelFileError, match="journal .* is corrupt"):
        Scorer(model)


@pytest.mark.parametrize("counts", [[3, 4], [-1, 0], [2.5, 1], "x", [1, 1, 1]],
                         ids=["more-errors", "negative", "fraction", "string", "three"])
def test_every_reader_refuses_a_commit_whose_count_of_errors_breaks_the_rules(model, counts):
    import json
    learning.learn(model, NEW[0][0], "spam", None)
    path = Path(journal.path_of(model))
    header, record, commit = path.read_bytes().splitlines(keepends=True)
    body = json.dumps({**json.loads(commit[9:]), "learned_errors": counts},
                      separators=(",", ":")).encode()
    path.write_bytes(header + record + b"%08x " % zlib.crc32(body) + body + b"\n")
    with pytest.raises(ModelFileError, match="journal .* is corrupt"):
        load_model(model)
    with pytest.raises(ModelFileError, match="journal .* is corrupt"):
        Scorer(model)


def test_an_error_weighs_more_the_rarer_errors_are():
    assert error_weight(0, 0) == 1.0  # the prior: one error of one message
    assert error_weight(10, 10) == 1.0  # trained on error: every learned message an error
    assert error_weight(99, 4) == pytest.approx(1 + (ERROR_WEIGHT - 1) * (1 - 5 / 100))
    assert error_weight(10 ** 6, 0) == pytest.approx(ERROR_WEIGHT, rel=1e-5)
    # Wrong or unsure is an error; right weighs 1; both are counted.
    assert learned_weight((3, 1), "unsure", "ham") == (error_weight(3, 1), (4, 2))
    assert learned_weight((3, 1), "spam", "ham") == (error_weight(3, 1), (4, 2))
    assert learned_weight((3, 1), "spam", "spam") == (1.0, (4, 1))


def journal_weights(path: Path) -> list[float]:
    """The weights of the documents a model file's journal learned, in order."""
    return [r["weight"] for r in journal.read(container.read(path, KIND, writable=False)).documents]


def test_trained_on_error_every_message_weighs_one(model, monkeypatch):
    """Each message learned is one the model called wrong or unsure, so the share of errors
    stays 1 and so does every weight: what training on error learned before."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 20)
    expected = load_model(model)
    learned = 0
    for raw, label in NEW + [(raw, "ham") for raw in HAM[50:60]]:
        if expected.spam_status([raw])[0] == label:
            continue
        assert learning.learn(model, raw, label, None) is True
        learn_as_learners(expected, raw, label)
        learned += 1
    assert learned >= 5
    assert journal_weights(model) == [1.0] * learned
    assert load_model(model).learned_errors_ == (learned, learned)


def test_learning_every_message_weighs_the_errors_and_every_path_agrees(model, tmp_path,
                                                                        monkeypatch):
    """Learning every message, those called right weigh 1 and the errors more: the journal's
    appender, the whole-model update (a model it declines) and the classifier in memory give
    the same weights and counts, kept by the journal, a compaction and a save."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 20)
    whole = tmp_path / "whole.model"
    save_model(load_model(model), whole)
    expected = load_model(model)
    stream = [(raw, label) for pair in zip(NEW[:10], NEW[10:]) for raw, label in pair]
    for raw, label in stream:
        learning.learn(model, raw, label, None)
        update = learning.Update(whole, *load_for_update(whole))
        update.learn(raw, label)
        update.write()
        learn_as_learners(expected, raw, label)
    weights = journal_weights(model)
    assert weights == journal_weights(whole)
    assert 1.0 in weights and max(weights) > 1.0  # some called right, some not
    learned, errors = expected.learned_errors_
    assert learned == len(stream) and 0 < errors < learned
    assert np.allclose(weights, expected.digest_weights_[-len(stream):], rtol=0, atol=1e-12)
    for path in (model, whole):
        assert load_model(path).learned_errors_ == (learned, errors)
        _readers_agree(path, expected)
    assert learning.compact(model, over=0) is True  # the count moves to the file's meta
    assert not os.path.exists(journal.path_of(model))
    assert load_model(model).learned_errors_ == (learned, errors)
    raw = SPAM[55]
    weight = learning_weight(expected, raw, "ham")  # spam called ham: an error, after the count
    assert weight == pytest.approx(error_weight(learned, errors))
    learn_as_learners(expected, raw, "ham", weight)
    assert learning.learn(model, raw, "ham", None) is True
    assert journal_weights(model) == pytest.approx([weight])
    _readers_agree(model, expected)


def test_the_count_of_errors_is_kept_in_the_model_file_and_checked(tmp_path):
    from textnb.store.schema import text_classifier_problem
    from textnb.store.text_model import saved_meta
    clf = fitted()
    clf.learned_errors_ = (7, 2)
    save_model(clf, tmp_path / "m.model")
    assert load_model(tmp_path / "m.model").learned_errors_ == (7, 2)
    meta = saved_meta(clf)
    assert meta["learned_errors"] == [7, 2] and text_classifier_problem(meta) is None
    for bad in ([2, 7], [7], [-1, 0], [7.0, 2]):
        assert "learned_errors" in text_classifier_problem({**meta, "learned_errors": bad})
    assert "learned_errors" not in saved_meta(fitted())  # a model trained, nothing learned since


def test_a_model_without_a_spam_status_learns_every_message_at_one():
    clf = TextClassifier(n_jobs=1).fit(SPAM[:20] + HAM[:20] + HAM[20:30],
                                       ["spam"] * 20 + ["ham"] * 20 + ["list"] * 10)
    assert learning_weight(clf, HAM[40], "spam") == 1.0
    assert clf.learned_errors_ == (0, 0)


_WRITER = """
import sys
from pathlib import Path
from textnb.store.learning import learn
path, first = sys.argv[1], int(sys.argv[2])
corpus = Path(sys.argv[3])
raws = [f.read_bytes() for f in sorted((corpus / "spam").iterdir())[40:] +
        sorted((corpus / "ham").iterdir())[40:]]
for i in range(first, len(raws)):
    learn(path, raws[i], "spam" if i % 2 else "ham", None)
    print(i, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_at_random_points_leaves_the_old_or_the_new_model(model, monkeypatch):
    """A writer learning message after message (journal appends and compactions), killed at
    a random moment, 12 times: the model read back is always the one of the messages
    learned so far, or of those and the one being learned, never a mix."""
    raws = SPAM[40:] + HAM[40:]
    labels = ["spam" if i % 2 else "ham" for i in range(len(raws))]
    base = load_model(model)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(7)
    first = 0
    for _ in range(12):
        process = subprocess.Popen([sys.executable, "-c", _WRITER, str(model), str(first),
                                    str(CORPUS)], stdout=subprocess.PIPE, env=env)
        time.sleep(rng.uniform(0.8, 2.5))
        process.send_signal(signal.SIGKILL)
        process.wait()
        loaded = load_model(model)
        learned = loaded.digests_.size - base.digests_.size
        assert learned >= first
        expected = copy.deepcopy(base)  # the same messages learned in this process
        for i in range(learned):
            learn_as_learners(expected, raws[i], labels[i])
        assert np.array_equal(loaded.model_.feature_count_, expected.model_.feature_count_)
        assert np.array_equal(loaded.digests_, expected.digests_)
        scorer = Scorer(model)
        assert np.allclose([scorer.log_proba(d.text, d.fields) for d in PROBES[:6]],
                           loaded.predict_log_proba(PROBES[:6]), rtol=0, atol=1e-9)
        first = learned
        if first >= len(raws):
            break
    assert first > 0


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_during_a_compaction_leaves_the_model_it_found(model, monkeypatch):
    """A detached compaction (python -m textnb.store.learning) killed at a random moment of
    its work, 8 times: while it reads the model and writes the new file (before the update
    lock) or carries the journal's tail and renames (under it). The moments are drawn over
    the later part of a whole compaction's time, measured first (its start is Python's and
    the imports'). The model read back is always the one learned, folded or not."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 20)
    expected = load_model(model)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    fold = [sys.executable, "-m", "textnb.store.learning", str(model), "0"]

    def learned(raw: bytes, label: str) -> None:
        learning.learn(model, raw, label, None)  # under the 1 MiB limit: never compacts
        learn_as_learners(expected, raw, label)
        assert journal.size_of(model) > 0

    learned(*NEW[8])
    start = time.perf_counter()
    subprocess.run(fold, env=env, check=True)
    whole = time.perf_counter() - start
    _readers_agree(model, expected)
    rng = random.Random(11)
    killed = 0
    for raw, label in NEW[:8]:
        learned(raw, label)
        process = subprocess.Popen(fold, env=env)
        time.sleep(rng.uniform(0.6, 0.98) * whole)
        process.send_signal(signal.SIGKILL)
        killed += process.wait() == -signal.SIGKILL
        _readers_agree(model, expected)
        assert load_model(model).digests_.size == expected.digests_.size
    assert killed >= 4  # killed at work, not after it


_FOLD_KILLED = """
import os, signal, sys
from pathlib import Path
from textnb.store import container, journal, learning
path, point, corpus = sys.argv[1], sys.argv[2], Path(sys.argv[3])
raws = [f.read_bytes() for f in sorted((corpus / "spam").iterdir())[43:45]]
real_locked, real_carry = learning.locked, journal.carry

def learn_then_lock(p):  # two messages learned between the fold's reading and its lock
    learning.locked = real_locked
    for raw in raws:
        learning.learn(path, raw, "spam", None, detach=False)
    return real_locked(p)

def killed(*args):
    os.kill(os.getpid(), signal.SIGKILL)

def half(fd, data, start):  # the section cut short
    os.pwrite(fd, data[:len(data) // 2], start)
    killed()

def carry(*args):
    if point == "in the section":
        journal._write = half
    real_carry(*args)
    if point == "after the section":
        killed()

learning.locked, journal.carry, journal.restart = learn_then_lock, carry, killed
learning.compact(path, 0)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("point", ["in the section", "after the section", "after the rename"])
def test_sigkill_between_the_tail_and_the_new_journal_counts_each_message_once(model, point):
    """A fold killed while it appends the new file's section (the tail carried), after it and
    before the rename, or after the rename and before the journal is replaced by the tail:
    the old file and its journal, or the new file and its section, each message once; the
    next learner and the next fold go on from there."""
    expected = load_model(model)
    for raw, label in NEW[:5]:
        learn_as_learners(expected, raw, label)
    for raw, label in NEW[:3]:
        learning.learn(model, raw, label, None, detach=False)
    snapshot = model.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.run([sys.executable, "-c", _FOLD_KILLED, str(model), point,
                              str(CORPUS)], env=env)
    assert process.returncode == -signal.SIGKILL
    from textnb.store.container import read
    found = journal.read(read(model, "text-classifier", writable=False))
    if point == "after the rename":  # the new file, read with its section of the journal
        assert model.read_bytes() != snapshot and found.start > 0 and len(found.documents) == 2
    else:  # the old file and its journal, the section after its last commit not read
        assert model.read_bytes() == snapshot and found.start == 0
        assert len(found.documents) == 5 and found.end < found.size
    _readers_agree(model, expected)
    assert load_model(model).digests_.size == expected.digests_.size
    learning.learn(model, NEW[5][0], NEW[5][1], None, detach=False)
    learn_as_learners(expected, NEW[5][0], NEW[5][1])
    _readers_agree(model, expected)
    assert learning.compact(model, over=0) is True and journal.size_of(model) == 0
    _readers_agree(model, expected)
    assert load_model(model).digests_.size == expected.digests_.size


def test_imap_and_serve_load_the_model_again_when_its_journal_grows(model, monkeypatch):
    """textnb imap's and the daemon's models in memory follow what a learn appends."""
    from textnb.imap.verdicts import Verdicts
    from textnb.serve.model import Model
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 20)
    verdicts, served = Verdicts(model), Model(model)
    learned = verdicts.classifier.digests_.size
    assert verdicts.learn(NEW[0][0], "spam") is True
    assert model.exists() and os.path.exists(journal.path_of(model))
    verdicts.refresh()
    assert verdicts.classifier.digests_.size == learned + 1
    assert served.refresh().classifier.digests_.size == learned + 1


def test_a_tell_reads_neither_the_journal_nor_a_new_file_whole(model, monkeypatch):
    """The daemon's TELL learns by the classes of the model in memory: a journal grown by the
    last TELL is not read for the next one (a CHECK reads it); of a file written anew
    (compacted, trained again) it reads the classes in its meta.json, and the next CHECK loads
    it whole."""
    from textnb.serve.model import Model
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 20)
    served = Model(model)
    loads = []
    real = Model.load
    monkeypatch.setattr(Model, "load", lambda self: loads.append(1) or real(self))
    first = served.version
    assert learning.learn(model, NEW[0][0], "spam", None) is True
    assert served.for_tell() == first.labels and not loads
    assert served.refresh() is not first and len(loads) == 1
    assert learning.learn(model, NEW[1][0], "spam", None) is True
    time.sleep(0.01)
    save_model(load_model(model), model)  # compacted: another file
    assert served.for_tell() == first.labels and len(loads) == 1
    assert served.refresh().classifier.digests_.size == first.classifier.digests_.size + 2
    assert len(loads) == 2


@pytest.mark.parametrize("reader", ["load_model", "Scorer"])
def test_a_fold_between_reading_the_file_and_its_journal_loses_nothing(model, monkeypatch, reader):
    """A fold writes the file anew, then removes the journal: a reader that read the old file
    just before and looks for the journal just after must read again, not score the old file
    without the messages its journal held."""
    for raw, label in NEW[:4]:
        learning.learn(model, raw, label, None)
    expected = load_model(model).predict_log_proba(PROBES[:6])
    real, folded = journal.read, []

    def fold_first(found_model):
        if not folded:                      # the fold lands between the file and the journal
            folded.append(True)
            monkeypatch.setattr(journal, "read", real)
            assert learning.compact(model, over=0)
            monkeypatch.setattr(journal, "read", fold_first)
        return real(found_model)
    monkeypatch.setattr(journal, "read", fold_first)
    if reader == "load_model":
        got = load_model(model).predict_log_proba(PROBES[:6])
    else:
        scorer = Scorer(model)
        got = [scorer.log_proba(d.text, d.fields) for d in PROBES[:6]]
    assert folded and not os.path.exists(journal.path_of(model))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
