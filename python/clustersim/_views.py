"""The registry of Result's views, so that Result (data) never imports the modules that view it.

A view module (training, serving, fleet, plots) registers at import time:
- an accessor: a property of Result by name ("step", "memory", "serving", "fleet") and the
  function (result) -> value behind it;
- a plotter: the summary block it draws ("collective", "training", "training_run", "serving")
  and the function (result, ax) -> what it drew, for Result.plot().
clustersim/__init__.py imports every view module, so `import clustersim` (which any
`import clustersim.<module>` runs first) registers them all. This module imports nothing of
the package at run time."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable

    from .result import Result

_ACCESSORS: dict[str, Callable[[Result], Any]] = {}
_PLOTTERS: dict[str, Callable[[Result, Any], Any]] = {}


def register_accessor(name: str, function: Callable[[Result], Any]) -> None:
    """Result.<name> returns function(result)."""
    _ACCESSORS[name] = function


def register_plotter(summary_key: str, function: Callable[[Result, Any], Any]) -> None:
    """Result.plot(ax) of a result whose summary has `summary_key` returns function(result, ax)."""
    _PLOTTERS[summary_key] = function


def _missing(what: str, name: str) -> RuntimeError:
    return RuntimeError(f"no {what} registered for {name!r}: its view module was not imported "
                        "(`import clustersim` imports them all)")


def accessor(name: str) -> Callable[[Result], Any]:
    """The function behind Result.<name>; RuntimeError if no view module registered it."""
    try:
        return _ACCESSORS[name]
    except KeyError:
        raise _missing("view", name) from None


def plotter(summary_key: str) -> Callable[[Result, Any], Any]:
    """The plot of a summary block; RuntimeError if no view module registered it."""
    try:
        return _PLOTTERS[summary_key]
    except KeyError:
        raise _missing("plot", summary_key) from None


def accessors() -> list[str]:
    """The registered accessor names, in registration order."""
    return list(_ACCESSORS)


def plotters() -> list[str]:
    """The registered summary blocks with a plot, in registration order."""
    return list(_PLOTTERS)
