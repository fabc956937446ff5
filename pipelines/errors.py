"""The one exception type for mistakes a user can fix; the CLI prints it as one sentence."""


class UserError(Exception):
    """A user mistake (bad argument, missing folder): printed as one sentence, exit status 2."""
