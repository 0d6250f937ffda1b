"""textnb imap: train a model from IMAP folders, and filter new mail into Junk and Unsure,
learning from the user's own moves (textnb.imap does the work; this module prints)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from ..paths import MODEL_ENV, default_model_path
from .options import FloatRange, model_option

OK, FAILURE = 0, 1


def _account_options(function):
    options = [
        click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
                     metavar="FILE",
                     help="Settings file, TOML; each option below is also a key of it "
                          "(password_file for --password-file; default: "
                          "$XDG_CONFIG_HOME/textnb/imap.toml)."),
        click.option("--host", help="IMAP server."),
        click.option("--port", type=click.IntRange(1, 65535),
                     help="Port (default: 993 for --tls imaps, else 143)."),
        click.option("--user", help="Login name."),
        click.option("--password-file", type=click.Path(dir_okay=False), metavar="FILE",
                     help="File whose first line is the password (else $TEXTNB_IMAP_PASSWORD, "
                          "else the system keyring: keyring set textnb-imap USER@HOST)."),
        click.option("--tls", type=click.Choice(["imaps", "starttls", "none"]),
                     help="TLS from the start (imaps, the default), after STARTTLS, or none "
                          "(to a loopback address only); the certificate is verified."),
        click.option("--ca-file", type=click.Path(dir_okay=False), metavar="FILE",
                     help="Verify the server's certificate against these CA certificates "
                          "(PEM) instead of the system's."),
        model_option(f"Model file (default: the config's model, else ${MODEL_ENV}, else "
                     f"$XDG_DATA_HOME/textnb/textnb.model)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _settings(config_file: Path | None, options: dict[str, Any]):
    """(the account, the model file) from the options given over the config file's keys."""
    from ..imap.account import account, config_path, read_config
    config = read_config(config_file or config_path(), required=config_file is not None)
    model = options.pop("model_path")
    found = account(options, config)
    path = model or (Path(found.model).expanduser() if found.model else default_model_path())
    return found, path


@click.group()
def imap() -> None:
    """Filter and train an IMAP mailbox (needs pip install 'textnb[imap]').

    \b
    textnb imap train --spam Junk --ham INBOX   train a model on the folders
    textnb imap filter                          file new mail into Junk and Unsure
    textnb imap filter --watch                  ... and keep watching (IDLE)

    The account comes from options or $XDG_CONFIG_HOME/textnb/imap.toml.
    """


@imap.command("train", context_settings={"ignore_unknown_options": True},
              short_help="Train a model on IMAP folders of spam and of good mail.")
@_account_options
@click.option("--spam", "spam_folders", multiple=True, required=True, metavar="FOLDER",
              help="A folder of spam (repeatable).")
@click.option("--ham", "ham_folders", multiple=True, required=True, metavar="FOLDER",
              help="A folder of good mail (repeatable).")
@click.option("-q", "--quiet", is_flag=True, help="No progress or summary.")
@click.argument("train_options", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def train(ctx: click.Context, config_file, spam_folders, ham_folders, quiet, train_options,
          **options) -> int:
    """Train a model on folders: textnb imap train --spam Junk --ham INBOX.

    The folders' messages are trained on by textnb train, as files: the model file and its
    settings are those textnb train makes of the same messages, and any option of textnb
    train given after these (--training, --ngrams, --target-fpr, ...) is passed on to it.
    The classes are named spam and ham.
    """
    from .train import train as train_files
    from ..imap.account import password
    from ..imap.connection import connect, server_errors
    from ..imap.training import download
    account, model = _settings(config_file, options)
    folders = [*spam_folders, *ham_folders]
    if len(set(folders)) != len(folders):
        raise click.UsageError("a folder is given twice (in --spam or --ham)")
    secret = password(account)
    with tempfile.TemporaryDirectory(prefix="textnb-imap-") as directory:
        labels = (f"spam={Path(directory) / 'spam'}", f"ham={Path(directory) / 'ham'}")
        args = [*train_options, "-m", str(model), *(["-q"] if quiet else []),
                "--label", labels[0], "--label", labels[1]]
        # Parsed before anything is fetched: a bad option of train is an error at once.
        training = train_files.make_context("textnb imap train", args, parent=ctx)
        if training.params["dirs"] or training.params["labels"] != labels:
            raise click.UsageError("the training messages are those of --spam and --ham: "
                                   "no DIR or --label")
        sources = [("spam", f) for f in spam_folders] + [("ham", f) for f in ham_folders]
        client = connect(account, secret)
        with server_errors(account):
            try:
                counts = download(client, sources, Path(directory),
                                  lambda text: click.echo(f"textnb imap: {text}", err=True))
            finally:
                _logout(client)
        for label, names in (("spam", spam_folders), ("ham", ham_folders)):
            if not sum(counts[name] for name in names):
                raise click.UsageError(f"no messages in the {label} folder(s): "
                                       f"{', '.join(names)}")
        if not quiet:
            click.echo("fetched " + ", ".join(f"{n} from {name}" for name, n in counts.items()),
                       err=True)
        with training:
            return train_files.invoke(training)


@imap.command("filter", short_help="File new mail into Junk and Unsure; learn from moves.")
@_account_options
@click.option("--folder", "folders", multiple=True, metavar="FOLDER",
              help="A folder whose new mail is filtered (repeatable; default INBOX).")
@click.option("--junk", metavar="FOLDER", help="Where spam goes (default Junk).")
@click.option("--unsure", metavar="FOLDER", help="Where unsure mail goes (default Unsure).")
@click.option("--keywords/--no-keywords", default=None,
              help="Also set the $Junk and $NotJunk keywords mail clients read (default: off).")
@click.option("--learn/--no-learn", default=None,
              help="Learn from mail moved into Junk (spam) and out of Junk or Unsure (ham) "
                   "(default: on).")
@click.option("--all", "filter_all", is_flag=True,
              help="Filter the mail already in a folder seen for the first time (or "
                   "recreated), not only what arrives after.")
@click.option("--dry-run", is_flag=True,
              help="Say what would be moved and learned; change nothing.")
@click.option("--watch", is_flag=True,
              help="Stay connected: filter new mail as it arrives (IDLE), connecting again "
                   "after a failure.")
@click.option("--interval", type=FloatRange(min=1), metavar="SECONDS",
              help="With --watch: at most this long between passes, which learn from the "
                   "user's moves (default 300).")
@click.option("-v", "--verbose", is_flag=True, help="A line per message moved or learned.")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
def filter_(config_file, folders, junk, unsure, keywords, learn, filter_all, dry_run, watch,
            interval, verbose, quiet, **options) -> int:
    """File the mail that arrived since the last run: spam into Junk, unsure into Unsure.

    Learns from the user's corrections: a message moved into Junk that textnb did not
    put there is learned as spam; one moved out of Junk or Unsure into another folder,
    as ham; each once. What it has seen is kept in a state file beside the model.
    """
    from ..imap import filtering
    from ..imap.account import password
    from ..imap.connection import connect, server_errors
    from ..imap.session import Report, Session
    from ..imap.state import open_state, state_path
    from ..imap.verdicts import Verdicts
    from ..imap.watch import watch as watch_mail
    if dry_run and watch:
        raise click.UsageError("--dry-run runs once: not with --watch")
    options.update(folders=folders, junk=junk, unsure=unsure, keywords=keywords, learn=learn,
                   interval=interval)
    account, model = _settings(config_file, options)
    secret = password(account)
    verdicts = Verdicts(model)  # a missing or unfit model is an error before connecting
    with open_state(state_path(model, account.name), dry_run) as state:

        def one_pass(client) -> Report:
            report = Report(dry_run)
            with server_errors(account):
                filtering.run(Session(client, account, state, verdicts, report, dry_run),
                              filter_all)
            _show(report, verbose or dry_run, quiet, watch)
            return report

        client = connect(account, secret)
        try:
            report = one_pass(client)
            if watch:
                watch_mail(client, lambda: connect(account, secret), one_pass, account,
                           lambda text: click.echo(f"{_now()} textnb imap: {text}", err=True),
                           seen=lambda: (state.folder(account.folders[0]) or (0, 0))[1])
        finally:
            _logout(client)
    return FAILURE if report.problems else OK


def _show(report, lines: bool, quiet: bool, watching: bool) -> None:
    for text in report.notes + report.problems:
        click.echo(f"textnb imap: {text}", err=True)
    if lines:
        for text in report.lines:
            click.echo(text)
    if not quiet and (report.busy or not watching):
        click.echo((f"{_now()} " if watching else "") + report.summary())
    sys.stdout.flush()


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


def _logout(client) -> None:
    try:
        client.logout()
    except Exception:  # noqa: BLE001 — the connection may be gone; nothing is pending
        try:
            client.shutdown()
        except Exception:  # noqa: BLE001
            pass
