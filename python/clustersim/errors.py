"""The package's input error."""
from __future__ import annotations


class ScenarioError(ValueError):
    """Bad input: a scenario key, value or file, a sweep grid, a comparison's fabric. The
    message is the CLI's ("error: <json path>: <what was expected>", and a hint line where one
    helps); `path` is the JSON path ("topology.nodes"; "" for the whole file), `expected`
    what was expected there, `hint` a suggestion or "". A ValueError."""

    def __init__(self, message: str, path: str = "", expected: str = "", hint: str = ""):
        super().__init__(message)
        self.path = path
        self.expected = expected
        self.hint = hint

    def __reduce__(self):  # picklable with its attributes (process pools, Dask workers)
        return (ScenarioError, (str(self), self.path, self.expected, self.hint))
