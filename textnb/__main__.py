"""The textnb command (python -m textnb, or the console script).

The commands procmail runs once per message go to :mod:`textnb.cli.fast`, which answers them
without importing click or numpy when their options are the usual ones; everything else goes
to the full command line, :mod:`textnb.cli.app`.
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> None:
    try:
        _main()
    finally:
        # What the command made is freed with the process: the interpreter's teardown need
        # not walk every module's objects for cycles once more (some 11 ms after `textnb
        # train`, 4 of a procmail delivery's 40 ms `textnb filter`).
        gc.freeze()


def _main() -> None:
    from .cli.fast import run
    code = run(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    # numpy's OpenBLAS starts a thread per core that spins for some 0.1 s of CPU after the
    # import, beside the worker processes counting (SpamAssassin's `textnb train`: 1.04 → 1.01 s,
    # CPU 1.45 → 1.35 s, medians of ten); textnb's products are sparse, in C or numpy's loops.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .cli.app import main as cli_main
    cli_main()


if __name__ == "__main__":
    main()
