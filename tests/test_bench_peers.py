"""bench.peers end to end on the bundled samples: textnb as the command, the scikit-learn peers
run by this Python (--peers-python), Vowpal Wabbit and fastText where this Python has them and
skipped with one line where it has not; the figures checked against the same models fitted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.common.corpora import BUNDLED, list_spam, news_files, news_sample
from bench.common.metrics import roc_auc
from bench.common.splits import stratified_split

ROOT = Path(__file__).resolve().parents[1]
TEXTNB = Path(sys.executable).parent / "textnb"


def peers(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.peers", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=os.environ)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """No peers' environment is made in the user's cache."""
    monkeypatch.setenv("TEXTNB_BENCH_CACHE", str(tmp_path / "cache"))


def importable(module: str) -> bool:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return done.returncode == 0


def latin1(paths) -> list[str]:
    return [Path(p).read_bytes().decode("latin-1") for p in paths]


def test_help_names_the_systems_and_options():
    done = peers("--help")
    assert done.returncode == 0, done.stderr
    for word in ("textnb-tune", "sklearn-sgd", "nblr", "fasttext", "--peers-python", "--quick",
                 "--only", "--rounds", "--textnb"):
        assert word in done.stdout


@pytest.mark.skipif(not TEXTNB.exists(), reason="no textnb console script beside this Python")
def test_quick_run_on_the_bundled_samples(tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB
    news = news_sample(tmp_path / "news")
    out = tmp_path / "peers.json"
    done = peers("--quick", "--rounds", "1", "--textnb", str(TEXTNB),
                 "--peers-python", sys.executable, "--newsgroups", str(news),
                 "--spamassassin", str(BUNDLED / "spamassassin"), "--json", str(out),
                 "--only", "textnb,textnb-tune,sklearn-nb,sklearn-sgd,nblr,vw,fasttext")
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(out.read_text())
    # A peer this Python lacks is skipped with one line saying why; one it has runs.
    for system, module in (("vw", "vowpalwabbit"), ("fasttext", "fasttext")):
        if importable(module):
            assert system in measured["corpora"]["SpamAssassin"]["systems"]
        else:
            assert f"{system} skipped: {module if module == 'vowpalwabbit' else 'fasttext-wheel'}" \
                   f" does not import in {sys.executable}" in done.stderr
            assert system not in measured["corpora"]["SpamAssassin"]["systems"]

    # The published split of the 20 Newsgroups sample, and the seed-0 70/30 split of
    # SpamAssassin's: scikit-learn's MultinomialNB fitted here must get the benchmark's figures.
    train, y_train = news_files(news / "20news-bydate-train")
    test, y_test = news_files(news / "20news-bydate-test")
    vectorizer = CountVectorizer()
    nb = MultinomialNB().fit(vectorizer.fit_transform(latin1(train)), y_train)
    expected = np.mean(nb.predict(vectorizer.transform(latin1(test))) == np.array(y_test))
    news_results = measured["corpora"]["20 Newsgroups"]
    assert (news_results["n_train"], news_results["n_test"]) == (len(train), len(test)) == (72, 24)
    assert news_results["systems"]["sklearn-nb"]["accuracy"] == [pytest.approx(expected)]

    paths, y = list_spam(BUNDLED / "spamassassin")
    fit, held = stratified_split(y, 0.7, 0)
    vectorizer = CountVectorizer()
    nb = MultinomialNB().fit(vectorizer.fit_transform(latin1([paths[i] for i in fit])), y[fit])
    log_proba = nb.predict_log_proba(vectorizer.transform(latin1([paths[i] for i in held])))
    spam = list(nb.classes_).index("spam")
    spam_results = measured["corpora"]["SpamAssassin"]
    assert (spam_results["n_train"], spam_results["n_test"]) == (210, 90)
    got = spam_results["systems"]["sklearn-nb"]
    assert got["accuracy"] == [pytest.approx(np.mean(nb.classes_[log_proba.argmax(1)] == y[held]))]
    assert got["one_minus_auc"] == [pytest.approx(
        1 - roc_auc(y[held] == "spam", log_proba[:, spam] - log_proba[:, 1 - spam]))]

    for corpus, classes in zip(measured["corpora"].values(), (4, 2)):
        results = corpus["systems"]
        reference = results["textnb"]
        for system in ("textnb", "textnb-tune", "sklearn-nb", "sklearn-sgd", "nblr"):
            r = results[system]
            assert 0 < r["accuracy"][0] <= 1, system
            assert r["train_s"] > 0 and r["classify_s"] > 0 and r["model_mib"] > 0
            assert r["train_peak_mib"] > 20                  # an interpreter at least
        for system in ("textnb", "sklearn-nb", "sklearn-sgd", "nblr"):
            assert results[system]["accuracy"][0] > 1 / classes, system   # above chance
        # Each row's ratio to textnb at its defaults, as printed.
        ratio = results["sklearn-nb"]["train_s"] / reference["train_s"]
        assert f"{ratio:.2f}×" in done.stdout
    # textnb's spam log-odds rank the test messages (by the JSON lines of textnb classify).
    for system in ("textnb", "textnb-tune"):
        assert spam_results["systems"][system]["one_minus_auc"][0] < 0.05
    assert "\n  textnb " in done.stdout and "1.00×" in done.stdout


def test_a_peer_that_does_not_import_is_skipped_with_one_line(tmp_path):
    # A Python without its site-packages: neither numpy nor scikit-learn imports.
    bare = tmp_path / "bare-python"
    bare.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    bare.chmod(0o755)
    done = peers("--quick", "--rounds", "1", "--only", "sklearn-nb", "--corpus", "spamassassin",
                 "--spamassassin", str(BUNDLED / "spamassassin"), "--peers-python", str(bare))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith(f"sklearn-nb skipped: scikit-learn does not import in {bare}: ")
    assert "No module named" in lines[0]
    assert lines[1:] == ["bench.peers: error: no system left to run"]


def test_an_unknown_system_or_textnb_is_one_line():
    done = peers("--only", "textnb,svm")
    assert done.returncode == 2 and "unknown system svm" in done.stderr
    done = peers("--only", "textnb", "--textnb", "/nonexistent/textnb", "--corpus", "spamassassin",
                 "--spamassassin", str(BUNDLED / "spamassassin"))
    assert done.returncode == 1
    assert done.stderr.strip() == "bench.peers: error: no textnb command '/nonexistent/textnb'"
