"""textnb imap: filter and train an IMAP mailbox from the outside (``textnb imap``; needs
``pip install 'textnb[imap]'``). The command line is textnb.cli.imap; the work, here:

* :mod:`.account` — the account and its settings: options, the config file, the password;
* :mod:`.connection` — a verified TLS connection, logged in; the server's errors as one line;
* :mod:`.mailbox` — IMAP operations: new UIDs, fetching a batch, moving without loss;
* :mod:`.state` — what is remembered between runs, in SQLite beside the model;
* :mod:`.attempts` — fetching so that no message can stop the others for good;
* :mod:`.moves` — moves written before they are made, and finished after a crash;
* :mod:`.verdicts` — the model: each message's status, learning one message;
* :mod:`.worker` — classifying a batch in a child process while the next is fetched;
* :mod:`.learning` — learning from the user's moves into and out of Junk and Unsure;
* :mod:`.filtering` — one pass of ``textnb imap filter``; :mod:`.watch` — ``--watch``;
* :mod:`.training` — ``textnb imap train``'s folders as files for ``textnb train``;
* :mod:`.dovecot` — a throwaway Dovecot on loopback, for the tests and the benchmark.
"""
