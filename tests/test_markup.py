"""HTML → text: textnb/_markup.c, the scan in C, against textnb.documents.html's patterns (the
definition): the same lines, tags and link hosts on any HTML and on real mail."""

from __future__ import annotations

import sys

import pytest

import textnb.documents.html
from textnb.documents.message import read_bytes
from textnb.documents.html import html_text

from conftest import NO_C, spamassassin_sample

C_MARKUP = textnb.documents.html._fast
pytestmark = pytest.mark.skipif(C_MARKUP is None, reason=NO_C)


def _both(monkeypatch, html: str) -> list[tuple[str, list[str], list[str]]]:
    """html_text's text, tags and hosts with the C scan, then with the Python one."""
    results = []
    for fast in (C_MARKUP, None):
        monkeypatch.setattr(textnb.documents.html, "_fast", fast)
        tags: dict[str, None] = {}
        hosts: dict[str, None] = {}
        results.append((html_text(html, tags, hosts), list(tags), list(hosts)))
    return results


# Where the two could part: each branch's punctuation, the case-insensitive script and style
# ends (ſ is an s to re.IGNORECASE, İ and ı are an i), tag names in any case or script, block
# and inline tags, links and the parts of a URL (scheme, "://", host, path, query, fragment),
# character references, and whitespace str.split() knows (\x1c, NBSP, U+2028) beside the
# ASCII kinds.
_PIECES = ["<", ">", "/", "!", "-", "--", "?", "=", '"', "'", " ", "\n", "\t", "a", "B", "p",
           "br", "Div", "script", "ScRıpt", "ſtyle", "STYLE", "İ", "K", "href", "SRC", "&amp;",
           "&#58;", "x", "\x1c", "\xa0", "\u2028", "é", "http://h.example.com/x", "\U0001F600",
           "<a href=", "src = ", "://", "hTTp", "h.Ex", "#", "1+.", ":", "[::1]", "&"]


def test_the_scan_in_c_reads_any_html_as_the_patterns_do(monkeypatch):
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=3000, deadline=None)
    @hypothesis.given(st.one_of(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
                                st.text(max_size=60)))
    def check(html):
        c, python = _both(monkeypatch, html)
        assert c == python

    check()


def test_the_scan_in_c_reads_real_mail_as_the_patterns_do(monkeypatch):
    """Every HTML part of the shared archive's first 300 spam and ham (else the worked example's
    HTML), whole and cut at 1,000 characters: the same text, tags and hosts."""
    parts: list[str] = []

    def record(html, tags, hosts):
        parts.append(html)
        return ""

    sample = spamassassin_sample(300)
    monkeypatch.setattr(textnb.documents.html, "html_text", record)
    for raw in (sample["spam"] + sample["ham"]) if sample else []:
        read_bytes(raw)
    monkeypatch.undo()
    parts = parts or ["<p>a <a href='http://x.example/'>b</a><!-- c --></p>"]
    assert len(parts) > (40 if sample else 0)
    for html in parts:
        for text in (html, html[:1000]):
            c, python = _both(monkeypatch, text)
            assert c == python


def test_worked_edge_cases_with_the_scan_in_c(monkeypatch):
    html = ("<HTML><body>V<b>i</b>agra <a href=\"http://a.example/x?q=1>2\" title='it's'>now</a>"
            "<!-- hidden --> <p>caf&eacute; &amp; more<br/>next "
            "<script type=x>var s = '<p>no</p>';</ScRıPT >shown <img src=http&#58;//img.example/i>"
            "<a href='HTTP://Upper.Example'>u</a> <!--unclosed>after</body>")
    c, python = _both(monkeypatch, html)
    assert c == python == ("Viagra now\ncafé & more\nnext shown u after",
                           ["html", "body", "b", "a", "p", "br", "script", "img"],
                           ["a.example", "img.example", "upper.example"])
    # "--!>" ends a comment; once one is unclosed, later ones end at ">"; "</ " and "<?" are
    # markup, "< " and "<3" text; a tag's name ends at "/".
    html = "a<!-- b --!>c<? d ?>e</ f>g < h <3 i<br/>j<!-- k > l <!-- m > n"
    c, python = _both(monkeypatch, html)
    assert c == python == ("aceg < h <3 i\nj l n", ["br"], [])


def test_links_hosts_with_the_scan_in_c(monkeypatch):
    """Links read in C where they are plain, by Python where not: the same hosts, in order."""
    links = ["http://a.example#top", "http://b.example?q", "http://c.example/p", "HTTP://D.Example",
             " http://e.example ", "http://f.example&amp;x", "http://g.example/&amp;", "&#32;http://h.x",
             "http://[::1]/", "mailto:i@j.example", "//k.example/x", "ftp+x.1://l.example", "http://",
             "http://m.example:80/", ""]
    for link in links:
        for html in (f'<a href="{link}">', f"<a href='{link}'>", f"<img src={link.strip()} >",
                     f'<a x="1"href="{link}">', f'<a href="http://n.example/"src="{link}">'):
            c, python = _both(monkeypatch, html)
            assert c == python, html
    many = "<p " + " ".join(f"href=http://h{i}.example/" for i in range(20)) + ">"
    c, python = _both(monkeypatch, many + "<a href='http://é.example/'>")
    assert c == python and len(c[2]) == 21


@pytest.mark.skipif(C_MARKUP is None, reason="textnb/_markup.c is not built")
def test_links_without_a_host_are_read_in_c_too():
    """mailto:, a path, an anchor (no "//", no "&"): no host, found in C without the Python
    code (whose patterns import the regular expression engine); others still go to it."""
    from textnb.documents.html import _BLOCK_TAGS

    def python(attrs, hosts):
        called.append(attrs)

    called = []
    hosts = {}
    html = ("<a href='mailto:a@b.example'>m</a><a href=\"#top\"><img src=/i/x.gif>"
            "<a href='http://c.example/'><a href='p/ /q'>")
    C_MARKUP.html_lines(html, _BLOCK_TAGS, {}, hosts, python)
    assert (called, list(hosts)) == ([], ["c.example"])
    for link in ("p/\t/q.example", "http://h.example:80/", "&#47;/h.example", "//h.example"):
        called.clear()
        C_MARKUP.html_lines(f"<a href='{link}'>", _BLOCK_TAGS, {}, {}, python)
        assert called == [f" href='{link}'"], link


def test_a_plain_links_host_is_the_one_urlsplit_finds():
    """_host's shortcut for scheme://host links against urlsplit, on links of every shape
    (ports, users, IPv6 brackets, controls and whitespace where urlsplit drops them)."""
    from urllib.parse import urlsplit

    from textnb.documents.html import _PLAIN_URL, _host
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    def expected(url):
        try:
            return urlsplit(url.strip()).hostname or ""
        except ValueError:
            return ""

    pieces = ["http", "HTTPS", "mailto", ":", "//", "/", "?", "#", "@", "[", "]", "::1", "a",
              "B.c", "-", ".", "%", " ", "\t", "\n", "\r", "\x00", "\x1c", "é", "ｅ", "80", "+"]

    @hypothesis.settings(max_examples=3000, deadline=None)
    @hypothesis.given(st.lists(st.sampled_from(pieces), max_size=10).map("".join))
    def check(url):
        assert _host(url) == expected(url)

    check()
    for url, host in [("http://Www.Example.COM/x?y#z", "www.example.com"),
                      (" https://a-b.example ", "a-b.example"), ("http:///p", ""),
                      ("http://h.example\n/", "h.example"), ("http://u@h.example:80/", "h.example")]:
        assert _host(url) == expected(url) == host
    import re
    assert re.match(_PLAIN_URL, "http://Www.Example.COM/x")
    assert not re.match(_PLAIN_URL, "http://h:80/")


def test_a_link_without_a_host_is_read_without_urllib(monkeypatch):
    """mailto:, a path or an anchor: no host, found without importing urllib.parse (2 ms of a
    mail filter's start)."""
    from textnb.documents.html import _host
    monkeypatch.setitem(sys.modules, "urllib.parse", None)  # importing it raises ImportError
    assert [_host(u) for u in ("mailto:a@b.example", "/x/y", "#top", " mailto:x\t")] == [""] * 4
    with pytest.raises(ImportError):
        _host("mailto:/\t/h.example")  # a netloc after all (urlsplit drops the tab)


def test_unescape_is_htmls_with_or_without_its_table():
    """textnb.documents.html.unescape decodes the common references itself and leaves any other
    text to html.unescape: the same str either way, on references next to each other, cut
    short, in other cases, and a reference's text that names another."""
    import html
    import itertools
    from textnb.documents.html import unescape
    parts = ["&", "nbsp;", "amp;", "lt", ";", "gt;", "quot;", "#39;", "x", " ", "AMP;", "\n"]
    for n in range(5):
        for text in map("".join, itertools.product(parts, repeat=n)):
            assert unescape(text) == html.unescape(text), text
    assert unescape("a&nbsp;b &amp;lt; &quot;c&gt;") == 'a\xa0b &lt; "c>'
    import subprocess
    import sys
    code = ("import sys; from textnb.documents.html import unescape; "
            "print(unescape('a&nbsp;b&amp;') == 'a\\xa0b&', 'html.entities' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split() == ["True", "False"]
