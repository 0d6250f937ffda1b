"""A throwaway Dovecot on loopback: the IMAP server of textnb imap's tests and benchmark.

Everything lives under one directory: a configuration of its own (nothing of /etc/dovecot),
a passwd-file user, its Maildir, a self-signed certificate made with ``openssl``, listeners
on unprivileged loopback ports (IMAPS and IMAP with STARTTLS). Dovecot refuses to run its
processes or mail as root: run by root, they run as ``nobody``; otherwise as the caller.
The master runs in the foreground in a session of its own, so that :meth:`Dovecot.kill`
kills every process of the server at once, as a crash would.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DOVECOT = "/usr/sbin/dovecot"
LDA = "/usr/lib/dovecot/dovecot-lda"
SIEVE_PLUGIN = "/usr/lib/dovecot/modules/lib90_sieve_plugin.so"
IMAPSIEVE_PLUGIN = "/usr/lib/dovecot/modules/lib95_imap_sieve_plugin.so"

_CONFIG = """\
base_dir = {run}
state_dir = {run}/state
instance_name = textnb-test-{port}
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
default_internal_user = {system_user}
default_internal_group = {system_group}
default_login_user = {system_user}
first_valid_uid = 1
first_valid_gid = 1
ssl = yes
ssl_cert = <{root}/cert.pem
ssl_key = <{root}/key.pem
auth_mechanisms = plain
auth_failure_delay = 0
disable_plaintext_auth = no
postmaster_address = postmaster@localhost
mail_location = maildir:~/Maildir
passdb {{
  driver = passwd-file
  args = scheme=PLAIN {root}/passwd
}}
userdb {{
  driver = passwd-file
  args = {root}/passwd
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap_port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {port}
  }}
}}
service anvil {{
  chroot =
}}
service auth {{
  unix_listener auth-userdb {{
    mode = 0666
  }}
}}
service stats {{
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
protocol imap {{
  mail_plugins = $mail_plugins {imap_plugins}
}}
protocol lda {{
  mail_plugins = $mail_plugins {lda_plugins}
}}
{extra}
"""


def missing(sieve: bool = False) -> str | None:
    """Why a test Dovecot cannot run here (a reason for pytest.skip), or None."""
    if not os.access(DOVECOT, os.X_OK):
        return "Dovecot is not installed (Debian package dovecot-imapd)"
    if shutil.which("openssl") is None:
        return "openssl is not installed (it makes the test certificate)"
    if sieve and not (os.path.exists(SIEVE_PLUGIN) and os.path.exists(IMAPSIEVE_PLUGIN)):
        return "Pigeonhole is not installed (Debian package dovecot-sieve)"
    return None


def _running(group: int) -> bool:
    """Whether a process of the process group runs (zombies aside: they hold no port, and
    the container's init may reap them seconds late)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    if not os.path.isdir("/proc/self"):
        return True
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != b"Z":
            return True
    return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Dovecot:
    """A Dovecot server with one user, :attr:`user`, whose password is :attr:`password`.

    ``extra`` is appended to the configuration (a ``plugin {}`` block, say);
    ``imap_plugins`` and ``lda_plugins`` are added to those protocols' ``mail_plugins``.
    """

    user = "alice"
    password = "secret"

    def __init__(self, directory: str | os.PathLike | None = None, extra: str = "",
                 imap_plugins: str = "", lda_plugins: str = "") -> None:
        # A directory of its own by default, that every user may pass through: run by root,
        # the server's processes (nobody) must reach their files, which a test's tmp_path
        # (mode 0700 under a 0700 parent) does not let them.
        self.made = directory is None
        self.root = Path(tempfile.mkdtemp(prefix="textnb-dovecot-") if self.made
                         else directory).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o711)
        if os.getuid() == 0:  # Dovecot runs no process and no mail user as root
            account = pwd.getpwnam("nobody")
        else:
            account = pwd.getpwuid(os.getuid())
        self.uid, self.gid = account.pw_uid, account.pw_gid
        self.home = self.root / "home"
        self.port, self.imap_port = free_port(), free_port()
        self.process: subprocess.Popen | None = None
        run = self.root / "run"
        for path in (self.home / "Maildir", run):
            path.mkdir(parents=True, exist_ok=True)
        self._own(self.home)
        self._own(self.home / "Maildir")
        self.cert = self.root / "cert.pem"
        if not self.cert.exists():
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:prime256v1", "-nodes",
                            "-keyout", str(self.root / "key.pem"), "-out", str(self.cert),
                            "-days", "2", "-subj", "/CN=localhost",
                            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                           check=True, capture_output=True)
        (self.root / "passwd").write_text(
            f"{self.user}:{{PLAIN}}{self.password}:{self.uid}:{self.gid}::{self.home}::\n")
        self.config = self.root / "dovecot.conf"
        self.config.write_text(_CONFIG.format(
            root=self.root, run=run, port=self.port, imap_port=self.imap_port,
            system_user=account.pw_name, system_group=grp.getgrgid(self.gid).gr_name,
            imap_plugins=imap_plugins, lda_plugins=lda_plugins, extra=extra))

    def _own(self, path: Path) -> None:
        if os.getuid() == 0:
            os.chown(path, self.uid, self.gid)

    # -- the server ------------------------------------------------------------------------

    def start(self, timeout: float = 20) -> "Dovecot":
        """Start the server and wait until its IMAPS port accepts connections."""
        self.process = subprocess.Popen([DOVECOT, "-F", "-c", str(self.config)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dovecot exited: {self.process.stderr.read().decode()}"
                                   f"{self.log()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"dovecot did not listen within {timeout} s: {self.log()[-2000:]}")

    def stop(self) -> None:
        """Stop the server as an administrator would (SIGTERM) and wait for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._wait_gone()

    def kill(self) -> None:
        """Kill every process of the server at once (SIGKILL), as a crash would.

        A crash leaves Dovecot's dot-locks behind (dovecot-uidlist.lock of a folder being
        changed), which a restarted Dovecot waits for until they are two minutes old: a
        client's commands meanwhile time out. They are removed here, so that the tests need
        not wait; textnb's next run after such a wait is what the tests check."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
        self._wait_gone()
        for lock in (self.home / "Maildir").rglob("*.lock"):
            lock.unlink(missing_ok=True)

    def _wait_gone(self) -> None:
        # The imap processes notice their master's end on their own; wait until none of the
        # session runs, so that the next start binds the same ports and finds no stale lock.
        if self.process is None:
            return
        deadline = time.monotonic() + 10
        while _running(self.process.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if _running(self.process.pid):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process = None

    def restart(self) -> "Dovecot":
        self.stop()
        return self.start()

    def log(self) -> str:
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __enter__(self) -> "Dovecot":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill the server and remove its directory, if it made it."""
        self.kill()
        if self.made:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- the mailbox on disk ---------------------------------------------------------------

    def maildir(self, folder: str = "INBOX") -> Path:
        """A folder's Maildir (Maildir++: INBOX is the root, folder X is .X), created."""
        root = self.home / "Maildir"
        path = root if folder == "INBOX" else root / f".{folder}"
        for sub in ("", "cur", "new", "tmp"):
            (path / sub).mkdir(exist_ok=True)
            self._own(path / sub)
        return path

    def deliver(self, messages, folder: str = "INBOX") -> None:
        """Put messages (bytes) into a folder's Maildir as a delivery agent would (new/);
        Dovecot gives them UIDs in this order when it next looks."""
        path = self.maildir(folder)
        stamp = time.time_ns()
        for i, raw in enumerate(messages):
            name = f"{stamp // 10**9}.M{stamp % 10**9 // 1000}Q{i:07d}.textnb-test"
            tmp = path / "tmp" / name
            tmp.write_bytes(raw.replace(b"\r\n", b"\n"))
            self._own(tmp)
            os.rename(tmp, path / "new" / name)

    def folders(self) -> dict[str, list[bytes]]:
        """Each folder's messages as stored (LF line ends), read from disk, with those
        flagged \\Deleted but not expunged: what is really there."""
        root = self.home / "Maildir"
        found: dict[str, list[bytes]] = {}
        for name, path in [("INBOX", root)] + sorted(
                (p.name[1:], p) for p in root.iterdir() if p.name.startswith(".") and p.is_dir()):
            found[name] = [f.read_bytes() for sub in ("cur", "new")
                           for f in sorted((path / sub).iterdir())]
        return found

    def client(self, **kwargs):
        """An IMAPClient logged in as :attr:`user` over IMAPS, the certificate verified."""
        import ssl

        import imapclient
        context = ssl.create_default_context(cafile=str(self.cert))
        client = imapclient.IMAPClient("127.0.0.1", port=self.port, ssl_context=context,
                                       timeout=30, **kwargs)
        client.login(self.user, self.password)
        return client
