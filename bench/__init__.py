"""textnb's benchmarks: one module a study, run from the repository root as

    python -m bench                 # the list of studies
    python -m bench.spam --help     # what a study measures, and its options
    python -m bench.spam            # run it

A study measures textnb beside a reference in one run: the command a user types at its
defaults (``textnb train`` / ``textnb classify`` in fresh processes) beside the library with
the settings the study is about, bogofilter, scikit-learn. The corpora come from
``../shared/corpora`` (unpacked once into a cache, see bench.common.corpora) or from
directories given on the command line. The shared harness is bench.common; nothing here ships
in the textnb wheel.
"""
