"""text → tokens (Tokenizer), bytes → str (decode), and stop-word sets (load_stop_words)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import textnb.text.stopwords
import textnb.text.tokens
from textnb.decoding import decode
from textnb.errors import TextnbError
from textnb.text.stopwords import load_stop_words
from textnb.text.tokens import MAX_TOKEN_LENGTH, Tokenizer

from conftest import with_c_and_python

NO_HYPOTHESIS = "hypothesis (the test extra) is needed for property tests"

# Every test here twice: with the tokenizer in C, and with the regular expression alone.
implementation = with_c_and_python(textnb.text.tokens, "_fast", None)


# -- token kinds ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, tokens", [
    ("Don't e-mail me", ["don't", "e-mail", "me"]),
    ("rock’n’roll well-known-fact", ["rock’n’roll", "well-known-fact"]),
    # A word of three digits or more counts its shape too, each digit "#".
    ("pi is 3.14, 1,000 or 42", ["pi", "is", "3.14", "1,000", "or", "42", "#.##", "#,###"]),
    ("only $500 or $1,000.00, €5 and £3.50; $ alone", ["only", "$500", "or", "$1,000.00", "€5",
                                                        "and", "£3.50", "alone",
                                                        "$###", "$#,###.##", "£#.##"]),
    ("see https://www.Win-Big.example.com/path?id=7 now",
     ["see", "https", "www.win-big.example.com", "path", "id", "7", "now"]),
    ("write to John.Doe+spam@mail.example.org today",
     ["write", "to", "john.doe+spam@mail.example.org", "today"]),
    ("buy! now!! free!!! win!!!!!!!", ["buy", "!", "now", "!!", "free", "!!!", "win", "!!!"]),
    # A "!" run starts where no "!" precedes it; "$" or "!" only start a token of their kind.
    ("a!b !!x! $x $5! !!!!", ["a", "!", "b", "!!", "x", "!", "x", "$5", "!", "!!!"]),
    ("-- ... ;; ()", []),
])
def test_token_kinds(text, tokens):
    assert Tokenizer(min_length=1)(text) == tokens  # every token the pattern finds


def test_unicode_and_casefolding():
    assert Tokenizer()("Über STRAẞE straße ΣΊΣΥΦΟΣ Ǆemal") == \
        ["über", "strasse", "strasse", "σίσυφοσ", "ǆemal"]
    assert Tokenizer(lowercase=False)("Über MIXED case") == ["Über", "MIXED", "case"]
    assert Tokenizer()("東京 café naïve") == ["東京", "café", "naïve"]


def test_words_of_three_digits_or_more_count_their_shape_too():
    # After the words and their n-grams, body tokens only; no stop word removes a shape.
    assert Tokenizer(ngram_range=(1, 2), stop_words={"###"}).document(
        "Call 08452810075 or 123", [("subject", "win 5000")]) == [
        "win", "5000", "call", "08452810075", "or", "123",
        "win 5000", "5000 call", "call 08452810075", "08452810075 or", "or 123",
        "####", "###########", "###", "subject:win", "subject:5000"]
    # Decimal digits of any script (\d), two are too few, letters and marks stay; each shape
    # once, in its first place.
    assert textnb.text.tokens.shapes(["ab12", "ab123", "٣٣٣", "x²yz", "1²34", "v1.2.3", "9.99",
                                 "0.707", "100", "1.047"]) == [
        "ab###", "###", "#²##", "v#.#.#", "#.##", "#.###"]


def test_chinese_japanese_and_korean_runs_are_read_as_character_bigrams():
    # Written without spaces, a run is a phrase: each two neighbouring characters are a token.
    assert Tokenizer()("我们提供发票服务，欢迎咨询") == [
        "我们", "们提", "提供", "供发", "发票", "票服", "服务", "欢迎", "迎咨", "咨询"]
    assert Tokenizer()("今日は会議 한국어") == ["今日", "日は", "は会", "会議", "한국", "국어"]
    # A lone character is a token; a run inside a word splits it, the rest read as tokens.
    assert Tokenizer()("中 abc中文Def x@中文.com 中,12") == [
        "中", "abc", "中文", "def", "中文", "com", "中", "12"]  # a lone "x" is no word, "中" is
    # A sentence past the length cap is read, not dropped; in header fields as in the body.
    assert Tokenizer()("发" * 60) == ["发发"] * 59
    assert Tokenizer().document("", [("subject", "免费发票")]) == [
        "免费", "费发", "发票", "subject:免费", "subject:费发", "subject:发票"]


def test_overlong_tokens_are_dropped_not_cut():
    longest, too_long = "b" * MAX_TOKEN_LENGTH, "a" * (MAX_TOKEN_LENGTH + 1)
    assert Tokenizer()(f"{too_long} {longest} ok") == [longest, "ok"]
    assert Tokenizer(max_length=3)("abc abcd ab") == ["abc", "ab"]
    # base64 lines, the reason for the cap, vanish entirely.
    assert Tokenizer()("SGVsbG8gd29ybGQhIFRoaXMgaXMgYSBiYXNlNjQgZW5jb2RlZCBsaW5lIG9mIHRleHQu") == []


def test_one_letter_words_and_lone_digits_are_dropped_from_the_body():
    # Spam that spells its words out leaves no tokens of them; "!" and money are no words,
    # and a CJK character is one: they stay.
    assert Tokenizer()("F R E E money: call 0 8 4 now ! $5 中 x2 é") == [
        "money", "call", "now", "!", "$5", "中", "x2"]
    # A header field's words keep their prefix whatever their length: X-Priority: 1 is a mark.
    assert Tokenizer().document("a bb", [("x-priority", "1 (Highest)"), ("subject", "a b")]) == [
        "bb", "x-priority:1", "x-priority:highest", "subject:a", "subject:b"]
    assert Tokenizer(min_length=1)("t h e 7") == ["t", "h", "e", "7"]
    assert Tokenizer(min_length=3)("it is the 中文 of $5 !!") == ["the", "中文", "$5", "!!"]
    with pytest.raises(ValueError, match="min_length"):
        Tokenizer(min_length=0)
    with pytest.raises(ValueError, match="min_length"):
        Tokenizer(min_length=5, max_length=4)


def test_stop_words_are_compared_after_casefolding():
    tokenizer = Tokenizer(stop_words={"the", "a"})
    assert tokenizer("The cat and A dog THE end") == ["cat", "and", "dog", "end"]


# NLTK stems: the stem extra; without it, stemming is one clear error (tests/test_api_refusals.py).
needs_nltk = pytest.mark.skipif(importlib.util.find_spec("nltk") is None,
                                reason="NLTK is not installed: pip install '.[stem]'")


@needs_nltk
@pytest.mark.parametrize("stemmer, tokens", [
    ("porter", ["run", "run", "easili", "gener", "don't", "42"]),
    ("snowball", ["run", "run", "easili", "generous", "don't", "42"]),
])
def test_stemming(stemmer, tokens):
    tokenizer = Tokenizer(stemmer=stemmer)
    assert tokenizer("Running runs easily generously don't 42") == tokens
    # Twice, so the second call goes through the cache and gives the same.
    assert tokenizer("Running runs easily generously don't 42") == tokens


@needs_nltk
def test_stemming_happens_after_stop_words():
    # "having" is a stop word; its stem "have" is not removed because it is not in the text.
    assert Tokenizer(stop_words={"having"}, stemmer="porter")("having haves") == ["have"]


def test_ngrams():
    assert Tokenizer(ngram_range=(1, 2))("aa bb cc") == ["aa", "bb", "cc", "aa bb", "bb cc"]
    assert Tokenizer(ngram_range=(2, 3))("aa bb cc dd") == [
        "aa bb", "bb cc", "cc dd", "aa bb cc", "bb cc dd"]
    # Words dropped for their length are gone before the n-grams are made.
    assert Tokenizer(ngram_range=(2, 2))("win a prize") == ["win prize"]
    assert Tokenizer(ngram_range=(2, 2))("single") == []
    # n-grams join the words left after stop words are removed.
    assert Tokenizer(ngram_range=(2, 2), stop_words={"the"})("win the prize") == ["win prize"]


def test_bad_settings():
    with pytest.raises(ValueError, match="stemmer must be None, 'porter' or 'snowball'"):
        Tokenizer(stemmer="lancaster")
    with pytest.raises(ValueError, match=r"ngram_range must be \(min_n, max_n\)"):
        Tokenizer(ngram_range=(2, 1))
    with pytest.raises(ValueError, match=r"ngram_range must be \(min_n, max_n\)"):
        Tokenizer(ngram_range=(0, 1))
    with pytest.raises(ValueError, match="max_length must be a positive number"):
        Tokenizer(max_length=0)


def test_document_prefixes_header_field_tokens():
    tokens = Tokenizer(ngram_range=(1, 2)).document(
        "Body text", [("subject", "FREE money!!"), ("from", "Win <win@example.com>")])
    # The Subject is read before the body, as a reader reads it, and as a field of its own.
    assert tokens == ["free", "money", "!!", "body", "text",
                      "free money", "money !!", "!! body", "body text",
                      "subject:free", "subject:money", "subject:!!",
                      "from:win", "from:win@example.com"]
    assert Tokenizer().document(b"caf\xe9") == ["café"]
    assert Tokenizer().document(b"caf\xe9", [("subject", "Menu")]) == ["menu", "café", "subject:menu"]
    assert Tokenizer().document("text", [("subject", "")]) == ["text"]


# -- bytes ------------------------------------------------------------------------------------

def test_bytes_decode_as_utf8_else_cp1252():
    assert Tokenizer()("Grüße".encode("utf-8")) == ["grüsse"]
    # Invalid UTF-8: Windows-1252, where 0x93/0x94 are curly quotes and 0x80 is the euro sign.
    assert decode(b"\x93caf\xe9\x94 \x80 5") == "“café” € 5"
    assert Tokenizer()(b"\x93caf\xe9\x94 \x805") == ["café", "€5"]
    # A declared charset is tried before the fallback.
    assert decode("Привет".encode("koi8-r"), charset='"KOI8-R"') == "Привет"
    assert decode(b"caf\xe9", charset="no-such-charset") == "café"
    # cp1252's five undefined bytes decode as latin-1 control characters.
    assert decode(b"\x81\x8d\x8f\x90\x9d\xff") == "\x81\x8d\x8f\x90\x9d\xff"


def test_binary_bytes_never_raise():
    rng = np.random.default_rng(1)
    blob = bytes(rng.integers(0, 256, 5000, dtype=np.uint8)) + b"\x00\x00PK\x03\x04ok\x00"
    tokens = Tokenizer()(blob)
    assert isinstance(tokens, list) and all(isinstance(t, str) and t for t in tokens)
    assert all("\x00" not in t and len(t) <= MAX_TOKEN_LENGTH for t in tokens)
    assert "pk" in Tokenizer()(b"\x00\x00PK\x03\x04\x00")


# -- stop words -------------------------------------------------------------------------------

def test_english_stop_words_packaged_copy(monkeypatch):
    # Without NLTK's downloaded corpus, the packaged copy of its 179-word list is used.
    monkeypatch.setattr(textnb.text.stopwords, "_nltk_words", lambda language: [])
    words = load_stop_words("english")
    assert len(words) == 179
    assert {"the", "a", "and", "don't", "wouldn't", "ourselves"} <= words
    assert "spam" not in words


def test_english_stop_words():
    words = load_stop_words("english")
    assert "the" in words and "you're" in words
    assert len(words) >= 179


def test_english_stop_words_without_negations():
    from textnb.text.stopwords import NEGATIONS
    english, kept = load_stop_words("english"), load_stop_words("english-without-negations")
    assert NEGATIONS <= english  # every one is a word of the list (no typo)
    assert kept == english - NEGATIONS and len(kept) == 179 - 41
    assert {"the", "a", "at"} <= kept and not {"not", "no", "nor", "very", "don't", "don"} & kept


def test_no_stop_words():
    assert load_stop_words("none") == frozenset()
    assert load_stop_words(None) == frozenset()
    assert load_stop_words(["d", "e", "d"]) == {"d", "e"}


def test_stop_word_file_with_comments(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_text("# my stop words\nthe\n  and  # a conjunction\n\nbär\n#only a comment\n",
                    encoding="utf-8")
    assert load_stop_words(str(path)) == {"the", "and", "bär"}


def test_missing_stop_word_file_names_it(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(TextnbError, match=r"cannot read stop-word file '.*nope\.txt'"):
        load_stop_words(str(missing))


def test_any_text_or_bytes_gives_clean_tokens():
    """Property: any str or bytes tokenizes without error into short, folded, non-stop tokens."""
    hypothesis = pytest.importorskip("hypothesis", reason=NO_HYPOTHESIS)
    st = hypothesis.strategies
    tokenizer = Tokenizer(stop_words={"the", "a"}, max_length=12)

    @hypothesis.settings(max_examples=200, deadline=None)
    @hypothesis.given(st.one_of(st.text(max_size=80), st.binary(max_size=80)))
    def check(text):
        tokens = tokenizer(text)
        assert all(isinstance(t, str) and 0 < len(t) <= 12 for t in tokens)
        assert not {"the", "a"} & set(tokens)
        assert all(not any(ch.isspace() for ch in t) for t in tokens)
        decoded = decode(text) if isinstance(text, bytes) else text
        assert all(t == t.casefold() for t in tokens)
        assert tokenizer(decoded) == tokens

    check()


def test_english_stop_words_come_from_an_installed_nltk_corpus(tmp_path, monkeypatch):
    """NLTK's corpus wins where nltk.data.path would find it, read without importing NLTK."""
    from textnb.text.stopwords import load_stop_words
    corpus = tmp_path / "corpora" / "stopwords"
    corpus.mkdir(parents=True)
    (corpus / "english").write_text("alpha\nbeta\n")
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    assert load_stop_words("english") == {"alpha", "beta"}


@pytest.mark.parametrize("settings", [
    {}, {"lowercase": False}, {"stop_words": {"the", "free"}, "max_length": 5},
    pytest.param({"stemmer": "porter"}, marks=needs_nltk), {"ngram_range": (1, 2)},
])
def test_document_prefixes_what_words_gives_for_each_field(settings):
    tokenizer = Tokenizer(**settings)
    fields = [("subject", "The FREE offers!!! now"), ("ip", "64.12 64.12.3"), ("to", ""),
              ("from", "Jo <jo.smith@example.com> longwordhere")]
    expected = tokenizer("The FREE offers!!! now\nBody text, the offers") + [
        f"{name}:{word}" for name, value in fields for word in tokenizer.words(value)]
    assert tokenizer.document("Body text, the offers", fields) == expected
    assert len(expected) > 10 - 5 * ("stop_words" in settings)

