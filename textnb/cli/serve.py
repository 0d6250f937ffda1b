"""``textnb serve``: the spamd-compatible daemon (textnb.serve.server) from the command line.

Start-up errors (no model, a socket in use) are one ``Error: …`` line and exit 1, through
textnb.cli.app's group; once serving, the daemon writes one line per message on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..decision.rules import HAM_CUTOFF, LEARNING_ALL_SPAM_CUTOFF, SPAM_CUTOFF
from ..serve.client import MAX_SIZE, TIMEOUT
from .options import FloatRange, model_option, resolve_model

# Connections answered at once (over all workers). When all are held, a new one is still
# taken and the one whose client sent fewest bytes a second shed (textnb.serve.server.Worker._shed):
# clients that hold connections without sending keep no one out.
MAX_CONNECTIONS = 100
# TCP clients allowed without --allow.
LOOPBACK = ("127.0.0.0/8", "::1/128")


@click.command()
@model_option()
@click.option("--socket", "socket_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="PATH",
              help="Unix socket, mode 0600 [default: $XDG_RUNTIME_DIR/textnb.sock; "
                   "without $XDG_RUNTIME_DIR, /tmp/textnb-UID/textnb.sock, UID the user's "
                   "number, in a directory of mode 0700 it creates].")
@click.option("--listen", "addresses", multiple=True, metavar="HOST:PORT",
              help="Also listen on TCP (repeatable); only loopback clients unless --allow.")
@click.option("--allow", "allowed", multiple=True, metavar="ADDRESS[/BITS]",
              help="TCP clients allowed besides loopback (repeatable).")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Processes that answer [default: one per core].")
@click.option("--max-connections", type=click.IntRange(1), default=MAX_CONNECTIONS,
              show_default=True, help="Connections served at once; beyond them, the "
                                      "slowest sender is closed for a new one.")
@click.option("--max-size", type=click.IntRange(1), default=MAX_SIZE, show_default=True,
              help="Largest message in bytes; larger ones are answered EX_TOOBIG unscored.")
@click.option("--timeout", type=FloatRange(0, min_open=True), default=TIMEOUT,
              show_default=True, help="Seconds a client has to send its request (its "
                                      "header block within 5 of them) and to take the answer.")
@click.option("--allow-tell", is_flag=True, help="Accept TELL (spamc -L spam|ham|forget).")
@click.option("--spamassassin-headers", is_flag=True,
              help="Also add X-Spam-Status and X-Spam-Flag, for recipes written for SpamAssassin.")
@click.option("--spam-class", help="The spam class (default: the one the model's cutoffs were "
                                    "learned for, else spam).")
@click.option("--spam-cutoff", type=FloatRange(0, 1),
              help=f"P(spam) at or above which a message is spam (default: the model's "
                   f"learned cutoff, else {SPAM_CUTOFF}, up to {LEARNING_ALL_SPAM_CUTOFF} as "
                   f"its learned messages are right).")
@click.option("--ham-cutoff", type=FloatRange(0, 1),
              help=f"P(spam) at or below which a message is ham (default: the model's learned "
                   f"cutoff, else {HAM_CUTOFF}).")
@click.option("--pidfile", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the daemon's process id here (replaced if stale, never followed "
                   "if a symbolic link).")
@click.option("-q", "--quiet", is_flag=True, help="No line per message.")
def serve(model_path, socket_path, addresses, allowed, workers, max_connections, max_size,
          timeout, allow_tell, spamassassin_headers, spam_class, spam_cutoff, ham_cutoff,
          pidfile, quiet) -> int:
    """Answer spamc (SpamAssassin's client) with textnb's verdicts, the model in memory.

    \b
    textnb serve --allow-tell &
    spamc -U "$XDG_RUNTIME_DIR/textnb.sock" -t 5 < msg > msg.tagged
    spamc -U "$XDG_RUNTIME_DIR/textnb.sock" -t 5 -c < msg     # exit 1: spam

    The model file is loaded again whenever it is replaced (textnb learn, train), and on
    SIGHUP; SIGTERM answers the connections in hand (within a second) and exits. With
    systemd socket activation the sockets it passes are used instead of --socket and --listen.
    spamc -t 5: with the daemon down or swamped, spamc delivers unchanged within 5 s
    (its default waits 600 s).
    """
    # Imported here: asyncio alone would add 30 ms to every other textnb command's start.
    import ipaddress
    from ..serve.model import Model
    from ..serve.sockets import PidFile, bind_tcp, bind_unix, systemd_listeners
    from ..serve.server import Settings, run
    if spam_cutoff is not None and ham_cutoff is not None and ham_cutoff > spam_cutoff:
        raise click.BadParameter(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")
    try:
        allow = [ipaddress.ip_network(n) for n in LOOPBACK]
        allow += [ipaddress.ip_network(a, strict=False) for a in allowed]
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--allow") from None
    model = Model(resolve_model(model_path), spam_class, spam_cutoff, ham_cutoff)
    settings = Settings(max_size=max_size, timeout=timeout, max_connections=max_connections,
                        allow=allow, allow_tell=allow_tell,
                        spamassassin_headers=spamassassin_headers,
                        log=None if quiet else _log)
    listeners = systemd_listeners()
    activated = bool(listeners)
    owned: list[str] = []
    written = None
    try:
        if not listeners:
            listeners.append(bind_unix(socket_path))
            owned.append(listeners[0].getsockname())
            listeners += [bind_tcp(address) for address in addresses]
        if pidfile:
            written = PidFile(pidfile)
        names = [_name(listener) for listener in listeners]
        _log(f"textnb serve: {model.path} on {', '.join(names)}"
             f"{' (systemd)' if activated else ''}, pid {os.getpid()}")
        run(model, listeners, settings, workers or os.cpu_count() or 1)
    finally:
        for listener in listeners:
            listener.close()
        for path in owned:
            _remove(path)
        if written:
            written.remove()
    return 0


def _log(line: str) -> None:
    # Written straight to the stream: click.echo took 16 µs a line, this 2 (one a message).
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _name(listener) -> str:
    address = listener.getsockname()
    if isinstance(address, tuple):
        host = f"[{address[0]}]" if ":" in address[0] else address[0]
        return f"{host}:{address[1]}"
    return address if isinstance(address, str) else address.decode(errors="replace")


def _remove(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

