"""TextClassifier ⇄ one model file: identical round trips, atomic writes, clear errors for bad files."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from textnb import ModelFileError, load_model, save_model
from textbook import TextClassifier
from textnb.store import container as modelfile
from textnb.store import plain
from textnb.store import schema

TEXTS = ["cheap pills now", "cheap money now!!!", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting",
         "Grüße aus Köln", "the football results"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham", "other", "other"]
PROBES = TEXTS + ["", "cheap lunch", "unknown words only", "köln football pills"]


def _classifier(**settings) -> TextClassifier:
    return TextClassifier(**{"stop_words": "english", **settings}).fit(TEXTS, LABELS)


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "spam.model"
    save_model(_classifier(), path)
    return path


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("settings", [
    {"model": "multinomial"},
    {"model": "bernoulli", "alpha": 0.5},
    {"model": "complement", "fit_prior": False},
    {"model": "multinomial", "tf": "log", "norm": "l2", "ngram_range": (1, 2),
     "class_prior": [0.5, 0.2, 0.3], "stop_words": {"the", "at"}, "max_token_length": 6},
    {"model": "multinomial", "stemmer": "porter", "min_df": 1, "max_df": 0.9, "lowercase": False},
])
def test_round_trip_gives_identical_probabilities(tmp_path, settings):
    clf = _classifier(**settings)
    path = tmp_path / "m.model"
    save_model(clf, path)
    loaded = load_model(path)
    # The file's n_jobs starts no processes: a loaded model works in one unless told otherwise.
    assert loaded.get_params() == {**clf.get_params(), "n_jobs": 1,
                                   **({"stop_words": ["at", "the"]} if "stop_words" in settings else {})}
    assert loaded.vocabulary_.terms_ == clf.vocabulary_.terms_
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    # Loaded, the terms are looked up by bisection, with no dict of them (Vocabulary._lookup).
    assert "_index" not in loaded.vocabulary_.__dict__
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(PROBES), clf.predict_joint_log_proba(PROBES))
    assert "_index" not in loaded.vocabulary_.__dict__
    np.testing.assert_array_equal(loaded.predict_proba(PROBES), clf.predict_proba(PROBES))
    np.testing.assert_array_equal(loaded.predict(PROBES), clf.predict(PROBES))


def test_loaded_classifier_keeps_learning_and_unlearning(model_path):
    loaded = load_model(model_path)
    loaded.unlearn(["cheap pills now"], ["spam"])     # the digests of learned texts survive
    loaded.partial_fit(["brand new spam words"], ["spam"])
    expected = _classifier().unlearn(["cheap pills now"], ["spam"]).partial_fit(
        ["brand new spam words"], ["spam"])
    np.testing.assert_array_equal(loaded.predict_proba(PROBES), expected.predict_proba(PROBES))
    with pytest.raises(ValueError, match="never learned as 'spam'"):
        loaded.unlearn(["cheap pills now"], ["spam"])


def test_round_trip_with_integer_labels(tmp_path):
    clf = TextClassifier(stop_words="none").fit(TEXTS, [0, 0, 0, 1, 1, 1, 2, 2])
    save_model(clf, tmp_path / "int.model")
    loaded = load_model(tmp_path / "int.model")
    assert loaded.classes_.tolist() == [0, 1, 2]
    assert loaded.predict(["cheap pills"]).tolist() == [0]
    loaded.unlearn([TEXTS[3]], [1])


def test_save_creates_directories_and_keeps_permissions(tmp_path):
    path = tmp_path / "new" / "dir" / "spam.model"
    save_model(_classifier(), path)
    assert load_model(path).classes_.tolist() == ["ham", "other", "spam"]
    os.chmod(path, 0o600)
    save_model(_classifier(alpha=0.5), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_model(path).alpha == 0.5


def test_the_file_holds_no_pickles(model_path):
    with zipfile.ZipFile(model_path) as archive:
        names = sorted(archive.namelist())
        meta = json.loads(archive.read("meta.json"))
        arrays = {n: np.lib.format.read_array(io.BytesIO(archive.read(n)), allow_pickle=False)
                  for n in names if n.endswith(".npy")}
    assert names == ["class_count.npy", "count_classes.npy", "count_indptr.npy",
                     "count_values.npy", "digest_classes.npy", "digests.npy", "meta.json",
                     "score_bias.npy", "score_constants.npy", "term_ends.npy", "terms.npy"]
    assert (meta["format"], meta["version"], meta["kind"]) == ("textnb-model", 3, "text-classifier")
    assert all(a.dtype != object for a in arrays.values())


# -- format 3: counts by term, non-zero only, exact ---------------------------------------------

def _arrays(path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as archive:
        assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}
        return {n[:-4]: np.lib.format.read_array(io.BytesIO(archive.read(n)), allow_pickle=False)
                for n in archive.namelist() if n.endswith(".npy")}


def test_counts_are_stored_by_term_non_zero_only(model_path):
    clf, arrays = _classifier(), _arrays(model_path)
    counts = clf.model_.feature_count_                       # (3 classes, n_terms), integral
    assert arrays["count_values"].dtype == np.uint8          # the smallest type that holds them
    assert arrays["count_values"].size == np.count_nonzero(counts) < counts.size
    indptr, classes = arrays["count_indptr"], arrays["count_classes"]
    assert indptr.dtype == classes.dtype == np.uint8 and indptr.shape == (counts.shape[1] + 1,)
    k = clf.vocabulary_.index_["cheap"]                      # 3 times in spam, nowhere else
    assert classes[indptr[k]:indptr[k + 1]].tolist() == [clf.classes_.tolist().index("spam")]
    assert arrays["count_values"][indptr[k]:indptr[k + 1]].tolist() == [3]
    dense = np.zeros_like(counts)
    term = np.repeat(np.arange(counts.shape[1]), np.diff(indptr))
    dense[classes, term] = arrays["count_values"]
    np.testing.assert_array_equal(dense, counts)
    assert "feature_count" not in arrays and "score_weights" not in arrays


@pytest.mark.parametrize("settings, unlabeled, dtype", [
    ({"tf": "raw"}, None, np.uint16),                        # a term 300 times in one class
    ({"tf": "log", "norm": "l2"}, None, np.float64),         # weighted counts
    ({"tf": "raw"}, ["cheap pills at noon", "the football notes"], np.float64),   # EM's
])
def test_counts_round_trip_exactly(tmp_path, settings, unlabeled, dtype):
    texts, labels = TEXTS + ["pills " * 300], LABELS + ["spam"]
    clf = _classifier(**settings).fit(texts, labels, unlabeled=unlabeled)
    save_model(clf, tmp_path / "m.model")
    assert _arrays(tmp_path / "m.model")["count_values"].dtype == dtype
    loaded = load_model(tmp_path / "m.model")
    np.testing.assert_array_equal(loaded.model_.feature_count_, clf.model_.feature_count_)
    np.testing.assert_array_equal(loaded.model_.class_count_, clf.model_.class_count_)
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(PROBES),
                                  clf.predict_joint_log_proba(PROBES))


# -- files of earlier formats -------------------------------------------------------------------

# Written by the save_model of format 2 (commit 6f0772d) from these texts, default settings
# but for the model, by the tokenizer of then ("$500" had no shape: the no_shapes fixture).
FORMAT_2 = {name: os.path.join(os.path.dirname(__file__), "data", "models", f"v2-{name}.model")
            for name in ("complement", "bernoulli")}
V2_TEXTS = ["cheap pills now", "cheap money now!!! $500", "win money, win cheap pills",
            "meeting at noon", "lunch at noon with notes", "notes from the meeting",
            "the football results", "football tonight, results at noon"]
V2_LABELS = ["spam", "spam", "spam", "ham", "ham", "ham", "sport", "sport"]


@pytest.mark.parametrize("model", ["complement", "bernoulli"])
def test_format_2_files_still_load_and_score_and_are_rewritten_in_format_3(tmp_path, model,
                                                                            no_shapes):
    from textnb import TextClassifier as Library
    from textnb.store.scorer import Scorer
    expected = Library(model=model, stop_words="english",  # then the default; one-letter
                       min_token_length=1,  # words were kept then, and words outside the
                       unseen="drop").fit(V2_TEXTS, V2_LABELS)  # vocabulary dropped
    with zipfile.ZipFile(FORMAT_2[model]) as archive:
        assert json.loads(archive.read("meta.json"))["version"] == 2
    loaded = load_model(FORMAT_2[model])
    # A file without the setting tokenizes as it was written: "z" and "7" stay words.
    assert loaded.min_token_length == 1 and Scorer(FORMAT_2[model]).tokenizer.min_length == 1
    assert loaded._tokenizer()("z 7 bb") == ["z", "7", "bb"]
    np.testing.assert_array_equal(loaded.model_.feature_count_, expected.model_.feature_count_)
    # Scored with the weights the file holds, as the mail filter scores it: the weights the
    # textnb of then derived from these counts, a few units in the last place from today's.
    np.testing.assert_allclose(loaded.predict_proba(PROBES), expected.predict_proba(PROBES),
                               rtol=1e-13, atol=1e-15)
    save_model(loaded, tmp_path / "v3.model")
    assert os.path.getsize(tmp_path / "v3.model") < os.path.getsize(FORMAT_2[model])
    for path in (FORMAT_2[model], tmp_path / "v3.model"):    # the mail filter's numpy-free path
        scorer = Scorer(path)
        for text in PROBES:
            np.testing.assert_allclose(scorer.log_proba(text),
                                       expected.predict_log_proba([text])[0],
                                       rtol=1e-12, atol=1e-12)


# -- atomic writes ------------------------------------------------------------------------------

def test_save_leaves_no_temporary_files(tmp_path):
    for alpha in (1.0, 0.5, 0.25):
        save_model(_classifier(alpha=alpha), tmp_path / "spam.model")
    assert sorted(os.listdir(tmp_path)) == ["spam.model"]


def test_failed_write_leaves_the_old_model_intact(model_path, monkeypatch):
    old_bytes = model_path.read_bytes()
    calls = []

    def fail_on_second_array(out, array, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return original(out, array, **kwargs)

    original = np.lib.format.write_array
    monkeypatch.setattr(np.lib.format, "write_array", fail_on_second_array)
    with pytest.raises(OSError, match="No space left on device") as raised:
        save_model(_classifier(alpha=0.1), model_path)
    assert len(calls) == 2                            # it failed in the middle of the file
    # Named as the model (a full disk said only "No space left on device").
    assert (raised.value.errno, raised.value.filename) == (28, str(model_path))
    assert str(raised.value) == f"[Errno 28] No space left on device: '{model_path}'"
    assert model_path.read_bytes() == old_bytes
    assert os.listdir(model_path.parent) == ["spam.model"]
    monkeypatch.undo()
    assert load_model(model_path).alpha == 1.0


def test_a_directory_that_takes_no_new_file_is_named_by_the_model(tmp_path, monkeypatch):
    """The temporary file could not be made: the error names the model the user asked for
    (`textnb train -m /proc/x.tnb` said "/proc/.x.tnb.5967.xf631797.textnb-tmp: No such file
    or directory")."""
    import tempfile

    def refuse(prefix, suffix, dir):
        raise PermissionError(13, "Permission denied", os.path.join(dir, prefix + "xyz" + suffix))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError) as raised:
        save_model(_classifier(), tmp_path / "spam.model")
    assert raised.value.filename == str(tmp_path / "spam.model")
    assert raised.value.strerror == "Permission denied" and raised.value.errno == 13
    assert os.listdir(tmp_path) == []


def test_interrupted_write_leaves_the_old_model_intact(model_path, monkeypatch):
    old_bytes = model_path.read_bytes()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        save_model(_classifier(alpha=0.1), model_path)
    assert model_path.read_bytes() == old_bytes
    assert os.listdir(model_path.parent) == ["spam.model"]


# -- bad files ------------------------------------------------------------------------------------

def _zip(path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _rewrite_meta(source, target, **changes) -> None:
    """Copy a model file, changing some keys of its meta.json."""
    with zipfile.ZipFile(source) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(files["meta.json"])
    meta.update(changes)
    files["meta.json"] = json.dumps(meta).encode()
    _zip(target, files)


def _expect_error(path, message: str) -> None:
    with pytest.raises(ModelFileError, match=message) as error:
        load_model(path)
    assert os.fspath(path) in str(error.value)


def test_missing_file(tmp_path):
    _expect_error(tmp_path / "nowhere.model", "does not exist")


def test_directory(tmp_path):
    _expect_error(tmp_path, "is a directory")


def test_truncated_file(model_path, tmp_path):
    data = model_path.read_bytes()
    for size in (0, 10, len(data) // 2, len(data) - 1):
        path = tmp_path / f"truncated{size}.model"
        path.write_bytes(data[:size])
        _expect_error(path, "is truncated or corrupt")


def test_corrupt_array_bytes_fail_the_checksum(model_path, tmp_path):
    data = bytearray(model_path.read_bytes())
    start = data.index(b"\x93NUMPY", data.index(b"terms.npy")) + 130
    data[start:start + 8] = b"\xff" * 8
    path = tmp_path / "corrupt.model"
    path.write_bytes(bytes(data))
    _expect_error(path, "is truncated or corrupt")


def test_not_a_zip_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("this is not a model\n")
    _expect_error(path, "is truncated or corrupt")
    binary = tmp_path / "random.bin"
    binary.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 2000, dtype=np.uint8)))
    _expect_error(binary, "is truncated or corrupt")


def test_foreign_zip_file(tmp_path):
    path = tmp_path / "foreign.zip"
    _zip(path, {"readme.txt": b"hello"})
    _expect_error(path, "is not a textnb model file")
    other = tmp_path / "other.zip"
    _zip(other, {"meta.json": json.dumps({"format": "something-else", "version": 1}).encode()})
    _expect_error(other, "is not a textnb model file")
    listing = tmp_path / "list.zip"
    _zip(listing, {"meta.json": b"[1, 2, 3]"})
    _expect_error(listing, "is not a textnb model file")


def test_zip_with_an_unsupported_compression_method(tmp_path):
    path = tmp_path / "deflate64.zip"
    _zip(path, {"meta.json": b'{"format": "textnb-model"}'})
    data = bytearray(path.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[8:10] = data[central + 10:central + 12] = (9).to_bytes(2, "little")   # Deflate64
    path.write_bytes(bytes(data))
    _expect_error(path, "is truncated or corrupt")


def test_wrong_kind(tmp_path):
    path = tmp_path / "table.model"
    modelfile.save(path, "gaussian-table", {"columns": ["height"]}, {"mean": np.zeros(2)})
    _expect_error(path, "holds a 'gaussian-table' model, not a 'text-classifier' one")


def test_newer_version(model_path, tmp_path):
    path = tmp_path / "future.model"
    _rewrite_meta(model_path, path, version=4)
    _expect_error(path, "has format version 4; this textnb reads up to 3: upgrade textnb")


def test_version_1_files_with_the_terms_in_the_metadata_still_load(tmp_path):
    model_path = FORMAT_2["complement"]
    with zipfile.ZipFile(model_path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()
                 if name not in ("terms.npy", "term_ends.npy", "score_bias.npy",
                                 "score_weights.npy")}
    meta = json.loads(files["meta.json"])
    expected = load_model(model_path)
    meta.update(version=1, terms=expected.vocabulary_.terms_)
    files["meta.json"] = json.dumps(meta).encode()
    _zip(tmp_path / "v1.model", files)
    loaded = load_model(tmp_path / "v1.model")
    assert loaded.vocabulary_.terms_ == expected.vocabulary_.terms_
    # Format 1 keeps no weights: derived from the counts, as format 2's stored ones were then.
    np.testing.assert_allclose(loaded.predict_proba(PROBES), expected.predict_proba(PROBES),
                               rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("changes", [{"version": "2"}, {"version": None}, {"classes": ["spam"]},
                                     {"version": 1, "terms": 5},
                                     {"params": {"alpha": 1.0, "bogus": 1}},
                                     {"params": None}])
def test_corrupt_metadata(model_path, tmp_path, changes):
    path = tmp_path / "meta.model"
    _rewrite_meta(model_path, path, **changes)
    _expect_error(path, "is truncated or corrupt|is corrupt|is not a textnb model file")


def test_invalid_json_metadata(model_path, tmp_path):
    with zipfile.ZipFile(model_path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    files["meta.json"] = b'{"format": "textnb-model", '
    path = tmp_path / "json.model"
    _zip(path, files)
    _expect_error(path, "is truncated or corrupt")


def test_missing_or_misshapen_arrays(model_path, tmp_path):
    with zipfile.ZipFile(model_path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    missing = tmp_path / "missing.model"
    _zip(missing, {k: v for k, v in files.items() if k != "count_values.npy"})
    _expect_error(missing, "is corrupt")
    misshapen = tmp_path / "shape.model"
    _zip(misshapen, {**files, "count_indptr.npy": _npy(np.zeros((3, 2), dtype=np.uint8))})
    _expect_error(misshapen, r"is corrupt \(count_indptr of shape \(3, 2\)")
    bad_index = tmp_path / "index.model"
    _zip(bad_index, {**files, "digest_classes.npy": _npy(np.full(8, 99, dtype=np.int64))})
    _expect_error(bad_index, "is corrupt")


def test_pickled_arrays_are_refused(model_path, tmp_path):
    with zipfile.ZipFile(model_path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    path = tmp_path / "pickle.model"
    _zip(path, {**files, "class_count.npy": _npy(np.array([object(), 1], dtype=object),
                                                  allow_pickle=True)})
    _expect_error(path, "is truncated or corrupt")


# -- paths: symbolic links, temporary files, locks ---------------------------------------------

def test_a_symlinked_model_is_written_and_locked_through_the_link(tmp_path):
    from click.testing import CliRunner
    from textnb.cli.app import main
    real = tmp_path / "real"
    real.mkdir()
    target = real / "spam.model"
    save_model(_classifier(), target)
    link = tmp_path / "link.model"
    link.symlink_to(target)
    (tmp_path / "new.txt").write_text("brand new cheap offer")
    done = CliRunner().invoke(main, ["learn", "--class", "spam", "-m", str(link),
                                     str(tmp_path / "new.txt")])
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "offer" in load_model(target).vocabulary_.terms_
    # The message is in the model's journal, beside the target as its lock is.
    assert sorted(os.listdir(real)) == ["spam.model", "spam.model.journal", "spam.model.lock"]
    assert sorted(os.listdir(tmp_path)) == ["link.model", "new.txt", "real"]


def test_the_lock_of_a_link_is_the_lock_of_its_target(tmp_path):
    import fcntl
    target = tmp_path / "spam.model"
    (tmp_path / "link.model").symlink_to(target)
    with modelfile.locked(tmp_path / "link.model"):
        with open(f"{target}.lock") as lock:   # held: a second locker must wait
            with pytest.raises(BlockingIOError):
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert not (tmp_path / "link.model.lock").exists()


def test_temporary_files_are_named_for_the_model_and_the_writer(model_path, monkeypatch):
    import re
    seen = []
    original = os.replace

    def spy(source, target):
        seen.append(os.path.basename(source))
        return original(source, target)

    monkeypatch.setattr(os, "replace", spy)
    save_model(_classifier(), model_path)
    assert len(seen) == 1
    assert re.fullmatch(rf"\.spam\.model\.{os.getpid()}\.\w+\.textnb-tmp", seen[0]), seen


def test_stale_temporary_files_of_dead_writers_are_removed(model_path):
    import subprocess
    import sys
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    old = 2 * modelfile.STALE_SECONDS
    files = {f".spam.model.{dead_pid}.abc123.textnb-tmp": old,     # killed writer: removed
             f".spam.model.{dead_pid}.new456.textnb-tmp": 0,       # too recent: kept
             f".spam.model.{os.getpid()}.live78.textnb-tmp": old,  # writer alive: kept
             f".other.model.{dead_pid}.x.textnb-tmp": old,         # another model's: kept
             "notes.textnb-tmp": old}
    for name, age in files.items():
        path = model_path.parent / name
        path.write_bytes(b"partial")
        os.utime(path, (path.stat().st_atime - age, path.stat().st_mtime - age))
    save_model(_classifier(alpha=0.5), model_path)
    assert sorted(os.listdir(model_path.parent)) == sorted(
        ["spam.model", *(name for name in files if "abc123" not in name)])


def test_a_classifier_beyond_the_file_limits_is_not_fitted_nor_saved(tmp_path):
    """textnb never writes a file it would refuse to read: fit refuses the settings a file
    refuses, by the same rule, and a fitted classifier changed beyond them is not saved."""
    with pytest.raises(ValueError, match=r"ngram_range must be None or \(min_n, max_n\) with "
                                         r"1 <= min_n <= max_n <= 10, not \(1, 11\)"):
        TextClassifier(stop_words="none", ngram_range=(1, schema.MAX_NGRAM + 1)).fit(
            TEXTS, LABELS)
    clf = TextClassifier(stop_words="none").fit(TEXTS, LABELS)
    clf.alpha = float("inf")
    with pytest.raises(ValueError, match=r"cannot save this classifier: alpha must be"):
        save_model(clf, tmp_path / "m.model")
    assert os.listdir(tmp_path) == []


def test_a_loaded_model_scores_with_its_counts_as_stored(model_path):
    """Loading keeps the counts as the file stores them (non-zero ones, by term): scoring
    derives the weights it needs from them, the same numbers as the trained model's, and the
    dense (classes × terms) counts are built only when something asks for them."""
    trained, loaded = _classifier(), load_model(model_path)
    assert "_feature_count" not in vars(loaded.model_)
    np.testing.assert_array_equal(loaded.predict_log_proba(TEXTS), trained.predict_log_proba(TEXTS))
    assert "_feature_count" not in vars(loaded.model_)
    np.testing.assert_array_equal(loaded.model_.feature_count_, trained.model_.feature_count_)


# -- the plain reader's passes in C and in Python ---------------------------------------------

def _both(function_c, function_python, *args):
    return function_c(*args), function_python(*args)


@pytest.mark.skipif(plain._fast is None, reason="textnb._modelfile is not built")
def test_sorted_lines_in_c_is_its_python_definition():
    """sorted_lines (C) and _line_ends (Python) agree on every kind of terms blob: sorted or
    not, equal or prefix lines, every kind of UTF-8 sequence and broken ones."""
    import random
    rng = random.Random(0)
    pieces = ["a", "b", "ab", "z", "é", "東京", "\U0001f600", "\x7f", "\x00", "", " "]
    raw = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x80",
           b"\xc3", b"\xf0\x9f\x98", b"\x80"]
    blobs = [b"", b"\n", b"a", b"a\nb", b"b\na", b"a\na", b"a\nab", b"ab\na", b"a\n",
             b"\na", "é\nz".encode(), "z\né".encode(), b"a" * 20 + b"\n" + b"a" * 21]
    for _ in range(3000):
        lines = ["".join(rng.choice(pieces) for _ in range(rng.randrange(4)))
                 for _ in range(rng.randrange(6))]
        if rng.random() < 0.5:
            lines.sort()
        blob = "\n".join(lines).encode("utf-8")
        if rng.random() < 0.2:
            at = rng.randrange(len(blob) + 1)
            blob = blob[:at] + rng.choice(raw) + blob[at:]
        blobs.append(blob)
    for blob in blobs:
        expected = plain._line_ends(blob)
        lines = len(expected) if expected is not None else blob.count(b"\n") + bool(blob)
        found = plain._fast.sorted_lines(blob, lines)
        assert (list(memoryview(found).cast("Q")) if found is not None else None) == expected, blob
        if expected:   # the number of lines must be the one the file declares
            assert plain._fast.sorted_lines(blob, lines + 1) is None


@pytest.mark.skipif(plain._fast is None, reason="textnb._modelfile is not built")
def test_rows_in_c_is_its_python_definition():
    import random
    from array import array
    rng = random.Random(1)
    for _ in range(3000):
        n_classes = rng.randrange(1, 5)
        rows = [sorted(rng.sample(range(n_classes + 1), rng.randrange(min(3, n_classes + 1))))
                for _ in range(rng.randrange(5))]
        if rows and rng.random() < 0.3:
            rng.shuffle(rows[rng.randrange(len(rows))])
        classes = [c for row in rows for c in row]
        indptr = [0]
        for row in rows:
            indptr.append(indptr[-1] + len(row))
        if rng.random() < 0.2 and len(indptr) > 1:
            indptr[rng.randrange(len(indptr))] += rng.choice((-1, 1))
        indptr = [max(i, 0) for i in indptr]
        for typecode in ("B", "H", "I", "Q"):
            a, b = array(typecode, indptr), array(typecode, classes)
            assert (plain._fast.rows(a, b, n_classes)
                    == plain._rows_problem(a, b, n_classes)), (indptr, classes, n_classes)


# -- multi-label files: the same container, their own table ---------------------------------------

def test_a_multilabel_file_is_held_to_its_table(tmp_path):
    from textnb import multilabel
    from textnb.store import multilabel_model
    texts = ["cheap pills now", "meeting at noon", "cheap meeting", "pills at noon"] * 3
    labels = [["spam"], ["work"], ["spam", "work"], ["spam"]] * 3
    path = tmp_path / "labels.model"
    multilabel_model.save_model(multilabel.MultiLabelClassifier(stop_words="none").fit(texts, labels),
                          path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
        arrays = {n[:-4]: np.lib.format.read_array(io.BytesIO(files[n])) for n in files
                  if n.endswith(".npy")}
    assert multilabel_model.load_model(path).n_jobs == 1

    def refused(reason, meta=None, **members):
        header = json.loads(files["meta.json"])
        header.update(meta or {})
        _zip(tmp_path / "bad.model", {**files, "meta.json": json.dumps(header).encode(),
                                      **{f"{n}.npy": _npy(a) for n, a in members.items()}})
        with pytest.raises(ModelFileError, match=reason):
            multilabel_model.load_model(tmp_path / "bad.model")

    refused("unknown setting 'evil'", {"params": {**json.loads(files["meta.json"])["params"],
                                                  "evil": 1}})
    refused("unknown key 'terms'", {"terms": []})
    refused("labels must be", {"labels": ["spam", "spam"]})
    refused("its cross-validation record", {"cv": {"precision": [2.0, 0.5], "recall": [1, 1],
                                                   "f1": [1, 1]}})
    refused("counted in more documents", label_count=arrays["label_count"] * 100)
    refused("feature_count: counts must be finite", feature_count=-arrays["feature_count"])
    refused(r"thresholds: scores", thresholds=arrays["thresholds"] + np.inf)
    refused(r"feature_count of shape \(2, \d+\), expected \(2, 3\)", total_count=np.zeros(3))
    refused("labels must be 1 to 1000", {"labels": [f"l{i}" for i in range(1001)]})



# -- meta.json read by json's C scanner -----------------------------------------------------------

def _once(pairs):
    if len(dict(pairs)) != len(pairs):
        raise ValueError("meta.json names a key twice")
    return dict(pairs)


def _as_json(text):
    """What json.loads(text, object_pairs_hook=...) makes of text, or its error, as a string."""
    try:
        return repr(json.loads(text, object_pairs_hook=_once))
    except RecursionError:
        return "RecursionError"
    except ValueError as error:
        return f"{type(error).__name__}: {error}"


def _as_read(text):
    try:
        return repr(modelfile.json_loads(text))
    except RecursionError:
        return "RecursionError"
    except ValueError as error:
        return f"{type(error).__name__}: {error}"


_VALUES = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


@given(_VALUES, st.sampled_from(["", " ", "\n\t ", "\r"]), st.sampled_from(["", " \n", "x", ",1"]))
@settings(max_examples=300, deadline=None)
def test_meta_is_read_as_json_loads_reads_it(value, before, after):
    text = before + json.dumps(value, separators=(",", ":")) + after
    assert _as_read(text) == _as_json(text)


@given(st.text(alphabet='{}[]",:0123456789.eE-+ truefalsnNIiyx\\\ufeff', max_size=30))
@settings(max_examples=500, deadline=None)
def test_meta_that_is_no_json_is_refused_as_json_loads_refuses_it(text):
    assert _as_read(text) == _as_json(text)


def test_meta_reader_without_json_s_c_scanner(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "_json", None)  # "from _json import ..." fails
    assert modelfile.json_loads('{"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(ValueError, match="twice"):
        modelfile.json_loads('{"a": 1, "a": 2}')
