"""Sphinx configuration: ``sphinx-build -W docs OUT`` (html), ``-b doctest``, ``-b man``.

Pages are MyST Markdown. The CLI reference and the man page textnb(1) come from the click
commands (sphinx-click, in reference/cli.md); the API reference from the docstrings (autodoc,
read by napoleon). The committed man page, docs/man/textnb.1, is ``sphinx-build -b man docs
docs/man`` (tests/test_docs.py checks that it is current).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a source checkout builds its own textnb, installed or not

import textnb  # noqa: E402

project = "textnb"
author = "The textnb maintainers"
copyright = ""  # no Copyright section in the man page; the licence is in LICENSE
release = version = textnb.__version__

extensions = [
    "myst_parser",
    "sphinx_click",
    "sphinx.ext.autodoc",
    # napoleon rather than numpydoc: it reads numpydoc sections where a docstring has them and
    # plain prose where it has not (most of textnb's), ships with Sphinx (one dependency less),
    # and adds no member tables of its own that would warn under -W.
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
]

exclude_patterns = ["_build", "man"]
myst_enable_extensions = ["deflist"]
myst_heading_anchors = 3
highlight_language = "none"

# The public API only: what textnb.__all__ names, and textnb.serve.client (reference/api.md).
autodoc_default_options = {"members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # attributes as fields: no second description of a property

# The doctests run from the repository's root, so that examples name corpora/... as a reader
# of this checkout would; each group in a fresh temporary directory for what it writes.
doctest_global_setup = f"""
import os as _os, tempfile as _tempfile
_old_cwd = _os.getcwd()
_os.chdir({str(ROOT)!r})
"""
# The docstrings' own examples (">>>" blocks that autodoc brings in) are tested by
# tests/test_docstrings.py; the builder runs the pages' {doctest} blocks.
doctest_test_doctest_blocks = ""
doctest_global_cleanup = """
_os.chdir(_old_cwd)
"""

html_theme = "alabaster"
html_title = f"textnb {release}"
html_static_path: list[str] = []

# The man page: reference/cli.md is textnb(1), NAME from the description below.
man_pages = [("reference/cli", "textnb", "Naive Bayes text classification and spam filtering",
              [], 1)]
man_show_urls = False


# -- sphinx-click --------------------------------------------------------------------------

def _command_titles(app, doctree) -> None:
    """Title each command's section with its whole command line ("textnb table train"), not
    its last word: in the man page every command is a subsection of COMMANDS."""
    from docutils import nodes
    for section in doctree.findall(nodes.section):
        names = section.get("names", [])
        if names and names[0].startswith("textnb ") and section.children \
                and isinstance(section[0], nodes.title):
            section[0].children = [nodes.Text(names[0])]


def setup(app):
    app.connect("doctree-read", _command_titles)
