"""Package attributes loaded on first use (PEP 562).

pandas, plotly, pyarrow and the Docker client cost ~2.5 s to import on this project's 2-core hosts;
validating parameters must not pay for them, so packages that re-export heavy modules do it
lazily."""
from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, tuple[str, str | None]],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: name -> (submodule, attribute or None for the
    submodule itself)."""

    def __getattr__(name: str) -> Any:
        try:
            module, attribute = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = importlib.import_module(f".{module}", package)
        return value if attribute is None else getattr(value, attribute)

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
