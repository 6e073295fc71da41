"""Public names of a package imported on first use (PEP 562), so that importing one module does not import the API.

Every Python worker Spark starts (a source's streaming runner, a keyed operator's planning worker) unpickles a function
and so imports the package it lives in; a package ``__init__`` importing its whole API cost each such worker a tenth of
a second or more.

>>> getattr_, dir_ = lazy_exports("pkg", {}, {"json": ("dumps",)})
>>> getattr_("dumps")([1])
'[1]'
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, MutableMapping


def lazy_exports(package: str, namespace: MutableMapping[str, Any], exports: Mapping[str, tuple[str, ...]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``exports`` (module -> the names taken from it); a name once
    imported is kept in ``namespace`` (the package's globals)."""
    module_of = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *module_of})

    return __getattr__, __dir__
