"""The daemon (spamd's protocol, as spamc speaks it) and its client."""
