"""textnb/_tokens.c, the tokenizer in C, against the regular expressions it follows
(textnb.text.tokens._TOKEN, the bigrams of textnb.text.tokens._matched, the shapes of
textnb.text.tokens._python_shapes): the same tokens on any text and on real mail.
tests/test_tokens.py runs the Tokenizer's own tests with each."""

from __future__ import annotations

import re
from array import array
from collections import Counter
from pathlib import Path

import pytest

import textnb.text.tokens
from textnb.documents.message import read_bytes
from textnb.text.tokens import _CJK, Tokenizer, _matched, _python_shapes, with_subject
from textnb.documents.envelope import MAX_VALUE, _python_received
from textnb.text.counting import _python_numbers

from conftest import NO_C, spamassassin_sample

C_TOKENS = textnb.text.tokens._fast
_BUNDLED = Path(__file__).resolve().parents[1] / "corpora" / "spamassassin"
pytestmark = pytest.mark.skipif(C_TOKENS is None, reason=NO_C)

def _real_mail() -> list[bytes]:
    """The first 300 spam and ham of the shared SpamAssassin archive, else the bundled sample."""
    sample = spamassassin_sample(300)
    if sample:
        return sample["spam"] + sample["ham"]
    return [p.read_bytes() for part in ("spam", "ham") for p in sorted((_BUNDLED / part).iterdir())]


_SHORT_WORD = re.compile(rf"(?![{_CJK}])\w")  # a token min_length applies to starts so


def _pattern_tokens(text: str, stop: frozenset, cap: int, short: int = 1) -> list[str]:
    return [t for t in _matched(text) if t not in stop and len(t) <= cap
            and (len(t) >= short or not _SHORT_WORD.match(t))]


def _field_tokens(fields, stop: frozenset, cap: int, lowercase: bool = True) -> list[str]:
    tokens: list[str] = ["body"]
    C_TOKENS.field_tokens(tokens, fields, stop, lowercase, cap)
    return tokens


# Characters where the two could part: every branch's punctuation, non-ASCII letters and digits,
# digits that are \w but not \d (², ½, Ⅻ), a combining mark (not \w), an astral letter, and
# the scripts read as bigrams: Han, kana, Hangul, a compatibility and an astral ideograph.
_ALPHABET = "aZ09_ .,'’+-@$€£!¡é٣²½Ⅻ\u0301\U0001D400\n\t中文はカ한丽\U00020000"


def test_c_tokens_equal_the_pattern_on_any_text():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=3000, deadline=None)
    @hypothesis.given(st.one_of(st.text(_ALPHABET, max_size=60), st.text(max_size=60)),
                      st.sampled_from([frozenset(), frozenset({"a", "$0", "!!", "a.a"})]),
                      st.integers(1, 12), st.integers(1, 4))
    def check(text, stop, cap, short):
        assert C_TOKENS.tokens(text, stop, short, cap) == _pattern_tokens(text, stop, cap, short)
        words = _pattern_tokens(text, stop, cap)
        assert C_TOKENS.shapes(words) == _python_shapes(words)
        fields = [("subject", text), ("to", text.upper())]
        expected = ["body"] + [f"{name}:{t}" for name, value in fields
                               for t in _pattern_tokens(value.casefold(), stop, cap)]
        assert _field_tokens(fields, stop, cap) == expected

    check()


def test_c_tokens_equal_the_pattern_on_real_mail():
    """Every body and header field of the first 300 spam and ham of the shared SpamAssassin
    archive (the bundled sample without it), cased and folded."""
    messages = _real_mail()
    stop = Tokenizer().stop_words | {"the"}
    texts = 0
    for raw in messages:
        document = read_bytes(raw)
        for text in [document.text] + [value for _, value in document.fields]:
            for form in (text, text.casefold()):
                assert C_TOKENS.tokens(form, stop, 2, 40) == _pattern_tokens(form, stop, 40, 2)
                texts += 1
        body = _pattern_tokens(with_subject(document.text, document.fields).casefold(),
                               Tokenizer().stop_words, 40, 2)
        assert Tokenizer().document(document.text, document.fields) == (
            body + _python_shapes(body) + _field_tokens(document.fields, Tokenizer().stop_words, 40)[1:])
    assert texts > 5000


def test_c_tokens_reject_what_they_cannot_read():
    with pytest.raises(TypeError):
        C_TOKENS.tokens(b"bytes", frozenset(), 1, 40)
    with pytest.raises(TypeError, match="stop words"):
        C_TOKENS.tokens("text", ["a", "list"], 1, 40)
    with pytest.raises(TypeError):
        _field_tokens([("subject", None)], frozenset(), 40)
    with pytest.raises(TypeError):
        _field_tokens([5], frozenset(), 40)
    assert _field_tokens([["to", "Jo"]], frozenset(), 40) == ["body", "to:jo"]  # any pair
    assert C_TOKENS.tokens("the cat", None, 1, 40) == ["the", "cat"]


def test_c_numbers_equal_the_python_ones():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=500, deadline=None)
    @hypothesis.given(st.lists(st.sampled_from("abcdefgh"), max_size=5),
                      st.lists(st.sampled_from("abcdefghxyz"), max_size=30), st.booleans())
    def check(known, terms, add):
        index = {term: i for i, term in enumerate(dict.fromkeys(known))}
        copy = dict(index)
        assert C_TOKENS.number(index, terms, add) == _python_numbers(copy, terms, add)
        assert list(index.items()) == list(copy.items())

    check()
    with pytest.raises(TypeError):
        C_TOKENS.number({}, 5, True)
    with pytest.raises(TypeError):
        C_TOKENS.number({"a": "not a number"}, ["a"], False)


def test_c_counts_equal_the_python_ones():
    """Documents' term numbers → CSR counts: the same bytes from C and numpy, any documents
    (empty ones, repeats, one term), and on real mail's tokens."""
    from textnb.text.counting import _python_count, count_tokens
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=500, deadline=None)
    @hypothesis.given(st.integers(1, 12).flatmap(lambda n: st.tuples(
        st.permutations(range(n)), st.lists(st.lists(st.integers(0, n - 1), max_size=20),
                                            max_size=8))))
    def check(case):
        order, documents = case
        ids = array("q", [i for document in documents for i in document])
        ends = array("q")
        for document in documents:
            ends.append((ends[-1] if ends else 0) + len(document))
        order = array("q", order).tobytes()
        assert C_TOKENS.count(ids.tobytes(), ends.tobytes(), order) == \
            _python_count(ids.tobytes(), ends, order)

    check()
    tokens = [Tokenizer().document(d.text, d.fields) for d in map(read_bytes, _real_mail())]
    part = count_tokens(tokens)
    import numpy as np
    data, indices, indptr = (np.frombuffer(b, dtype=t) for b, t in
                             zip(part[1:4], (np.float64, np.int32, np.int64)))
    assert indptr[-1] == data.size and data.sum() == sum(map(len, tokens))
    row = [(part.terms[j], n) for j, n in zip(indices[indptr[5]:indptr[6]], data[indptr[5]:indptr[6]])]
    assert row == sorted(Counter(tokens[5]).items())


def test_c_counts_refuse_what_is_no_part():
    ids, ends = array("q", [0, 1, 1]).tobytes(), array("q", [3]).tobytes()
    data, indices, _ = C_TOKENS.count(ids, ends, array("q", [1, 0]).tobytes())
    assert (data, indices) == (array("d", [2, 1]).tobytes(), array("i", [0, 1]).tobytes())
    for bad_ids, bad_ends, order in [
            (ids, ends, array("q", [0, 0]).tobytes()),       # a term numbered twice
            (ids, ends, array("q", [0]).tobytes()),          # an id with no term
            (ids, array("q", [4]).tobytes(), array("q", [0, 1]).tobytes()),  # past the ids
            (ids, array("q", [2, 1]).tobytes(), array("q", [0, 1]).tobytes()),  # descending
            (ids[:5], ends, array("q", [0, 1]).tobytes())]:  # not int64
        with pytest.raises(ValueError):
            C_TOKENS.count(bad_ids, bad_ends, order)


# Received fields' characters: addresses' digits and dots (non-ASCII digits too: \\d is any
# decimal digit, str.isdigit() more), host names' letters, hyphens and underscores.
_RECEIVED = "19.0-_ab[]()é²٣\n"


def _by_lists(tokenizer: Tokenizer, texts: list, digests: bool):
    """count_part as the token lists give it: tokens, each numbered, then counted."""
    import textnb.text.counting as counting
    found = [counting.digest(counting.document_tokens(tokenizer, t)) for t in texts]
    part = counting.count_tokens(counting.document_tokens(tokenizer, t) for t in texts)
    return part._replace(digests=bytearray(array("Q", found if digests else [])))


def test_numbered_parts_equal_the_token_lists_on_any_text():
    """textnb._tokens.Numbering (tokens numbered as found, no token lists): the same terms,
    counts and digests as tokenizing, numbering and joining the token lists, on texts of every
    string kind (ASCII, Latin-1, two- and four-byte characters), header fields with prefixes,
    stop words, cased or folded, any length cap and least length; parts of many documents, so the table grows."""
    from textnb.text.counting import count_part
    from textnb.documents.message import Document
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    texts = st.one_of(st.text(_ALPHABET, max_size=60), st.text(max_size=30),
                      st.text("aé ", max_size=20))
    names = st.sampled_from(["subject", "to", "x-é", "z\U0001D400"])
    documents = st.one_of(texts, st.builds(lambda body, fields: Document("-", body, fields),
                                           texts, st.lists(st.tuples(names, texts), max_size=4)))

    @hypothesis.settings(max_examples=1500, deadline=None)
    @hypothesis.given(st.lists(documents, max_size=12),
                      st.sampled_from([(), ("a", "$0", "!!", "a.a", "é", "###", "#")]),
                      st.booleans(),
                      st.integers(1, 12), st.booleans(), st.integers(1, 3))
    def check(texts, stop, lowercase, cap, digests, short):
        tokenizer = Tokenizer(stop_words=stop, lowercase=lowercase, max_length=cap,
                              min_length=min(short, cap))
        assert count_part(tokenizer, texts, digests) == _by_lists(tokenizer, texts, digests)

    check()
    many = [" ".join(f"w{i}x{j}" for j in range(500)) for i in range(200)]  # 100,000 terms
    assert count_part(Tokenizer(), many, True) == _by_lists(Tokenizer(), many, True)


def test_numbered_parts_equal_the_token_lists_on_real_mail():
    from textnb.text.counting import count_part
    messages = _real_mail()
    tokenizer = Tokenizer()
    assert count_part(tokenizer, messages, True) == _by_lists(tokenizer, messages, True)


def test_numbering_refuses_what_it_cannot_read():
    import os
    from textnb.text.counting import _KEY
    with pytest.raises(ValueError, match="16 bytes"):
        C_TOKENS.Numbering({}, None, True, 1, 40, os.urandom(8))
    with pytest.raises(TypeError, match="made by"):  # never initialised: no table to read
        C_TOKENS.Numbering.__new__(C_TOKENS.Numbering).document(bytearray(), "a", (), None)
    index: dict = {}
    numbering = C_TOKENS.Numbering(index, None, True, 2, 40, _KEY)
    ids = bytearray()
    for fields in ([("subject", None)], [5], [("a", "b", "c")]):
        with pytest.raises(TypeError):
            numbering.document(ids, "text", fields, None)
    with pytest.raises(TypeError):
        numbering.document(ids, b"bytes", (), None)
    with pytest.raises(TypeError, match="bytearray"):
        numbering.document(ids, "text", (), b"")
    assert ids == bytearray()  # a document that failed adds no numbers
    numbering.document(ids, "a Text", [("to", "A b")], None)  # and it goes on after errors
    # "text" from the first try; the body's "a" too short, the field's words kept
    assert index == {"text": 0, "to:a": 1, "to:b": 2}
    assert ids == array("q", [0, 1, 2]).tobytes()


def test_c_received_fields_equal_the_python_ones():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=3000, deadline=None)
    @hypothesis.given(st.one_of(st.text(_RECEIVED, max_size=40), st.text(max_size=40)))
    def check(value):
        assert C_TOKENS.received(value) == _python_received(value)

    check()
    for value in ["1.2.3.4", "x1.2.3.4", ".1.2.3.4", "1.2.3.4.", "1.2.3.4x", "1234.1.2.3",
                  "1.2.3.1234", "a.b", "1.2", "ab", "a-.b", "-a.b", "a.-b", "a..b", "é.b"]:
        assert C_TOKENS.received(value) == _python_received(value), value


def test_c_received_fields_equal_the_python_ones_on_real_mail():
    import email
    messages = _real_mail()
    values = [str(value)[:MAX_VALUE].lower() for raw in messages
              for name, value in email.message_from_bytes(raw).items() if name.lower() == "received"]
    assert len(values) > 500
    assert [C_TOKENS.received(v) for v in values] == [_python_received(v) for v in values]


# Envelope values' characters: every pattern's punctuation, both cases, digits, Python's other
# ASCII whitespace (\x0b, \x1c: str.split and \\s take them), and a letter that is no ASCII.
_ENVELOPE = "aZ09_-.@<> +\t\n\x0b\x1c()[];:,é"
_ENVELOPE_NAMES = ["received", "return-path", "reply-to", "sender", "message-id", "date",
                   "x-priority", "precedence", "subject", "from"]


def _envelope(headers):
    from textnb.documents.envelope import _ADDRESS_FIELDS, _READ, _VALUE_FIELDS, MAX_FIELDS
    return C_TOKENS.envelope(headers, _READ, _ADDRESS_FIELDS, _VALUE_FIELDS, MAX_FIELDS,
                             MAX_VALUE)


def test_c_envelope_equals_the_python_one():
    from textnb.documents.envelope import _python_envelope_fields
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    value = st.one_of(st.text(_ENVELOPE, max_size=60), st.text(max_size=20),
                      st.from_regex(r"[ ]*<?[a-zA-Z0-9.$]{0,210}@?[a-zA-Z0-9.<]{0,210}>?[ ]*",
                                    fullmatch=True),
                      st.from_regex(r"[A-Za-z, 0-9:]{0,50}[+-]?[A-Z0-9]{0,7}[ ()A-Z]{0,8}",
                                    fullmatch=True))

    @hypothesis.settings(max_examples=3000, deadline=None)
    @hypothesis.given(st.lists(st.tuples(st.sampled_from(_ENVELOPE_NAMES), value), max_size=6))
    def check(headers):
        found = _envelope(headers)
        read = [value for name, value in headers if name not in ("subject", "from")]
        if all(value.isascii() for value in read):
            assert found == _python_envelope_fields(headers)
        else:
            assert found is None

    check()
    for value in ["a@b", "a@b.", "a@.b", "@a.b.c.d", "x@a..b", "@-a.b_c", "<>", "< a@b >", "@",
                  "x" * 250 + "@y", "GMT", "ABCDEFG", "+0700 (PDT)", "-07000", "Z", " -0800 ",
                  "PDT" + ")" * 36, "PDT" + ")" * 37, "PDT" + ")" * 38, "-0700" + ")" * 36]:
        headers = [(name, value) for name in _ENVELOPE_NAMES]
        assert _envelope(headers) == _python_envelope_fields(headers), value


def test_c_envelope_equals_the_python_one_on_real_mail():
    import email
    from textnb.documents.envelope import _python_envelope_fields
    messages = _real_mail()
    headers = [[(name.lower(), str(value)) for name, value in email.message_from_bytes(raw).items()]
               for raw in messages]
    found = [_envelope(h) for h in headers]
    # The C reader gives up (None) on a few odd header blocks only: most messages compared.
    assert sum(f is not None for f in found) > 0.8 * len(messages)
    assert [f for f in found if f is not None] == \
        [_python_envelope_fields(h) for h, f in zip(headers, found) if f is not None]


# Header blocks' bytes: field names and colons, blanks and tabs that make continuation lines,
# line ends (CR too), an mbox "From " line's letters, and a byte that is no ASCII.
_HEAD = [b"From ", b"Subject", b"To", b"X-A", b":", b" ", b"\t", b"\n", b"\r", b"x", b"\x80"]


def test_c_header_reading_equals_the_python_one(monkeypatch):
    import textnb.documents.message as documents
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    def python(function, *args):
        with monkeypatch.context() as patch:
            patch.setattr(documents, "_fast", None)
            return function(*args)

    @hypothesis.settings(max_examples=3000, deadline=None)
    @hypothesis.given(st.lists(st.sampled_from(_HEAD), max_size=25).map(b"".join),
                      st.sampled_from([documents._SNIFF_BYTES, 8]), st.booleans())
    def check(raw, sniff, top):
        monkeypatch.setattr(documents, "_SNIFF_BYTES", sniff)  # a head cut mid-line too
        assert documents._is_message(raw) == python(documents._is_message, raw)
        assert documents._header_block(raw, top) == python(documents._header_block, raw, top)

    check()
    assert C_TOKENS.header_fields("") == []
    assert C_TOKENS.header_fields("A: b\n c\nD:\n") == [("a", "b\n c"), ("d", "")]
    assert C_TOKENS.header_fields(" A: b\n") is None
    with pytest.raises(ValueError, match="ASCII"):
        C_TOKENS.header_fields("Sübject: x\n")


def test_c_header_reading_equals_the_python_one_on_real_mail(monkeypatch):
    import textnb.documents.message as documents
    messages = _real_mail()
    cleaned = [documents._clean(raw) for raw in messages]
    c = [(documents._is_message(raw), documents._header_block(raw, True)) for raw in cleaned]
    monkeypatch.setattr(documents, "_fast", None)
    assert c == [(documents._is_message(raw), documents._header_block(raw, True))
                 for raw in cleaned]
    assert sum(is_message for is_message, _ in c) == len(messages)


def test_the_same_model_with_or_without_c(monkeypatch):
    """Read, tokenized, numbered and fitted (trained on error) in one process with every C
    part, then with none:
    the same terms, counts, cutoffs and log-probabilities, bit for bit."""
    import numpy as np
    import textnb.documents.message
    import textnb.documents.envelope
    import textnb.documents.html
    import textnb.nb.discrete
    import textnb.nb.on_error
    import textnb.text.counting
    from textnb import TextClassifier
    from textnb.documents.envelope import _python_received
    from textnb.text.counting import _python_count, _python_numbers
    paths = sorted(p for part in ("spam", "ham") for p in (_BUNDLED / part).iterdir())
    texts = [p.read_bytes() for p in paths]
    labels = [p.parent.name for p in paths]

    def fitted():
        model = TextClassifier(spam_class="spam", training="on-error", n_jobs=1).fit(texts, labels)
        return model, model.predict_log_proba(texts)

    with_c, scores_c = fitted()
    monkeypatch.setattr(textnb.text.tokens, "_fast", None)
    monkeypatch.setattr(textnb.documents.message, "_fast", None)
    monkeypatch.setattr(textnb.text.counting, "_numbers", _python_numbers)
    monkeypatch.setattr(textnb.text.counting, "_count", _python_count)
    monkeypatch.setattr(textnb.documents.envelope, "_received", _python_received)
    monkeypatch.setattr(textnb.nb.on_error, "_fast", None)
    monkeypatch.setattr(textnb.documents.html, "_fast", None)
    monkeypatch.setattr(textnb.nb.discrete, "_fast", None)
    monkeypatch.setattr(textnb.nb.sparse, "_fast", None)
    monkeypatch.setattr(textnb.text.vocabulary, "_scores", None)
    without, scores = fitted()
    assert with_c.on_error_ == without.on_error_ and with_c.cutoffs_["training"] == "on-error"
    assert with_c.vocabulary_.terms_ == without.vocabulary_.terms_
    np.testing.assert_array_equal(with_c.model_.feature_count_, without.model_.feature_count_)
    assert with_c.cutoffs_ == without.cutoffs_
    np.testing.assert_array_equal(scores_c, scores)
    assert len(set(labels)) == 2 and len(with_c.vocabulary_) > 5000


def test_content_types_and_parameters_are_read_as_their_patterns_read_them():
    """_tokens.content_type and parameter against textnb.documents.message's _CONTENT_TYPE
    (whole match) and _PARAMETER (findall): the same groups on random ASCII values of the
    parts they are made of (blanks of every kind \\s takes, quotes, backslashes, "<")."""
    import random
    from textnb.documents.message import _CONTENT_TYPE, _PARAMETER
    content_type, parameter = re.compile(_CONTENT_TYPE), re.compile(_PARAMETER)
    parts = ["text", "/", "plain", ";", " ", "\t", "\n", "\x1c", "\x0b", "\r", "=", '"', "\\",
             "<", "charset", "CharSet", "iso-8859-1", "a", "-", ".", "+", "_", "x=y", "name",
             "9", "*"]
    rnd = random.Random(0)
    for _ in range(20000):
        value = "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 12)))
        value = "text/html" + value if rnd.random() < 0.5 else value
        match = content_type.fullmatch(value)
        assert C_TOKENS.content_type(value) == (match.groups() if match else None), value
        for name in ("charset", "name"):
            expected = next((quoted or token for key, quoted, token in parameter.findall(value)
                             if key.lower() == name), None)
            assert C_TOKENS.parameter(value, name) == expected, value
    assert C_TOKENS.content_type('Text/Plain; charset="a b" ;') == ("Text/Plain", '; charset="a b"')
    with pytest.raises(ValueError):
        C_TOKENS.content_type("text/plain; name=é")
