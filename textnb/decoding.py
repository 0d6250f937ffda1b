"""bytes → str, never raising: UTF-8 first, then the declared charset, then Windows-1252."""

from __future__ import annotations

import codecs
import sys

# Windows-1252 is the fallback because it is what mislabelled "ISO-8859-1" mail and pre-Unicode
# Usenet posts really are (the WHATWG encoding standard maps the latin-1 label to it for this
# reason). Its five undefined bytes (0x81 0x8D 0x8F 0x90 0x9D) are decoded as latin-1 so that
# every byte sequence decodes to something.
FALLBACK = "cp1252"

# Appended to a regular expression's repeat, makes it possessive (it never gives back what it
# matched) where Python has them (3.11). Used where nothing after the repeat could take back
# its characters, so matches are the same; the regex engine then keeps no backtracking state
# per repetition, which made megabyte-long matches up to 50 times as slow as 100 kB ones
# (tokens.py, markup.py). Here because both stages read text from this one.
POSSESSIVE = "+" if sys.version_info >= (3, 11) else ""


def _latin1_fill(error: UnicodeDecodeError) -> tuple[str, int]:
    bad = error.object[error.start:error.end]
    return bad.decode("latin-1"), error.end


codecs.register_error("textnb-latin1", _latin1_fill)


def decode(raw: bytes, charset: str | None = None) -> str:
    """Decode bytes as UTF-8, else as ``charset`` if Python knows it, else as Windows-1252.

    UTF-8 goes first because a valid UTF-8 byte string of non-ASCII text is almost never
    anything else, while a wrong declared charset is common in real mail.
    """
    # 7-bit encodings (ISO-2022-JP mail, UTF-7) are valid ASCII, so UTF-8 would "succeed" and
    # leave their escape sequences as text: those take the declared charset first.
    if charset and charset.strip('" ').lower().startswith(("iso-2022", "utf-7", "hz")):
        try:
            return raw.decode(charset.strip('" ').lower())
        except (LookupError, UnicodeDecodeError, ValueError):
            pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if charset:
        try:
            return raw.decode(charset.strip().strip('"').lower())
        except (LookupError, UnicodeDecodeError, ValueError):
            pass
    return raw.decode(FALLBACK, errors="textnb-latin1")
