"""Every example in the library's docstrings runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import textnb

MODULES = sorted(m.name for m in pkgutil.iter_modules(textnb.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(f"textnb.{name}")
    except ImportError as error:  # an optional extra (dask) that is not installed
        pytest.skip(f"textnb.{name} needs {error.name}")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
