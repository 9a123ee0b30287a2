"""Errors that name the problem and the fix; raised before any paid call where possible."""


class ConfigError(RuntimeError):
    """A setting is wrong or missing (unknown option, missing API key, bad data file)."""


class ModelCallError(RuntimeError):
    """A model endpoint kept failing after every retry."""


class StreamCutShort(RuntimeError):
    """A streamed reply ended without a finish reason (the connection closed mid-reply): the
    text is incomplete, so the call is retried like any other transient failure."""


class JsonOutputError(RuntimeError):
    """The model returned JSON that failed validation even after the bounded repair attempts."""

    def __init__(self, message: str, raw_outputs: list[str]):
        super().__init__(message)
        self.raw_outputs = raw_outputs
