"""text → tokens: case folding, length cap, spam signals, header prefixes, n-grams, stemming.

A token is a word (letters or digits, joined by internal apostrophes, hyphens or dots as in
``don't``, ``e-mail``, ``3.14`` and host names such as ``www.example.com``), an e-mail address,
an amount of money (``$500``), or a run of exclamation marks (``!!!``); in Chinese, Japanese
and Korean script, each two neighbouring characters. A word of three digits or more also
counts its shape (``08452810075`` → ``###########``). A body word of one letter or digit is
dropped (``min_length``). Tokens from a document's header fields get
the field's name as a prefix (``subject:free``), as SpamBayes does: "free" in a Subject line is
stronger evidence than in a body.
"""

from __future__ import annotations

from itertools import filterfalse

from ..decoding import POSSESSIVE, decode
from ..errors import TextnbError

TYPE_CHECKING = False  # typing costs a mail filter's start-up 4 ms
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Sequence

try:  # the same tokens from C (textnb/_tokens.c), where it was built
    from .. import _tokens as _fast
except ImportError:  # no C compiler at install time: the regular expression below
    _fast = None

# Longer tokens are dropped: base64 and uuencoded lines are 60–76 characters of junk that
# would each become a new term, while the longest words of English text and most host names
# are under 40 characters.
MAX_TOKEN_LENGTH = 40

# Shorter words of a body are dropped. A lone letter or digit is no word of its own: spam that
# spells words out ("t h e h o l l a n d e r") and ham that quotes examples ("the letter e")
# made them outweigh real words, and dropping them cut 1 − AUC on a mailing-list archive from
# 0.725 to 0.278 % (docs/design/tokens.md). scikit-learn's default pattern needs two characters
# too. A CJK character is a word and stays; so do a header field's words, whose prefix makes
# a token of its own ("x-priority:1").
MIN_TOKEN_LENGTH = 2

# One pattern without groups, so re.findall returns the tokens themselves (a Python call per
# match costs more than the matching), with the common case, a word, tried first: this runs
# twice as fast on 20 Newsgroups as trying URLs, addresses and numbers first. Dots inside a
# word keep host names (www.example.com), addresses (john.smith@example.com) and numbers
# (3.14) whole; a URL gives its scheme, host and path words ("http", "www.example.com", …).
# Every token starts with one character class, then a look-behind picks the branch: the regex
# engine then skips the characters no token starts with in C, where with a branch at the start
# it tried each branch at each of them (a sixth less time on 20 Newsgroups and SpamAssassin
# text, the same tokens). The "!" branch takes a run that no "!" precedes, at most three.
# The repeat is possessive where Python has it (3.11): nothing after it can take back what it
# matched, so the tokens are the same, but the regex engine keeps no backtracking state per
# repetition, which made a megabyte-long chain ("a'a'a'…") take 50 times as long as 100 kB.
_TOKEN = (
    r"""[\w$€£!]
    (?: (?<=\w)\w*""" + POSSESSIVE + r"""(?:[.'’+-]\w+|,\d+)*""" + POSSESSIVE + r"""(?:@\w+(?:[.-]\w+)+)?
                                                     # words, hosts, numbers, e-mail addresses
      | (?<=[$€£])\d[\d,]*(?:\.\d+)?                 # money: $500, $1,000.00
      | (?<=!)(?<!!!)!{0,2}                          # !, !!, !!! (longer runs say no more)
    )""")

# Chinese and Japanese are written without spaces (Korean joins its particles to its words), so
# a run of their characters is a phrase or a sentence that seldom recurs, and over 40
# characters it was dropped: each two neighbouring characters are a token instead, a lone one
# is one itself (character bigrams, as Lucene's CJK analyzer reads these scripts). Kana, CJK
# ideographs and Hangul syllables; a run inside a word splits it ("abc中文" → "abc", "中文").
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"


_compiled: tuple | None = None  # _patterns(), once compiled


def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """:data:`_TOKEN`, a CJK character and a run of them, compiled when first used: with the
    C tokenizer they are only its reference, and compiling them (Unicode classes) took 5 ms of
    every process's start, a procmail delivery's too; the regular expression engine is
    imported here too (with enum, a share of a delivery's start: docs/design/performance.md)."""
    global _compiled
    if _compiled is None:
        import re
        _compiled = (re.compile(_TOKEN, re.VERBOSE), re.compile(f"[{_CJK}]"),
                     re.compile(f"([{_CJK}]+)"))
    return _compiled


def _matched(text: str) -> list[str]:
    """The tokens of ``text`` before stop words and the length cap: :data:`_TOKEN`'s matches,
    each that holds CJK characters split into their bigrams and the tokens of its other parts."""
    token, cjk_char, cjk_run = _patterns()
    tokens = token.findall(text)
    if text.isascii() or not cjk_char.search(text):
        return tokens
    split: list[str] = []
    for word in tokens:
        if not cjk_char.search(word):
            split.append(word)
            continue
        for k, part in enumerate(cjk_run.split(word)):
            if k % 2 == 0:  # between runs (re.split's odd parts are the runs)
                split.extend(token.findall(part))
            else:
                split.extend(map(str.__add__, part, part[1:]) if len(part) > 1 else [part])
    return split


# A number says little once it is rare (a phone number, a price, a code), its shape much: spam
# asks to call 08452810075 or to text 87121 and quotes £1000, ham seldom does. So a word of
# three digits or more counts its shape too, each digit "#" ("###########", "£####"; "#" is
# never in a token, so a shape is no word), once a message. On the SMS Spam Collection (70/30
# splits of seeds 0 and 1, python -m bench.spam) spam not caught at the learned cutoffs 15.2 /
# 17.0 → 12.1 / 14.7 %; SpamAssassin's mail (seeds 0-7) 6.45 → 6.33 % on average; 20 Newsgroups
# 0.8659 → 0.8654.
_DIGIT = r"\d"
_NUMBER = r"\d\D*\d\D*\d"  # three digits; both compiled where used, as _patterns are


def shapes(words: Sequence[str]) -> list[str]:
    """The distinct shapes, in their first order, of the words of three digits or more (decimal
    digits, as ``\\d``): each digit replaced by "#". Each counts once: a table of numbers would
    otherwise be one term many times over, and outweigh every word of its message."""
    if _fast is not None:
        return _fast.shapes(words)
    return _python_shapes(words)


def _python_shapes(words: Sequence[str]) -> list[str]:
    """:func:`shapes` by regular expressions, the definition of the C code."""
    import re
    digit, number = re.compile(_DIGIT), re.compile(_NUMBER)
    return list(dict.fromkeys(digit.sub("#", word) for word in words if number.search(word)))


def with_subject(text: str | bytes, fields: Sequence[tuple[str, str]]) -> str | bytes:
    """The body as a reader reads it: the Subject line, then the text. Its words are a topic's
    words (as ``subject:word`` they are also evidence of their own), which ranks news and mail
    better (docs/design/tokens.md; ``python -m bench.ranking``)."""
    subject = next((value for name, value in fields if name == "subject"), "")
    if not subject:
        return text
    return f"{subject}\n{decode(bytes(text)) if isinstance(text, (bytes, bytearray)) else text}"


def check_stemmer() -> None:
    """TextnbError unless NLTK, which stems, is installed: it is the ``textnb[stem]`` extra."""
    import importlib.util
    if importlib.util.find_spec("nltk") is None:
        raise TextnbError("stemming needs NLTK, which is not installed: "
                          "pip install 'textnb[stem]'")


def _is_word(token: str) -> bool:
    """Whether a token is a word that :attr:`Tokenizer.min_length` applies to: it starts with a
    letter, digit or "_" (not "$" or "!") that is not a CJK character."""
    first = token[0]
    return (first.isalnum() or first == "_") and not _patterns()[1].match(first)


class Tokenizer:
    """Callable turning a str (or bytes, decoded by :func:`textnb.decoding.decode`) into tokens.

    Parameters
    ----------
    lowercase : bool — fold case (``casefold``) before matching.
    stop_words : collection of str — tokens to drop (compared after case folding).
    stemmer : None, ``"porter"`` or ``"snowball"`` — NLTK's English stemmers, no data needed.
    ngram_range : (min_n, max_n) — word n-grams of body tokens, joined by a space.
    max_length : int — tokens longer than this are dropped.
    min_length : int — body words (tokens that start with a letter, digit or "_") shorter than
        this are dropped, but a CJK character or pair; 1 keeps them all.

    >>> Tokenizer(stop_words={"the"})("Get the FREE money: $500!!! http://win.example.com")
    ['get', 'free', 'money', '$500', '!!!', 'http', 'win.example.com', '$###']
    """

    def __init__(self, *, lowercase: bool = True, stop_words: Iterable[str] = (),
                 stemmer: str | None = None, ngram_range: Sequence[int] = (1, 1),
                 max_length: int = MAX_TOKEN_LENGTH,
                 min_length: int = MIN_TOKEN_LENGTH) -> None:
        if stemmer not in (None, "porter", "snowball"):
            raise ValueError(f"stemmer must be None, 'porter' or 'snowball', not {stemmer!r}")
        low, high = ngram_range
        if not 1 <= low <= high:
            raise ValueError(f"ngram_range must be (min_n, max_n) with 1 <= min_n <= max_n, "
                             f"got {tuple(ngram_range)}")
        if max_length < 1:
            raise ValueError(f"max_length must be a positive number of characters, got {max_length}")
        if not 1 <= min_length <= max_length:
            raise ValueError(f"min_length must be 1 to max_length ({max_length}), got {min_length}")
        self.lowercase = lowercase
        self.stop_words = frozenset(stop_words)
        self.stemmer = stemmer
        self.ngram_range = (int(low), int(high))
        self.max_length = max_length
        self.min_length = min_length
        self._stem_cache: dict[str, str] = {}
        self._stem = None

    def __call__(self, text: str | bytes) -> list[str]:
        """Tokens of ``text`` with stop words removed, stemmed, then n-grams and the words'
        :func:`shapes` appended."""
        words = self.words(text)
        return self._ngrams(words) + shapes(words)

    def words(self, text: str | bytes, min_length: int | None = None) -> list[str]:
        """Unigram tokens of ``text``: matched, case-folded, capped, stop words removed, stemmed;
        words shorter than ``min_length`` (default: the tokenizer's) dropped."""
        if isinstance(text, (bytes, bytearray)):
            text = decode(bytes(text))
        if self.lowercase:
            text = text.casefold()
        shortest = self.min_length if min_length is None else min_length
        if _fast is not None:
            tokens = _fast.tokens(text, self.stop_words, shortest, self.max_length)
            return self._stemmed(tokens) if self.stemmer else tokens
        tokens = _matched(text)
        if self.stop_words:
            tokens = list(filterfalse(self.stop_words.__contains__, tokens))
        # Checked in C first: most documents have no token over the limit.
        if tokens and max(map(len, tokens)) > self.max_length:
            tokens = [t for t in tokens if len(t) <= self.max_length]
        if shortest > 1:
            tokens = [t for t in tokens if len(t) >= shortest or not _is_word(t)]
        if self.stemmer:
            tokens = self._stemmed(tokens)
        return tokens

    def document(self, text: str | bytes, fields: Iterable[tuple[str, str]] = ()) -> list[str]:
        """Tokens of a body (after the Subject, :func:`with_subject`) plus each header field's
        unigrams prefixed ``name:``."""
        words, rest = self.document_words(text, fields)
        return self._ngrams(words) + rest

    def document_words(self, text: str | bytes, fields: Iterable[tuple[str, str]] = ()
                       ) -> tuple[list[str], list[str]]:
        """:meth:`document`'s tokens before n-grams: (the body's words, the rest — their
        :func:`shapes`, then the fields' tokens); the n-grams are made of the words alone."""
        fields = tuple(fields)
        words = self.words(with_subject(text, fields))
        tokens = shapes(words)
        if self.stemmer:
            for name, value in fields:
                tokens.extend(map(f"{name}:".__add__, self.words(value, 1)))
            return words, tokens
        if _fast is not None:
            _fast.field_tokens(tokens, fields, self.stop_words, self.lowercase, self.max_length)
            return words, tokens
        # words() inlined: a message has some 25 fields of a few tokens each, so the calls
        # and checks per field cost as much as matching them (a third less time on SpamAssassin).
        stop, cap = self.stop_words, self.max_length
        for name, value in fields:
            found = _matched(value.casefold() if self.lowercase else value)
            if not found:
                continue
            if stop:
                found = list(filterfalse(stop.__contains__, found))
            if found and max(map(len, found)) > cap:
                found = [t for t in found if len(t) <= cap]
            tokens.extend(map(f"{name}:".__add__, found))
        return words, tokens

    def _ngrams(self, words: list[str]) -> list[str]:
        low, high = self.ngram_range
        if high == 1:
            return words
        grams = list(words) if low == 1 else []
        for n in range(max(low, 2), high + 1):
            # The n words from each position, zipped: 2.5 times as fast as slicing at each.
            grams.extend(map(" ".join, zip(*(words[k:] for k in range(n)))))
        return grams

    def _stemmed(self, tokens: list[str]) -> list[str]:
        if self._stem is None:
            # Imported here: NLTK takes over a second to import, and only stemming needs it.
            check_stemmer()
            from nltk.stem import PorterStemmer, SnowballStemmer
            self._stem = (PorterStemmer() if self.stemmer == "porter"
                          else SnowballStemmer("english")).stem
        cache, stem = self._stem_cache, self._stem
        out = []
        for token in tokens:
            stemmed = cache.get(token)
            if stemmed is None:
                stemmed = cache[token] = stem(token) if token.isalpha() else token
            out.append(stemmed)
        return out

    def __getstate__(self) -> dict:
        # The tokenizer is pickled to worker processes: the stemmer is rebuilt there.
        return {**self.__dict__, "_stem": None}

