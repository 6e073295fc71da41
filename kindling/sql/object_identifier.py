"""Flink's full names of catalog objects (PyFlink's ``ObjectIdentifier`` and ``ObjectPath``, public as ``kindling.table.catalog``).

kindling has one in-memory catalog, Flink's default one, so every object it names lives in
``default_catalog.default_database``; the names are what PyFlink's API returns and Flink's messages print.

>>> from kindling.sql.object_identifier import ObjectIdentifier
>>> name = ObjectIdentifier.of("default_catalog", "default_database", "orders")
>>> str(name), name.as_summary_string(), name.to_object_path().get_full_name()
('`default_catalog`.`default_database`.`orders`', 'default_catalog.default_database.orders', 'default_database.orders')
"""

from __future__ import annotations

from typing import Any

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class ObjectPath:
    """A database and an object name within a catalog."""

    def __init__(self, database_name: str, object_name: str) -> None:
        self._database, self._object = database_name, object_name

    @staticmethod
    def from_string(full_name: str) -> "ObjectPath":
        """``database.object`` as an ObjectPath."""
        database, dot, name = full_name.partition(".")
        if not dot or not database or not name:
            raise ValueError(f"Cannot get split '{full_name}' to get database name and object name")
        return ObjectPath(database, name)

    def get_database_name(self) -> str:
        return self._database

    def get_object_name(self) -> str:
        return self._object

    def get_full_name(self) -> str:
        return f"{self._database}.{self._object}"

    def __str__(self) -> str:
        return self.get_full_name()

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ObjectPath) and (self._database, self._object) == (other._database, other._object)

    def __hash__(self) -> int:
        return hash((self._database, self._object))


class ObjectIdentifier:
    """A catalog, a database and an object name: a table's or view's full name, as Flink prints it."""

    def __init__(self, catalog_name: str, database_name: str, object_name: str) -> None:
        self._parts = (catalog_name, database_name, object_name)

    @staticmethod
    def of(catalog_name: str, database_name: str, object_name: str) -> "ObjectIdentifier":
        return ObjectIdentifier(catalog_name, database_name, object_name)

    @staticmethod
    def in_default_database(object_name: str) -> "ObjectIdentifier":
        """kindling's name for an object of its one catalog."""
        return ObjectIdentifier(DEFAULT_CATALOG, DEFAULT_DATABASE, object_name)

    def get_catalog_name(self) -> str:
        return self._parts[0]

    def get_database_name(self) -> str:
        return self._parts[1]

    def get_object_name(self) -> str:
        return self._parts[2]

    def to_object_path(self) -> ObjectPath:
        return ObjectPath(self._parts[1], self._parts[2])

    def to_list(self) -> list[str]:
        return list(self._parts)

    def as_serializable_string(self) -> str:
        """Each part quoted with backticks: ```default_catalog`.`default_database`.`orders```."""
        return ".".join(_quoted(p) for p in self._parts)

    def as_summary_string(self) -> str:
        """The parts joined by dots, unquoted (for messages)."""
        return ".".join(self._parts)

    def __str__(self) -> str:
        return self.as_serializable_string()

    def __repr__(self) -> str:
        return f"ObjectIdentifier({self.as_serializable_string()})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ObjectIdentifier) and self._parts == other._parts

    def __hash__(self) -> int:
        return hash(self._parts)


__all__ = ["ObjectIdentifier", "ObjectPath"]
