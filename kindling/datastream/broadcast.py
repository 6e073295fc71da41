"""The broadcast state pattern: rules from a broadcast stream, applied to every key of a keyed stream.

Every shuffle partition of the keyed operator receives each broadcast record (it is replicated
to one "slot" group per partition, placed by Spark's own hash partitioning), applies it with
``process_broadcast_element`` and keeps the broadcast state in that slot's state record. Keyed
records read it there, so a rule reaches every key, including keys seen before it arrived.
Within a micro-batch, broadcast records are applied before keyed records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence

from kindling.datastream import records
from kindling.datastream.context import RuntimeContext
from kindling.datastream.functions import ship_by_value
from kindling.datastream.process import BaseContext, RichFunction, invoker
from kindling.datastream.state import MapState, MapStateDescriptor, ReadOnlyBroadcastState

if TYPE_CHECKING:
    from kindling.datastream.stream import DataStream, KeyedStream, SingleOutputStreamOperator


class KeyedBroadcastProcessFunction(RichFunction):
    """Flink's KeyedBroadcastProcessFunction: keyed records with read-only rules, broadcast records that update them."""

    def process_element(self, value: Any, ctx: "BroadcastContext") -> Any:
        raise NotImplementedError

    def process_broadcast_element(self, value: Any, ctx: "BroadcastContext") -> Any:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: "BroadcastContext") -> Any:
        return None


class BroadcastContext(BaseContext):
    """A process-function context with the broadcast state: writable for broadcast records, read-only otherwise."""

    def __init__(self, runner: Any, writable: bool) -> None:
        super().__init__(runner)
        self._writable = writable

    def get_broadcast_state(self, descriptor: MapStateDescriptor) -> MapState:
        if not isinstance(descriptor, MapStateDescriptor):
            raise TypeError(f"broadcast state is described by a MapStateDescriptor, got {type(descriptor).__name__}")
        if self._writable:
            return MapState(descriptor, lambda: self._runner.state)
        return ReadOnlyBroadcastState(descriptor, self._runner.broadcast_state)


class BroadcastStream:
    """A stream broadcast to every parallel instance, with the descriptors of the state it builds."""

    def __init__(self, stream: "DataStream", descriptors: Sequence[MapStateDescriptor]) -> None:
        self.stream = stream
        self.descriptors = list(descriptors)


class _BroadcastAdapter:
    def __init__(self, function: KeyedBroadcastProcessFunction) -> None:
        self._function = function

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        self._function._runtime_context = runtime_context
        self._function.open(runtime_context)
        self._keyed_ctx = BroadcastContext(runner, writable=False)
        self._broadcast_ctx = BroadcastContext(runner, writable=True)
        self._element = invoker(self._function.process_element, 2)
        self._broadcast = invoker(self._function.process_broadcast_element, 2)
        self._timer = invoker(self._function.on_timer, 2)

    def element(self, index: int, value: Any) -> List[Any]:
        return self._element(value, self._keyed_ctx)

    def broadcast(self, value: Any) -> List[Any]:
        return self._broadcast(value, self._broadcast_ctx)

    def timer(self, timestamp: int) -> List[Any]:
        return self._timer(timestamp, self._keyed_ctx)

    def close(self) -> None:
        self._function.close()


class BroadcastConnectedStream:
    """A keyed stream connected to a broadcast stream."""

    def __init__(self, keyed: "KeyedStream", broadcast: BroadcastStream) -> None:
        self.keyed = keyed
        self.broadcast = broadcast

    def process(self, function: KeyedBroadcastProcessFunction, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        if not isinstance(function, KeyedBroadcastProcessFunction):
            raise TypeError(f"process takes a KeyedBroadcastProcessFunction, got {type(function).__name__}")
        ship_by_value(function)
        keyed = self.keyed
        out_user = records.as_struct(output_type) if output_type is not None else keyed.schema
        source = self.broadcast.stream
        return keyed._keyed_operation(
            _BroadcastAdapter(function), type(function).__name__, out_user,
            [(keyed._df, list(keyed.keys), keyed.schema)], len(keyed.keys),
            broadcast=source._df.select(*source.schema.fieldNames(), *source._internal()),
            broadcast_type=source.schema,
            bounded=keyed.is_bounded and source.is_bounded, upstream=[source],
        )
