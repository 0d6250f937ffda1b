"""textnb.distributed, train/classify --dask: counting on a real Dask cluster (a scheduler and two
worker processes on loopback) gives the model single-machine training gives, array for array."""

from __future__ import annotations

import mailbox
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed",
                                  reason="needs the extra: pip install 'textnb[dask]'")
import dask.bag  # noqa: E402  (after the skip: dask comes with distributed)
import joblib  # noqa: E402

from conftest import spamassassin_sample  # noqa: E402
from textnb import distributed as textnb_distributed  # noqa: E402
from textnb.classifier import TextClassifier  # noqa: E402
from textnb.store.text_model import load_model, save_model
from textnb.cli.app import main  # noqa: E402
from textnb.distributed import classify_files, fit_bag, fit_files, predict_log_proba_bag

_PER_CLASS = 150


@pytest.fixture(scope="module")
def cluster():
    """One scheduler and two single-threaded worker processes for the whole module."""
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield cluster.scheduler_address, client


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """spam/ and ham/ directories of files: SpamAssassin's first 150 spam and easy ham (else
    150 random texts of each from two word distributions), plus in spam/ an mbox of three
    messages and an empty file (skipped). Returns the root and the texts and labels in order."""
    root = tmp_path_factory.mktemp("corpus")
    found = spamassassin_sample(_PER_CLASS) or _generated()
    for label, raws in found.items():
        (root / label).mkdir()
        for i, raw in enumerate(raws):
            (root / label / f"{i:04d}").write_bytes(raw)
    box = mailbox.mbox(root / "spam" / "more.mbox")
    for i in range(3):
        box.add(f"From: x{i}@example.com\nSubject: offer {i}\n\ncheap pills number {i}\n".encode())
    box.close()
    (root / "spam" / "empty").write_bytes(b"")
    return root


def _generated() -> dict[str, list[bytes]]:
    rng = random.Random(13)
    words = [f"w{i}" for i in range(2000)]
    return {label: [" ".join(rng.choices(words[shift:shift + 1200], k=rng.randint(5, 80))).encode()
                    for _ in range(_PER_CLASS)]
            for label, shift in (("spam", 0), ("ham", 800))}


def _texts(root: Path) -> tuple[list[bytes], list[str]]:
    """The documents as `textnb train` reads them here (bytes, in order) and their labels."""
    from textnb.documents.sources import iter_files, read_raw
    texts, labels = [], []
    for label in ("spam", "ham"):
        for path in iter_files(str(root / label), lambda *_: None):
            for _, raw in read_raw([path], on_error=lambda *_: None):
                texts.append(raw)
                labels.append(label)
    return texts, labels


def _assert_same(a: TextClassifier, b: TextClassifier, texts: list) -> None:
    """Two fitted classifiers hold the same model: terms, counts, digests, cutoffs, scores."""
    assert a.vocabulary_.terms_ == b.vocabulary_.terms_
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_array_equal(a.model_.class_count_, b.model_.class_count_)
    np.testing.assert_array_equal(a.model_.feature_count_, b.model_.feature_count_)
    np.testing.assert_array_equal(a.digests_, b.digests_)
    np.testing.assert_array_equal(a.digest_labels_, b.digest_labels_)
    assert a.cutoffs_ == b.cutoffs_
    np.testing.assert_array_equal(a.predict_log_proba(texts), b.predict_log_proba(texts))


@pytest.mark.parametrize("settings", [
    {"spam_class": "spam"},               # the defaults: complement, l2, cutoffs
    {"model": "multinomial", "norm": None, "tf": "log", "min_df": 2},
    {"model": "bernoulli", "training": "on-error", "spam_class": "spam", "max_features": 500},
])
def test_fit_bag_equals_fit(cluster, corpus, settings):
    _, client = cluster
    texts, labels = _texts(corpus)
    local = TextClassifier(n_jobs=1, **settings).fit(texts, labels)
    # Several partitions, the last shorter, over two workers.
    bag = dask.bag.from_sequence(list(zip(texts, labels)), npartitions=7)
    assert bag.npartitions > 2
    with distributed.get_task_stream(client) as stream:
        remote = fit_bag(TextClassifier(**settings), bag, client)
    _assert_same(local, remote, texts)
    assert len(local.vocabulary_) > 1000 or settings.get("max_features") == 500
    # Every partition was counted on a worker, and both workers took part.
    counted = [task for task in stream.data if "_count_pairs" in str(task["key"])]
    assert len(counted) == bag.npartitions
    assert len({task["worker"] for task in counted}) == 2


def test_fit_bag_with_the_default_scheduler_and_str_labels(cluster):
    texts = ["cheap pills now", "cheap money now", "meeting at noon", "lunch at noon"] * 3
    labels = [1, 1, 0, 0] * 3
    local = TextClassifier(stop_words="none", n_jobs=1).fit(texts, labels)
    remote = fit_bag(TextClassifier(stop_words="none"),
                     dask.bag.from_sequence(list(zip(texts, labels)), npartitions=3))
    _assert_same(local, remote, texts)
    assert remote.predict(["cheap lunch pills"]).tolist() == [1]


def test_fit_bag_refuses_one_class(cluster):
    bag = dask.bag.from_sequence([("a b", "spam"), ("c d", "spam")], npartitions=2)
    with pytest.raises(ValueError, match="need at least two classes"):
        fit_bag(TextClassifier(), bag)


def test_fit_under_joblibs_dask_backend_equals_fit(cluster):
    _, client = cluster
    # fit counts in worker processes only from 2000 texts on (_PARALLEL_MIN_DOCUMENTS): short
    # ones keep the test quick.
    rng = random.Random(5)
    texts = [" ".join(rng.choices([f"w{i}" for i in range(3000)], k=rng.randint(1, 30)))
             for _ in range(2100)]
    labels = [rng.choice(["spam", "ham", "news"]) for _ in texts]
    local = TextClassifier(n_jobs=1, spam_class="spam", training="full").fit(texts, labels)
    with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        remote = TextClassifier(spam_class="spam", training="full").fit(texts, labels)
    _assert_same(local, remote, texts[:50])
    # Every worker did some of it (nthreads asks the scheduler; scheduler_info() may answer
    # from a cache without its workers: with distributed 2026.8, one CI run found it empty).
    assert {task["worker"] for task in stream.data} == set(client.nthreads())


def test_fit_files_and_classify_files(cluster, corpus):
    _, client = cluster
    texts, labels = _texts(corpus)
    files = [(label, str(path)) for label in ("spam", "ham")
             for path in sorted((corpus / label).iterdir())]
    skipped = []
    remote = fit_files(TextClassifier(spam_class="spam", training="full"), files, client,
                       on_error=lambda *problem: skipped.append(problem))
    local = TextClassifier(spam_class="spam", n_jobs=1, training="full").fit(texts, labels)
    _assert_same(local, remote, texts)
    assert skipped == [(str(corpus / "spam" / "empty"), "empty file")]
    assert remote.model_.class_count_.sum() == 2 * _PER_CLASS + 3   # the mbox gave three

    sources, log_proba = classify_files(remote, [str(corpus)], client, on_error=lambda *_: None)
    assert len(sources) == len(texts) and f"{corpus / 'spam' / 'more.mbox'}:2" in sources
    # Scores agree to rounding, not bit for bit: a batch under 64 documents is scored by
    # another sum than a larger one (textnb.nb.discrete._SCIPY_MIN_DOCUMENTS), here as anywhere.
    np.testing.assert_allclose(log_proba, local.predict_log_proba(_read_here(corpus)),
                               rtol=1e-12, atol=1e-12)
    bag = dask.bag.from_sequence(texts, npartitions=5)
    scores = predict_log_proba_bag(remote, bag, client)
    np.testing.assert_allclose(scores, local.predict_log_proba(texts), rtol=1e-12, atol=1e-12)
    # Partitions of 64 documents or more are scored exactly as the whole batch is.
    bag = dask.bag.from_sequence(texts, partition_size=len(texts) // 3 + 1)
    assert bag.npartitions == 3 and len(texts) // 3 - 1 >= 64
    np.testing.assert_array_equal(predict_log_proba_bag(remote, bag, client),
                                  local.predict_log_proba(texts))


def _read_here(root: Path) -> list[bytes]:
    from textnb.documents.sources import read_raw
    return [raw for _, raw in read_raw([str(root)], on_error=lambda *_: None)]


def test_fit_files_without_a_readable_document_of_a_class(cluster, tmp_path):
    _, client = cluster
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "ham").write_bytes(b"lunch at noon")
    with pytest.raises(Exception, match="no readable documents for class 'spam'"):
        fit_files(TextClassifier(), [("spam", str(tmp_path / "empty")),
                                     ("ham", str(tmp_path / "ham"))], client,
                  on_error=lambda *_: None)


def test_cli_train_and_classify_dask_equal_local(cluster, corpus, tmp_path):
    address, _ = cluster
    runner = CliRunner()
    spam, ham = str(corpus / "spam"), str(corpus / "ham")
    here, there = tmp_path / "here.model", tmp_path / "there.model"
    local = runner.invoke(main, ["train", spam, ham, "-m", str(here)])
    assert local.exit_code == 0, local.output
    done = runner.invoke(main, ["train", "--dask", address, spam, ham, "-m", str(there)])
    assert done.exit_code == 0, done.output
    assert done.stderr == (f"textnb: skipped {spam}/empty: empty file\n"
                           f"textnb: skipped 1 unreadable document\n")
    # The same report: documents per class, terms, training chosen, cutoffs and their rates.
    assert done.stdout.replace(str(there), str(here)) == local.stdout
    assert f"5-fold CV of {2 * _PER_CLASS + 3} messages" in done.stdout
    texts, _ = _texts(corpus)
    _assert_same(load_model(here), load_model(there), texts)
    assert load_model(there).cutoffs_["training"] in ("full", "on-error")

    local = runner.invoke(main, ["classify", "-m", str(here), "--format", "tsv", spam, ham])
    remote = runner.invoke(main, ["classify", "-m", str(there), "--format", "tsv",
                                  "--dask", address, spam, ham])
    assert local.exit_code == remote.exit_code == 1   # the empty file: skipped, exit 1
    assert remote.stdout == local.stdout
    assert remote.stdout.count("\n") == 2 * _PER_CLASS + 3


def test_cli_dask_errors(cluster, corpus, monkeypatch, tmp_path):
    address, _ = cluster
    runner = CliRunner()
    spam, ham = str(corpus / "spam"), str(corpus / "ham")
    done = runner.invoke(main, ["train", "--dask", address, "--tune", spam, ham])
    assert done.exit_code == 2
    assert done.stderr == "Error: --dask cannot be combined with --tune or --unlabeled\n"
    model = tmp_path / "m.model"
    save_model(TextClassifier().fit(["cheap pills", "lunch at noon"], ["spam", "ham"]), model)
    done = runner.invoke(main, ["classify", "-m", str(model), "--dask", address, "-"],
                         input="cheap pills")
    assert done.exit_code == 1
    assert done.stderr == ("Error: standard input cannot be read on a Dask worker; "
                           "give file paths\n")
    done = runner.invoke(main, ["classify", "-m", str(model), "--dask", address, "--explain", spam])
    assert done.exit_code == 2
    assert done.stderr == "Error: --explain reads the documents here; not with --dask\n"

    monkeypatch.setattr(textnb_distributed, "CONNECT_TIMEOUT", 0.5)
    done = runner.invoke(main, ["train", "--dask", "tcp://127.0.0.1:9", spam, ham])
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert done.stderr.count("\n") == 1

    monkeypatch.setitem(sys.modules, "distributed", None)   # as if the extra were absent
    done = runner.invoke(main, ["train", "--dask", address, spam, ham])
    assert done.exit_code == 1
    assert done.stderr == ("Error: training on a Dask cluster needs dask.distributed: "
                           "pip install 'textnb[dask]'\n")
