"""RuntimeContext: what a rich function sees of its running instance — keyed state and its subtask."""

from __future__ import annotations

from typing import Any, Callable, Optional

from kindling.datastream.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    KeyState,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
    state_handle,
)


class RuntimeContext:
    """Flink's RuntimeContext for one parallel instance: a Spark task (shuffle partition) running the operator."""

    def __init__(self, task_name: str, store: Optional[Callable[[], KeyState]], subtask: int, parallelism: int) -> None:
        self._task_name = task_name
        self._store = store
        self._subtask = subtask
        self._parallelism = parallelism
        self.time_to_live = False  # whether a state with a TTL was asked for (its clock then matters at end of input)

    def get_task_name(self) -> str:
        return self._task_name

    def get_index_of_this_subtask(self) -> int:
        return self._subtask

    def get_metric_group(self) -> Any:
        """User metrics of this function (counter, gauge, meter, histogram), shown by the job manager."""
        from kindling.runtime.metrics import metric_group

        return metric_group(self._task_name)

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def _handle(self, descriptor: StateDescriptor, kind: str) -> Any:
        if self._store is None:
            raise RuntimeError(
                f"keyed state '{descriptor.name}' is only available on a keyed stream: call key_by(...) before process(...)"
            )
        if descriptor.ttl_config is not None and descriptor.ttl_config.is_enabled():
            self.time_to_live = True
        return state_handle(descriptor, self._store, kind)

    def get_state(self, descriptor: ValueStateDescriptor) -> ValueState:
        return self._handle(descriptor, "value")

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState:
        return self._handle(descriptor, "list")

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState:
        return self._handle(descriptor, "map")

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> ReducingState:
        return self._handle(descriptor, "reducing")

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> AggregatingState:
        return self._handle(descriptor, "aggregating")
