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
        # train`). The quick commands end before it, by _exit.
        gc.freeze()


def _main() -> None:
    from .cli.fast import run
    code = run(sys.argv[1:])
    if code is not None:
        _exit(code)
    # numpy's OpenBLAS starts a thread per core that spins for some 0.1 s of CPU after the
    # import, beside the worker processes counting (SpamAssassin's `textnb train`: 1.04 → 1.01 s,
    # CPU 1.45 → 1.35 s, medians of ten); textnb's products are sparse, in C or numpy's loops.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .cli.app import main as cli_main
    cli_main()


def _exit(code: int) -> None:
    """End the process with ``code`` once standard output and error are flushed, without the
    interpreter's teardown: a fast command (procmail's filter) has written all it writes and
    holds nothing else to close, and freeing every module and object took a delivery 3.5
    million instructions (callgrind, after gc.freeze; python -c pass runs 38 million)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # as Python's own exit does when it cannot flush standard output
    os._exit(code)


if __name__ == "__main__":
    main()
