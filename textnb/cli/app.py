"""The textnb command line: the click group ``main`` and how its errors reach the user.

Every error reaches the user as one ``Error: …`` line on stderr with a non-zero exit code,
never a traceback (set TEXTNB_DEBUG=1 to see one): click's usage errors with their exit code
(2), a :class:`~textnb.errors.TextnbError` with its own, anything else with 1. ``filter`` is
the exception to the rule: it always delivers. The commands are defined one group a module
(train, classify, evaluate, dump, cluster, serve, table, imap); only this package prints,
reads argv or chooses exit codes.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

import click

from .. import __version__
from ..decision.rules import Exit
from ..errors import TextnbError, describe, os_message
from .classify import classify, filter_, learn, pass_through
from .cluster import cluster
from .common import FAILURE, echo_error, stdout_failed
from .dump import dump, explain, load, merge
from .evaluate import evaluate, info
from .imap import imap
from .serve import serve
from .table import table
from .train import train, tune_cutoffs


class _Cli(click.Group):
    """A click group that maps every error to one line and an exit code (STYLE habit 8)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             **extra: Any) -> None:
        args = list(sys.argv[1:] if args is None else args)
        # Usage errors of `classify --exit-code` must exit 3, not click's 2: procmail would
        # read 2 as "unsure".
        strict = "classify" in args and "--exit-code" in args
        try:
            code = super().main(args, prog_name or "textnb", standalone_mode=False, **extra)
        except click.ClickException as error:
            if args[:1] == ["filter"]:
                # A bad option in a procmail recipe must not lose mail either.
                sys.exit(pass_through(f"textnb filter: message passed through unchanged: "
                                       f"{error.format_message()}"))
            echo_error(error.format_message())
            code = Exit.ERROR if strict else error.exit_code
        except click.Abort:
            echo_error("aborted")
            code = Exit.ERROR if strict else FAILURE
        except TextnbError as error:
            echo_error(str(error))
            code = Exit.ERROR if strict else error.exit_code
        except ValueError as error:
            echo_error(str(error))
            code = Exit.ERROR if strict else FAILURE
        except OSError as error:
            echo_error(os_message(error))
            code = Exit.ERROR if strict else FAILURE
        except KeyboardInterrupt:
            echo_error("interrupted")
            code = 130
        except (RecursionError, MemoryError) as error:
            echo_error(describe(error, "input"))
            code = Exit.ERROR if strict else FAILURE
        except Exception as error:  # a bug: still one line, unless debugging
            if os.environ.get("TEXTNB_DEBUG"):
                raise
            echo_error(f"internal error: {type(error).__name__}: {error} (TEXTNB_DEBUG=1 shows more)")
            code = Exit.ERROR if strict else FAILURE
        failed = stdout_failed()
        if failed and not code:
            # A reader that went away (| head) had what it wanted: quiet, as click is then.
            if strict or not isinstance(failed, BrokenPipeError):
                echo_error("cannot write to standard output")
            code = Exit.ERROR if strict else FAILURE
        sys.exit(int(code or 0))


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from ..build import description
        click.echo(f"textnb {__version__} ({description()})")
        ctx.exit()


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="Show the version and the build (its C parts, or pure Python) and exit.")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Naive Bayes text classification and spam filtering.

    \b
    textnb train spam/ ham/              train on directories of labelled files
    textnb classify message.eml          label new files
    textnb filter < msg > msg.tagged     add X-TextNB-* headers (for procmail)
    """
    if ctx.invoked_subcommand is None:  # a bare `textnb` asks what there is: the help, exit 0
        click.echo(ctx.get_help())


for _command in (train, tune_cutoffs, classify, filter_, learn, evaluate, info, table, dump, load,
                 merge, explain, serve, cluster, imap):
    main.add_command(_command)
