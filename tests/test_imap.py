"""textnb imap against a real Dovecot on loopback (skipped where Dovecot or IMAPClient is
absent): training from folders, filtering new mail, learning from the user's moves."""

from __future__ import annotations

import sqlite3
from collections import Counter

from pathlib import Path

import pytest
from click.testing import CliRunner

from textnb import load_model
from textnb.cli.app import main
from textnb.store.learning import learn
from imapfixtures import (assert_each_once, corpus, digest, imap, model, needs_dovecot,  # noqa: F401
                          server, statuses, tagged, trained, where)

pytestmark = needs_dovecot


def maildir_files(server) -> set:
    """Each message file's folder and Maildir base name (Dovecot adds sizes to the name as it
    learns them; a move gives a new base name)."""
    return {(p.parent.parent.name, p.name.split(":")[0].split(",")[0])
            for p in server.home.rglob("*") if p.is_file() and p.parent.name in ("cur", "new")}


def moved_summary(result) -> str:
    return result.output.strip().splitlines()[-1]


# -- train ------------------------------------------------------------------------------------

def test_train_makes_the_model_textnb_train_makes_of_the_same_messages(server, tmp_path):
    spam, ham = corpus("spam"), corpus("ham")
    server.deliver(spam[:60], "Junk")
    server.deliver(ham[:40], "INBOX")
    server.deliver(ham[40:70], "Archive")
    path = tmp_path / "imap.model"
    result = imap(server, path, "train", "--spam", "Junk", "--ham", "INBOX", "--ham", "Archive",
                  "-q", "--training", "full", "--ngrams", "1", "--keep-suspects")
    assert result.exit_code == 0, result.output
    # The same messages, fetched by IMAPClient itself, as files in the same order.
    client = server.client()
    for label, folder, sub in (("spam", "Junk", "a"), ("ham", "INBOX", "a"),
                               ("ham", "Archive", "b")):
        client.select_folder(folder, readonly=True)
        directory = tmp_path / "files" / label / sub
        directory.mkdir(parents=True)
        for uid, data in client.fetch(client.search("ALL"), ["BODY.PEEK[]"]).items():
            (directory / f"{uid:05d}").write_bytes(data[b"BODY[]"])
    client.logout()
    reference = tmp_path / "files.model"
    result = CliRunner().invoke(main, ["train", "-q", "--training", "full", "--ngrams", "1", "--keep-suspects",
                                       "-m", str(reference), str(tmp_path / "files" / "spam"),
                                       str(tmp_path / "files" / "ham")])
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == reference.read_bytes()
    trained_model = load_model(path)
    assert sorted(map(str, trained_model.classes_)) == ["ham", "spam"]
    assert trained_model.model_.class_count_.tolist() == [70, 60]


def test_train_with_the_default_settings_learns_cutoffs(server, tmp_path):
    server.deliver(corpus("spam")[:50], "Junk")
    server.deliver(corpus("ham")[:50], "INBOX")
    path = tmp_path / "imap.model"
    result = imap(server, path, "train", "--spam", "Junk", "--ham", "INBOX")
    assert result.exit_code == 0, result.output
    assert "fetched 50 from Junk, 50 from INBOX" in result.stderr
    assert "cutoffs" in result.stdout and load_model(path).cutoffs_["spam_class"] == "spam"


def test_train_refuses_what_it_cannot_use(server, tmp_path):
    server.deliver(corpus("ham")[:5], "INBOX")
    server.maildir("Junk")
    path = tmp_path / "imap.model"
    result = imap(server, path, "train", "--spam", "Junk", "--ham", "INBOX")
    assert result.exit_code == 2 and "no messages in the spam folder(s): Junk" in result.stderr
    result = imap(server, path, "train", "--spam", "Junk", "--ham", "INBOX", "--no-such-option")
    assert result.exit_code == 2 and "No such option" in result.stderr
    result = imap(server, path, "train", "--spam", "Junk", "--ham", "Junk")
    assert result.exit_code == 2 and "given twice" in result.stderr
    assert not path.exists()


# -- filter -----------------------------------------------------------------------------------

def test_filter_moves_each_message_once_by_its_status_and_a_rerun_moves_nothing(server, model):
    messages = [tagged(m, "300") for m in corpus("spam") + corpus("ham")]
    server.deliver(messages)
    result = imap(server, model, "filter", "--all")
    assert result.exit_code == 0, result.output
    found = assert_each_once(server, messages)
    expected = {"spam": "Junk", "unsure": "Unsure", "ham": "INBOX"}
    for raw, status in zip(messages, statuses(model, messages)):
        assert found[digest(raw)] == expected[status]
    counts = Counter(statuses(model, messages))
    assert counts["spam"] > 100 and counts["ham"] > 100
    assert moved_summary(result) == (
        f"300 new messages classified, moved {counts['spam']} to Junk"
        + (f", moved {counts['unsure']} to Unsure" if counts["unsure"] else ""))
    files = maildir_files(server)
    again = imap(server, model, "filter", "--all")
    assert again.exit_code == 0 and moved_summary(again) == "0 new messages classified"
    assert maildir_files(server) == files  # not one moved, copied or expunged
    with sqlite3.connect(next(model.parent.glob("*.sqlite"))) as db:
        assert db.execute("SELECT COUNT(*) FROM moves").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM failures").fetchone() == (0,)


def test_the_first_run_takes_the_mail_there_as_seen(server, model):
    spam = [tagged(m, "first") for m in corpus("spam")[:20]]
    server.deliver(spam)
    result = imap(server, model, "filter")
    assert result.exit_code == 0, result.output
    assert "INBOX: first look: the mail in it now is taken as seen" in result.stderr
    assert "created the folder Junk" in result.stderr and "created the folder Unsure" in result.stderr
    assert len(where(server)["INBOX"]) == 20 and not where(server)["Junk"]
    later = [tagged(m, "later") for m in corpus("spam")[20:30]]
    server.deliver(later)
    result = imap(server, model, "filter")
    assert result.exit_code == 0 and "first look" not in result.stderr
    found = assert_each_once(server, spam + later)
    assert all(found[digest(m)] == "INBOX" for m in spam)
    assert [found[digest(m)] for m in later] == [
        {"spam": "Junk", "unsure": "Unsure", "ham": "INBOX"}[s] for s in statuses(model, later)]


def test_dry_run_says_what_it_would_do_and_changes_nothing(server, model):
    messages = [tagged(m, "dry") for m in corpus("spam")[:10] + corpus("ham")[:10]]
    server.deliver(messages)
    before = where(server)
    weights = model.read_bytes()
    result = imap(server, model, "filter", "--all", "--dry-run")
    assert result.exit_code == 0, result.output
    spam = statuses(model, messages).count("spam")
    assert sum(line.startswith("would move INBOX UID ") for line in result.stdout.splitlines()) \
        == spam + statuses(model, messages).count("unsure")
    assert "Junk does not exist: it would be created" in result.stderr
    assert f"would move {spam} to Junk" in moved_summary(result)
    assert where(server) == before and model.read_bytes() == weights
    assert not list(model.parent.glob("*.sqlite"))


def test_learns_from_the_users_moves_once_and_never_files_a_message_back(server, model):
    spam, ham = corpus("spam")[:10], corpus("ham")[:10]
    messages = [tagged(m, "learn") for m in spam + ham]
    server.deliver(messages)
    assert imap(server, model, "filter", "--all").exit_code == 0
    found = assert_each_once(server, messages)
    in_junk = [m for m in messages if found[digest(m)] == "Junk"]
    in_inbox = [m for m in messages if found[digest(m)] == "INBOX"]
    assert in_junk and in_inbox
    # The user: a ham of INBOX into Junk; a spam out of Junk into INBOX, another into
    # Archive; one into Trash (deleting it is no correction).
    client = server.client()
    client.create_folder("Archive")
    client.create_folder("Trash")

    def move(raw: bytes, source: str, target: str) -> None:
        client.select_folder(source)
        uids = [uid for uid, data in client.fetch(client.search("ALL"), ["BODY.PEEK[]"]).items()
                if digest(data[b"BODY[]"]) == digest(raw)]
        client.move(uids, target)

    move(in_inbox[0], "INBOX", "Junk")
    move(in_junk[0], "Junk", "INBOX")
    move(in_junk[1], "Junk", "Archive")
    move(in_junk[2], "Junk", "Trash")
    result = imap(server, model, "filter", "-v")
    assert result.exit_code == 0, result.output
    assert "learned 2 as ham, learned 1 as spam" in moved_summary(result)
    learned = [line for line in result.stdout.splitlines() if line.startswith("learn ")]
    assert len(learned) == 3
    spam_class, ham_class = "spam", "ham"
    probe = model.parent / "probe.model"

    def copy() -> None:  # the model is the file and its journal (textnb.store.journal)
        probe.write_bytes(model.read_bytes())
        journal = Path(f"{model}.journal")
        Path(f"{probe}.journal").write_bytes(journal.read_bytes() if journal.exists() else b"")

    for raw, label, other in ((in_inbox[0], spam_class, ham_class),
                              (in_junk[0], ham_class, spam_class),
                              (in_junk[1], ham_class, spam_class)):
        copy()
        # learn() says False, the file untouched, for a message learned so already.
        assert learn(probe, raw.replace(b"\n", b"\r\n"), label, other) is False
    copy()
    assert learn(probe, in_junk[2].replace(b"\n", b"\r\n"), ham_class, spam_class) is True
    # Taken back into INBOX, the spam stays there; nothing is learned twice.
    weights = model.read_bytes()
    result = imap(server, model, "filter", "-v")
    assert result.exit_code == 0 and "learned" not in result.stdout
    assert model.read_bytes() == weights
    found = assert_each_once(server, messages)
    assert found[digest(in_junk[0])] == "INBOX" and found[digest(in_inbox[0])] == "Junk"
    # The ham learned in Archive goes back into Junk: learned as spam, unlearned as ham.
    move(in_junk[1], "Archive", "Junk")
    result = imap(server, model, "filter", "-v")
    assert "learned 1 as spam" in moved_summary(result)
    classifier = load_model(model)
    with pytest.raises(ValueError, match="never learned"):
        classifier.unlearn([in_junk[1].replace(b"\n", b"\r\n")], [ham_class])
    client.logout()


def test_keywords_mark_junk_and_not_junk(server, model):
    messages = [tagged(m, "kw") for m in corpus("spam")[:8] + corpus("ham")[:8]]
    server.deliver(messages)
    assert imap(server, model, "filter", "--all", "--keywords").exit_code == 0
    client = server.client()
    for folder, keyword, absent in (("Junk", b"$Junk", b"$NotJunk"),
                                    ("INBOX", b"$NotJunk", b"$Junk")):
        client.select_folder(folder, readonly=True)
        flags = client.get_flags(client.search("ALL"))
        assert flags and all(keyword in f and absent not in f for f in flags.values())
    # Taken out of Junk, a message becomes $NotJunk.
    client.select_folder("Junk")
    client.move(client.search("ALL")[:1], "INBOX")
    assert imap(server, model, "filter", "--keywords").exit_code == 0
    client.select_folder("INBOX", readonly=True)
    flags = client.get_flags(client.search("ALL"))
    assert all(b"$NotJunk" in f and b"$Junk" not in f for f in flags.values())
    client.logout()


@pytest.mark.parametrize("tls", ["starttls", "none"])
def test_starttls_and_plain_text_on_loopback(server, model, tls):
    server.deliver([tagged(corpus("spam")[0], tls)])
    result = imap(server, model, "filter", "--all", "--tls", tls, port=server.imap_port)
    assert result.exit_code == 0, result.output
    assert "moved 1 to Junk" in moved_summary(result)


def test_an_unverified_certificate_is_an_error(server, model, tmp_path):
    result = CliRunner().invoke(main, ["imap", "filter", "--host", "127.0.0.1", "--port",
                                       str(server.port), "--user", server.user, "-m", str(model)],
                                env={"TEXTNB_IMAP_PASSWORD": server.password,
                                     "SSL_CERT_FILE": str(tmp_path / "none.pem"),
                                     "XDG_CONFIG_HOME": str(tmp_path)})
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: 127.0.0.1: the server's certificate: ")
    assert "--ca-file" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_wrong_password_is_one_line(server, model):
    result = imap(server, model, "filter", env={"TEXTNB_IMAP_PASSWORD": "wrong"})
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: 127.0.0.1: login as alice failed: ")
    assert len(result.stderr.splitlines()) == 1
