"""The documentation builds with warnings as errors, its examples run, and the committed man page
is the one it builds (skipped where Sphinx, MyST or sphinx-click is not installed: textnb[docs])."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

for _module in ("sphinx", "myst_parser", "sphinx_click"):
    pytest.importorskip(_module, reason="the docs extra is not installed: pip install '.[docs]'")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MAN_PAGE = DOCS / "man" / "textnb.1"


def sphinx(builder: str, out: Path) -> subprocess.CompletedProcess:
    """sphinx-build -W: any warning fails the build. Each builder reads the sources afresh (its
    own doctree directory): the man builder reads quotes and dashes as they are, html does not."""
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                           "-b", builder, "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_html_builds_without_warnings(tmp_path):
    sphinx("html", tmp_path)
    cli = (tmp_path / "reference" / "cli.html").read_text()
    # the commands' reference comes from the click commands themselves
    for command in ("textnb train", "textnb classify", "textnb filter", "textnb table sample"):
        assert f">{command}<" in cli
    assert "--exit-code" in cli and "EXIT STATUS" in cli
    api = (tmp_path / "reference" / "api.html").read_text()
    assert "textnb.TextClassifier" in api and "textnb.serve.client.check" in api


def test_the_examples_in_the_docs_run(tmp_path):
    sphinx("doctest", tmp_path)
    report = (tmp_path / "output.txt").read_text()
    tests = int(re.search(r"^\s*(\d+) tests", report, re.MULTILINE).group(1))
    assert tests >= 20, report  # the guides' examples were found, not skipped
    assert re.search(r"^\s*0 failures in tests", report, re.MULTILINE), report


def _without_date(page: str) -> list[str]:
    # .TH carries the build date; the generator's comment names the docutils version.
    return [line for line in page.splitlines() if not line.startswith((".TH ", '.\\"'))]


def test_the_committed_man_page_is_the_one_the_docs_build(tmp_path):
    sphinx("man", tmp_path)
    built = (tmp_path / "textnb.1").read_text()
    assert _without_date(MAN_PAGE.read_text()) == _without_date(built), (
        "docs/man/textnb.1 is out of date: sphinx-build -b man docs docs/man")
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT",
                    "FILES", "SEE ALSO"):
        assert f"\n.SH {section}\n" in built


@pytest.mark.skipif(shutil.which("man") is None,
                    reason="man is not installed (Debian package man-db)")
def test_man_textnb_works_after_install(tmp_path):
    """pip install puts the page in <prefix>/share/man/man1, where man finds it for
    <prefix>/bin on PATH. (An editable install, -e, installs no data files.)"""
    wheels = tmp_path / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(wheels), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    wheel = next(wheels.glob("textnb-*.whl"))
    assert any(name.endswith(".data/data/share/man/man1/textnb.1")
               for name in zipfile.ZipFile(wheel).namelist())
    prefix = tmp_path / "prefix"
    # --ignore-installed: pip would otherwise uninstall the textnb this Python runs the tests on
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps",
                           "--ignore-installed", "-q", "--prefix", str(prefix), str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (prefix / "share" / "man" / "man1" / "textnb.1").read_bytes() == MAN_PAGE.read_bytes()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MANPATH", "MANOPT", "MANPAGER", "PAGER")}
    env.update(PATH=f"{prefix / 'bin'}:/usr/bin:/bin", MANWIDTH="80")
    where = subprocess.run(["man", "-w", "textnb"], capture_output=True, text=True, env=env,
                           timeout=60)
    assert where.stdout.strip() == str(prefix / "share" / "man" / "man1" / "textnb.1"), where.stderr
    page = subprocess.run(["man", "-P", "cat", "textnb"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert page.returncode == 0, page.stderr
    assert "EXIT STATUS" in page.stdout and "textnb classify" in page.stdout
