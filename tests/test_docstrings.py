"""Every example in the library's docstrings runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import textnb

# Every module of every subpackage: iter_modules would stop at the top level.
MODULES = sorted(m.name for m in pkgutil.walk_packages(textnb.__path__, "textnb."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as error:  # an optional extra (dask, imapclient) that is not installed
        if (error.name or "").startswith("textnb"):
            raise
        pytest.skip(f"{name} needs {error.name}")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
