"""The envelope fields: relays, domains, Message-ID shapes, encodings, zones."""

from __future__ import annotations

from textnb.headers import MAX_FIELDS, envelope_fields


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
