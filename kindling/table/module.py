"""PyFlink's ``pyflink.table.module``: the modules a TableEnvironment takes its built-in functions from.

kindling has one module, Flink's ``core`` (its built-in functions, those kindling supports): ``list_modules()`` is
``['core']`` and ``list_full_modules()`` is ``[ModuleEntry('core', True)]``, as in a fresh Flink environment.
Loading other modules (Hive's) is refused by name.

>>> ModuleEntry("core", True)
ModuleEntry{name='core', used=true}
"""

from __future__ import annotations

from typing import Any

CORE = "core"


class Module:
    """A set of built-in metadata (functions) a TableEnvironment uses; kindling's is Flink's core module only."""


class ModuleEntry:
    """A module's name and whether it is used (PyFlink's ``ModuleEntry``: ``name()`` and ``used()`` are methods)."""

    def __init__(self, name: str, used: bool) -> None:
        self._name, self._used = name, used

    def name(self) -> str:
        return self._name

    def used(self) -> bool:
        return self._used

    def __repr__(self) -> str:
        return f"ModuleEntry{{name='{self._name}', used={str(self._used).lower()}}}"  # Java's toString, as PyFlink's

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ModuleEntry) and (self._name, self._used) == (other._name, other._used)

    def __hash__(self) -> int:
        return hash((self._name, self._used))


__all__ = ["CORE", "Module", "ModuleEntry"]
