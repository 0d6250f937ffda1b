"""textnb's optional C parts; everything else about the build is pyproject.toml's.

setuptools documents extension modules in setup.py (its user guide, "Building Extension
Modules"); its pyproject.toml table for them is marked experimental. Each one is optional:
where no C compiler (or no Python headers) is found, its build fails, setuptools skips it and
textnb runs the Python code it follows, with the same results (tests/test_packaging.py builds
with ``CC=false``).
"""

from setuptools import Extension, setup


def optional(name: str, *flags: str) -> Extension:
    return Extension(f"textnb.{name}", [f"textnb/{name}.c"], optional=True,
                     extra_compile_args=list(flags))


setup(ext_modules=[
    # Tokenizing, numbering tokens and reading header blocks and Received fields: the same
    # results as textnb/text/tokens.py, three times as fast.
    optional("_tokens"),
    optional("_markup"),             # HTML's text
    # No fused multiply-add in training on error's scan and the scores: their sums must round
    # as scipy's do.
    optional("_onerror", "-ffp-contract=off"),
    optional("_scores", "-ffp-contract=off"),
    optional("_modelfile"),          # the mail filter's checks of a model file
])
