"""Scenario: a scenario document that can be loaded, changed by path and run."""
from __future__ import annotations

import copy
import json
import math
import os

from . import _core
from .errors import ScenarioError


def scenario_error(path: str, expected: str) -> ScenarioError:
    """A ScenarioError raised from Python, formatted as the C++ layer's, with its `.path`."""
    return ScenarioError(f"error: {path or '<scenario>'}: {expected}", path, expected)


# As studies::kMaxGridPoints (sim/studies/grid_check.hpp): the most values an axis, or points a
# grid, may have.
MAX_GRID_POINTS = 1_000_000


def axis_list(path, values) -> list:
    """The values of a swept or varied path as a list, refused at `path` before they are listed
    when there are more than MAX_GRID_POINTS (range(1, 10**9) would take gigabytes first)."""
    n = len(values) if hasattr(values, "__len__") else None
    if n is not None and n > MAX_GRID_POINTS:
        raise scenario_error(str(path), f"{n} values; at most {MAX_GRID_POINTS} (the limit of a grid)")
    listed = list(values)
    for v in listed:  # JSON has no NaN or infinity: named here, not as a parse error below
        if isinstance(v, float) and not math.isfinite(v):
            raise scenario_error(str(path), f"expected finite values; got {v!r}")
    return listed


# As the C++ loader's kMaxNestingDepth (sim/scenario/load.hpp): a deeper dict is refused before
# json.dumps recurses into it (a RecursionError at 1,000 levels).
MAX_NESTING_DEPTH = 64


def _check_depth(value, path: str) -> None:
    """A ScenarioError at `path` when `value` nests dicts and lists deeper than the loader takes;
    iterative, so a 100,000-deep dict is an error, not a RecursionError."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list, tuple)):
            if depth > MAX_NESTING_DEPTH:
                raise scenario_error(path, f"nesting of at most {MAX_NESTING_DEPTH} levels of dicts and lists")
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))


def whole_number(name: str, value, low: int, high: int) -> int:
    """`value` as an int from `low` to `high` (as the CLI's options take it); a ValueError naming
    `name` otherwise (bools, floats such as 1.5, strings)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: expected a whole number from {low} to {high}; got {value!r}")
    return value


class Scenario:
    """A scenario file's contents. Paths are dot-separated keys, a number indexes a list,
    exactly as `clustersim run --set PATH=VALUE` takes them."""

    def __init__(self, doc: dict, origin: str = "<dict>"):
        # Round-trip through the C++ loader: the same limits and errors as the CLI.
        _check_depth(doc, "")
        self._doc = json.loads(_core.parse_text(json.dumps(doc)))
        self.origin = origin

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Scenario":
        sc = cls.__new__(cls)
        sc._doc = json.loads(_core.load_file(os.fspath(path)))
        sc.origin = os.fspath(path)
        return sc

    @classmethod
    def from_json(cls, text: str) -> "Scenario":
        sc = cls.__new__(cls)
        sc._doc = json.loads(_core.parse_text(text))
        sc.origin = "<json>"
        return sc

    def set(self, path: str, value) -> "Scenario":
        """Set the value at `path` (in place); returns self for chaining. A value JSON cannot
        hold (NaN, infinity, an object) is a ScenarioError at `path`."""
        _check_depth(value, path)
        try:
            value_json = json.dumps(value, allow_nan=False)
        except (ValueError, TypeError) as e:
            raise scenario_error(path, f"a value JSON can hold (a number, string, bool, list or dict); got {value!r} "
                                       f"({e})") from None
        self._doc = json.loads(_core.set_path(json.dumps(self._doc), path, value_json))
        return self

    def override(self, assignment: str) -> "Scenario":
        """Apply a CLI-style "PATH=VALUE" override."""
        self._doc = json.loads(_core.apply_override(json.dumps(self._doc), assignment))
        return self

    def get(self, path: str, default=None):
        node = self._doc
        for part in path.split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return default
        return node

    def validate(self) -> None:
        """Raise ScenarioError if the scenario is invalid (as `clustersim validate`)."""
        _core.validate(self.to_json())

    def copy(self) -> "Scenario":
        sc = Scenario.__new__(Scenario)
        sc._doc = copy.deepcopy(self._doc)
        sc.origin = self.origin
        return sc

    def to_dict(self) -> dict:
        return copy.deepcopy(self._doc)

    def to_json(self) -> str:
        return json.dumps(self._doc)

    def __repr__(self) -> str:
        return f"Scenario({self._doc.get('name', '')!r} from {self.origin})"
