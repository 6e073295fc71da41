"""Typed options with Flink-style keys: parsing, defaults, validation and helpful errors.

Used both for the job configuration (``kindling.config``) and for connector options
(``'connector' = 'kafka'`` and friends), so every key is checked the same way.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Callable, Generic, Iterable, Mapping, Optional, Sequence, TypeVar

from kindling.durations import parse_duration

T = TypeVar("T")


class OptionError(ValueError):
    """A configuration or connector option is missing, unknown or has a bad value."""


def _parse_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError("expected true or false")


def _parse_int(raw: Any) -> int:
    if isinstance(raw, bool):
        raise ValueError("expected an integer")
    if isinstance(raw, int):
        return raw
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError("expected an integer") from None


def _parse_float(raw: Any) -> float:
    if isinstance(raw, bool):
        raise ValueError("expected a number")
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise ValueError("expected a number") from None


_MEMORY_UNITS = {
    "": 1, "b": 1, "bytes": 1,
    "k": 1024, "kb": 1024, "kib": 1024,
    "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
    "g": 1024**3, "gb": 1024**3, "gib": 1024**3,
    "t": 1024**4, "tb": 1024**4, "tib": 1024**4,
}


def parse_memory_size(raw: Any) -> int:
    """Flink MemorySize: ``"128 mb"``, ``"1gb"``, ``"512"`` (bytes)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz ").strip()
    unit = text[len(number):].strip()
    if not number or unit not in _MEMORY_UNITS:
        raise ValueError("expected a memory size like '128 mb' or '1 gb'")
    return int(float(number) * _MEMORY_UNITS[unit])


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    """One option: its Flink key, how its value is parsed, its default and what it is for."""

    key: str
    parser: Callable[[Any], T]
    default: Optional[T] = None
    description: str = ""
    choices: Optional[Sequence[str]] = None
    required: bool = False
    type_name: str = "string"

    def parse(self, raw: Any, *, context: str = "option") -> T:
        if self.choices is not None:
            text = str(raw).strip()
            lowered = {c.lower(): c for c in self.choices}
            if text.lower() not in lowered:
                raise OptionError(
                    f"{context} '{self.key}' has value {text!r}; allowed values: "
                    + ", ".join(f"'{c}'" for c in self.choices)
                )
            return lowered[text.lower()]  # type: ignore[return-value]
        try:
            return self.parser(raw)
        except (TypeError, ValueError) as exc:
            raise OptionError(
                f"{context} '{self.key}' has value {raw!r}: {exc} ({self.type_name})"
            ) from None


def string_option(key: str, default: Optional[str] = None, description: str = "", *, required: bool = False) -> ConfigOption[str]:
    return ConfigOption(key, str, default, description, required=required, type_name="string")


def enum_option(
    key: str, choices: Sequence[str], default: Optional[str] = None, description: str = "", *, required: bool = False
) -> ConfigOption[str]:
    return ConfigOption(key, str, default, description, choices=tuple(choices), required=required, type_name="enum")


def int_option(key: str, default: Optional[int] = None, description: str = "", *, minimum: Optional[int] = None) -> ConfigOption[int]:
    def parse(raw: Any) -> int:
        value = _parse_int(raw)
        if minimum is not None and value < minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    return ConfigOption(key, parse, default, description, type_name="integer")


def float_option(key: str, default: Optional[float] = None, description: str = "", *, minimum: Optional[float] = None) -> ConfigOption[float]:
    def parse(raw: Any) -> float:
        value = _parse_float(raw)
        if minimum is not None and value < minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    return ConfigOption(key, parse, default, description, type_name="number")


def bool_option(key: str, default: Optional[bool] = None, description: str = "") -> ConfigOption[bool]:
    return ConfigOption(key, _parse_bool, default, description, type_name="boolean")


def duration_option(key: str, default: Optional[timedelta] = None, description: str = "") -> ConfigOption[timedelta]:
    return ConfigOption(key, lambda raw: parse_duration(raw, name=key), default, description, type_name="duration, e.g. '200 ms' or '15 s'")


def memory_option(key: str, default: Optional[int] = None, description: str = "") -> ConfigOption[int]:
    return ConfigOption(key, parse_memory_size, default, description, type_name="memory size, e.g. '128 mb'")


def nearest(key: str, candidates: Iterable[str]) -> Optional[str]:
    """The closest known key to a misspelt one, or None."""
    matches = difflib.get_close_matches(key, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


# Options Spark itself adds when it hands a Data Source its options; never the user's to misspell.
SPARK_OWN_OPTIONS = ("connector", "path", "checkpointlocation", "queryname")
# Facts about a SQL table that Flink gives a connector through its catalog (primary key,
# partition keys, metadata columns) travel as options under this prefix; every option set
# accepts them, and the connectors that use them read them with ``with_prefix``.
TABLE_FACT_PREFIX = "kindling.table."


@dataclass
class OptionSet:
    """The options a component accepts: exact keys plus free-form prefixes (``properties.*``)."""

    context: str
    options: Sequence[ConfigOption[Any]]
    prefixes: Sequence[str] = ()
    ignored: Sequence[str] = SPARK_OWN_OPTIONS
    _by_key: dict[str, ConfigOption[Any]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_key = {o.key: o for o in self.options}

    def validate(self, raw: Mapping[str, Any]) -> "ParsedOptions":
        """Parse every known key, reject unknown ones with the nearest valid key, check required ones."""
        values: dict[str, Any] = {}
        extra: dict[str, str] = {}
        lowered = {o.key.lower(): o for o in self.options}
        for key, value in raw.items():
            option = self._by_key.get(key) or lowered.get(key.lower())
            if option is not None:
                values[option.key] = option.parse(value, context=f"{self.context} option")
                continue
            if key.lower().startswith(TABLE_FACT_PREFIX) or any(key.lower().startswith(p.lower()) for p in self.prefixes):
                extra[key] = str(value)
                continue
            if key.lower() in self.ignored:
                continue
            hint = nearest(key.lower(), list(lowered) + [p + "..." for p in self.prefixes])
            allowed = ", ".join(sorted(self._by_key)) + "".join(f", {p}*" for p in self.prefixes)
            message = f"unknown {self.context} option '{key}'"
            if hint:
                message += f"; did you mean '{hint}'?"
            message += f" Supported options: {allowed}"
            raise OptionError(message)
        for option in self.options:
            if option.key not in values:
                if option.required:
                    raise OptionError(
                        f"{self.context} option '{option.key}' is required"
                        + (f": {option.description}" if option.description else "")
                    )
                values[option.key] = option.default
        return ParsedOptions(values, extra)


@dataclass(frozen=True)
class ParsedOptions:
    """Validated option values by key, plus the free-form prefixed ones."""

    values: Mapping[str, Any]
    extra: Mapping[str, str]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        value = self.values.get(key)
        return default if value is None else value

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Free-form options under a prefix, with the prefix removed (``properties.acks`` -> ``acks``)."""
        return {k[len(prefix):]: v for k, v in self.extra.items() if k.lower().startswith(prefix.lower())}
