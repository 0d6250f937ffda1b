"""The package's house: every module imports alone in a fresh interpreter (no import order hides
a circle), and the layers of pyproject.toml's [tool.importlinter] hold (lint-imports; skipped
where import-linter is not installed: pip install '.[test]')."""

from __future__ import annotations

import os
import pkgutil
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import textnb

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(m.name for m in pkgutil.walk_packages(textnb.__path__, "textnb."))

# Imported alone, a module may still need an optional extra: that is no circle.
_ALONE = """
import importlib, sys
try:
    importlib.import_module(sys.argv[1])
except ImportError as error:
    if (error.name or "").startswith("textnb"):
        raise
    print("needs", error.name)
"""


def _import_alone(name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _ALONE, name], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_every_module_imports_alone_in_a_fresh_interpreter():
    assert len(MODULES) > 40  # every subpackage walked
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1) + 1) as pool:
        done = dict(zip(MODULES, pool.map(_import_alone, MODULES)))
    failed = {name: d.stderr.strip().splitlines()[-1] for name, d in done.items() if d.returncode}
    assert not failed


def test_the_layers_hold():
    """pyproject.toml's contracts: the layers, importing only downward; the mail filter's path
    and the fast command line without numpy or click; the models without anything of text."""
    pytest.importorskip("importlinter", reason="import-linter is not installed: pip install '.[test]'")
    command = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) \
        or shutil.which("lint-imports")
    if command is None:
        pytest.skip("lint-imports is not on PATH")
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
