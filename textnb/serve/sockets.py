"""The daemon's sockets and its pid file: a private Unix socket, a TCP listener, systemd's
sockets (socket activation), and one daemon per pid file."""

from __future__ import annotations

import os
import socket
import stat

from ..errors import TextnbError
from .client import default_socket_path


def bind_unix(path: str | os.PathLike | None = None) -> socket.socket:
    """A listening Unix socket at ``path`` (default: :func:`textnb.serve.client.default_socket_path`),
    mode 0600. A stale socket file (nobody listening) is replaced; a live one or any other
    file is an error. The default's /tmp fallback directory is made private (0700)."""
    default = path is None
    path = os.fspath(default_socket_path() if default else path)
    directory = os.path.dirname(path) or "."
    if default and not os.path.isdir(directory):
        os.makedirs(directory, mode=0o700, exist_ok=True)
    if default:
        st = os.lstat(directory)
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077 or not stat.S_ISDIR(st.st_mode):
            raise ServeError(f"socket directory '{directory}' is not a private directory of "
                             f"this user; give --socket PATH")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(st.st_mode):
            raise ServeError(f"'{path}' exists and is not a socket; give another --socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2.0)  # a live daemon's full listen queue makes connect wait
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            os.unlink(path)  # stale: no process listens on it (left by a daemon that died)
        except FileNotFoundError:
            pass
        except TimeoutError:
            raise ServeError(f"'{path}' is in use: another daemon listens on it") from None
        except OSError as error:
            raise ServeError(f"cannot use '{path}': {error.strerror or error}") from None
        else:
            raise ServeError(f"'{path}' is in use: another daemon listens on it")
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)  # the socket is born 0600: no moment when others may connect
    try:
        listener.bind(path)
    except OSError as error:
        listener.close()
        raise ServeError(f"cannot listen on '{path}': {error.strerror}") from None
    finally:
        os.umask(mask)
    listener.listen(socket.SOMAXCONN)
    return listener


def bind_tcp(address: str) -> socket.socket:
    """A listening TCP socket at ``HOST:PORT`` (``[::1]:783`` for IPv6)."""
    host, colon, port = address.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ServeError(f"--listen wants HOST:PORT, got {address!r}")
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)[0]
        listener = socket.socket(family, kind, proto)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(where)
    except OSError as error:
        raise ServeError(f"cannot listen on {address}: {error.strerror or error}") from None
    listener.listen(socket.SOMAXCONN)
    return listener


class PidFile:
    """``--pidfile``: this process's id in a file, locked (fcntl.lockf) while it lives.

    A file that a live process holds locked is refused; any other (a stale one, left by a
    daemon killed) is replaced. The id is written to a new file (O_EXCL, O_NOFOLLOW: never
    through a symbolic link or into another file) renamed over the path, so a symbolic link
    there is replaced, not followed. The lock is a POSIX record lock: forked workers do not
    inherit it, so it ends with this process, even killed.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        import fcntl
        import tempfile
        self.path = os.fspath(path)
        holder = _locked_by(self.path)
        if holder is not None:
            raise ServeError(f"'{self.path}' is the pidfile of a running daemon (pid "
                             f"{holder or '?'}); give another --pidfile")
        directory, name = os.path.split(self.path)
        try:
            fd, staged = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
        except OSError as error:
            raise ServeError(f"cannot write --pidfile '{self.path}': {error.strerror}") from None
        try:
            os.fchmod(fd, 0o644)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.replace(staged, self.path)
        except BaseException as error:
            os.close(fd)
            os.unlink(staged)
            if isinstance(error, OSError):
                raise ServeError(f"cannot write --pidfile '{self.path}': "
                                 f"{error.strerror}") from None
            raise
        self.fd = fd
        st = os.fstat(fd)
        self.identity = st.st_dev, st.st_ino

    def remove(self) -> None:
        """Remove the file if it is still this one (not one another daemon wrote since)."""
        try:
            st = os.lstat(self.path)
            if (st.st_dev, st.st_ino) == self.identity:
                os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)


def _locked_by(path: str) -> str | None:
    """The id in pidfile ``path`` if a live process holds it locked ("" if it says none),
    else None (no file, a stale one, a symbolic link or something not a file)."""
    import fcntl
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.read(fd, 20).decode("ascii", "replace").strip()
        return None
    finally:
        os.close(fd)  # and with it this process's test lock


def systemd_listeners() -> list[socket.socket]:
    """The sockets systemd passed (socket activation: $LISTEN_PID is us, $LISTEN_FDS of them
    from fd 3), else none."""
    if os.environ.get("LISTEN_PID") != str(os.getpid()):
        return []
    count = int(os.environ.get("LISTEN_FDS", "0") or 0)
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)
    return [socket.socket(fileno=3 + i) for i in range(count)]


class ServeError(TextnbError):
    """The daemon cannot start: a socket in use or not ours, a bad listen address."""
