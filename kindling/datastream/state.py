"""Keyed state with Flink's names: descriptors, state handles and time-to-live.

All state of one key lives in one record of Spark's state store (RocksDB by default): the
runner reads it once when the key has work in a micro-batch and writes it back once, so a
key costs two state-store calls per batch however many state handles the function uses.
Values are Python objects (pickled); the descriptor's ``type_info`` is accepted for Flink
compatibility and not enforced.
"""

from __future__ import annotations

import enum
from datetime import timedelta
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Tuple

from kindling.datastream.functions import AggregateFunction, as_callable
from kindling.durations import DurationLike, parse_duration, to_millis


class StateTtlConfig:
    """Flink's StateTtlConfig: how long state lives (processing time), what renews it, what is visible."""

    class UpdateType(enum.Enum):
        Disabled = 0
        OnCreateAndWrite = 1
        OnReadAndWrite = 2

    class StateVisibility(enum.Enum):
        ReturnExpiredIfNotCleanedUp = 0
        NeverReturnExpired = 1

    class TtlTimeCharacteristic(enum.Enum):
        ProcessingTime = 0

    def __init__(self, ttl: timedelta, update_type: "StateTtlConfig.UpdateType", visibility: "StateTtlConfig.StateVisibility") -> None:
        self.ttl = ttl
        self.update_type = update_type
        self.state_visibility = visibility

    @property
    def ttl_ms(self) -> int:
        return to_millis(self.ttl)

    def is_enabled(self) -> bool:
        return self.update_type != StateTtlConfig.UpdateType.Disabled

    @staticmethod
    def new_builder(ttl: DurationLike) -> "StateTtlConfig.Builder":
        """Start a TTL config; a bare number is milliseconds (PyFlink passes ``Time.seconds(1)``-like values)."""
        return StateTtlConfig.Builder(_as_duration(ttl))

    class Builder:
        def __init__(self, ttl: timedelta) -> None:
            if ttl <= timedelta(0):
                raise ValueError(f"state TTL must be positive, got {ttl}")
            self._ttl = ttl
            self._update = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._visibility = StateTtlConfig.StateVisibility.NeverReturnExpired

        def set_update_type(self, update_type: "StateTtlConfig.UpdateType") -> "StateTtlConfig.Builder":
            self._update = update_type
            return self

        def update_ttl_on_create_and_write(self) -> "StateTtlConfig.Builder":
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> "StateTtlConfig.Builder":
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(self, visibility: "StateTtlConfig.StateVisibility") -> "StateTtlConfig.Builder":
            self._visibility = visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> "StateTtlConfig.Builder":
            return self.set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

        def never_return_expired(self) -> "StateTtlConfig.Builder":
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl(self, ttl: DurationLike) -> "StateTtlConfig.Builder":
            self._ttl = _as_duration(ttl)
            return self

        def cleanup_full_snapshot(self) -> "StateTtlConfig.Builder":
            return self

        def cleanup_incrementally(self, *args: Any) -> "StateTtlConfig.Builder":
            return self

        def cleanup_in_rocksdb_compact_filter(self, *args: Any) -> "StateTtlConfig.Builder":
            return self

        def disable_cleanup_in_background(self) -> "StateTtlConfig.Builder":
            return self

        def build(self) -> "StateTtlConfig":
            return StateTtlConfig(self._ttl, self._update, self._visibility)


def _as_duration(value: Any) -> timedelta:
    if hasattr(value, "to_milliseconds"):
        return timedelta(milliseconds=value.to_milliseconds())
    return parse_duration(value, name="ttl")


class StateDescriptor:
    """Names a piece of keyed state; ``enable_time_to_live`` attaches a TTL."""

    kind = "value"

    def __init__(self, name: str, type_info: Any = None) -> None:
        if not name or not isinstance(name, str):
            raise ValueError(f"a state descriptor needs a non-empty name, got {name!r}")
        self.name = name
        self.type_info = type_info
        self.ttl_config: Optional[StateTtlConfig] = None

    def get_name(self) -> str:
        return self.name

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        self.ttl_config = ttl_config


class ValueStateDescriptor(StateDescriptor):
    kind = "value"


class ListStateDescriptor(StateDescriptor):
    kind = "list"

    def __init__(self, name: str, elem_type_info: Any = None) -> None:
        super().__init__(name, elem_type_info)


class MapStateDescriptor(StateDescriptor):
    kind = "map"

    def __init__(self, name: str, key_type_info: Any = None, value_type_info: Any = None) -> None:
        super().__init__(name, value_type_info)
        self.key_type_info = key_type_info


class ReducingStateDescriptor(StateDescriptor):
    kind = "reducing"

    def __init__(self, name: str, reduce_function: Any, type_info: Any = None) -> None:
        super().__init__(name, type_info)
        self.reduce_function = as_callable(reduce_function, "reduce")


class AggregatingStateDescriptor(StateDescriptor):
    kind = "aggregating"

    def __init__(self, name: str, agg_function: AggregateFunction, state_type_info: Any = None) -> None:
        super().__init__(name, state_type_info)
        if not isinstance(agg_function, AggregateFunction):
            raise TypeError(f"AggregatingStateDescriptor needs an AggregateFunction, got {type(agg_function).__name__}")
        self.agg_function = agg_function


class KeyState:
    """One key's state as the runner loaded it: a dict of named entries, written back when changed.

    An entry with TTL is stored as ``(value, last_update_ms)``; lists and maps keep one such
    pair per element, as Flink's TTL does. ``dirty`` says it changed (states set it directly; a part of another
    key's state, such as a window's trigger state, passes it on through a property).
    """

    def __init__(self, data: Optional[Dict[str, Any]], now_ms: int) -> None:
        self.data: Dict[str, Any] = data if data is not None else {}
        self.now_ms = now_ms
        self.dirty = False

    def touch(self) -> None:
        self.dirty = True


class _State:
    def __init__(self, descriptor: StateDescriptor, store: Callable[[], KeyState]) -> None:
        self._descriptor = descriptor
        self._name = descriptor.name
        self._store = store
        ttl = descriptor.ttl_config
        self._ttl = ttl if ttl is not None and ttl.is_enabled() else None

    # Entries are wrapped with their last-update time when the descriptor has a TTL.
    def _wrap(self, value: Any) -> Any:
        return (value, self._store().now_ms) if self._ttl else value

    def _alive(self, entry: Any) -> bool:
        if not self._ttl:
            return True
        if self._ttl.state_visibility == StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp:
            return True
        return self._store().now_ms - entry[1] < self._ttl.ttl_ms

    def _unwrap(self, entry: Any) -> Any:
        return entry[0] if self._ttl else entry

    def _renew_on_read(self) -> bool:
        return bool(self._ttl) and self._ttl.update_type == StateTtlConfig.UpdateType.OnReadAndWrite

    def _raw(self) -> Any:
        return self._store().data.get(self._name)

    def _set(self, value: Any) -> None:
        store = self._store()
        if value is None:
            if self._name in store.data:
                del store.data[self._name]
                store.touch()
            return
        store.data[self._name] = value
        store.touch()

    def clear(self) -> None:
        self._set(None)


class ValueState(_State):
    """One value per key."""

    def value(self) -> Any:
        entry = self._store().data.get(self._name)
        if entry is None or self._ttl is None:
            return entry
        if not self._alive(entry):
            self._set(None)
            return None
        if self._renew_on_read():
            self._set(self._wrap(self._unwrap(entry)))
        return self._unwrap(entry)

    def update(self, value: Any) -> None:
        if value is not None and self._ttl is None:
            store = self._store()
            store.data[self._name] = value
            store.dirty = True  # (touch(), inlined: the commonest state write)
            return
        self._set(None if value is None else self._wrap(value))


class _AppendingState(ValueState):
    def get(self) -> Any:
        return self.value()


class ReducingState(_AppendingState):
    """Values added are combined with the descriptor's ReduceFunction."""

    def add(self, value: Any) -> None:
        current = self.value()
        reduce = self._descriptor.reduce_function  # type: ignore[attr-defined]
        self.update(value if current is None else reduce(current, value))


class AggregatingState(_AppendingState):
    """Values added go into the descriptor's AggregateFunction's accumulator; ``get`` is its result."""

    def get(self) -> Any:
        accumulator = self.value()
        if accumulator is None:
            return None
        return self._descriptor.agg_function.get_result(accumulator)  # type: ignore[attr-defined]

    def add(self, value: Any) -> None:
        function: AggregateFunction = self._descriptor.agg_function  # type: ignore[attr-defined]
        accumulator = self.value()
        if accumulator is None:
            accumulator = function.create_accumulator()
        self.update(function.add(value, accumulator))


class ListState(_State):
    """A list of values per key."""

    def _entries(self) -> list:
        entries = self._raw() or []
        alive = [e for e in entries if self._alive(e)]
        if len(alive) != len(entries):
            self._set(alive or None)
        if alive and self._renew_on_read():
            alive = [self._wrap(self._unwrap(e)) for e in alive]
            self._set(alive)
        return alive

    def get(self) -> list:
        return [self._unwrap(e) for e in self._entries()]

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("ListState.add: null values are not allowed (as in Flink)")
        self._set(self._entries() + [self._wrap(value)])

    def add_all(self, values: Iterable[Any]) -> None:
        self._set(self._entries() + [self._wrap(v) for v in values] or None)

    def update(self, values: Optional[Iterable[Any]]) -> None:
        self._set([self._wrap(v) for v in values] if values else None)


class MapState(_State):
    """A map of user keys to values, per key."""

    def _map(self) -> dict:
        entries = self._raw() or {}
        if self._ttl:
            dead = [k for k, e in entries.items() if not self._alive(e)]
            if dead:
                entries = {k: e for k, e in entries.items() if k not in dead}
                self._set(entries or None)
        return entries

    def get(self, key: Any) -> Any:
        entry = self._map().get(key)
        if entry is None:
            return None
        if self._renew_on_read():
            self.put(key, self._unwrap(entry))
        return self._unwrap(entry)

    def put(self, key: Any, value: Any) -> None:
        entries = dict(self._map())
        entries[key] = self._wrap(value)
        self._set(entries)

    def put_all(self, mapping: Dict[Any, Any]) -> None:
        entries = dict(self._map())
        entries.update({k: self._wrap(v) for k, v in mapping.items()})
        self._set(entries or None)

    def remove(self, key: Any) -> None:
        entries = dict(self._map())
        if key in entries:
            del entries[key]
            self._set(entries or None)

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def items(self) -> Iterator[Tuple[Any, Any]]:
        return iter([(k, self._unwrap(e)) for k, e in self._map().items()])

    def keys(self) -> Iterator[Any]:
        return iter(list(self._map().keys()))

    def values(self) -> Iterator[Any]:
        return iter([self._unwrap(e) for e in self._map().values()])

    def is_empty(self) -> bool:
        return not self._map()

    def __iter__(self) -> Iterator[Any]:
        return self.keys()


class ReadOnlyBroadcastState(MapState):
    """The broadcast state as keyed elements see it."""

    def put(self, key: Any, value: Any) -> None:
        raise RuntimeError("broadcast state is read-only in process_element; update it in process_broadcast_element")

    put_all = remove = put  # type: ignore[assignment]

    def clear(self) -> None:
        raise RuntimeError("broadcast state is read-only in process_element; update it in process_broadcast_element")


_HANDLES = {
    "value": ValueState,
    "list": ListState,
    "map": MapState,
    "reducing": ReducingState,
    "aggregating": AggregatingState,
}


def state_handle(descriptor: StateDescriptor, store: Callable[[], KeyState], expected: Optional[str] = None) -> _State:
    """The state handle for a descriptor, over the current key's loaded state."""
    if expected is not None and descriptor.kind != expected:
        raise TypeError(f"state '{descriptor.name}': expected a {expected} state descriptor, got {type(descriptor).__name__}")
    return _HANDLES[descriptor.kind](descriptor, store)
