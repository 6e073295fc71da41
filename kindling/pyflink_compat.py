"""Run PyFlink programs unchanged: ``import pyflink...`` resolves to kindling's modules.

``import kindling.pyflink_compat`` (one line, before the program's own imports) installs a
meta-path finder for the ``pyflink`` package; ``kindling run prog.py`` and
``python -m kindling prog.py`` install it before the program runs. Every ``pyflink.X`` module is
a view of kindling's module(s) with PyFlink's name (``pyflink.common`` is ``kindling.common``,
``pyflink.datastream.window`` is ``kindling.datastream.window``, ...). A name kindling does not
have is still importable, so a program does not stop at its imports: it fails where it is used
(called, or an attribute read) with a message naming the PyFlink API and what to use instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Optional, Sequence

from kindling.unsupported import ADVICE, UnsupportedPyFlinkAPI, unsupported_message

# PyFlink module -> kindling modules whose names it shows (searched in order).
ALIASES: dict[str, tuple[str, ...]] = {
    "pyflink": ("kindling",),
    "pyflink.common": ("kindling.common",),
    "pyflink.common.typeinfo": ("kindling.common.typeinfo",),
    "pyflink.common.types": ("kindling.common.types",),
    "pyflink.common.time": ("kindling.common.time",),
    "pyflink.common.configuration": ("kindling.common.configuration",),
    "pyflink.common.serialization": ("kindling.common.serialization",),
    "pyflink.common.watermark_strategy": ("kindling.common.watermark_strategy",),
    "pyflink.common.execution_config": ("kindling.common",),
    "pyflink.datastream": ("kindling.datastream",),
    "pyflink.datastream.stream_execution_environment": ("kindling.env", "kindling.datastream"),
    "pyflink.datastream.data_stream": ("kindling.datastream.stream", "kindling.datastream"),
    "pyflink.datastream.functions": ("kindling.datastream.functions", "kindling.datastream"),
    "pyflink.datastream.state": ("kindling.datastream.state",),
    "pyflink.datastream.window": ("kindling.datastream.window",),
    "pyflink.datastream.output_tag": ("kindling.datastream.side_outputs",),
    "pyflink.datastream.time_domain": ("kindling.datastream.timers",),
    "pyflink.datastream.timerservice": ("kindling.datastream.timers",),
    "pyflink.datastream.connectors": ("kindling.datastream.connectors",),
    "pyflink.datastream.connectors.file_system": ("kindling.datastream.connectors.file_system",),
    "pyflink.datastream.connectors.kafka": ("kindling.datastream.connectors.kafka",),
    "pyflink.datastream.connectors.kinesis": ("kindling.datastream.connectors.kinesis",),
    "pyflink.datastream.connectors.number_seq": ("kindling.datastream.connectors.number_seq",),
    "pyflink.datastream.formats": ("kindling.datastream.formats",),
    "pyflink.datastream.formats.json": ("kindling.datastream.formats.json",),
    "pyflink.datastream.formats.csv": ("kindling.datastream.formats.csv",),
    "pyflink.datastream.formats.avro": ("kindling.datastream.formats.avro",),
    "pyflink.datastream.async_data_stream": ("kindling.datastream.async_data_stream",),
    "pyflink.datastream.async_retry_strategies": ("kindling.datastream.async_retry_strategies",),
    "pyflink.datastream.async_retry_predicates": ("kindling.datastream.async_retry_predicates",),
    "pyflink.table": ("kindling.table",),
    "pyflink.table.table_environment": ("kindling.table.table_environment",),
    "pyflink.table.environment_settings": ("kindling.table.table_environment",),
    "pyflink.table.table": ("kindling.table.table",),
    "pyflink.table.table_result": ("kindling.table",),
    "pyflink.table.statement_set": ("kindling.table.table_environment",),
    "pyflink.table.table_config": ("kindling.table.table_environment",),
    "pyflink.table.table_descriptor": ("kindling.table.descriptors",),
    "pyflink.table.schema": ("kindling.table.descriptors",),
    "pyflink.table.types": ("kindling.table.types",),
    "pyflink.table.expressions": ("kindling.table.expressions",),
    "pyflink.table.expression": ("kindling.table.expressions",),
    "pyflink.table.window": ("kindling.table.window",),
    "pyflink.table.udf": ("kindling.table.udf",),
    "pyflink.table.catalog": ("kindling.table.catalog",),
    "pyflink.table.table_schema": ("kindling.table.table_schema",),
    "pyflink.table.module": ("kindling.table.module",),
}

class PyFlinkAlias(types.ModuleType):
    """A ``pyflink.*`` module whose names are kindling's."""

    def __init__(self, name: str, targets: Sequence[str]) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package: submodules resolve through the finder
        self.__kindling_targets__ = tuple(targets)
        self.__file__ = f"<kindling alias of {', '.join(targets) or 'nothing'}>"

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__") and item.endswith("__"):
            raise AttributeError(item)
        for target in self.__kindling_targets__:
            module = importlib.import_module(target)
            try:
                return getattr(module, item)
            except AttributeError:
                continue
        submodule = f"{self.__name__}.{item}"
        if submodule in ALIASES:
            return importlib.import_module(submodule)
        return UnsupportedPyFlinkAPI(submodule)

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for target in self.__kindling_targets__:
            names.update(dir(importlib.import_module(target)))
        return sorted(names)


class PyFlinkFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``pyflink`` and its submodules as kindling aliases."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != "pyflink" and not fullname.startswith("pyflink."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return PyFlinkAlias(spec.name, ALIASES.get(spec.name, ()))

    def exec_module(self, module: types.ModuleType) -> None:
        for target in getattr(module, "__kindling_targets__", ()):
            importlib.import_module(target)  # fail here, at import, if kindling's own module is broken


_FINDER = PyFlinkFinder()


def install() -> None:
    """Make ``import pyflink...`` resolve to kindling (idempotent); a real PyFlink imported before stays as it is."""
    if not any(isinstance(f, PyFlinkFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)
    for name in [n for n in sys.modules if n == "pyflink" or n.startswith("pyflink.")]:
        if not isinstance(sys.modules[name], PyFlinkAlias):
            del sys.modules[name]  # a real apache-flink imported earlier: the program gets kindling's


__all__ = ["ADVICE", "ALIASES", "PyFlinkAlias", "PyFlinkFinder", "UnsupportedPyFlinkAPI", "install", "unsupported_message"]

install()
