"""textnb.store.verdict: the mail filter checks a model file once, then trusts its sidecar only
for the very file it checked."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from textnb import TextClassifier, save_model
from textnb.documents.message import parse_message
from textnb.errors import ModelFileError
from textnb.store.scorer import Scorer
from textnb.store import container, plain, verdict

TEXTS = ["cheap pills now", "cheap money now!!! $500", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham"]
MAIL = parse_message(b"Subject: cheap pills\n\ncheap cheap noon notes\n")


@pytest.fixture
def model(tmp_path, monkeypatch):
    """A saved model, and verdicts recorded at once (no wait for its change time to settle)."""
    monkeypatch.setattr(verdict, "SETTLED", 0.0)
    path = tmp_path / "m.model"
    save_model(TextClassifier().fit(TEXTS, LABELS), path)
    return path


def _read(path):
    return container.read(path, "text-classifier", writable=False, verdicts=True)


def test_a_file_checked_once_is_read_unchecked_after_with_the_same_scores(model, monkeypatch):
    first = _read(model)
    assert not first.checked and not os.path.exists(verdict.sidecar(str(model)))
    checked = first.plain()
    assert open(verdict.sidecar(str(model))).read() == first.verdict_key
    expected = Scorer(model).log_proba(MAIL.text, MAIL.fields)  # checked again: it was fresh

    # Vouched for: no CRC-32 but meta.json's and no rule is run (each would fail here), the
    # same values.
    crc32, summed = container.zlib.crc32, []
    monkeypatch.setattr(container.zlib, "crc32", lambda data: summed.append(len(data)) or crc32(data))
    monkeypatch.setattr(plain, "PLAIN_RULES", None)
    monkeypatch.setattr(container, "PLAIN_RULES", {})
    second = _read(model)
    # meta.json's and the member list's (the identity a journal names), no member's
    assert second.checked and len(summed) == 2 and max(summed) < 4096
    values = second.plain()
    assert values.keys() == checked.keys()
    for name in values:
        if name == "terms":
            assert values[name][0] == checked[name][0]
            assert list(values[name][1]) == list(checked[name][1])
        else:
            assert list(values[name]) == list(checked[name])
    assert Scorer(model).log_proba(MAIL.text, MAIL.fields) == expected


def test_a_file_changed_after_its_verdict_is_checked_again_and_refused(model):
    _read(model).plain()
    assert _read(model).checked
    data = bytearray(model.read_bytes())
    at = data.rindex(b"\x93NUMPY")  # the last member's values, changed in place: same size
    data[-200] ^= 0xFF
    time.sleep(0.05)  # past a tick of the file system's clock
    with open(model, "r+b") as f:
        f.write(data)
    assert at < len(data) - 200
    with pytest.raises(ModelFileError, match="corrupt"):
        Scorer(model)


def test_a_fresh_file_is_not_recorded(model, monkeypatch):
    monkeypatch.setattr(verdict, "SETTLED", 3600.0)
    _read(model).plain()
    assert not os.path.exists(verdict.sidecar(str(model)))
    assert not _read(model).checked


def test_a_filter_run_by_another_user_than_the_file_s_owner_records_nothing(model, monkeypatch):
    """Its record would be ignored (not the owner's), so it would write one for every message."""
    monkeypatch.setattr(verdict.os, "geteuid", lambda: os.stat(model).st_uid + 1)
    _read(model).plain()
    assert not os.path.exists(verdict.sidecar(str(model)))
    monkeypatch.undo()
    monkeypatch.setattr(verdict, "SETTLED", 0.0)
    _read(model).plain()
    assert os.path.exists(verdict.sidecar(str(model)))


def test_a_sidecar_naming_another_file_or_of_another_owner_is_ignored(model):
    first = _read(model)
    first.plain()
    side = verdict.sidecar(str(model))
    fields = first.verdict_key.split(" ")
    fields[4] = str(int(fields[4]) + 1)  # another size
    with open(side, "w") as f:
        f.write(" ".join(fields))
    assert not _read(model).checked
    fields = first.verdict_key.split(" ")
    fields[-1] = f"{int(fields[-1]) + 1}\n"  # the file of another owner than the sidecar's
    with open(side, "w") as f:
        f.write(" ".join(fields))
    assert not verdict.vouched(str(model), " ".join(fields))
    os.unlink(side)
    os.mkdir(side)  # not a regular file
    assert not _read(model).checked


def test_a_file_whose_term_ends_disagree_with_its_lines_is_never_recorded(model, tmp_path):
    import bench.hostile_models as crafting
    other = crafting.edited(model, tmp_path / "other.model",  # no rule reads them: a valid file
                            arrays={"term_ends": lambda ends: np.roll(ends, 1)})
    assert Scorer(other).log_proba(MAIL.text, MAIL.fields)  # scored
    model = _read(other)
    model.plain()
    assert not os.path.exists(verdict.sidecar(str(other)))


def test_the_sidecar_is_beside_the_file_a_link_names(model, tmp_path):
    link = tmp_path / "link.model"
    link.symlink_to(model)
    _read(link).plain()
    assert os.path.exists(tmp_path / ".m.model.textnb-checked") and _read(model).checked


def test_save_reads_a_text_model_back_by_the_plain_reader_and_refuses_what_it_refuses(
        tmp_path, monkeypatch):
    """save's read-back of a text classifier with terms leaves them as bytes (the numpy
    reader's list of every term was a million documents' peak), by the same rules."""
    clf = TextClassifier().fit(TEXTS, LABELS)
    monkeypatch.setattr(container.ModelFile, "arrays",
                        lambda self: pytest.fail("the numpy reader read a text model back"))
    save_model(clf, tmp_path / "m.model")
    clf.vocabulary_.terms_ = clf.vocabulary_.terms_[::-1]  # not in order: no reader takes it
    with pytest.raises(ValueError, match=r"corrupt \(terms: the terms must be UTF-8 lines in "
                                         r"sorted order"):
        save_model(clf, tmp_path / "m.model")
    hashed = TextClassifier(hash_bits=10).fit(TEXTS, LABELS)  # no terms: the numpy reader
    with pytest.raises(pytest.fail.Exception, match="numpy reader"):
        save_model(hashed, tmp_path / "h.model")
