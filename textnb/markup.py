"""HTML → its text, a line per block, and the tag names and link hosts it holds.

Used by :mod:`textnb.documents` for HTML parts (and HTML sent as plain text); a module of its
own so that reading plain mail never imports the HTML parser.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

# Tags after which HTML text starts a new line; other tags (b, font, span, a) join their text,
# so "V<b>i</b>agra" is one word, as the reader sees it.
_BLOCK_TAGS = frozenset(
    "address article aside blockquote br caption dd div dl dt footer form h1 h2 h3 h4 h5 h6 "
    "header hr li main nav ol p pre section table tbody td tfoot th thead title tr ul".split()
)
_HIDDEN_TAGS = frozenset({"script", "style"})


def html_text(html: str, tags: dict[str, None], hosts: dict[str, None]) -> str:
    """The text of ``html``; its tag names and link hosts are added to the ordered sets
    ``tags`` and ``hosts`` (dicts with None values)."""
    return _HTMLText(tags, hosts).text(html)


class _HTMLText(HTMLParser):
    """HTML → text, collecting the tag names and link hosts seen (dicts as ordered sets)."""

    def __init__(self, tags: dict[str, None], hosts: dict[str, None]) -> None:
        super().__init__(convert_charrefs=True)
        self.tags = tags
        self.hosts = hosts
        self._lines: list[str] = []
        self._line: list[str] = []
        self._hidden = False

    def text(self, html: str) -> str:
        """The text of one HTML document, a line per block, whitespace collapsed."""
        self._lines, self._line, self._hidden = [], [], False
        self.reset()
        self.feed(html)
        self.close()
        self._break()
        return "\n".join(self._lines)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = None
        if tag in _HIDDEN_TAGS:
            self._hidden = True
        elif tag in _BLOCK_TAGS:
            self._break()
        for name, value in attrs:
            if name in ("href", "src") and value:
                host = _host(value)
                if host:
                    self.hosts[host] = None

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN_TAGS:
            self._hidden = False
        elif tag in _BLOCK_TAGS:
            self._break()

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self._line.append(data)

    def _break(self) -> None:
        line = " ".join("".join(self._line).split())
        if line:
            self._lines.append(line)
        self._line = []

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        # html.parser raises AssertionError on "<![foo" (anything but CDATA and MS Word's
        # "<![if ...]>"); a browser skips such a section up to ">", and so do we.
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            return self.parse_bogus_comment(i, report)


def _host(url: str) -> str:
    try:
        return urlsplit(url.strip()).hostname or ""
    except ValueError:  # a malformed URL such as "http://[::1"
        return ""
