"""textnb imap's account: options over the config file's keys, the password's sources, the
plain-text rule; and the command's errors, one line each. No server is needed: every case
here fails before connecting, or connects to an address no server listens on."""

from __future__ import annotations

import sys
import types

import pytest
from click.testing import CliRunner

from textnb.cli.app import main
from textnb.imap.account import Account, ConfigError, account, config_path, password, read_config
from textnb.imap.connection import ImapError, connect, is_loopback

pytest.importorskip("imapclient")


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, ["imap", *args], env=env or {})


def test_the_config_file_is_under_xdg_config_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "textnb" / "imap.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")  # not absolute: ignored, as XDG says
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_path() == tmp_path / ".config" / "textnb" / "imap.toml"


def test_options_override_the_config_files_keys(tmp_path):
    path = tmp_path / "imap.toml"
    path.write_text('host = "imap.example.org"\nuser = "ann"\nport = 1993\ntls = "starttls"\n'
                    'folders = ["INBOX", "Lists"]\njunk = "Spam"\nkeywords = true\n'
                    'interval = 60\n')
    config = read_config(path)
    found = account({"host": None, "user": "bob", "folders": (), "junk": None}, config)
    assert found == Account(host="imap.example.org", user="bob", port=1993, tls="starttls",
                            folders=("INBOX", "Lists"), junk="Spam", keywords=True,
                            interval=60)
    assert found.address == ("imap.example.org", 1993) and found.name == "bob@imap.example.org"
    assert Account(host="h", user="u").address == ("h", 993)
    assert Account(host="h", user="u", tls="none").address == ("h", 143)


@pytest.mark.parametrize("text, message", [
    ('password = "hunter2"', "no password in the config file: password_file"),
    ('hots = "x"', "unknown key 'hots'"),
    ("port = true", "port must be a int, not True"),
    ('folders = "INBOX"', "folders must be a list"),
    ("folders = [1]", "folders must be a list of names"),
    ('host = "x', "config file"),
])
def test_a_bad_config_file_is_named_with_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "imap.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=message):
        read_config(path)


def test_a_missing_config_file_is_no_settings_unless_named(tmp_path):
    assert read_config(tmp_path / "none.toml") == {}
    with pytest.raises(ConfigError, match="does not exist"):
        read_config(tmp_path / "none.toml", required=True)


@pytest.mark.parametrize("options, message", [
    ({"user": "u"}, "no IMAP host"),
    ({"host": "h"}, "no IMAP user"),
    ({"host": "h", "user": "u", "junk": "INBOX"}, "must differ"),
    ({"host": "h", "user": "u", "junk": "X", "unsure": "X"}, "must differ"),
])
def test_an_account_needs_a_host_a_user_and_distinct_folders(options, message):
    with pytest.raises(ConfigError, match=message):
        account(options, {})


def test_the_password_comes_from_a_file_then_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("TEXTNB_IMAP_PASSWORD", raising=False)
    secret = tmp_path / "secret"
    secret.write_text("s3cr3t with spaces \nsecond line\n")
    monkeypatch.setenv("TEXTNB_IMAP_PASSWORD", "from-env")
    assert password(Account("h", "u", password_file=str(secret))) == "s3cr3t with spaces "
    assert password(Account("h", "u")) == "from-env"
    secret.write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        password(Account("h", "u", password_file=str(secret)))
    with pytest.raises(ConfigError, match="password file .*No such file"):
        password(Account("h", "u", password_file=str(tmp_path / "none")))


def test_the_keyring_last_and_a_clear_error_without_it(monkeypatch):
    monkeypatch.delenv("TEXTNB_IMAP_PASSWORD", raising=False)
    monkeypatch.setitem(sys.modules, "keyring", None)  # not installed
    with pytest.raises(ConfigError, match="pip install keyring and store it with `keyring set "
                                          "textnb-imap u@h`"):
        password(Account("h", "u"))
    asked = []
    fake = types.SimpleNamespace(get_password=lambda service, user: asked.append(
        (service, user)) or {"textnb-imap": "from-keyring"}.get(service))
    monkeypatch.setitem(sys.modules, "keyring", fake)
    assert password(Account("h", "u")) == "from-keyring" and asked == [("textnb-imap", "u@h")]
    fake.get_password = lambda service, user: None
    with pytest.raises(ConfigError, match="no password for u@h in the system keyring"):
        password(Account("h", "u"))


def test_plain_text_only_to_a_loopback_address():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("192.0.2.1") and not is_loopback("no-such-host.invalid")
    # Refused before any connection is tried (192.0.2.1 is TEST-NET-1: nothing is there).
    with pytest.raises(ImapError, match="only to a loopback address .* not 192.0.2.1"):
        connect(Account("192.0.2.1", "u", tls="none"), "secret")


def test_the_password_is_never_an_option():
    result = run("filter", "--password", "x")
    assert result.exit_code == 2 and "No such option '--password'" in result.stderr


def test_errors_are_one_line_and_exit_1(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path), "TEXTNB_IMAP_PASSWORD": "x",
           "XDG_DATA_HOME": str(tmp_path)}
    result = run("filter", "--user", "u", env=env)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: no IMAP host: give --host, or host in {tmp_path}/textnb/imap.toml\n")
    result = run("filter", "--host", "127.0.0.1", "--user", "u", env=env)
    assert result.exit_code == 1 and result.stderr.startswith(
        f"Error: model file '{tmp_path}/textnb/textnb.model' does not exist: train one")
    result = run("filter", "--config", str(tmp_path / "none.toml"), env=env)
    assert result.exit_code == 1 and "does not exist" in result.stderr
    closed = _closed_port()
    result = run("filter", "--host", "127.0.0.1", "--port", str(closed), "--user", "u",
                 "-m", str(_any_model(tmp_path)), env=env)
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("Error: 127.0.0.1: ") and "refused" in result.stderr.lower()
    result = run("filter", "--dry-run", "--watch", env=env)
    assert result.exit_code == 2 and "--dry-run runs once" in result.stderr


def _closed_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns: nothing listens there


def _any_model(tmp_path):
    from pathlib import Path
    corpus = Path(__file__).resolve().parent.parent / "corpora" / "spamassassin"
    path = tmp_path / "model.model"
    result = CliRunner().invoke(main, ["train", "-q", "-m", str(path), str(corpus / "spam"),
                                       str(corpus / "ham")])
    assert result.exit_code == 0
    return path
