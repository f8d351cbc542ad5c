"""The one exception type the CLI turns into a single line for the user."""


class LabError(Exception):
    """A problem the user can act on; the message says what is wrong and what to do next."""
