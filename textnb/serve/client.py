"""one message → spamd's verdict on it, over a Unix or TCP socket: spamc for Python programs.

Speaks the client half of SpamAssassin's spamd protocol (SPAMC/1.5 requests), so it talks to
``textnb serve`` and to SpamAssassin's own spamd alike. It imports neither numpy nor the model
code: a pipeline that asks the daemon pays only for a socket.

>>> verdict = check(open("message.eml", "rb").read())      # doctest: +SKIP
>>> verdict.spam, verdict.score, verdict.threshold          # doctest: +SKIP
(True, 11.8, 5.0)

On any failure (no daemon, a timeout, an error answer) these functions raise OSError or
:class:`SpamdError`; a caller that delivers mail catches both and delivers the message as it
was, as spamc does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from ..errors import TextnbError

PROTOCOL = "SPAMC/1.5"  # what spamc 3.2 to 4.0 sends; PING needs 1.5's empty header block
SOCKET_NAME = "textnb.sock"
# spamc's default --max-size (500 KB): the daemon answers larger messages EX_TOOBIG, unread.
MAX_SIZE = 500 * 1024
# spamd's --timeout-tcp default, in seconds: a request must arrive, an answer come, within it.
TIMEOUT = 30.0
_SPAM_LINE = re.compile(r"(True|False|Yes|No) ; (-?[0-9.]+) / (-?[0-9.]+)")
_NUMBER = re.compile(r"[0-9]{1,10}")  # ASCII digits: str.isdigit takes "²", which int() refuses
# An answer is the message with fields added, or a report: more than this is no answer.
ANSWER_SLACK = 1024 * 1024


class SpamdError(TextnbError):
    """spamd answered with an error status (a sysexits.h code such as 76, EX_PROTOCOL)."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(f"spamd answered {code}: {text}")
        self.code = code


class Response(NamedTuple):
    """spamd's answer: status code (0 is EX_OK), header fields (names lower-cased), body."""

    code: int
    headers: dict[str, str]
    body: bytes


class Verdict(NamedTuple):
    """The ``Spam:`` line of an answer: spam or not, the score and the threshold it met."""

    spam: bool
    score: float
    threshold: float


def default_socket_path() -> Path:
    """Where ``textnb serve`` listens by default: $XDG_RUNTIME_DIR/textnb.sock, where the
    runtime directory is set (it is private to the user), else /tmp/textnb-<uid>/textnb.sock."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return Path(runtime) / SOCKET_NAME
    return Path("/tmp") / f"textnb-{os.getuid()}" / SOCKET_NAME


def request(method: str, message: bytes = b"", headers: Mapping[str, str] | None = None, *,
            socket_path: str | os.PathLike | None = None, host: str | None = None,
            port: int = 783, timeout: float = TIMEOUT) -> Response:
    """Send one request and return the answer. TCP to ``host``:``port`` when a host is given,
    else the Unix socket ``socket_path`` (default: :func:`default_socket_path`). The whole
    exchange takes at most ``timeout`` seconds (TimeoutError), and an answer longer than the
    message and ANSWER_SLACK bytes is refused (SpamdError): a hostile or broken daemon can
    neither hold the caller nor fill its memory."""
    import socket  # here: textnb's command line imports this module for its constants
    import time
    deadline = time.monotonic() + timeout
    fields = dict(headers or {})
    if method not in ("PING", "SKIP"):
        fields["Content-length"] = str(len(message))
    head = f"{method} {PROTOCOL}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    if host is not None:
        connection = socket.create_connection((host, port), timeout=timeout)
    else:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(timeout)
        try:
            connection.connect(os.fspath(socket_path or default_socket_path()))
        except BaseException:
            connection.close()
            raise
    limit = len(message) + ANSWER_SLACK
    with connection:
        connection.settimeout(max(deadline - time.monotonic(), 0.001))
        connection.sendall(head.encode("latin-1") + b"\r\n" + message)
        connection.shutdown(socket.SHUT_WR)
        chunks, size = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no whole answer within {timeout:g} s")
            connection.settimeout(left)
            chunk = connection.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise SpamdError(76, f"an answer of more than {limit} bytes")
    return parse_response(b"".join(chunks))


def parse_response(data: bytes) -> Response:
    """A Response from the bytes spamd sent; SpamdError for an error status or a bad answer."""
    line, _, rest = data.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("SPAMD/") or not _NUMBER.fullmatch(parts[1]):
        raise SpamdError(76, f"not a spamd answer: {line[:80]!r}")
    code = int(parts[1])
    if code != 0:
        raise SpamdError(code, parts[2][:400] if len(parts) > 2 else "")
    head, _, body = rest.partition(b"\r\n\r\n")
    fields = {}
    for field in head.decode("latin-1").split("\r\n"):
        name, colon, value = field.partition(":")
        if colon:
            fields[name.strip().lower()] = value.strip()
    if "content-length" in fields:
        if not _NUMBER.fullmatch(fields["content-length"]):
            raise SpamdError(76, f"not a spamd answer: Content-length "
                                 f"{fields['content-length'][:20]!r}")
        length = int(fields["content-length"])
        if len(body) != length:
            raise SpamdError(76, f"answer of {len(body)} bytes, Content-length says {length}")
    return Response(code, fields, body)


def verdict(response: Response) -> Verdict:
    """The Verdict in an answer's ``Spam:`` field."""
    match = _SPAM_LINE.fullmatch(response.headers.get("spam", ""))
    if match is None:
        raise SpamdError(76, f"no Spam: field in the answer ({response.headers})")
    return Verdict(match[1] in ("True", "Yes"), float(match[2]), float(match[3]))


def check(message: bytes, **where) -> Verdict:
    """Is ``message`` spam, with which score against which threshold (spamc -c)."""
    return verdict(request("CHECK", message, **where))


def process(message: bytes, **where) -> tuple[Verdict, bytes]:
    """The verdict and the message with the daemon's header fields added (spamc's default)."""
    response = request("PROCESS", message, **where)
    return verdict(response), response.body


def tell(message: bytes, learn: str, **where) -> bool:
    """Learn ``message`` as "spam" or "ham", or "forget" it (spamc -L); False when there was
    nothing to do (already learned as that class, or never learned)."""
    if learn == "forget":
        response = request("TELL", message, {"Remove": "local"}, **where)
        return "local" in response.headers.get("didremove", "")
    if learn not in ("spam", "ham"):
        raise ValueError(f"learn must be spam, ham or forget, not {learn!r}")
    response = request("TELL", message, {"Message-class": learn, "Set": "local"}, **where)
    return "local" in response.headers.get("didset", "")


def ping(**where) -> bool:
    """True when the daemon answers PONG."""
    return request("PING", **where).code == 0
