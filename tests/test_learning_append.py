"""The journal's fast writer (textnb.store.appending): what learning one message through a
model file reads and writes, against the general path (textnb.store.learning.Update, which
loads the whole model) and the full recompute of the score constants."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from textnb import TextClassifier
from textnb.store import appending, journal, learning
from textnb.store.text_model import load_model, save_model, score_constants

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "spamassassin"
SPAM = [f.read_bytes() for f in sorted((CORPUS / "spam").iterdir())]
HAM = [f.read_bytes() for f in sorted((CORPUS / "ham").iterdir())]

# New terms, a message learned again, one moved between the classes, one forgotten (its
# terms leaving the vocabulary) and learned again, forgotten twice.
STEPS = ([("learn", SPAM[40 + i], "spam", None) for i in range(4)]
         + [("learn", HAM[40 + i], "ham", None) for i in range(4)]
         + [("learn", SPAM[40], "spam", None),           # again: nothing changes
            ("learn", SPAM[41], "ham", "spam"),          # moved to ham
            ("forget", HAM[42], ["ham", "spam"], None),  # its rare terms leave V
            ("learn", HAM[42], "ham", None),             # and come back
            ("forget", HAM[43], ["spam"], None),         # never learned as spam: nothing
            ("learn", SPAM[44], "spam", None)])

SETTINGS = {"complement, l2 (the default)": {},
            "multinomial, raw counts": {"model": "multinomial", "norm": None, "alpha": 1.0},
            "multinomial, binary, priors": {"model": "multinomial", "tf": "binary",
                                            "fit_prior": True},
            "complement, raw, priors": {"norm": None, "fit_prior": True, "alpha": 0.5}}


def fitted(**settings) -> TextClassifier:
    return TextClassifier(n_jobs=1, spam_class="spam", training="full", **settings).fit(
        SPAM[:40] + HAM[:40], ["spam"] * 40 + ["ham"] * 40)


def run(path: Path, step) -> bool:
    op, raw, label, other = step
    if op == "learn":
        return learning.learn(path, raw, label, other)
    return learning.forget(path, raw, label)


def records(path: Path) -> list[dict]:
    lines = Path(journal.path_of(path)).read_bytes().splitlines()[1:]
    return [json.loads(line[9:]) for line in lines]


def recomputed(path: Path) -> tuple[list[float], list[float]]:
    """(score_bias, score_constants) derived afresh from the counts load_model reads."""
    model = load_model(path).model_
    model._update()
    return model._bias().tolist(), score_constants(model).ravel().tolist()


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_the_fast_writer_appends_what_the_general_path_appends(tmp_path, monkeypatch,
                                                               settings):
    """Step by step: the same changes reported, the same document records bit for bit, and
    score constants equal to those a full recompute gives (to rounding: the fast writer adds
    the message's sums to exp(a_c), the recompute sums every term)."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 24)
    fast, general = tmp_path / "fast.model", tmp_path / "general.model"
    save_model(fitted(**settings), fast)
    shutil.copy(fast, general)
    changes = 0

    def general_only(path):
        raise appending.Declined("the general path, for the test")

    def no_update(*args):
        raise AssertionError("the fast writer handed an update over")

    for step in STEPS:
        terms = len(load_model(general).vocabulary_.terms_)
        with monkeypatch.context() as m:
            m.setattr(learning, "reopen", general_only)
            want = run(general, step)
        if step[0] == "forget" and want:  # terms left the vocabulary: |V| is in every a_c
            assert len(load_model(general).vocabulary_.terms_) < terms
        with monkeypatch.context() as m:
            m.setattr(learning, "Update", no_update)
            got = run(fast, step)
        assert got == want
        mine, theirs = records(fast), records(general)
        assert [r for r in mine if r["op"] != "commit"] == \
            [r for r in theirs if r["op"] != "commit"]
        if not want:
            continue
        changes += 1
        bias, constants = recomputed(general)
        assert theirs[-1]["score_constants"] == constants  # the general path: the recompute
        assert theirs[-1]["score_bias"] == bias
        assert np.allclose(mine[-1]["score_constants"], constants, rtol=1e-13, atol=0)
        assert np.allclose(mine[-1]["score_bias"], bias, rtol=1e-13, atol=1e-15)
        assert recomputed(fast) == (bias, constants)  # the same counts, the same model
    assert changes == len(STEPS) - 2  # learned again, forgotten where never learned
    assert sum(r["op"] == "commit" for r in records(fast)) == changes


def test_the_next_update_in_a_process_reads_the_file_again_only_if_another_wrote_it(
        tmp_path, monkeypatch):
    """A daemon's TELLs: the update written last is reused while the file and its journal are
    as it left them; after another writer's update (here the general path's) they are read
    again, and the model is the one of every message either learned."""
    monkeypatch.setattr(journal, "COMPACT_BYTES", 1 << 24)
    path = tmp_path / "spam.model"
    save_model(fitted(), path)
    opened = []
    real = appending.Appender.__init__
    monkeypatch.setattr(appending.Appender, "__init__",
                        lambda self, p: opened.append(p) or real(self, p))
    assert learning.learn(path, SPAM[40], "spam", None)
    assert learning.learn(path, SPAM[41], "spam", None)
    assert learning.learn(path, SPAM[41], "spam", None) is False
    assert len(opened) == 1
    with monkeypatch.context() as m:  # another writer: the whole model read, the journal grown
        m.setattr(learning, "reopen", lambda p: (_ for _ in ()).throw(appending.Declined("")))
        assert learning.learn(path, HAM[40], "ham", None)
    assert learning.learn(path, HAM[41], "ham", "spam")
    assert len(opened) == 2
    assert learning.learn(path, HAM[40], "ham", None) is False  # the other writer's, seen
    expected = fitted()
    expected.partial_fit(SPAM[40:42] + HAM[40:42], ["spam", "spam", "ham", "ham"])
    loaded = load_model(path)
    assert np.array_equal(loaded.model_.feature_count_, expected.model_.feature_count_)
    assert np.allclose(loaded.model_.class_log_prior_, expected.model_.class_log_prior_)
    bias, constants = recomputed(path)
    assert np.allclose(records(path)[-1]["score_constants"], constants, rtol=1e-13, atol=0)


def test_a_model_the_fast_writer_does_not_keep_learns_through_the_general_path(tmp_path):
    """Bernoulli's score_bias sums over every term: the whole model is read, as before."""
    path = tmp_path / "bernoulli.model"
    save_model(fitted(model="bernoulli"), path)
    with pytest.raises(appending.Declined):
        appending.Appender(path)
    expected = load_model(path)
    assert learning.learn(path, SPAM[40], "spam", None) is True
    expected.partial_fit([SPAM[40]], ["spam"])
    assert np.allclose(load_model(path).model_.feature_count_, expected.model_.feature_count_)


LEARN = ("import sys\nsys.modules['numpy'] = sys.modules['click'] = None\n"  # would fail
         "from textnb.__main__ import main\nsys.argv[0] = 'textnb'\nmain()")


def textnb(*args: str) -> "subprocess.CompletedProcess":
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", LEARN, *args], capture_output=True, text=True,
                          env={"PYTHONPATH": str(CORPUS.parents[1])})


def test_textnb_learn_appends_without_numpy_or_click(tmp_path):
    """``textnb learn --class spam PATH`` into a model of that class: the lean path, which
    imports neither numpy nor click (either would fail here), appends the commit and leaves
    the file untouched; learned again, it says so as the full command does."""
    path = tmp_path / "spam.model"
    save_model(fitted(), path)
    before = path.read_bytes()
    message = tmp_path / "m"
    message.write_bytes(SPAM[40])
    done = textnb("learn", "--class", "spam", "-m", str(path), str(message))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"learned 1 document as spam -> {path}\n"
    assert path.read_bytes() == before
    assert [r["op"] for r in records(path)] == ["learn", "commit"]
    done = textnb("learn", "--class=spam", f"--model={path}", str(message))
    assert done.stdout == (f"learned 0 documents as spam -> {path} "
                           f"(1 learned as spam already, not counted again)\n")
    assert textnb("learn", "-q", "--class", "spam", "-m", str(path), str(message)).stdout == ""
    expected = fitted()
    expected.partial_fit([SPAM[40]], ["spam"])
    assert np.array_equal(load_model(path).model_.feature_count_,
                          expected.model_.feature_count_)


@pytest.mark.parametrize("args", [["--class", "Spam"], ["--class", "spam", "--unlearn"],
                                  ["--class", "spam", "EMPTY"]],
                         ids=["a class the model has not", "unlearn", "an empty file"])
def test_textnb_learn_hands_what_it_does_not_do_to_the_full_command(tmp_path, args):
    """Cases the lean path leaves to the full command, which then needs click: the import
    fails here, so the exit code is not 0 and nothing was written."""
    path = tmp_path / "spam.model"
    save_model(fitted(), path)
    message, empty = tmp_path / "m", tmp_path / "EMPTY"
    message.write_bytes(SPAM[40])
    empty.write_bytes(b"")
    args = [str(empty) if a == "EMPTY" else a for a in args]
    done = textnb("learn", *args, "-m", str(path), str(message))
    assert done.returncode != 0 and "click" in done.stderr
    assert not Path(journal.path_of(path)).exists()


def test_a_prepared_model_is_what_the_next_learner_reopens_unless_written_since(tmp_path):
    """prepare reads the file for this process's next reopen (a daemon's, after its fold
    replaced the file): reopen hands that Appender out, reading nothing; once the file has
    been written since (its signature: inode, size, time), reopen reads it afresh."""
    path = tmp_path / "m.model"
    save_model(fitted(), path)
    key = str(path.resolve())
    reads = []
    real = appending.Appender.__init__

    def counted(self, p):
        reads.append(p)
        real(self, p)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(appending.Appender, "__init__", counted)
        appending.prepare(path)
        prepared = appending._written[key][1]
        assert reads == [path]
        assert appending.reopen(path) is prepared and reads == [path]
        appending.prepare(path)
        stale = appending._written[key][1]
        os.utime(path, ns=(1, 1))  # written by another since
        assert appending.reopen(path) is not stale and len(reads) == 3
    assert learning.learn(path, SPAM[50], "spam", None)
