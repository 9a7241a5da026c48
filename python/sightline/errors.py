"""The exceptions and warnings of the sightline package."""


class LoadError(Exception):
    """A trace (or a job) that could not be opened.

    ``str(error)`` is the line ``sightline`` prints after ``"sightline: "`` for the same file:
    ``"FILE: byte N (line L, column C): MESSAGE"``. The parts are attributes:

    file     the file (or job folder) that failed
    message  what went wrong
    offset   byte offset into the (uncompressed) text where it went wrong; 0 when unknown
    line, column  1-based position of that byte; 0 when unknown
    cancelled  True when the load was stopped (Ctrl-C)
    """

    def __init__(self, text, *, file="", message="", offset=0, line=0, column=0, cancelled=False):
        super().__init__(text)
        self.file = file
        self.message = message or text
        self.offset = offset
        self.line = line
        self.column = column
        self.cancelled = cancelled


class LoadWarning(UserWarning):
    """A trace that loaded, but that the user should know about first (a cut-off file, no GPU
    activity recorded, a job rank that failed): the line ``sightline`` prints after
    ``"sightline: warning: "``."""


class NoSuchTable(KeyError):
    """A table name the report does not have; the message lists the tables it has, as
    ``sightline report --format csv --table NAME`` says."""

    def __str__(self):
        return self.args[0]
