"""Documents: paths → bytes → Document (files, trees, mbox, Maildir; RFC 822/MIME, news; HTML's text)."""
