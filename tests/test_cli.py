"""The command line through click's CliRunner and through the installed console script."""

from __future__ import annotations

import io
import json
import mailbox
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from textnb import TextClassifier, load_model
from textnb.cli import common as cli
from textnb.cli.app import Exit, main
from textnb.documents.corpus import class_name

ROOT = Path(__file__).resolve().parent.parent
SPAM_DIR = ROOT / "corpora" / "spamassassin" / "spam"
HAM_DIR = ROOT / "corpora" / "spamassassin" / "ham"
SPAM_MESSAGE = ROOT / "corpora" / "messages" / "spam.eml"
HAM_MESSAGE = ROOT / "corpora" / "messages" / "ham.eml"


# An explicit cutoff on P(spam), for tests that need a verdict independent of the cutoffs the
# model learned (the held-out spam scores 0.989 with the 300-message sample).
SAMPLE_CUTOFF = ["--spam-cutoff", "0.9"]


def run(*args: str, input: bytes | str | None = None, env: dict | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, env=env)


def assert_one_line_error(result, code: int = 1, match: str = "") -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert match in lines[0]
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def spam_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "spam.model"
    # Every document counted (the default, auto, may train on error instead: tests/test_onerror.py).
    result = run("train", "-q", "--training", "full", "-m", path, SPAM_DIR, HAM_DIR)
    assert result.exit_code == 0, result.output
    return path


def write_texts(directory: Path, texts: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (directory / name).write_text(text)
    return directory


# -- train ---------------------------------------------------------------------------------

def test_train_on_the_bundled_corpus_names_classes_after_directories(spam_model):
    classifier = load_model(spam_model)
    assert classifier.classes_.tolist() == ["ham", "spam"]
    assert classifier.model_.class_count_.tolist() == [150.0, 150.0]
    assert len(classifier.vocabulary_) > 5000


def test_train_prints_a_summary(tmp_path):
    result = run("train", "--training", "full", "-m", tmp_path / "m", SPAM_DIR, HAM_DIR)
    assert result.exit_code == 0
    assert "trained 300 documents (ham: 150, spam: 150)" in result.stdout
    # Full training's rates: each message scored by a model of the others.
    assert ("5-fold CV of 300 messages, full training; each message scored by a model of the "
            "rest: FPR") in result.stdout
    # The default chooses by cross-validation and says what it chose.
    result = run("train", "-m", tmp_path / "auto", SPAM_DIR, HAM_DIR)
    chosen = load_model(tmp_path / "auto").cutoffs_["training"]
    assert f"5-fold CV of 300 messages, {chosen} training" in result.stdout


def test_train_counts_the_documents_it_read_only_to_their_first_mib(tmp_path):
    """The 1 MiB cap is said, not silent: train's summary counts the documents cut (a file and
    an mbox message over it), and only those (one of exactly 1 MiB is read whole)."""
    from textnb.documents.message import MAX_BYTES
    write_texts(tmp_path / "pos", {f"p{i}": f"good fine nice {i}" for i in range(6)})
    write_texts(tmp_path / "neg", {f"n{i}": f"bad poor awful {i}" for i in range(6)})
    (tmp_path / "pos" / "big").write_bytes(b"good " * (MAX_BYTES // 5 + 1))
    (tmp_path / "neg" / "exact").write_bytes(b"bad\n" * (MAX_BYTES // 4))
    (tmp_path / "neg" / "box").write_bytes(
        b"From a@b Mon Jan  6 10:00:00 2003\n\nbad\n\nFrom a@b Mon Jan  6 10:00:00 2003\n\n"
        + b"poor\n" * (MAX_BYTES // 5 + 1))
    result = run("train", "-m", tmp_path / "m", tmp_path / "pos", tmp_path / "neg")
    assert result.exit_code == 0, result.output
    assert ("cut         2 documents longer than 1 MiB: each read to its first 1 MiB (beyond lie "
            "attachments, which give no words)") in result.stdout.splitlines()
    quiet = run("train", "-m", tmp_path / "m2", write_texts(tmp_path / "a", {"x": "good"}),
                write_texts(tmp_path / "b", {"y": "bad"}))
    assert "cut " not in quiet.stdout


def test_train_one_class_per_subdirectory_for_the_20_newsgroups_layout(tmp_path):
    top = tmp_path / "news"
    write_texts(top / "sci.space", {"1": "orbit rocket launch", "2": "shuttle orbit nasa"})
    write_texts(top / "rec.autos", {"1": "engine car wheel", "2": "car brakes engine"})
    write_texts(top / "talk.politics", {"1": "vote senate law", "2": "law congress vote"})
    model = tmp_path / "news.model"
    assert run("train", "-q", "-m", model, top).exit_code == 0
    assert load_model(model).classes_.tolist() == ["rec.autos", "sci.space", "talk.politics"]
    result = run("classify", "-m", model, "--format", "tsv", "-", input="rocket orbit")
    assert result.stdout.split()[:2] == ["-", "sci.space"]


def test_train_keeps_the_negations_but_for_mail_and_every_stop_word_of_short_texts(tmp_path,
                                                                                  spam_model):
    """By default NLTK's English stop words go where --spam-class is one of the classes
    (spam/ ham/), none of them from short texts (a median under 500 characters: snippets),
    and all but its negations from other texts (reviews: "not", "very"); the model keeps the
    choice."""
    mail = load_model(spam_model)
    assert mail.get_params()["stop_words"] == "english" and "not" in mail.stop_words_
    padding = " " + " ".join(["filler"] * 100)  # 700 characters more: not short
    for words, pad in (("english-without-negations", padding), ("none", "")):
        top = tmp_path / words / "reviews"
        write_texts(top / "pos", {"1": "the film is very good" + pad, "2": "a very fine cast" + pad})
        write_texts(top / "neg", {"1": "the film is not good" + pad, "2": "not a fine cast" + pad})
        # Read as streamed (partial_fit), as fit reads, and pruned.
        for options in (["--decision-threshold", "none"], [], ["--min-df=2"]):
            model = tmp_path / words / f"{len(options)}.model"
            assert run("train", "-q", "-m", model, top, *options).exit_code == 0
            reviews = load_model(model)
            assert reviews.get_params()["stop_words"] == words
            assert ("the" in reviews.stop_words_) == (words != "none")
            assert ("the" in reviews.vocabulary_.terms_) == (words == "none")
            assert {"not", "very"} <= set(reviews.vocabulary_.terms_)


def test_train_with_explicit_labels_and_mbox_and_maildir_inputs(tmp_path):
    box = mailbox.mbox(str(tmp_path / "spam.mbox"))
    for subject in ("cheap pills", "free money now", "win a prize"):
        box.add(f"From: a@b.example\nSubject: {subject}\n\nbuy {subject} today\n".encode())
    box.flush()
    maildir = mailbox.Maildir(str(tmp_path / "inbox"), create=True)
    for subject in ("meeting agenda", "lunch on friday"):
        maildir.add(f"From: boss@work.example\nSubject: {subject}\n\nsee you at the {subject}\n".encode())
    model = tmp_path / "m"
    result = run("train", "-q", "-m", model, "--label", f"spam={tmp_path / 'spam.mbox'}",
                 "--label", f"ham={tmp_path / 'inbox'}")
    assert result.exit_code == 0, result.output
    assert load_model(model).model_.class_count_.tolist() == [2.0, 3.0]


def test_classes_from_mailboxes_drop_the_mbox_suffix(tmp_path):
    for name, subject in (("spam.mbox", "cheap pills"), ("ham.MBX", "meeting agenda")):
        box = mailbox.mbox(str(tmp_path / name))
        for n in range(2):
            box.add(f"From: a@b.example\nSubject: {subject} {n}\n\nabout the {subject}\n".encode())
        box.flush()
    model = tmp_path / "m"
    result = run("train", "-q", "-m", model, tmp_path / "spam.mbox", tmp_path / "ham.MBX")
    assert result.exit_code == 0, result.output
    assert load_model(model).classes_.tolist() == ["ham", "spam"]
    # An Apple Mail export (a spam.mbox directory) in the one-class-per-subdirectory layout.
    write_texts(tmp_path / "top" / "spam.mbox", {"mbox": "cheap pills now"})
    write_texts(tmp_path / "top" / "ham.mbox", {"mbox": "agenda for the meeting"})
    assert run("train", "-q", "-m", model, tmp_path / "top").exit_code == 0
    assert load_model(model).classes_.tolist() == ["ham", "spam"]
    assert class_name(".mbox") == ".mbox" and class_name("a/x.mbox/") == "x"


def test_a_label_path_that_does_not_exist_is_an_error(tmp_path):
    write_texts(tmp_path / "ham", {"1": "agenda"})
    write_texts(tmp_path / "spam", {"1": "pills"})
    for command in ("train", "evaluate"):
        result = run(command, "-m", tmp_path / "m", "--label", f"spam={tmp_path / 'spma'}",
                     "--label", f"ham={tmp_path / 'ham'}", tmp_path / "spam")
        assert_one_line_error(result, 1, f"no such file or directory: {tmp_path / 'spma'} "
                                         f"(--label spam)")
    assert not (tmp_path / "m").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_reading_progress_counts_each_file_on_the_progress_line():
    """cli.progress counts the files on the phase the progress line shows (tests/test_status.py
    draws it); -q, or a stderr that is not a terminal, shows none."""
    from textnb import progress
    from textnb.cli.status import StatusLine, showing
    terminal, clock = _Terminal(), iter(range(100, 1000, 2)).__next__
    line = StatusLine(terminal, clock=lambda: float(clock()))
    previous = progress.report_to(line.phase)
    try:
        with cli.progress(list(range(5)), "reading", quiet=False) as bar:
            for _ in bar:
                line.tick()
    finally:
        progress.report_to(previous)
    shown = terminal.getvalue().split("\r")
    assert shown[-2].startswith("reading, 4 of 5 files, ") and "files/s" in shown[-2]
    assert " s left, " in shown[-2] and shown[-1] == "\x1b[K"
    with cli.progress([1, 2], "reading", quiet=True) as items:
        assert items == [1, 2]
    quiet = io.StringIO()  # not a terminal: no line, no reporter
    with showing(False, quiet):
        assert progress.report_to(None) is None
        with cli.progress([1, 2], "reading", quiet=False) as items:
            assert list(items) == [1, 2] and quiet.getvalue() == ""


def test_train_options_reach_the_classifier(tmp_path):
    model = tmp_path / "m"
    result = run("train", "-q", "-m", model, "--event-model", "bernoulli", "--alpha", "0.5",
                 "--prior", "uniform", "--stop-words", "none", "--ngrams", "2", "--min-df", "2",
                 SPAM_DIR, HAM_DIR)
    assert result.exit_code == 0, result.output
    params = load_model(model).get_params()
    assert (params["model"], params["alpha"], params["fit_prior"], params["stop_words"],
            tuple(params["ngram_range"]), params["min_df"]) == \
           ("bernoulli", 0.5, False, "none", (1, 2), 2)


@pytest.mark.parametrize("priors", [["spam=0.2,ham=0.8"], ["spam=0.2", "ham=0.8"]])
def test_train_with_given_priors(tmp_path, priors):
    model = tmp_path / "m"
    options = [a for p in priors for a in ("--prior", p)]
    assert run("train", "-q", "-m", model, *options, SPAM_DIR, HAM_DIR).exit_code == 0
    np.testing.assert_allclose(np.exp(load_model(model).model_.class_log_prior_), [0.8, 0.2])


def test_train_priors_written_to_three_decimals_are_accepted_then_normalised(tmp_path):
    top = tmp_path / "three"
    for name in ("a", "b", "c"):
        write_texts(top / name, {"1": f"{name} words", "2": f"more {name}"})
    model = tmp_path / "m"
    assert run("train", "-q", "-m", model, "--prior", "a=0.333,b=0.333,c=0.333", top).exit_code == 0
    np.testing.assert_allclose(np.exp(load_model(model).model_.class_log_prior_), [1 / 3] * 3)


def test_train_uses_the_environment_variable_then_xdg(tmp_path):
    env_model = tmp_path / "env.model"
    result = run("train", "-q", SPAM_DIR, HAM_DIR, env={"TEXTNB_MODEL": str(env_model)})
    assert result.exit_code == 0 and env_model.exists()
    result = run("train", "-q", SPAM_DIR, HAM_DIR,
                 env={"TEXTNB_MODEL": "", "XDG_DATA_HOME": str(tmp_path / "xdg")})
    assert result.exit_code == 0 and (tmp_path / "xdg" / "textnb" / "textnb.model").exists()


@pytest.mark.parametrize("args, message", [
    (["does-not-exist/", "ham/"], "does not exist"),
    (["ONE"], "at least two classes"),
    ([], "give the training directories"),
    (["--label", "spam"], "NAME=PATH"),
    (["--alpha", "0", "A", "B"], "alpha"),
    (["--prior", "spam=x", "A", "B"], "--prior"),
    (["--prior", "A=0.5,B=0.6", "A", "B"], "the priors sum to 1.1, not 1"),
    (["--prior", "A=0.5", "A", "B"], "no prior for class 'B'"),
    (["--prior", "uniform,A=1", "A", "B"], "not a mix"),
    (["--bogus", "A", "B"], "No such option"),
])
def test_train_errors_are_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    write_texts(tmp_path / "A", {"1": "alpha words"})
    write_texts(tmp_path / "B", {"1": "beta words"})
    write_texts(tmp_path / "ONE", {"1": "one class"})
    result = run("train", "-m", tmp_path / "m", *args)
    assert result.exit_code != 0
    assert_one_line_error(result, result.exit_code, message)


def test_train_on_an_empty_directory_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    write_texts(tmp_path / "B", {"1": "beta"})
    result = run("train", "-m", tmp_path / "m", tmp_path / "empty", tmp_path / "B")
    assert result.exit_code == 1
    assert "no files" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "Error: no readable documents for class 'empty'"


def test_unreadable_documents_are_skipped_and_counted(tmp_path):
    write_texts(tmp_path / "A", {"1": "alpha words", "2": "more alpha"})
    write_texts(tmp_path / "B", {"1": "beta words"})
    secret = tmp_path / "A" / "3"
    secret.write_text("secret")
    secret.chmod(0)
    if os.access(secret, os.R_OK):
        pytest.skip("running as a user who can read any file (root)")
    result = run("train", "-m", tmp_path / "m", tmp_path / "A", tmp_path / "B")
    assert result.exit_code == 0
    assert "skipped" in result.stderr and "1 unreadable document" in result.stderr


# -- classify --------------------------------------------------------------------------------

def test_classify_held_out_messages(spam_model):
    result = run("classify", "-m", spam_model, "--format", "json", SPAM_MESSAGE, HAM_MESSAGE)
    assert result.exit_code == 0, result.output
    spam, ham = (json.loads(line) for line in result.stdout.splitlines())
    # The cutoffs the model learned by cross-validation at training time.
    assert (spam["label"], spam["status"], ham["label"], ham["status"]) == ("spam", "spam", "ham", "ham")
    assert spam["spam_probability"] > 0.9 and ham["spam_probability"] < 0.01
    # A spam cutoff above its probability leaves it unsure: the label stays a class, the
    # verdict says unsure.
    cutoff = str(1 - (1 - spam["spam_probability"]) / 2)
    result = run("classify", "-m", spam_model, "--format", "json", "--spam-cutoff", cutoff,
                 "--ham-cutoff", "0.5", SPAM_MESSAGE)
    fixed = json.loads(result.stdout)
    assert (fixed["label"], fixed["status"], fixed["verdict"]) == ("spam", "unsure", "unsure")
    result = run("classify", "-m", spam_model, "--format", "json", *SAMPLE_CUTOFF, SPAM_MESSAGE)
    assert json.loads(result.stdout)["label"] == "spam"
    assert spam["spam_log_odds"] > 0 > ham["spam_log_odds"]
    assert abs(sum(spam["probabilities"].values()) - 1) < 1e-9


def test_classify_text_and_tsv_formats(spam_model):
    text = run("classify", "-m", spam_model, *SAMPLE_CUTOFF, SPAM_MESSAGE).stdout
    assert text.startswith(f"{SPAM_MESSAGE}  spam  0.9") and "spam-log-odds +" in text
    source, label, probability, log_odds = run(
        "classify", "-m", spam_model, "--format", "tsv", HAM_MESSAGE).stdout.strip().split("\t")
    assert (source, label) == (str(HAM_MESSAGE), "ham")
    # A mail model's P(spam) and spam log-odds, not the verdict's own probability.
    assert 0 <= float(probability) < 0.5 and float(log_odds) < 0


def test_mail_output_gives_p_spam_and_spam_log_odds_in_every_format(spam_model):
    """One meaning of "probability" (issue #44): text, TSV, JSON and the filter's headers give
    a message's P(spam) and spam log-odds under the same names, whatever the verdict (here a
    ham made unsure by a ham cutoff of 0), and its verdict the same name; explain as classify."""
    cut = ["--ham-cutoff", "0"]
    as_json = json.loads(run("classify", "-m", spam_model, *cut, "--format", "json",
                             HAM_MESSAGE).stdout)
    p, odds = as_json["spam_probability"], as_json["spam_log_odds"]
    assert as_json["verdict"] == "unsure" and as_json["label"] == "ham" and p < 0.5 and odds < 0
    text = run("classify", "-m", spam_model, *cut, "--header", HAM_MESSAGE).stdout.splitlines()
    assert text[0].split() == ["source", "verdict", "spam-probability", "spam-log-odds"]
    assert text[1].split() == [str(HAM_MESSAGE), "unsure", f"{p:.4f}", "spam-log-odds",
                               f"{odds:+.2f}"]
    tsv = run("classify", "-m", spam_model, *cut, "--format", "tsv", "--header",
              HAM_MESSAGE).stdout.splitlines()
    assert tsv == ["source\tverdict\tspam_probability\tspam_log_odds",
                   f"{HAM_MESSAGE}\tunsure\t{p:.6f}\t{odds:.4f}"]
    out = run("filter", "-m", spam_model, *cut, input=HAM_MESSAGE.read_bytes()).stdout_bytes
    fields = dict(line.decode().split(": ", 1) for line in out.splitlines()
                  if line.startswith(b"X-TextNB-"))
    assert fields == {"X-TextNB-Class": "unsure", "X-TextNB-Status": "Unsure",
                      "X-TextNB-Spam-Probability": f"{p:.6f}",
                      "X-TextNB-Spam-Log-Odds": f"{odds:.4f}"}
    # explain decides by the model's cutoffs, as classify without options does.
    for message in (SPAM_MESSAGE, HAM_MESSAGE):
        said = json.loads(run("classify", "-m", spam_model, "--format", "json", message).stdout)
        why = json.loads(run("explain", "-m", spam_model, "--format", "json", message).stdout)
        assert {k: why[k] for k in said if k != "probabilities"} == \
            {k: v for k, v in said.items() if k != "probabilities"}
        assert why["explanation"]["log_odds"] == pytest.approx(said["spam_log_odds"])
        first = run("explain", "-m", spam_model, message).stdout.splitlines()[0].split()
        assert first[1:5] == [said["verdict"], "spam-probability",
                              f"{said['spam_probability']:.4f}", "spam-log-odds"]


def test_mail_output_sorts_by_p_spam(spam_model):
    """As bogofilter's spamicity: every line carries P(spam), so sorting on the column puts
    the ham first and the spam last, however sure each verdict is."""
    lines = run("classify", "-m", spam_model, "--format", "tsv", SPAM_MESSAGE, HAM_MESSAGE,
                SPAM_MESSAGE).stdout.splitlines()
    ranked = sorted(lines, key=lambda line: float(line.split("\t")[2]))
    assert [line.split("\t")[1] for line in ranked] == ["ham", "spam", "spam"]
    assert sorted(lines, key=lambda line: float(line.split("\t")[3])) == ranked


def test_classify_text_columns_align_over_the_batch_and_take_a_header(spam_model, tmp_path):
    short = tmp_path / "a"
    short.write_bytes(HAM_MESSAGE.read_bytes())
    result = run("classify", "-m", spam_model, *SAMPLE_CUTOFF, "--header", short, SPAM_MESSAGE,
                 HAM_MESSAGE)
    assert result.exit_code == 0, result.output
    header, *lines = result.stdout.splitlines()
    assert header.split() == ["source", "verdict", "spam-probability", "spam-log-odds"]
    assert [line.split()[:2] for line in lines] == [[str(short), "ham"], [str(SPAM_MESSAGE), "spam"],
                                                     [str(HAM_MESSAGE), "ham"]]
    # Every column starts where the header's does, and every line ends at the same place.
    for name in ("verdict", "spam-probability"):
        starts = {line.index(line.split()[1 if name == "verdict" else 2], len(str(short)))
                  for line in lines}
        assert len(starts) == 1
    assert header.index("verdict") == lines[0].index("ham", len(str(short)))
    assert header.index("spam-probability") + len("spam-probability") == \
        lines[0].index("  spam-log-odds")
    assert len({len(line) for line in lines}) == 1
    tsv = run("classify", "-m", spam_model, "--format", "tsv", "--header", HAM_MESSAGE).stdout
    assert tsv.splitlines()[0] == "source\tverdict\tspam_probability\tspam_log_odds"
    assert tsv.splitlines()[1].startswith(f"{HAM_MESSAGE}\tham\t")
    assert_one_line_error(run("classify", "-m", spam_model, "--format", "json", "--header",
                              HAM_MESSAGE), 2, "--header")


def test_classify_explain_adds_up(spam_model):
    result = run("classify", "-m", spam_model, "--format", "json", "--explain", "--top", "5",
                 SPAM_MESSAGE)
    explanation = json.loads(result.stdout)["explanation"]
    assert len(explanation["terms"]) == 5
    total = (explanation["prior_log_odds"] + explanation["absent_words"] +
             explanation["other_terms"] + sum(t["log_odds"] for t in explanation["terms"]))
    assert total == pytest.approx(explanation["log_odds"])
    text = run("classify", "-m", spam_model, "--explain", SPAM_MESSAGE).stdout
    assert "why spam over ham" in text and "prior" in text


@pytest.mark.parametrize("message, code", [(SPAM_MESSAGE, Exit.SPAM), (HAM_MESSAGE, Exit.HAM)])
def test_classify_exit_codes(spam_model, message, code):
    assert run("classify", "-m", spam_model, *SAMPLE_CUTOFF, "--exit-code", message).exit_code == code


def test_classify_exit_code_unsure_inside_the_band(spam_model):
    # With the band covering every probability, every message is unsure.
    result = run("classify", "-m", spam_model, "--exit-code", "--ham-cutoff", "0.0001",
                 "--spam-cutoff", "0.9999", "-", input="hello there")
    assert result.exit_code == Exit.UNSURE and result.stdout.split()[1] == "unsure"


def test_classify_reads_stdin(spam_model):
    result = run("classify", "-m", spam_model, *SAMPLE_CUTOFF, "--exit-code",
                 input=SPAM_MESSAGE.read_bytes())
    assert result.exit_code == Exit.SPAM and result.stdout.split()[:2] == ["-", "spam"]


@pytest.mark.parametrize("args, message", [
    (["-m", "/nonexistent/x.model", "MSG"], "does not exist"),
    (["-m", "CORRUPT", "MSG"], "truncated or corrupt"),
    (["-m", "MODEL", "MSG", "MSG"], "exactly one"),
    (["-m", "MODEL", "--nonsense", "MSG"], "No such option"),
    (["-m", "MODEL", "--spam-class", "junk", "MSG"], "named 'junk'"),
])
def test_classify_exit_code_errors_exit_3(spam_model, tmp_path, args, message):
    corrupt = tmp_path / "corrupt.model"
    corrupt.write_bytes(spam_model.read_bytes()[:1000])
    names = {"MODEL": str(spam_model), "CORRUPT": str(corrupt), "MSG": str(SPAM_MESSAGE)}
    result = run("classify", "--exit-code", *[names.get(a, a) for a in args])
    assert_one_line_error(result, Exit.ERROR, message)


def test_classify_a_missing_file_is_skipped_with_a_non_zero_exit(spam_model, tmp_path):
    result = run("classify", "-m", spam_model, SPAM_MESSAGE, tmp_path / "missing.eml")
    assert result.exit_code == 1
    assert result.stdout.count("\n") == 1 and "missing.eml" in result.stderr


def test_classify_without_a_model_is_one_line(tmp_path):
    result = run("classify", "x", env={"TEXTNB_MODEL": str(tmp_path / "none.model")})
    assert_one_line_error(result, 1, "does not exist")


# -- filter ----------------------------------------------------------------------------------

CRLF_MESSAGE = (b"From: Sender <s@example.com>\r\nTo: r@example.com\r\nSubject: =?utf-8?q?caf=C3=A9?=\r\n"
                b"Content-Type: text/plain; charset=latin-1\r\n\r\nCaf\xe9 cr\xe8me\r\nline two\r\n\r\n")
BROKEN_MIME = (b"From: x@example.com\nSubject: broken\nContent-Type: multipart/mixed; boundary=\"zz\"\n"
               b"\n--zz\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n!!!not base64@@\n"
               b"--zz\nContent-Type: text/html; charset=x-unknown\n\n<p>cheap <b>pills\n")


@pytest.mark.parametrize("message", [CRLF_MESSAGE, BROKEN_MIME, b"", b"no headers at all\n",
                                     SPAM_MESSAGE.read_bytes() if SPAM_MESSAGE.exists() else b"x"])
def test_filter_adds_headers_and_changes_nothing_else(spam_model, message):
    result = run("filter", "-m", spam_model, input=message)
    assert result.exit_code == 0
    out = result.stdout_bytes
    added = [line for line in out.splitlines(keepends=True) if line.startswith(b"X-TextNB-")]
    assert [line.split(b":")[0] for line in added] == [
        b"X-TextNB-Class", b"X-TextNB-Status", b"X-TextNB-Spam-Probability",
        b"X-TextNB-Spam-Log-Odds"]
    rest = b"".join(line for line in out.splitlines(keepends=True) if not line.startswith(b"X-TextNB-"))
    # A message without a header block gets one: the added headers and a blank line.
    assert rest == (message if message.startswith(b"From") or not message else b"\n" + message)
    if message.startswith(b"From:") and b"\r\n" in message:
        assert all(line.endswith(b"\r\n") for line in added)


def test_filter_replaces_its_own_old_headers(spam_model):
    once = run("filter", "-m", spam_model, input=SPAM_MESSAGE.read_bytes()).stdout_bytes
    twice = run("filter", "-m", spam_model, input=once).stdout_bytes
    assert twice == once


def test_filter_marks_spam_and_ham(spam_model):
    spam = run("filter", "-m", spam_model, *SAMPLE_CUTOFF, input=SPAM_MESSAGE.read_bytes()).stdout_bytes
    ham = run("filter", "-m", spam_model, input=HAM_MESSAGE.read_bytes()).stdout_bytes
    assert b"X-TextNB-Status: Yes" in spam and b"X-TextNB-Class: spam" in spam
    assert b"X-TextNB-Status: No" in ham and b"X-TextNB-Class: ham" in ham


@pytest.mark.parametrize("model", ["missing", "corrupt", "directory", "bad option"])
def test_filter_passes_the_message_through_unchanged_on_failure(tmp_path, model):
    path = tmp_path / "m"
    if model == "corrupt":
        path.write_bytes(b"PK\x03\x04garbage")
    elif model == "directory":
        path.mkdir()
    options = ["--spam-cutoff", "2"] if model == "bad option" else []
    result = run("filter", "-m", path, *options, input=CRLF_MESSAGE)
    assert result.exit_code == 0
    assert result.stdout_bytes == CRLF_MESSAGE
    assert "passed through unchanged" in result.stderr


# -- learn -----------------------------------------------------------------------------------

def test_learn_and_unlearn_in_place(spam_model, tmp_path):
    model = tmp_path / "m"
    model.write_bytes(spam_model.read_bytes())
    before = load_model(model)
    result = run("learn", "-m", model, "--class", "spam", HAM_MESSAGE)
    assert result.exit_code == 0 and "learned 1 document as spam" in result.stdout
    assert load_model(model).model_.class_count_.tolist() == [150.0, 151.0]
    assert run("learn", "-m", model, "--class", "spam", "--unlearn", HAM_MESSAGE).exit_code == 0
    after = load_model(model)
    columns = [after.vocabulary_.index_[t] for t in before.vocabulary_.terms_]
    np.testing.assert_allclose(after.model_.feature_count_[:, columns],
                               before.model_.feature_count_, atol=1e-9)
    assert after.model_.feature_count_.sum() == pytest.approx(before.model_.feature_count_.sum())
    assert after.model_.class_count_.tolist() == [150.0, 150.0]


def test_learn_weighs_an_error_by_the_share_of_errors_and_info_says_so(spam_model, tmp_path):
    """A message the model called right weighs 1; one it called wrong or unsure weighs more
    the rarer the errors learned so far: after one right, 1 + 4 · (1 − 1/2) = 3."""
    model = tmp_path / "m"
    model.write_bytes(spam_model.read_bytes())
    assert run("learn", "-m", model, "--class", "ham", HAM_MESSAGE).exit_code == 0  # right
    assert "learned     1 message by learn, TELL or imap, 0 of them called wrong or unsure " \
           "before: the next such weighs 3.00" in run("info", "-m", model).stdout
    assert run("learn", "-m", model, "--class", "ham", SPAM_MESSAGE).exit_code == 0  # wrong
    assert load_model(model).model_.class_count_.tolist() == [150.0 + 1 + 3, 150.0]
    info = json.loads(run("info", "-m", model, "--format", "json").stdout)
    assert info["learned_errors"] == [2, 1] and info["documents"] == {"ham": 152, "spam": 150}
    assert "ham (152 documents, weight 154)" in run("info", "-m", model).stdout


def test_learn_a_folder_counts_every_message_and_nothing_without_one(spam_model, tmp_path):
    model = tmp_path / "m"
    model.write_bytes(spam_model.read_bytes())
    (tmp_path / "empty").write_bytes(b"")
    result = run("learn", "-m", model, "--class", "spam", tmp_path / "empty")
    assert result.exit_code == 1 and "empty file" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "Error: no readable documents to learn"
    assert model.read_bytes() == spam_model.read_bytes()
    # The model learned these 150 in training: learned once, as bogofilter registers them.
    result = run("learn", "-m", model, "--class", "spam", SPAM_DIR)
    assert result.exit_code == 0
    assert ("learned 0 documents as spam -> " in result.stdout
            and "(150 learned as spam already, not counted again)" in result.stdout)
    assert load_model(model).model_.class_count_.tolist() == [150.0, 150.0]
    result = run("learn", "-m", model, "--class", "ham", SPAM_DIR)
    assert result.exit_code == 0 and "learned 150 documents as ham" in result.stdout
    assert load_model(model).model_.class_count_.tolist() == [300.0, 150.0]


def test_learn_counts_a_message_given_twice_once_and_is_quiet_with_q(spam_model, tmp_path):
    model = tmp_path / "m"
    model.write_bytes(spam_model.read_bytes())
    result = run("learn", "-m", model, "--class", "spam", HAM_MESSAGE, HAM_MESSAGE)
    assert result.exit_code == 0 and result.stdout == (
        f"learned 1 document as spam -> {model} (1 learned as spam already, not counted again)\n")
    result = run("learn", "-q", "-m", model, "--class", "spam", HAM_MESSAGE)
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    assert load_model(model).model_.class_count_.tolist() == [150.0, 151.0]
    # The model file was not rewritten: the message is in its journal, read with it.
    assert model.read_bytes() == spam_model.read_bytes()
    assert Path(f"{model}.journal").stat().st_size > 0


def test_unlearning_what_was_never_learned_is_an_error(spam_model, tmp_path):
    model = tmp_path / "m"
    model.write_bytes(spam_model.read_bytes())
    result = run("learn", "-m", model, "--class", "ham", "--unlearn", SPAM_MESSAGE)
    assert_one_line_error(result, 1, "never learned")
    assert model.read_bytes() == spam_model.read_bytes()


def test_learn_creates_a_missing_model_only_when_asked(tmp_path):
    model = tmp_path / "new" / "m"
    result = run("learn", "-m", model, "--class", "spam", SPAM_MESSAGE)
    assert_one_line_error(result, 1, f"model file '{model}' does not exist")
    assert "--new-class" in result.stderr and not (tmp_path / "new").exists()
    result = run("learn", "-m", model, "--new-class", "--class", "spam", SPAM_MESSAGE)
    assert result.exit_code == 0 and "one class, spam" in result.stderr
    assert_one_line_error(run("learn", "-m", model, "--class", "ham", HAM_MESSAGE), 1,
                          "class 'ham' is not in the model (classes: spam)")
    result = run("learn", "-m", model, "--new-class", "--class", "ham", HAM_MESSAGE)
    assert result.exit_code == 0 and "textnb tune-cutoffs" in result.stderr
    assert "decides at bogofilter's cutoffs (P(spam) 0.99 and 0.45)" in result.stderr
    # A mail model: its spam class, and mail's tokens (the whole English stop-word list).
    classifier = load_model(model)
    assert classifier.classes_.tolist() == ["ham", "spam"]
    assert classifier.spam_class == "spam" and "not" in classifier.stop_words_
    assert classifier.spam_status([SPAM_MESSAGE.read_bytes()]).tolist() in (["spam"], ["unsure"])


def test_learn_new_class_starts_a_mail_model_from_ham_too(tmp_path):
    model = tmp_path / "m"
    assert run("learn", "-m", model, "--new-class", "--class", "ham", HAM_MESSAGE).exit_code == 0
    assert run("learn", "-m", model, "--new-class", "--class", "spam",
               SPAM_MESSAGE).exit_code == 0
    classifier = load_model(model)
    assert classifier.spam_class == "spam" and "not" in classifier.stop_words_


def test_learn_an_unknown_class_is_an_error_unless_new(spam_model, tmp_path):
    model = tmp_path / "m"
    model.write_bytes(spam_model.read_bytes())
    result = run("learn", "-m", model, "--class", "Spam", SPAM_MESSAGE)
    assert_one_line_error(result, 1, "class 'Spam' is not in the model (classes: ham, spam); "
                                     "did you mean 'spam'? --new-class adds it")
    assert model.read_bytes() == spam_model.read_bytes()
    assert_one_line_error(run("learn", "-m", model, "--class", "eggs", SPAM_MESSAGE), 1,
                          "(classes: ham, spam); --new-class adds it")
    assert run("learn", "-m", model, "--new-class", "--class", "eggs", SPAM_MESSAGE).exit_code == 0
    assert load_model(model).classes_.tolist() == ["eggs", "ham", "spam"]


def textnb_command() -> list[str]:
    script = Path(sys.executable).with_name("textnb")
    return [str(script)] if script.exists() else [sys.executable, "-m", "textnb"]


@pytest.mark.parametrize("command", [["classify", "--format", "tsv"], ["explain"], ["info"]])
def test_a_reader_that_went_away_ends_the_command_quietly(spam_model, command):
    """`textnb classify *.eml | head`: once head has its lines, the rest is not an error to
    print (a disk that is full still is: tests/test_quick.py)."""
    read, write = os.pipe()
    os.close(read)  # the reader gone before a byte is written: every write fails with EPIPE
    try:
        done = subprocess.run(textnb_command() + [*command, "-m", str(spam_model),
                                                  *([] if command == ["info"] else [SPAM_MESSAGE])],
                              stdout=write, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 1 and done.stderr == b"", done.stderr


def test_exit_code_mode_says_error_when_its_line_cannot_be_written(spam_model):
    """--exit-code's 1 is ham: a result that cannot be written is an error (3), said."""
    read, write = os.pipe()
    os.close(read)
    try:  # --format json: the command line's own path, not the mail filter's quick one
        done = subprocess.run(textnb_command() + ["classify", "--exit-code", "--format", "json",
                                                  "-m", str(spam_model), SPAM_MESSAGE],
                              stdout=write, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == Exit.ERROR, done.stderr
    assert done.stderr == b"Error: cannot write to standard output: Broken pipe\n"


@pytest.mark.parametrize("option", ["--spam-cutoff", "--ham-cutoff", "--threshold", "--timeout"])
def test_nan_is_not_a_number_to_any_option(spam_model, option):
    """click's FloatRange let NaN through its bounds: --spam-cutoff nan called every message
    unsure, and --timeout nan set no limit."""
    result = run("classify", "-m", spam_model, option, "nan", SPAM_MESSAGE)
    assert_one_line_error(result, 2, f"Invalid value for '{option}': 'nan' is not a number")
    assert run("classify", "-m", spam_model, option, "0.5", SPAM_MESSAGE).exit_code == 0


def test_learn_from_8_concurrent_processes_loses_no_update(tmp_path):
    model = tmp_path / "m"
    messages = []
    for i in range(8):
        path = tmp_path / f"msg{i}"
        path.write_text(f"Subject: note {i}{i}\n\nword{i} shared\n")  # "00": two characters
        messages.append(path)
    processes = [subprocess.Popen(textnb_command() + ["learn", "-m", str(model), "--new-class",
                                                      "--class",
                                                      "spam" if i % 2 else "ham", str(path)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for i, path in enumerate(messages)]
    for process in processes:
        assert process.wait(timeout=120) == 0, process.stderr.read()
    classifier = load_model(model)
    assert classifier.model_.class_count_.tolist() == [4.0, 4.0]
    shared = classifier.vocabulary_.index_["shared"]
    # Each message has 6 distinct tokens counted once ("note" and its number, as body words
    # and as subject:…, then word<i> and "shared"), so unit length gives each weight 1/√6.
    assert classifier.model_.feature_count_[:, shared].sum() == pytest.approx(8 / 6 ** 0.5)
    assert all(f"word{i}" in classifier.vocabulary_.index_ for i in range(8))


# -- evaluate and info -----------------------------------------------------------------------

def test_evaluate_a_model_on_labelled_directories(spam_model):
    result = run("evaluate", "-q", "-m", spam_model, "--format", "json", SPAM_DIR, HAM_DIR)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["documents"] == 300 and report["accuracy"] > 0.98
    assert np.array(report["confusion"]).sum() == 300
    assert report["positive_class"] == "spam" and report["roc_auc"] > 0.99
    assert report["support"] == [150, 150]
    f1 = np.array(report["f1"])
    assert report["macro"]["f1"] == pytest.approx(f1.mean())
    assert report["weighted"]["f1"] == pytest.approx(f1 @ [150, 150] / 300)
    # The model's learned cutoffs decide spam, ham or unsure, as classify does.
    cutoffs = load_model(spam_model).cutoffs_
    assert report["cutoffs"] == {"spam": pytest.approx(cutoffs["spam"]),
                                 "ham": pytest.approx(cutoffs["ham"]), "learned": True}
    verdicts = [json.loads(line)["status"] for line in run(
        "classify", "-m", spam_model, "--format", "json", SPAM_DIR, HAM_DIR).stdout.splitlines()]
    at = report["at_cutoffs"]
    assert at["unsure"] == pytest.approx(verdicts.count("unsure") / 300)
    assert at["fpr"] == pytest.approx(verdicts[150:].count("spam") / 150)
    assert at["fnr"] == pytest.approx(verdicts[:150].count("ham") / 150)
    text = run("evaluate", "-q", "-m", spam_model, SPAM_DIR, HAM_DIR).stdout
    assert re.search(r"\nclass +precision +recall +f1 +support\n", text)
    assert re.search(r"\nmacro avg +[01]\.\d{4} +[01]\.\d{4} +[01]\.\d{4} +300\n", text)
    assert re.search(r"\nweighted avg +[01]\.\d{4} +[01]\.\d{4} +[01]\.\d{4} +300\n", text)
    assert re.search(r"\nunsure +\d\.\d{4}% \(spam \d\.\d\d%, ham \d\.\d\d%\)\n", text)


def test_evaluate_leads_with_the_decisions_the_filter_makes(spam_model):
    """A mail model's report starts with the spam / unsure / ham decisions at its cutoffs, the
    share of each true class given each (as classify decides them), and only then the most
    probable class's accuracy and confusion matrix; JSON in the same order."""
    text = run("evaluate", "-q", "-m", spam_model, SPAM_DIR, HAM_DIR).stdout.splitlines()
    verdicts = [json.loads(line)["verdict"] for line in run(
        "classify", "-m", spam_model, "--format", "json", SPAM_DIR, HAM_DIR).stdout.splitlines()]
    assert text[0] == "documents  300" and text[1] == ""
    assert text[2].startswith("decisions at the cutoffs (learned: spam at spam-log-odds >= ")
    assert text[3].split() == ["true", "class", "spam", "unsure", "ham", "documents"]
    for row, true, said in ((text[4], "spam", verdicts[:150]), (text[5], "ham", verdicts[150:])):
        name, *shares, n = row.split()
        assert (name, n) == (true, "150")
        assert shares == [f"{said.count(v) / 150:.2%}" for v in ("spam", "unsure", "ham")]
    first = {name: next(i for i, line in enumerate(text) if line.startswith(name))
             for name in ("false positive rate", "most probable class", "accuracy")}
    assert first["false positive rate"] < first["most probable class"] < first["accuracy"]
    assert text[first["most probable class"]] == "most probable class (no unsure band)"
    report = json.loads(run("evaluate", "-q", "-m", spam_model, "--format", "json", SPAM_DIR,
                            HAM_DIR).stdout)
    assert list(report)[:3] == ["documents", "cutoffs", "at_cutoffs"]


def test_evaluate_cross_validation_shows_the_spread_over_folds(tmp_path):
    result = run("evaluate", "-q", "--cv", "3", "--format", "json", SPAM_DIR, HAM_DIR)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["accuracy"] > 0.9 and report["roc_auc"] > 0.95
    folds = report["folds"]
    assert len(folds["accuracy"]) == 3 and len(folds["roc_auc"]) == 3
    # Three stratified folds of 50 spam and 50 ham: the overall accuracy is their mean.
    assert np.mean(folds["accuracy"]) == pytest.approx(report["accuracy"])
    assert report["cutoffs"]["learned"] and "unsure" in report["at_cutoffs"]
    text = run("evaluate", "-q", "--cv", "3", SPAM_DIR, HAM_DIR).stdout
    sd = np.std(folds["accuracy"], ddof=1)
    assert f"accuracy   {report['accuracy']:.4f} ± {sd:.4f}\n" in text
    assert "3-fold cross-validation" in text and re.search(r"ROC AUC +\d\.\d{6} ± \d\.\d{6}", text)
    assert "learned per fold" in text and "false positive rate" in text


def test_evaluate_cross_validation_keeps_copies_of_a_file_in_one_fold():
    """A message filed twice: dealt apart, a fold's model would have learned what it scores."""
    from textnb.evaluation.crossval import cross_validate
    texts = [p.read_bytes() for p in sorted(SPAM_DIR.iterdir())[:20] + sorted(HAM_DIR.iterdir())[:20]]
    texts += texts[:10] + texts[20:30]   # the first ten of each class twice
    y = np.array((["spam"] * 20 + ["ham"] * 20) + ["spam"] * 10 + ["ham"] * 10)
    folds = cross_validate(texts, y, 3, 0, None, lambda labels: TextClassifier())[-1]
    np.testing.assert_array_equal(folds[40:50], folds[:10])
    np.testing.assert_array_equal(folds[50:], folds[20:30])


def test_evaluate_cross_validation_trains_with_the_options_given():
    def accuracy(*options):
        result = run("evaluate", "-q", "--cv", "3", "--format", "json", *options, SPAM_DIR, HAM_DIR)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["accuracy"]

    # One term cannot tell 300 messages apart as 5000 can.
    assert accuracy("--max-features", "1") < 0.8 < 0.95 < accuracy()


@pytest.mark.parametrize("args, message", [
    (["--cv", "3", "-m", "M"], "--cv trains a model per fold, -m names a trained one"),
    (["-m", "M", "--alpha", "0.5"], "--alpha is a training option: it takes effect with --cv"),
    (["-m", "M", "--prior", "uniform"], "--prior is a training option"),
    (["-m", "M", "--sweep", "A", "B", "C"], "--sweep needs two classes"),
])
def test_evaluate_refuses_options_it_would_ignore(spam_model, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    for name in "ABC":
        write_texts(tmp_path / name, {"1": f"{name} words", "2": f"more {name}"})
    run("train", "-q", "-m", "M", "A", "B", "C")
    result = run("evaluate", "-q", *args, *([] if "A" in args else ["A", "B"]))
    assert_one_line_error(result, result.exit_code, message)
    assert result.exit_code in (1, 2)


def test_evaluate_confusion_headers_are_whole_and_aligned(tmp_path):
    top = tmp_path / "news"
    names = ["comp.sys.ibm.pc.hardware", "rec.sport.hockey", "x"]
    for name, words in zip(names, ("cpu disk motherboard", "puck goal skate", "zebra xylophone")):
        write_texts(top / name, {str(i): f"{words} {i}" for i in range(4)})
    model = tmp_path / "m"
    assert run("train", "-q", "-m", model, top).exit_code == 0
    lines = run("evaluate", "-q", "-m", model, top).stdout.splitlines()
    header = lines.index("confusion (rows: true, columns: predicted)") + 1
    assert lines[header].split() == names
    rows = lines[header + 1:header + 4]
    assert [row.split()[0] for row in rows] == names
    for j, name in enumerate(names):  # each count ends where its column's name ends
        end = lines[header].index(name) + len(name)
        assert {row[end - 1] for row in rows} <= set("0123456789") and all(
            row[end:end + 1] in ("", " ") for row in rows)
    assert [row.split()[1:] for row in rows] == [["4", "0", "0"], ["0", "4", "0"], ["0", "0", "4"]]


def test_evaluate_sweep_gives_the_rates_of_a_range_of_cutoffs(spam_model):
    result = run("evaluate", "-q", "-m", spam_model, "--sweep", "--format", "json", SPAM_DIR,
                 HAM_DIR)
    report = json.loads(result.stdout)
    spam_rows, ham_rows = report["sweep"]["spam_cutoff"], report["sweep"]["ham_cutoff"]
    cutoffs = [row["cutoff"] for row in spam_rows]
    assert cutoffs == sorted(cutoffs) and 0.0 in cutoffs and len(cutoffs) >= 10
    held = next(row for row in spam_rows if row["cutoff"] == report["cutoffs"]["spam"])
    assert {k: held[k] for k in ("fpr", "fnr", "unsure")} == \
           {k: report["at_cutoffs"][k] for k in ("fpr", "fnr", "unsure")}
    fpr = [row["fpr"] for row in spam_rows]
    fnr = [row["fnr"] for row in ham_rows]
    assert fpr == sorted(fpr, reverse=True) and fpr[0] == 1.0 and fpr[-1] == 0.0
    assert fnr == sorted(fnr) and fnr[0] == 0.0 and fnr[-1] == 1.0
    text = run("evaluate", "-q", "-m", spam_model, "--sweep", SPAM_DIR, HAM_DIR).stdout
    assert "spam cutoff sweep" in text and "ham cutoff sweep" in text
    assert re.search(r"\n +\+0\.000 +\d+\.\d{3}% +\d+\.\d{3}% +\d+\.\d{3}% +\d+\.\d{3}%\n", text)


def test_evaluate_plot_without_matplotlib_is_one_clear_line(spam_model, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    result = run("evaluate", "-m", spam_model, "--plot", tmp_path / "plots", SPAM_DIR, HAM_DIR)
    assert_one_line_error(result, 1, "plots need matplotlib: pip install 'textnb[plot]'")
    assert not (tmp_path / "plots").exists()


def test_evaluate_errors(spam_model, tmp_path):
    write_texts(tmp_path / "other", {"1": "x"})
    result = run("evaluate", "-m", spam_model, tmp_path / "other")
    assert_one_line_error(result, 1, "not in the model")
    # A class of the model with no readable document, found once every text was scored.
    (tmp_path / "spam").mkdir()
    (tmp_path / "spam" / "1").write_bytes(b"")
    result = run("evaluate", "-m", spam_model, tmp_path / "spam", HAM_DIR)
    assert result.exit_code == 1 and "empty file" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "Error: no readable documents for class 'spam'"


def test_info_counts_one_document_in_the_singular(tmp_path):
    model = tmp_path / "m"
    assert run("learn", "-m", model, "--new-class", "--class", "spam", SPAM_MESSAGE).exit_code == 0
    assert run("learn", "-m", model, "--new-class", "--class", "ham", HAM_MESSAGE,
               SPAM_MESSAGE).exit_code == 0
    assert "ham (2 documents), spam (1 document)\n" in run("info", "-m", model).stdout


def test_a_bare_textnb_prints_the_help(tmp_path):
    for args in ([], ["table"]):
        result = run(*args)
        assert result.exit_code == 0 and result.stderr == ""
        assert result.stdout.startswith("Usage: ") and "[OPTIONS] [COMMAND]" in result.stdout
        assert "Commands:" in result.stdout and "Error" not in result.stdout
    done = subprocess.run(textnb_command(), capture_output=True, timeout=120)
    assert done.returncode == 0 and b"Commands:" in done.stdout and done.stderr == b""


def test_info(spam_model):
    result = run("info", "-m", spam_model, "--top", "3")
    assert result.exit_code == 0
    assert "ham (150 documents), spam (150 documents)" in result.stdout
    data = json.loads(run("info", "-m", spam_model, "--format", "json").stdout)
    assert set(data["informative_terms"]) == {"ham", "spam"}
    assert len(data["informative_terms"]["spam"]) == 10


# -- the installed console script ------------------------------------------------------------

def test_console_script_in_a_subprocess(spam_model):
    done = subprocess.run(textnb_command() + ["classify", "--exit-code", "-m", str(spam_model),
                                              str(HAM_MESSAGE)], capture_output=True, timeout=120)
    assert done.returncode == Exit.HAM and done.stdout.startswith(str(HAM_MESSAGE).encode())
    done = subprocess.run(textnb_command() + ["info", "-m", "/nonexistent"], capture_output=True,
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.decode().strip().startswith("Error: model file '/nonexistent'")
    assert b"Traceback" not in done.stderr


# -- what was built ----------------------------------------------------------------------------

C_MODULES = ("_tokens", "_markup", "_scores", "_onerror", "_modelfile")


def _textnb_without_c(*args: str, env: dict) -> subprocess.CompletedProcess:
    """textnb as a pure-Python install runs it: every C part fails to import, as where no C
    compiler built them (the modules then do without, as they do there)."""
    code = ("import sys\n"
            f"for m in {C_MODULES!r}: sys.modules['textnb.' + m] = None\n"
            "from textnb.cli.app import main\nmain(sys.argv[1:])")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_version_names_the_build():
    from textnb.build import c_parts
    built = c_parts()
    said = run("--version").stdout.strip()
    if all(built.values()):
        assert said == ("textnb 0.1.0 (C parts: tokens, markup, scores, training on error, "
                        "model files)")
    pure = _textnb_without_c("--version", env={})
    assert pure.returncode == 0, pure.stderr
    assert pure.stdout == ("textnb 0.1.0 (pure Python: no C parts were built; training is "
                           "about 3 times slower)\n")


def test_a_pure_python_install_says_so_once_at_the_first_train(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    first = _textnb_without_c("train", "-m", str(tmp_path / "a.model"), str(SPAM_DIR),
                              str(HAM_DIR), env=env)
    assert first.returncode == 0, first.stderr
    notes = [line for line in first.stderr.splitlines() if line.startswith("textnb: note: ")]
    assert notes == ["textnb: note: textnb is pure Python: no C parts were built; training is "
                     "about 3 times slower; to build them, install a C compiler (gcc or clang) "
                     "and Python's headers, then reinstall textnb (pip install "
                     "--force-reinstall --no-deps textnb) (said once; textnb --version names "
                     "the build)"]
    assert (tmp_path / "state" / "textnb" / "build-noted").exists()
    again = _textnb_without_c("train", "-m", str(tmp_path / "b.model"), str(SPAM_DIR),
                              str(HAM_DIR), env=env)
    assert again.returncode == 0 and "note:" not in again.stderr
    from textnb.build import c_parts
    if not all(c_parts().values()):
        return
    # With its C parts, train notes nothing.
    built = run("train", "-m", tmp_path / "c.model", SPAM_DIR, HAM_DIR,
                env={"XDG_STATE_HOME": str(tmp_path / "other")})
    assert built.exit_code == 0 and "note:" not in built.stderr


def test_exit_status_in_the_manual_names_every_command():
    """textnb(1)'s EXIT STATUS says what each command exits with: none is left out."""
    import click
    section = (ROOT / "docs" / "reference" / "cli.md").read_text().split("## EXIT STATUS")[1]
    section = section.split("\n## ")[0]
    named = set(re.findall(r"`([a-z -]+?)(?: --exit-code)?`", section))
    commands = set()
    for name, command in main.commands.items():
        if isinstance(command, click.Group):
            commands |= {f"{name} {sub}" for sub in command.commands}
        else:
            commands.add(name)
    assert commands - named == set()


def test_serve_help_says_where_the_socket_goes_without_xdg_runtime_dir(monkeypatch):
    from textnb.serve.client import default_socket_path
    said = " ".join(run("serve", "--help").stdout.split())
    assert ("[default: $XDG_RUNTIME_DIR/textnb.sock; without $XDG_RUNTIME_DIR, "
            "/tmp/textnb-UID/textnb.sock, UID the user's number, in a directory of mode 0700 "
            "it creates]") in said
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert default_socket_path() == Path(f"/tmp/textnb-{os.getuid()}/textnb.sock")
