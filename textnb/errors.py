"""The few exceptions textnb raises for bad files; bad arguments raise ValueError."""


class TextnbError(Exception):
    """Something the user can fix: a bad input file, a bad model file."""


class DocumentError(TextnbError):
    """A document could not be read (missing, a directory of nothing, unreadable)."""


class ModelFileError(TextnbError):
    """A model file is missing, truncated, corrupt, foreign, too large or from a newer textnb."""


class TimedOut(TextnbError):
    """A command's wall-clock budget (``--timeout``) ran out."""
