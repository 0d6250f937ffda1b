"""The harness the studies share, one job a module:

* corpora: where the corpora are (given, ``corpora/full``, or the ../shared/corpora archives
  unpacked once into a cache), listing their files, and proxies of corpus shapes;
* archives: unpacking corpus archives safely;
* splits: seeded stratified splits, folds and samples;
* measure: wall time, CPU time and peak RSS of a subprocess, and of work in this process;
* systems: textnb as the command a user types, textnb as a library, bogofilter, scikit-learn;
* report: tables, percentages and ratios against the reference;
* args: the options the studies share, and one-line errors.
"""


class BenchError(Exception):
    """A problem worth one line on stderr (the study exits 1)."""
