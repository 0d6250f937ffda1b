"""TextClassifier ⇄ text dump, load --add, merge, and explain: the library and the commands."""

from __future__ import annotations

import io
import json
from math import log
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from textnb import ModelFileError, TextClassifier, load_model, save_model
from textnb.cli.app import main
from textnb.store.dump import dump_lines, escape, read_dump, unescape, write_dump

ROOT = Path(__file__).resolve().parent.parent
SPAM_DIR = ROOT / "corpora" / "spamassassin" / "spam"
HAM_DIR = ROOT / "corpora" / "spamassassin" / "ham"

TEXTS = ["cheap pills now", "cheap money now", "win money now", "free pills",
         "meeting at noon", "lunch at noon", "notes from the meeting", "lunch tomorrow",
         "football results", "the match tonight"]
LABELS = ["spam"] * 4 + ["ham"] * 4 + ["sport"] * 2
# Terms no tokenizer makes but a dump must carry: tab, LF, CR, backslashes, a leading #,
# an escape lookalike, non-ASCII and a line separator that str.splitlines would split on.
HOSTILE = sorted(["a\tb", "line\nbreak", "cr\rhere", "back\\slash", "\\t", "#hash", "##",
                  "ünï\u2028code", "trailing\\", "x#y", "plain"])


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def dump_bytes(classifier: TextClassifier) -> bytes:
    out = io.BytesIO()
    write_dump(classifier, out)
    return out.getvalue()


def reload(classifier: TextClassifier) -> TextClassifier:
    return read_dump(io.BytesIO(dump_bytes(classifier)), "test")


def hostile_classifier() -> TextClassifier:
    """A fitted classifier whose 11 terms are renamed to HOSTILE (kept sorted, as terms are)."""
    texts = [" ".join(f"t{i:02d}" for i in range(k, k + 4)) for k in range(8)]
    clf = TextClassifier(stop_words="none", model="multinomial", alpha=0.5, norm=None,
                         fit_prior=True).fit(texts[:6] + ["t08 t09 t10"] * 2,
                                             ["a b"] * 3 + ["c\td"] * 3 + ["#e"] * 2)
    assert len(clf.vocabulary_) == len(HOSTILE)
    clf.vocabulary_.terms_ = list(HOSTILE)
    clf.vocabulary_.index_ = {t: i for i, t in enumerate(HOSTILE)}
    return clf


# -- the library -------------------------------------------------------------------------------

def test_escape_round_trips_and_keeps_each_term_on_one_field():
    for term in HOSTILE + ["", "\\#", "\\\\#"]:
        escaped = escape(term)
        assert "\t" not in escaped and "\n" not in escaped and "\r" not in escaped
        assert not escaped.startswith("#")
        assert unescape(escaped) == term
    assert escape("a\tb\\") == "a\\tb\\\\" and escape("#x#") == "\\#x#"


@pytest.mark.parametrize("settings", [
    {},   # the defaults: complement NB, l2-normalised (fractional) counts
    {"model": "multinomial", "alpha": 1.0, "norm": None, "fit_prior": True},
    {"model": "bernoulli", "alpha": 0.3, "class_prior": [0.2, 0.5, 0.3]},
    {"tf": "log", "ngram_range": (1, 2), "stop_words": ["the", "at"]},
])
def test_dump_load_dump_is_identical_and_predicts_identically(settings):
    clf = TextClassifier(n_jobs=1, **settings).fit(TEXTS, LABELS)
    first = dump_bytes(clf)
    again = reload(clf)
    assert dump_bytes(again) == first
    probe = TEXTS + ["cheap lunch results", "", "unknown words only"]
    np.testing.assert_array_equal(again.predict_log_proba(probe), clf.predict_log_proba(probe))
    np.testing.assert_array_equal(again.model_.feature_count_, clf.model_.feature_count_)
    np.testing.assert_array_equal(again.digests_, clf.digests_)
    # Settings as the model file keeps them: a stop-word collection as a sorted list.
    expected = clf.get_params()
    if isinstance(expected["stop_words"], list):
        expected["stop_words"] = sorted(expected["stop_words"])
    assert again.get_params() == expected
    assert again.vocabulary_.terms_ == clf.vocabulary_.terms_


def test_dump_layout():
    clf = TextClassifier(model="multinomial", alpha=1.0, norm=None, stop_words="none",
                         n_jobs=1, min_token_length=1).fit(["b a b", "c"], ["x", "y"])
    lines = list(dump_lines(clf))
    assert lines[0] == "#textnb-dump\t1\n"
    header = json.loads(lines[1][1:])
    assert header["classes"] == ["x", "y"] and header["class_count"] == [1.0, 1.0]
    assert header["params"]["model"] == "multinomial" and header["stop_words"] == []
    # Whole counts without ".0": a b c over classes x, y.
    assert lines[2:5] == ["#term\tx\ty\n", "a\t1\t0\n", "b\t2\t0\n"]
    assert lines[5] == "c\t0\t1\n"
    assert [line.split("\t")[0] for line in lines[6:8]] == ["#digest", "#digest"]
    assert lines[6].split("\t")[2] == "x\n" and len(lines[6].split("\t")[1]) == 16
    assert lines[-1] == "#end\n"


def test_hostile_terms_and_class_names_round_trip():
    clf = hostile_classifier()
    data = dump_bytes(clf)
    assert data.count(b"\n") == 3 + len(HOSTILE) + 8 + 1     # one line per term and digest
    again = read_dump(io.BytesIO(data), "hostile")
    assert again.vocabulary_.terms_ == HOSTILE
    assert again.classes_.tolist() == ["#e", "a b", "c\td"]
    assert dump_bytes(again) == data
    np.testing.assert_array_equal(again.model_.feature_count_, clf.model_.feature_count_)


def test_term_lines_in_any_order_are_sorted_again():
    clf = TextClassifier(stop_words="none", n_jobs=1).fit(TEXTS, LABELS)
    lines = list(dump_lines(clf))
    terms = [i for i, line in enumerate(lines) if i > 2 and not line.startswith("#")]
    shuffled = lines[:terms[0]] + [lines[i] for i in reversed(terms)] + lines[terms[-1] + 1:]
    again = read_dump(shuffled, "shuffled")
    assert "".join(dump_lines(again)) == "".join(lines)


def test_digests_survive_so_unlearn_still_checks():
    clf = TextClassifier(stop_words="none", n_jobs=1).fit(TEXTS, LABELS)
    again = reload(clf)
    with pytest.raises(ValueError, match="it was never learned as 'spam'"):
        again.unlearn(["cheap lunch"], ["spam"])
    again.unlearn([TEXTS[0]], ["spam"])
    expected = TextClassifier(stop_words="none", n_jobs=1).fit(TEXTS[1:], LABELS[1:])
    np.testing.assert_array_equal(again.model_.class_count_, expected.model_.class_count_)
    assert again.vocabulary_.terms_ == expected.vocabulary_.terms_
    np.testing.assert_allclose(again.model_.feature_count_, expected.model_.feature_count_,
                               rtol=1e-12)


def test_spamassassin_sample_model_round_trips(tmp_path):
    """A real model: 300 messages' header-prefixed tokens, default (fractional) counts."""
    if not SPAM_DIR.is_dir():
        pytest.skip("corpora/spamassassin sample is absent")
    model = tmp_path / "sa.model"
    assert run("train", "-q", "-j", "1", "-m", model, SPAM_DIR, HAM_DIR).exit_code == 0
    dumped = run("dump", "-m", model)
    assert dumped.exit_code == 0
    assert run("load", "-", "-m", tmp_path / "back.model", input=dumped.stdout_bytes).exit_code == 0
    assert run("dump", "-m", tmp_path / "back.model").stdout_bytes == dumped.stdout_bytes
    original, back = load_model(model), load_model(tmp_path / "back.model")
    assert len(back.vocabulary_) == len(original.vocabulary_) > 5000
    messages = sorted(SPAM_DIR.iterdir())[:20] + sorted(HAM_DIR.iterdir())[:20]
    texts = [p.read_bytes() for p in messages]
    np.testing.assert_array_equal(back.predict_log_proba(texts), original.predict_log_proba(texts))
    # What the mail filter reads (score arrays in the file) is rebuilt too.
    assert (tmp_path / "back.model").read_bytes() == model.read_bytes()


# -- bad dumps: one line, with the line number -----------------------------------------------

def _good_lines() -> list[str]:
    clf = TextClassifier(model="multinomial", norm=None, stop_words="none",
                         n_jobs=1, min_token_length=1).fit(["b a b", "c"], ["x", "y"])
    return list(dump_lines(clf))   # 0 magic, 1 header, 2 columns, 3-5 terms, 6-7 digests, 8 end


def _edit(index: int, text: str | None) -> list[str]:
    lines = _good_lines()
    if text is None:
        del lines[index]
    else:
        lines[index] = text
    return lines


BAD_DUMPS = [
    (_edit(0, "textnb\t1\n"), "line 1: not a textnb dump"),
    (_edit(0, "#textnb-dump\t7\n"), "line 1: dump format version 7; this textnb reads up to 1"),
    (_edit(1, '#{"kind": "text-classifier", "params": \n'), "line 2: the settings are not valid JSON"),
    (_edit(1, '#{"kind": "table"}\n'), "line 2: holds a 'table' model"),
    (_edit(1, '#{"kind": "text-classifier", "classes": ["x", "y"]}\n'),
     "line 2: the settings lack params, class_count, stop_words"),
    (_edit(2, "#term\tx\tz\n"), "line 3: expected the column line '#term<TAB>x<TAB>y'"),
    (_edit(4, "b\t2\n"), "line 5: expected a term and 2 counts separated by tabs, got 2 fields"),
    (_edit(4, "b\t2\tmany\n"), "line 5: count 2 is 'many', not a number >= 0"),
    (_edit(3, "a\t-1\t0\n"), "line 4: count 1 is '-1', not a number >= 0"),
    (_edit(5, "c\tnan\t1\n"), "line 6: count 1 is 'nan', not a number >= 0"),
    (_edit(5, "b\t0\t1\n"), "line 6: the term 'b' again (first on line 5)"),
    (_edit(3, "a\\q\t1\t0\n"), "line 4: unknown escape '\\\\q'"),
    (_edit(3, "#a\t1\t0\n"), "line 4: unknown line '#a\\t1\\t0'"),
    (_edit(6, "#digest\t12ab\tx\n"), "line 7: expected '#digest<TAB>16 hex digits<TAB>class[<TAB>weight]'"),
    (_edit(7, "#digest\t0123456789abcdef\ty\t-0.5\n"), "line 8: the digest's weight '-0.5' is not"),
    (_edit(7, "#digest\t0123456789abcdef\ty\tnan\n"), "line 8: the digest's weight 'nan' is not"),
    (_edit(7, "#digest\t0123456789abcdef\tz\n"), "line 8: the digest's class 'z' is not one"),
    (_edit(8, None), "line 8: the dump ends without its #end line (truncated?)"),
    (_good_lines() + ["a\t1\t1\n"], "line 10: text after the #end line"),
    (_good_lines()[:2], "ends at line 2 before its column line"),
    ([], "is empty or truncated: it ends at line 0"),
]


@pytest.mark.parametrize("lines, message", BAD_DUMPS)
def test_bad_dump_is_one_error_naming_the_line(lines, message):
    with pytest.raises(ModelFileError, match="^dump 'bad'") as caught:
        read_dump(lines, "bad")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_settings_and_bad_bytes():
    lines = _good_lines()
    header = json.loads(lines[1][1:])
    header["params"]["alpha"] = -1
    lines[1] = "#" + json.dumps(header) + "\n"
    with pytest.raises(ModelFileError, match=r"line 2: bad settings \(alpha must be a finite number > 0"):
        read_dump(lines, "bad")
    # Settings are bounded as a model file's are: a dump cannot ask for 10**9-grams.
    header["params"]["alpha"], header["params"]["ngram_range"] = 1.0, [1, 10**9]
    lines[1] = "#" + json.dumps(header) + "\n"
    with pytest.raises(ModelFileError, match=r"line 2: bad settings \(ngram_range must be"):
        read_dump(lines, "bad")
    raw = [line.encode() for line in _good_lines()]
    raw[3] = b"\xff\xfe\t1\t0\n"
    with pytest.raises(ModelFileError, match="line 4: not UTF-8"):
        read_dump(raw, "bad")


# -- the commands ------------------------------------------------------------------------------

@pytest.fixture
def two_models(tmp_path):
    """Models of the first and the second half of TEXTS, and one of them all (same settings)."""
    paths = {}
    for name, part in [("a", slice(0, 10, 2)), ("b", slice(1, 10, 2)), ("all", slice(None))]:
        paths[name] = tmp_path / f"{name}.model"
        save_model(TextClassifier(n_jobs=1).fit(TEXTS[part], LABELS[part]), paths[name])
    return paths


def test_dump_and_load_commands(tmp_path, two_models):
    result = run("dump", "-m", two_models["a"], "-o", tmp_path / "a.dump")
    assert result.exit_code == 0 and result.output == ""
    assert (tmp_path / "a.dump").read_bytes() == dump_bytes(load_model(two_models["a"]))
    result = run("load", tmp_path / "a.dump", "-m", tmp_path / "new.model")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"loaded {tmp_path / 'a.dump'}: ")
    assert "3 classes (ham: 2, spam: 2, sport: 1)" in result.output
    assert run("dump", "-m", tmp_path / "new.model").stdout_bytes == \
        (tmp_path / "a.dump").read_bytes()


def test_load_add_and_merge_equal_training_on_everything(tmp_path, two_models):
    run("dump", "-m", two_models["b"], "-o", tmp_path / "b.dump")
    added = tmp_path / "added.model"
    added.write_bytes(two_models["a"].read_bytes())
    result = run("load", "--add", tmp_path / "b.dump", "-m", added)
    assert result.exit_code == 0, result.output
    assert "added" in result.output and "(ham: 4, spam: 4, sport: 2)" in result.output
    result = run("merge", two_models["a"], two_models["b"], "-m", tmp_path / "merged.model")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("merged 2 models: ")
    everything = load_model(two_models["all"])
    for path in (added, tmp_path / "merged.model"):
        model = load_model(path)
        assert model.vocabulary_.terms_ == everything.vocabulary_.terms_
        np.testing.assert_array_equal(model.model_.class_count_, everything.model_.class_count_)
        np.testing.assert_allclose(model.model_.feature_count_, everything.model_.feature_count_,
                                   rtol=1e-12)
        np.testing.assert_allclose(model.predict_log_proba(TEXTS),
                                   everything.predict_log_proba(TEXTS), rtol=1e-10)
        assert sorted(model.digests_.tolist()) == sorted(everything.digests_.tolist())


def _one_line_error(result, message: str) -> None:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], lines
    assert "Traceback" not in result.output


def test_command_errors_are_one_line(tmp_path, two_models):
    (tmp_path / "bad.dump").write_text("#textnb-dump\t1\n#{}\n")
    _one_line_error(run("load", tmp_path / "bad.dump", "-m", tmp_path / "x.model"),
                    f"dump '{tmp_path / 'bad.dump'}', line 2: holds a None model")
    assert not (tmp_path / "x.model").exists()
    _one_line_error(run("load", "-", "-m", tmp_path / "x.model", input=b"nonsense\n"),
                    "dump '<stdin>', line 1: not a textnb dump")
    _one_line_error(run("load", tmp_path / "missing.dump", "-m", tmp_path / "x.model"),
                    "missing.dump: No such file or directory")
    other = tmp_path / "other.model"
    save_model(TextClassifier(alpha=0.5, n_jobs=1).fit(TEXTS, LABELS), other)
    _one_line_error(run("merge", two_models["a"], other, "-m", tmp_path / "m.model"),
                    "cannot merge classifiers with different settings: ['alpha']")
    result = run("merge", two_models["a"], "-m", tmp_path / "m.model")
    assert result.exit_code == 2 and "give two or more models to merge" in result.stderr
    _one_line_error(run("dump", "-m", tmp_path / "none.model"), "does not exist")


def test_explain_prints_the_eight_emails_log_odds(tmp_path):
    """The eight e-mails, multinomial with Laplace smoothing: each b pushes
    log 2.5 towards spam, each a log 2 towards ham; the priors are equal (4 and 4 e-mails)."""
    from conftest import EIGHT_EMAILS_LABELS, EIGHT_EMAILS_STOP_WORDS, EIGHT_EMAILS_TEXTS
    model = tmp_path / "seed.model"
    save_model(TextClassifier(model="multinomial", alpha=1.0, norm=None, fit_prior=True,
                              stop_words=EIGHT_EMAILS_STOP_WORDS, n_jobs=1, min_token_length=1)
               .fit(EIGHT_EMAILS_TEXTS, EIGHT_EMAILS_LABELS), model)
    (tmp_path / "mail").write_text("b a b d e")
    result = run("explain", tmp_path / "mail", "-m", model)
    assert result.exit_code == 0, result.output
    odds = 2 * log(2.5) - log(2)
    p_spam = 1 / (1 + np.exp(-odds))
    lines = result.output.splitlines()
    # The decision classify makes: a class named spam, no learned cutoffs, so bogofilter's
    # (P(spam) >= 0.99 spam, <= 0.45 ham): unsure, named as classify names it, with P(spam) and
    # the spam log-odds.
    assert lines[:2] == [f"{tmp_path / 'mail'}: unsure  spam-probability {p_spam:.4f}  "
                         f"spam-log-odds {odds:+.3f}  (cutoffs: spam at spam-log-odds >= +4.595, "
                         f"ham <= -0.201)", ""]
    # name, weight, log-odds, running total; columns aligned (19 = len("prior (spam vs ham)")).
    assert [line.split() for line in lines[2:]] == [
        ["term", "weight", "log-odds", "running"],
        ["prior", "(spam", "vs", "ham)", "+0.000", "+0.000"],
        ["b", "2", f"{2 * log(2.5):+.3f}", f"{2 * log(2.5):+.3f}"],
        ["a", "1", f"{-log(2):+.3f}", f"{odds:+.3f}"],
        ["total", f"{odds:+.3f}"]]
    assert lines[2] == f"{'term':<19}  weight   log-odds    running"
    ends = {line.index(value) + len(value) for line, value in
            zip(lines[2:], ["log-odds", "+0.000", f"{2 * log(2.5):+.3f}", f"{-log(2):+.3f}"])}
    assert ends == {19 + 2 + 6 + 2 + 9}
    as_json = json.loads(run("explain", "--format", "json", "--top", "1", tmp_path / "mail",
                             "-m", model).output)
    assert as_json["label"] == "spam" and as_json["probability"] == pytest.approx(p_spam)
    assert as_json["verdict"] == as_json["status"] == "unsure"
    assert as_json["spam_probability"] == pytest.approx(p_spam, rel=1e-12)
    assert as_json["spam_log_odds"] == pytest.approx(odds, rel=1e-12)
    why = as_json["explanation"]
    assert why["log_odds"] == pytest.approx(odds, rel=1e-12)
    assert why["terms"] == [{"term": "b", "weight": 2.0, "log_odds": pytest.approx(2 * log(2.5))}]
    # A message decided ham is explained as spam over ham too: its terms add up to its spam
    # log-odds, the number the cutoffs decide on (a a: 2 log 2 towards ham).
    (tmp_path / "ham").write_text("a a d")
    ham = run("explain", tmp_path / "ham", "-m", model).output.splitlines()
    assert ham[0].startswith(f"{tmp_path / 'ham'}: ham  spam-probability "
                             f"{1 / (1 + 4):.4f}  spam-log-odds {-2 * log(2):+.3f}  (")
    assert ham[3].split() == ["prior", "(spam", "vs", "ham)", "+0.000", "+0.000"]
    assert ham[-1].split() == ["total", f"{-2 * log(2):+.3f}"]


def test_explain_reads_stdin_and_refuses_a_missing_file(tmp_path, two_models):
    result = run("explain", "-m", two_models["all"], "--top", "0", input="cheap pills at noon")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("-: spam  probability ")   # three classes: no spam status
    rows = {line.split()[0]: line.split() for line in lines[3:-1]}
    assert set(rows) == {"prior", "cheap", "pills", "at", "noon"}  # short texts keep "at"
    running = float(lines[-2].split()[-1])
    assert running == pytest.approx(float(lines[-1].split()[-1]), abs=1e-3)
    _one_line_error(run("explain", tmp_path / "nothing", "-m", two_models["all"]), "nothing")


def test_shell_completion_offers_the_new_commands():
    """The README's completion line works: click answers _TEXTNB_COMPLETE for the console
    script's name (textnb), through the group's own main()."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "_TEXTNB_COMPLETE": "bash_complete", "COMP_WORDS": "textnb me",
           "COMP_CWORD": "1"}
    done = subprocess.run([sys.executable, "-m", "textnb"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["plain,merge"]
    env.update(_TEXTNB_COMPLETE="bash_source")
    script = subprocess.run([sys.executable, "-m", "textnb"], env=env, capture_output=True,
                            text=True, timeout=60).stdout
    assert "_textnb_completion()" in script and "complete -o nosort -F _textnb_completion" in script


def test_word_pairs_chosen_by_the_documents_survive_a_dump_and_a_merge(tmp_path):
    # Subject-and-body mail with a spam class: pairs counted, the setting left None.
    texts = [f"Subject: {t}\n\n{t} again".encode() for t in TEXTS[:8]]
    clf = TextClassifier(spam_class="spam", stop_words="none").fit(texts, LABELS[:8])
    assert clf.ngram_range_ == (1, 2) and "cheap pills" in clf.vocabulary_.terms_
    again = read_dump(dump_lines(clf))
    assert again.get_params() == clf.get_params() and again.ngram_range_ == (1, 2)
    probe = [b"Subject: cheap\n\ncheap pills at noon"]
    np.testing.assert_array_equal(again.predict_log_proba(probe), clf.predict_log_proba(probe))
    # Merged with a model counted alike (pairs given explicitly): the counts add.
    other = TextClassifier(spam_class="spam", stop_words="none", ngram_range=(1, 2))
    other.fit(texts[::-1], LABELS[:8][::-1])
    merged = again.merge(other)
    np.testing.assert_allclose(merged.model_.class_count_, 2 * clf.model_.class_count_)
