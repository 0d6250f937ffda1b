"""The mail filter: one message's score without numpy, and its X-TextNB-* headers."""
