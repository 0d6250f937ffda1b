"""``textnb imap filter --watch``: a pass, then IDLE (RFC 2177) on the first folder filtered
until new mail arrives or ``interval`` seconds pass (the user's moves elsewhere are learned
from at the next pass), again and again; a dropped connection is made again after 1, 2, 4 …
seconds, at most MAX_DELAY apart, until the server answers."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from .account import Account
from .connection import ImapError, server_errors

if TYPE_CHECKING:
    from imapclient import IMAPClient

MAX_DELAY = 300.0
# A server may end an IDLE after 30 minutes (RFC 2177): it is renewed before.
MAX_IDLE = 29 * 60.0
# How long one wait for the server's news lasts, so that a dead connection is noticed.
CHECK = 60.0


def watch(client: "IMAPClient | None", connect: Callable[[], "IMAPClient"],
          one_pass: Callable[["IMAPClient"], None], account: Account,
          log: Callable[[str], None], sleep: Callable[[float], None] = time.sleep,
          seen: Callable[[], int] = lambda: 0) -> None:
    """Wait for mail in the account's first folder and run ``one_pass``, forever, on
    ``client`` (connected by ``connect`` when None or dropped); ImapError, from connecting,
    a pass or waiting, is logged and the connection made again after a delay that doubles
    up to MAX_DELAY. ``seen``: the folder's last UID a pass looked at (mail past it that came
    before the IDLE began does not wait)."""
    delay = 1.0
    while True:
        try:
            if client is None:
                client = connect()
                one_pass(client)
                log("connected again")
            delay = 1.0
            wait(client, account, seen())
            one_pass(client)
        except ImapError as error:
            _close(client)
            client = None
            log(f"{error}; connecting again in {delay:g} s")
            sleep(delay)
            delay = min(delay * 2, MAX_DELAY)


def wait(client: "IMAPClient", account: Account, seen: int = 0) -> None:
    """Return when the account's first folder gets mail past UID ``seen``, or after its
    interval."""
    with server_errors(account):
        if not client.has_capability("IDLE"):
            time.sleep(account.interval)
            return
        info = client.select_folder(account.folders[0], readonly=True)
        if int(info.get(b"UIDNEXT", 0)) - 1 > seen:  # came between the pass and now
            return
        deadline = time.monotonic() + min(account.interval, MAX_IDLE)
        client.idle()
        try:
            while (left := deadline - time.monotonic()) > 0:
                asked = time.monotonic()
                news = client.idle_check(timeout=min(left, CHECK))
                if any(isinstance(item, tuple) and len(item) > 1 and item[1] == b"EXISTS"
                       for item in news):
                    break
                if not news and time.monotonic() - asked < min(left, CHECK) / 2:
                    # Woken with nothing to read: idle_check takes a closed connection for
                    # an empty answer. Ending the IDLE asks the server, or raises.
                    client.idle_done()
                    client.idle()
        finally:
            client.idle_done()


def _close(client: "IMAPClient | None") -> None:
    if client is not None:
        try:
            client.shutdown()
        except Exception:  # noqa: BLE001 — the connection is broken already
            pass
