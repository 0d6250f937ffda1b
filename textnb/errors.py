"""The exceptions textnb raises for what a user can fix, each with its exit code, and the one line
that says why a command failed (:func:`describe`); bad arguments to a function raise ValueError."""


class TextnbError(Exception):
    """Something the user can fix: a bad input file, a bad model file."""

    exit_code = 1  # as a command's exit status (the CLI's; ``classify --exit-code`` uses 3)


class UsageError(TextnbError):
    """Arguments that do not fit together, as click's UsageError (exit status 2)."""

    exit_code = 2


class DocumentError(TextnbError):
    """A document could not be read (missing, a directory of nothing, unreadable)."""


class ModelFileError(TextnbError):
    """A model file is missing, truncated, corrupt, foreign, too large or from a newer textnb."""


class TimedOut(TextnbError):
    """A command's wall-clock budget (``--timeout``) ran out."""


def describe(error: BaseException, what: str = "input") -> str:
    """Why a command failed, in one line: the error's message, or for the few errors whose
    own message says nothing to a user, what happened (``what``: message, input)."""
    if isinstance(error, RecursionError):
        return f"{what} too deeply nested"
    if isinstance(error, MemoryError):
        return "out of memory"
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    if isinstance(error, OSError):
        return os_message(error)
    return str(error) or type(error).__name__


def os_message(error: OSError) -> str:
    """An OSError as "<file>: <reason>" where it names a file, else its own message."""
    if error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)
