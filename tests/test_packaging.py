"""The sdist a user downloads: it holds what its tests read, installs without a C compiler or
NLTK, and its tests pass unpacked where no ../shared lies beside it (issue #44 point 8)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(importlib.util.find_spec("build") is None,
                                reason="build is not installed: pip install '.[test]'")


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The sdist of this checkout, built as ``python -m build --sdist`` builds it."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True)
    (path,) = out.glob("textnb-*.tar.gz")
    return path


def test_the_sdist_holds_what_its_tests_read(sdist):
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("setup.py", "pyproject.toml", "MANIFEST.in", "CHANGES.md", "README.md",
                   "LICENSE", "textnb/_tokens.c", "textnb/_modelfile.c",
                   "textnb/data/english_stopwords.txt", "tests/conftest.py",
                   "tests/data/models", "corpora/spamassassin/spam", "corpora/messages/spam.eml",
                   "docs/man/textnb.1", "docs/guide/python.md", "bench/__init__.py",
                   "contrib/textnb.service"):
        assert any(name == needed or name.startswith(needed + "/") for name in names), needed
    assert not any("__pycache__" in name or name.endswith((".so", ".pyc")) for name in names)


def test_the_sdist_names_no_path_of_the_machine_it_was_built_on(sdist):
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            if member.isfile():
                data = archive.extractfile(member).read()
                assert str(ROOT).encode() not in data, member.name


def test_an_unpacked_sdist_installs_without_a_compiler_or_nltk_and_passes_its_tests(
        sdist, tmp_path):
    """Unpacked where no ../shared lies beside it, installed with CC=false (no C compiler: the
    optional C parts are skipped) into an environment without NLTK: it trains, classifies,
    stems with one clear error, and a few of its test files pass against the installed copy."""
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    (tree,) = tmp_path.glob("textnb-*")
    assert not (tree.parent / "shared").exists()
    venv = tmp_path / "venv"
    # The interpreter's own packages (numpy, scipy, ...) serve; pip fetches only what lacks.
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    if subprocess.run([python, "-c", "import nltk"], capture_output=True).returncode == 0:
        pytest.skip("this interpreter has NLTK installed: the NLTK-free path cannot be tried")
    env = {**os.environ, "CC": "false", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run([python, "-m", "pip", "install", "-q", str(tree), "pytest", "hypothesis"],
                   check=True, capture_output=True, env=env)
    textnb = venv / "bin" / "textnb"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], cwd=tmp_path, capture_output=True,
                              text=True, env={**env, "PYTHONPATH": ""})

    built = run(python, "-c", "import textnb, importlib.util; "
                              "print(textnb.__file__, importlib.util.find_spec('textnb._tokens'))")
    assert built.stdout.split() == [str(next((venv / "lib").glob("python*"))
                                        / "site-packages" / "textnb" / "__init__.py"), "None"]
    corpus = tree / "corpora" / "spamassassin"
    trained = run(textnb, "train", "-q", "-m", tmp_path / "m.model", corpus / "spam", corpus / "ham")
    assert trained.returncode == 0, trained.stderr
    classified = run(textnb, "classify", "--exit-code", "-m", tmp_path / "m.model",
                     tree / "corpora" / "messages" / "spam.eml")
    assert classified.returncode == 0, classified   # 0: spam
    stemmed = run(textnb, "train", "-q", "--stem", "porter", "-m", tmp_path / "s.model",
                  corpus / "spam", corpus / "ham")
    assert (stemmed.returncode, stemmed.stderr) == (
        1, "Error: stemming needs NLTK, which is not installed: pip install 'textnb[stem]'\n")
    # The tests of the unpacked tree against the installed package: pytest's rootdir puts
    # the tree on sys.path ([tool.pytest.ini_options] pythonpath), so that is emptied.
    tests = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "pythonpath=",
                tree / "tests" / "test_models.py", tree / "tests" / "test_tokens.py",
                tree / "tests" / "test_api_refusals.py")
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert " passed" in tests.stdout and " failed" not in tests.stdout


def test_the_installed_textnb_script_filters_without_the_regular_expression_engine(
        sdist, tmp_path, monkeypatch):
    """``pip install`` puts scripts/textnb in the environment's bin with its interpreter on the
    #! line (not pip's generated wrapper, which imports re), it answers ``textnb filter`` with
    neither re nor enum imported (python -X importtime lists every import), and ``pip
    uninstall`` removes it (issue #47)."""
    from textnb import TextClassifier, save_model
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python, textnb = venv / "bin" / "python", venv / "bin" / "textnb"
    # Without its dependencies: the filter imports none of them (tests/test_quick.py).
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONPATH": ""}
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(sdist)], check=True,
                   capture_output=True, env=env)
    lines = textnb.read_text().splitlines()
    assert lines[0] == f"#!{python}" and "import re" not in lines
    model = tmp_path / "m.model"
    save_model(TextClassifier().fit(["cheap pills now", "win money", "meeting at noon",
                                     "lunch notes"], ["spam", "spam", "ham", "ham"]), model)
    from textnb.store.scorer import Scorer
    from textnb.store import verdict
    monkeypatch.setattr(verdict, "SETTLED", 0.0)
    Scorer(model)  # checks the model and records its verdict, as a first delivery would
    raw = (b"From: a@example.com\nSubject: cheap pills\nContent-Type: text/html\n\n<p>win "
           b"<a href='http://x.example/'>cheap</a> <a href='mailto:m@x.example'>money</a>\n")
    done = subprocess.run([python, "-X", "importtime", textnb, "filter", "-m", model],
                          input=raw, capture_output=True, env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.endswith(raw)
    assert done.stdout.startswith(b"X-TextNB-Class: spam\n")
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines()
                if line.startswith("import time:") and "|" in line}
    assert {"textnb.cli.fast", "textnb.store.scorer", "textnb._tokens"} <= imported
    assert not imported & {"re", "enum", "functools", "collections", "numpy", "click"}
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "textnb"], check=True,
                   capture_output=True, env=env)
    assert not textnb.exists()
