"""The harness the studies share, one job a module:

* corpora: where the corpora are (given, ``corpora/full``, or the ../shared/corpora archives
  unpacked once into a cache), listing their files, and proxies of corpus shapes;
* archives: unpacking corpus archives safely;
* splits: seeded stratified splits, folds and samples;
* measure: wall time, CPU time and peak RSS of a command in a fresh process, of work in
  this process, and of running processes (/proc);
* systems: textnb as the command a user types, textnb as a library, bogofilter, scikit-learn;
* metrics: ROC AUC and the rates of spam decisions, computed here, not by the library measured;
* report: tables, percentages and ratios against the reference;
* args: the options the studies share, and one-line errors.
"""


class BenchError(Exception):
    """A problem worth one line on stderr (the study exits 1)."""
