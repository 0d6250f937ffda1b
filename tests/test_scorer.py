"""textnb.scorer, the mail filter's numpy-free scores, agrees with TextClassifier."""

from __future__ import annotations

import json
import sys
import zipfile

import numpy as np
import pytest

from textnb import TextClassifier, save_model
from textnb.documents import parse_message
from textnb.errors import ModelFileError
from textnb.scorer import Scorer

TEXTS = ["cheap pills now", "cheap money now!!! $500", "win money, win cheap pills",
         "meeting at noon", "lunch at noon with notes", "notes from the meeting",
         "the football results", "football tonight, results at noon"]
LABELS = ["spam", "spam", "spam", "ham", "ham", "ham", "sport", "sport"]
MAIL = parse_message(b"Subject: cheap pills\nFrom: x@example.com\n\ncheap cheap noon results\n")
PROBES = [MAIL, parse_message(b"Subject: nothing known\n\nzebra\n"), parse_message(b""),
          parse_message(b"Subject: noon\n\n" + b"football results " * 5000)]


@pytest.mark.parametrize("settings", [
    {}, {"model": "multinomial", "alpha": 1.0, "norm": None, "fit_prior": True},
    {"model": "bernoulli"}, {"tf": "log"}, {"ngram_range": (1, 2), "stop_words": "none"},
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
    code = ("import sys; from textnb.scorer import Scorer; from textnb.documents import "
            f"parse_message; d = parse_message(b'Subject: cheap\\n\\npills'); "
            f"print(Scorer({str(tmp_path / 'm.model')!r}).log_proba(d.text, d.fields)); "
            "print(sorted(m for m in ('numpy', 'click', 'email.parser', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"


def test_bad_and_old_files_are_refused_with_the_reason(tmp_path):
    path = tmp_path / "m.model"
    save_model(TextClassifier().fit(TEXTS, LABELS), path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(files["meta.json"])
    old = tmp_path / "old.model"
    with zipfile.ZipFile(old, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, json.dumps({**meta, "version": 1}) if name == "meta.json" else data)
    with pytest.raises(ModelFileError, match="has format version 1; filtering needs version 2"):
        Scorer(old)
    truncated = tmp_path / "cut.model"
    truncated.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ModelFileError, match="cut.model"):
        Scorer(truncated)
    with pytest.raises(ModelFileError, match="nowhere.model"):
        Scorer(tmp_path / "nowhere.model")
