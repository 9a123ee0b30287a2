"""Errors that name the problem and the fix; raised before any paid call where possible."""


class ConfigError(RuntimeError):
    """A setting is wrong or missing (unknown option, missing API key, bad data file)."""


class CacheDamaged(ConfigError):
    """The model-call cache cannot be read (a damaged SQLite file, an entry that is not JSON): the
    message names the file and `memeval cache check`, which sets the bad entries aside."""

    def __init__(self, path: object, why: str):
        super().__init__(f"the model-call cache {path} is damaged ({why}): run `memeval cache check --cache "
                         f"{path}` to set the bad entries aside (good entries are kept), then rerun")
        self.path = path


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
