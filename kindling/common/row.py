"""PyFlink's ``Row`` and ``RowKind``: a record with positional and (optionally) named fields and a change kind."""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict, List, Optional, Sequence

_SHORT_STRINGS = ("+I", "-U", "+U", "-D")  # by RowKind value


class RowKind(Enum):
    """The change a row stands for in a changelog: insert, update before/after, delete."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def short_string(self) -> str:
        return _SHORT_STRINGS[self.value]

    def __str__(self) -> str:
        return self.short_string()

    @staticmethod
    def from_short_string(text: str) -> "RowKind":
        """The kind ``short_string`` wrote (``'-U'`` is UPDATE_BEFORE)."""
        return RowKind(_SHORT_STRINGS.index(text))


def _create_row(fields: Optional[Sequence[str]], values: Sequence[Any], row_kind: Optional[RowKind] = None) -> "Row":
    row = Row(*values)
    if fields is not None:
        row._fields = list(fields)
    if row_kind is not None:
        row._row_kind = row_kind
    return row


class Row:
    """A row: ``Row(1, 'a')`` (positional) or ``Row(id=1, name='a')`` (named); fields by index, name or attribute."""

    __slots__ = ("_fields", "_values", "_row_kind")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        self._fields: Optional[List[str]] = list(kwargs) if kwargs else None
        self._values: List[Any] = list(kwargs.values()) if kwargs else list(args)
        self._row_kind = RowKind.INSERT

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> "Row":
        row = Row(*args, **kwargs)
        row._row_kind = row_kind
        return row

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._row_kind = row_kind

    def set_field_names(self, field_names: Sequence[str]) -> None:
        self._fields = list(field_names)

    def get_fields_by_names(self, names: Sequence[str]) -> List[Any]:
        if self._fields is None or list(names) == self._fields:
            return list(self._values)
        missing = [n for n in names if n not in self._fields]
        if missing:
            raise KeyError(f"Field names {missing} not exist in {self._fields}.")
        return [self._values[self._fields.index(n)] for n in names]

    def as_dict(self, recursive: bool = False) -> Dict[str, Any]:
        if self._fields is None:
            raise TypeError("Cannot convert a Row class into dict")

        def convert(value: Any) -> Any:
            if recursive and isinstance(value, Row):
                return value.as_dict(True)
            if recursive and isinstance(value, list):
                return [convert(v) for v in value]
            if recursive and isinstance(value, dict):
                return {k: convert(v) for k, v in value.items()}
            return value

        return {k: convert(v) for k, v in zip(self._fields, self._values)}

    # pyspark's name, so kindling's existing functions that call asDict keep working on these rows
    def asDict(self, recursive: bool = False) -> Dict[str, Any]:
        return self.as_dict(recursive)

    def __call__(self, *args: Any) -> "Row":
        """A Row used as a class: ``Person = Row('name', 'age'); Person('Alice', 11)``."""
        if len(args) > len(self):
            raise ValueError(f"Can not create Row with fields {self}, expected {len(self)} values but got {args}")
        return _create_row(self._values, args, self._row_kind)

    def __contains__(self, item: Any) -> bool:
        return item in (self._fields if self._fields is not None else self._values)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return self._values[item]
        if self._fields is None or item not in self._fields:
            raise KeyError(item)
        return self._values[self._fields.index(item)]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, (int, slice)):
            self._values[key] = value
            return
        if self._fields is None or key not in self._fields:
            raise KeyError(key)
        self._values[self._fields.index(key)] = value

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        fields = object.__getattribute__(self, "_fields")
        if fields is None or item not in fields:
            raise AttributeError(item)
        return self._values[fields.index(item)]

    def __reduce__(self) -> Any:
        return _create_row, (self._fields, tuple(self._values), self._row_kind)

    def __repr__(self) -> str:
        if self._fields is not None:
            return "Row(%s)" % ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._values))
        return "<Row(%s)>" % ", ".join(repr(v) for v in self._values)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Row) or self._row_kind != other._row_kind:
            return False
        if (self._fields is None) != (other._fields is None):
            return False
        if self._fields is None:
            return self._values == other._values
        if sorted(self._fields) != sorted(other._fields or []):
            return False
        return all(self[n] == other[n] for n in self._fields)

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
