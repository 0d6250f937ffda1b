"""An IMAP account and how textnb files its mail: the options given, else the keys of the
config file ($XDG_CONFIG_HOME/textnb/imap.toml), else the defaults; and its password, read
from a file, $TEXTNB_IMAP_PASSWORD or the system keyring, never from the command line."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import TextnbError

PASSWORD_ENV = "TEXTNB_IMAP_PASSWORD"
# The keyring entry: service textnb-imap, user USER@HOST (keyring set textnb-imap USER@HOST).
KEYRING_SERVICE = "textnb-imap"
TLS_MODES = ("imaps", "starttls", "none")


class ConfigError(TextnbError):
    """A config file that cannot be read, a key it may not have, a setting missing."""


@dataclass(frozen=True)
class Account:
    """Where the mail is and how textnb files it.

    Attributes
    ----------
    host, user : str
        The IMAP server and the login.
    port : int or None
        None: 993 for ``imaps``, 143 for ``starttls`` and ``none``.
    tls : {"imaps", "starttls", "none"}
        TLS from the first byte, upgraded by STARTTLS, or none (loopback only).
    ca_file : str or None
        Certificates to verify the server's with, instead of the system's.
    password_file : str or None
        A file whose first line is the password.
    model : str or None
        The model file (None: ``-m``'s default, $TEXTNB_MODEL or the XDG data directory).
    folders : tuple of str
        The folders whose new mail ``filter`` classifies.
    junk, unsure : str
        Where spam and unsure mail go (created if absent).
    keywords : bool
        Also set the ``$Junk`` / ``$NotJunk`` keywords (RFC 5788's registry) mail clients read.
    learn : bool
        Learn from the user's moves into and out of Junk and Unsure.
    interval : float
        ``--watch``: seconds at most between two passes (IDLE wakes it sooner for new mail).
    """

    host: str
    user: str
    port: int | None = None
    tls: str = "imaps"
    ca_file: str | None = None
    password_file: str | None = None
    model: str | None = None
    folders: tuple[str, ...] = ("INBOX",)
    junk: str = "Junk"
    unsure: str = "Unsure"
    keywords: bool = False
    learn: bool = True
    interval: float = 300.0

    @property
    def name(self) -> str:
        """USER@HOST: how the account is named in messages, the keyring and the state file."""
        return f"{self.user}@{self.host}"

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port or (993 if self.tls == "imaps" else 143)


# Each key of the config file and the types its value may have (TOML's).
_TYPES: dict[str, tuple[type, ...]] = {
    "host": (str,), "user": (str,), "port": (int,), "tls": (str,), "ca_file": (str,),
    "password_file": (str,), "model": (str,), "folders": (list,), "junk": (str,),
    "unsure": (str,), "keywords": (bool,), "learn": (bool,), "interval": (int, float)}


def config_path() -> Path:
    """$XDG_CONFIG_HOME/textnb/imap.toml, with the XDG default ~/.config when unset or relative."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "textnb" / "imap.toml"


def read_config(path: Path, required: bool = False) -> dict[str, Any]:
    """The config file's settings, checked: known keys, values of their types. A missing file
    is no settings, unless ``required`` (a file named on the command line)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the backport the imap extra installs there
        import tomli as tomllib
    try:
        with open(path, "rb") as file:
            settings = tomllib.load(file)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"config file '{path}' does not exist") from None
        return {}
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file '{path}': {error}") from None
    except OSError as error:
        raise ConfigError(f"config file '{path}': {error.strerror or error}") from None
    for key, value in settings.items():
        if key == "password":
            raise ConfigError(f"config file '{path}': no password in the config file: "
                              f"password_file names a file that holds it")
        if key not in _TYPES:
            raise ConfigError(f"config file '{path}': unknown key {key!r} (keys: "
                              f"{', '.join(_TYPES)})")
        # bool is an int to Python, not to TOML: port = true is an error.
        if not isinstance(value, _TYPES[key]) or (isinstance(value, bool)
                                                  and bool not in _TYPES[key]):
            kind = " or ".join(t.__name__.replace("str", "string") for t in _TYPES[key])
            raise ConfigError(f"config file '{path}': {key} must be a {kind}, "
                              f"not {value!r}")
        if key == "folders" and not all(isinstance(name, str) for name in value):
            raise ConfigError(f"config file '{path}': folders must be a list of names")
    return settings


def account(options: dict[str, Any], config: dict[str, Any]) -> Account:
    """The account from the options given (None: not given) over the config file's keys."""
    known = {f.name for f in fields(Account)}
    merged = {**config, **{k: v for k, v in options.items() if v is not None and v != ()}}
    merged = {k: v for k, v in merged.items() if k in known}
    for key in ("password_file", "ca_file", "model"):  # "~/..." in the file, as in a shell
        if merged.get(key):
            merged[key] = os.path.expanduser(merged[key])
    for key in ("host", "user"):
        if not merged.get(key):
            raise ConfigError(f"no IMAP {key}: give --{key}, or {key} in {config_path()}")
    if merged.get("tls", "imaps") not in TLS_MODES:
        raise ConfigError(f"tls must be one of {', '.join(TLS_MODES)}, not {merged['tls']!r}")
    if "folders" in merged:
        merged["folders"] = tuple(merged["folders"])
        if not merged["folders"]:
            raise ConfigError("no folders to filter")
    if "port" in merged and not 0 < merged["port"] < 65536:
        raise ConfigError(f"port {merged['port']} is not a TCP port")
    found = Account(**merged)
    if found.junk == found.unsure or {found.junk, found.unsure} & set(found.folders):
        raise ConfigError(f"the Junk folder ({found.junk}), the Unsure folder "
                          f"({found.unsure}) and the folders filtered "
                          f"({', '.join(found.folders)}) must differ")
    return found


def password(account: Account) -> str:
    """The account's password: its password_file's first line, else $TEXTNB_IMAP_PASSWORD,
    else the system keyring's entry for service textnb-imap, user USER@HOST."""
    if account.password_file is not None:
        try:
            with open(account.password_file, encoding="utf-8") as file:
                line = file.readline().rstrip("\r\n")
        except OSError as error:
            raise ConfigError(f"password file '{account.password_file}': "
                              f"{error.strerror or error}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"password file '{account.password_file}' is not UTF-8") from None
        if not line:
            raise ConfigError(f"password file '{account.password_file}' is empty")
        return line
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV]
    try:
        import keyring
    except ModuleNotFoundError:
        raise ConfigError(f"no password for {account.name}: give --password-file FILE, set "
                          f"${PASSWORD_ENV}, or pip install keyring and store it with "
                          f"`keyring set {KEYRING_SERVICE} {account.name}`") from None
    try:
        found = keyring.get_password(KEYRING_SERVICE, account.name)
    except Exception as error:  # noqa: BLE001 — keyring backends raise their own kinds
        raise ConfigError(f"the system keyring: {error}") from None
    if not found:
        raise ConfigError(f"no password for {account.name} in the system keyring: store it "
                          f"with `keyring set {KEYRING_SERVICE} {account.name}`, or give "
                          f"--password-file FILE or ${PASSWORD_ENV}")
    return found
