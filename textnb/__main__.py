"""The textnb command (python -m textnb, or the console script).

``textnb filter`` with its usual options runs here without click and numpy: procmail starts
it once per message, so its start-up is the cost of every delivery. Anything else, and any
filter run that fails, goes to the full command line (textnb.cli), which reports the reason
and, for the filter, delivers the message unchanged.
"""

from __future__ import annotations

import io
import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["filter"]:
        from .mailfilter import filter_message, quick_options
        options = quick_options(args[1:])
        if options is not None:
            raw = sys.stdin.buffer.read()
            try:
                out = filter_message(raw, **options)
            except BaseException:  # noqa: BLE001 — the full command says why, and delivers
                sys.stdin = io.TextIOWrapper(io.BytesIO(raw))
            else:
                sys.stdout.buffer.write(out)
                sys.stdout.buffer.flush()
                return
    from .cli import main as cli_main
    cli_main()


if __name__ == "__main__":
    main()
