"""HTML → its text, a line per block, and the tag names and link hosts it holds.

Used by :mod:`textnb.documents.message` for HTML parts (and HTML sent as plain text). One regular
expression finds the markup and the text between is kept, as SpamBayes does: faster than the
standard library's HTMLParser, and never an exception on the broken HTML spam is made of
(docs/design/performance.md). What a browser would not show is dropped: comments,
declarations, and the contents of script and style elements. The patterns below are the
definition; textnb/_markup.c scans the same way in C where it was built.
"""

from __future__ import annotations

from ..decoding import POSSESSIVE

try:  # the same scan in C (textnb/_markup.c), where it was built
    from .. import _markup as _fast
except ImportError:  # pragma: no cover - no C compiler where textnb was installed
    _fast = None

# Tags after which HTML text starts a new line; other tags (b, font, span, a) join their text,
# so "V<b>i</b>agra" is one word, as the reader sees it.
_BLOCK_TAGS = frozenset(
    "address article aside blockquote br caption dd div dl dt footer form h1 h2 h3 h4 h5 h6 "
    "header hr li main nav ol p pre section table tbody td tfoot th thead title tr ul".split()
)
_HIDDEN_TAGS = frozenset({"script", "style"})

# Each branch either consumes what it scans or fails at once, so a search from a position is
# linear in what it passes: a comment's end is found in html_text, because "<!--.*?-->"
# rescanned the rest of the text from every unclosed "<!--" (an hour on 1 MB, issue #10).
_MARKUP = (r"""
      <!--                                                # a comment: see html_text
    | <(?P<end>/?)(?P<name>[a-zA-Z][^\s/>]*)              # a start or end tag:
      (?P<attrs>[^>=]*(?:=\s*(?:"[^"]*"|'[^']*'|[^\s>]*)[^>=]*)*""" + POSSESSIVE + r""")>?
                                                          # attributes; values may be quoted
    | <[!?/][^>]*>?                                       # <!DOCTYPE>, <![if]>, <?xml?>, </ >
    """)
_COMMENT_END = r"--!?>"
_LINK = r"""(?:^|[\s"'/])(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))"""
# A link of the plain kind nearly all are, scheme://host then a path, query, fragment or the
# end, whose host urlsplit would find as it stands (lowered): taken without urlsplit, which took
# three quarters of the time left to html_text with its scan in C (SpamAssassin's 26,659 links).
_PLAIN_URL = r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9.-]*)(?:[/?#]|\Z)"
_HIDDEN_END = {name: rf"</{name}\s*>" for name in _HIDDEN_TAGS}
# The patterns are compiled where they are used (re.compile's cache holds them): the scan's
# (_MARKUP, _COMMENT_END, _HIDDEN_END) where it runs without textnb/_markup.c, the links' for a
# link textnb/_markup.c leaves to _links; the regular expression engine is imported there too
# (with enum, a share of a mail filter's start), and html.entities and urllib.parse where a text
# needs them: compiled and imported at every start, they cost a mail filter 2 ms (python -X
# importtime).


# The references nearly all HTML mail holds, as html.unescape decodes them: a text whose every "&"
# starts one of them is decoded without html.entities' 2,231 names (a mail filter's start: 2 ms).
_COMMON_REFERENCES = {"nbsp;": "\xa0", "amp;": "&", "lt;": "<", "gt;": ">", "quot;": '"'}


def unescape(text: str) -> str:
    """html.unescape(text): character references decoded."""
    pieces = text.split("&")
    out = [pieces[0]]
    for piece in pieces[1:]:
        name = piece[:piece.find(";") + 1]
        if name not in _COMMON_REFERENCES:
            from html import unescape
            return unescape(text)
        out += (_COMMON_REFERENCES[name], piece[len(name):])
    return "".join(out)


def html_text(html: str, tags: dict[str, None], hosts: dict[str, None]) -> str:
    """The text of ``html``, a line per block, whitespace collapsed, character references
    decoded; its tag names and link hosts are added to the ordered sets ``tags`` and ``hosts``
    (dicts with None values)."""
    if _fast is not None:  # plain links' hosts too, the others by _links
        lines = _fast.html_lines(html, _BLOCK_TAGS, tags, hosts, _links)
        return "\n".join([unescape(text) if "&" in text else text for text in lines])
    lines: list[str] = []
    line: list[str] = []
    pos = 0
    comments_close = True  # until a comment is found without "-->" after it
    import re
    markup = re.compile(_MARKUP, re.DOTALL | re.VERBOSE)
    while (match := markup.search(html, pos)) is not None:
        if match.start() > pos:
            line.append(html[pos:match.start()])
        pos = match.end()
        name = match["name"]
        if name is None:
            if match[0] == "<!--":
                # To its "-->" (or "--!>"); an unclosed comment ends at the next ">" (or with
                # the text). Once one has no "-->" after it, no later one has.
                close = re.compile(_COMMENT_END).search(html, pos) if comments_close else None
                if close is not None:
                    pos = close.end()
                else:
                    comments_close = False
                    end = html.find(">", pos)
                    pos = end + 1 if end >= 0 else len(html)
            continue
        name = name.lower()
        if name in _BLOCK_TAGS and line:
            _break(line, lines)
        if match["end"]:
            continue
        tags[name] = None
        attrs = match["attrs"]
        # Most tags have attributes (width=, color=), few a link: checked before the pattern.
        if "=" in attrs and ("href" in (lower := attrs.lower()) or "src" in lower):
            _links(attrs, hosts)
        if name in _HIDDEN_TAGS:
            close = re.compile(_HIDDEN_END[name], re.IGNORECASE).search(html, pos)
            pos = close.end() if close else len(html)
    line.append(html[pos:])
    _break(line, lines)
    return "\n".join(lines)


def _links(attrs: str, hosts: dict[str, None]) -> None:
    """Add the hosts of the links (href, src) in a tag's attributes to ``hosts``."""
    import re
    for quoted, single, bare in re.findall(_LINK, attrs, re.IGNORECASE):
        host = _host(unescape(quoted or single or bare))
        if host:
            hosts[host] = None


def _break(line: list[str], lines: list[str]) -> None:
    """End the current line: its text joins lines, whitespace collapsed, if there is any."""
    text = " ".join("".join(line).split())
    if text:
        lines.append(unescape(text) if "&" in text else text)
    line.clear()


def _host(url: str) -> str:
    """The host of a link, as ``urlsplit(url.strip()).hostname`` finds it ("" for none)."""
    import re
    plain = re.match(_PLAIN_URL, url.strip())
    if plain:
        return plain[1].lower()
    if "//" not in url.replace("\t", "").replace("\r", "").replace("\n", ""):
        return ""  # no netloc (mailto:, a path, an anchor): urlsplit drops these characters
    from urllib.parse import urlsplit
    try:
        return urlsplit(url.strip()).hostname or ""
    except ValueError:  # a malformed URL such as "http://[::1"
        return ""
