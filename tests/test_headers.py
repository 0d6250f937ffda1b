"""The envelope fields: relays, domains, Message-ID shapes, encodings, zones."""

from __future__ import annotations

import pytest

import textnb.documents.envelope
import textnb.text.tokens
from textnb.documents.envelope import MAX_FIELDS, _python_received, envelope_fields

from conftest import NO_C


@pytest.fixture(autouse=True, params=["C", "python"])
def implementation(request, monkeypatch):
    """Every test here twice: the envelope read in C (where built), and in Python."""
    if request.param == "C" and textnb.text.tokens._fast is None:
        pytest.skip(NO_C)
    if request.param == "python":
        monkeypatch.setattr(textnb.documents.envelope, "_fast", None)
        monkeypatch.setattr(textnb.documents.envelope, "_received", _python_received)
    return request.param


def test_the_envelope_of_a_relayed_message():
    headers = [
        ("received", "from mail.spammer.example.net (unknown [203.0.113.7])\n\tby mx.example.org"),
        ("return-path", "<bounce-42@lists.example.net>"),
        ("from", "Someone <someone@example.com>"),          # its words are tokens already
        ("message-id", "<20021010.123456.abc@mail.example.net>"),
        ("content-transfer-encoding", "Quoted-Printable"),
        ("date", "Thu, 10 Oct 2002 12:00:00 -0700"),
        ("x-priority", "3 (Normal)"),
    ]
    assert envelope_fields(headers) == [
        ("ip", "203.0 203.0.113 203.0.113.7"),
        ("received", "mail.spammer.example.net mx.example.org example.net example.org"),
        ("return-path-domain", "lists.example.net example.net"),
        ("return-path-tld", "net"),
        ("message-id-shape", "9.9.a"),
        ("message-id-domain", "mail.example.net"),
        ("content-transfer-encoding", "quoted-printable"),
        ("date-zone", "-0700"),
        ("x-priority", "3 (normal)"),
    ]


def test_a_message_of_many_relays_is_read_only_so_far():
    headers = [("received", f"from relay{i}.example.com") for i in range(MAX_FIELDS + 1000)]
    fields = envelope_fields(headers)
    assert len(fields) == MAX_FIELDS and fields[0] == ("received", "relay0.example.com example.com")


def test_nothing_to_read_gives_nothing():
    assert envelope_fields([("received", "from localhost"), ("message-id", "")]) == []
    assert envelope_fields([("date", "whenever")]) == [("date-zone", "none")]
    assert envelope_fields([("date", "Thu, 10 Oct 2002 12:00:00 GMT")]) == [("date-zone", "GMT")]


def test_ip_addresses_start_after_no_digit_or_dot():
    value = "from a1.2.3.4 (x.9.8.7.6 [10.0.0.1]) by 1.2.3.4.5 via .7.7.7.7,192.168.1.20;"
    ips = dict(envelope_fields([("received", value)]))["ip"].split()
    # a1.2.3.4 starts after a letter, so is an address; .7.7.7.7 and the five-part 1.2.3.4.5
    # are none, and in x.9.8.7.6 no four parts start after a blank.
    assert ips == ["1.2", "1.2.3", "1.2.3.4", "10.0", "10.0.0", "10.0.0.1",
                   "192.168", "192.168.1", "192.168.1.20"]
