"""Window functions with Flink's names: ProcessWindowFunction (with window metadata), WindowFunction, and their all-window twins."""

from __future__ import annotations

from typing import Any, Iterable

from kindling.datastream.process import RichFunction
from kindling.datastream.side_outputs import OutputTag
from kindling.datastream.windows import TimeWindow


class WindowContext:
    """What a ProcessWindowFunction learns about the firing: the window, the clocks, side outputs."""

    def __class_getitem__(cls, parameters: Any) -> Any:  # ProcessWindowFunction.Context[TimeWindow]
        return cls

    def __init__(self, runner: Any) -> None:
        self._runner = runner
        self._window: Any = None

    def window(self) -> TimeWindow:
        return self._window

    def current_processing_time(self) -> int:
        return self._runner.processing_time

    def current_watermark(self) -> int:
        return self._runner.watermark

    def output(self, output_tag: OutputTag, value: Any) -> None:
        self._runner.emit_side(output_tag.tag_id, value)


class ProcessWindowFunction(RichFunction):
    """Gets all of a window's elements (or the pre-aggregated result) with the key and window metadata."""

    Context = WindowContext

    def process(self, key: Any, context: WindowContext, elements: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError

    def clear(self, context: WindowContext) -> None:
        pass


class ProcessAllWindowFunction(RichFunction):
    """The ProcessWindowFunction of ``window_all``: no key."""

    Context = WindowContext

    def process(self, context: WindowContext, elements: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError


class WindowFunction(RichFunction):
    """The older window function: key, window and elements."""

    def apply(self, key: Any, window: TimeWindow, inputs: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError


class AllWindowFunction(RichFunction):
    def apply(self, window: TimeWindow, inputs: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError
