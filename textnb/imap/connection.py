"""Account → a logged-in IMAPClient: TLS verified (the system's certificates or --ca-file),
plain text to a loopback address only, and every failure of the server or the network as
one :class:`ImapError` that names the host."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from ..errors import TextnbError
from .account import Account

if TYPE_CHECKING:
    from imapclient import IMAPClient

# Seconds a connection, a login or one command may take before it is taken as dropped.
TIMEOUT = 60.0


class ImapError(TextnbError):
    """The server refused, or could not be reached, or the connection dropped."""


def imapclient():
    """The imapclient module, or an error that says how to install it."""
    try:
        import imapclient
    except ModuleNotFoundError:
        raise ImapError("textnb imap needs IMAPClient: pip install 'textnb[imap]'") from None
    return imapclient


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` resolves to is a loopback one (127.0.0.0/8, ::1)."""
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


def tls_context(account: Account) -> ssl.SSLContext:
    """Verify the server's certificate and name, against ``ca_file`` or the system's CAs."""
    try:
        return ssl.create_default_context(cafile=account.ca_file)
    except (OSError, ssl.SSLError) as error:
        raise ImapError(f"CA file '{account.ca_file}': {getattr(error, 'strerror', None) or error}") from None


@contextmanager
def server_errors(account: Account) -> Iterator[None]:
    """Turn what the server or the network raise into one ImapError naming the host."""
    imap = imapclient()
    try:
        yield
    except imap.exceptions.LoginError as error:
        raise ImapError(f"{account.host}: login as {account.user} failed: {_text(error)}") from None
    except ssl.SSLCertVerificationError as error:
        raise ImapError(f"{account.host}: the server's certificate: {error.verify_message} "
                        f"(--ca-file names the CA that signed it)") from None
    except (imap.exceptions.IMAPClientError, imap.exceptions.IMAPClientAbortError,
            OSError, EOFError) as error:
        raise ImapError(f"{account.host}: {_text(error) or type(error).__name__}") from None


def _text(error: BaseException) -> str:
    """An error's message as one line (imaplib puts the server's bytes in the message)."""
    text = str(error.args[0] if len(error.args) == 1 else error)
    if text.startswith(("b'", 'b"')):
        text = text[2:-1]
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror
    return " ".join(text.split())


def connect(account: Account, password: str, timeout: float = TIMEOUT) -> "IMAPClient":
    """A client logged in to the account, over TLS unless ``tls`` is none (loopback only)."""
    imap = imapclient()
    host, port = account.address
    if account.tls == "none" and not is_loopback(host):
        raise ImapError(f"--tls none sends the password in the clear: only to a loopback "
                        f"address (127.0.0.1, ::1, localhost), not {host}")
    context = tls_context(account) if account.tls != "none" else None
    with server_errors(account):
        client = imap.IMAPClient(host, port=port, ssl=account.tls == "imaps",
                                 ssl_context=context, timeout=timeout)
        try:
            if account.tls == "starttls":
                if not client.has_capability("STARTTLS"):
                    raise ImapError(f"{host}: the server does not offer STARTTLS")
                client.starttls(context)
            client.login(account.user, password)
        except BaseException:
            client.shutdown()
            raise
    return client
