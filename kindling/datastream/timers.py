"""Timers with Flink's semantics: per key, one timer per timestamp and time domain, fired once in time order.

Timers live in the key's state record (so they survive restarts with it). Spark's
transformWithState wakes a key group up: the group registers with Spark the earliest moment any
of its keys needs (``next_wake_up``), and when it is woken every due timer of its keys fires. In
Spark's processing-time mode that is the earliest processing-time timer, or the next micro-batch
while event-time timers are pending (they fire up to Spark's watermark); in Spark's event-time mode
(an operator that passes the watermark on, see operator.py) it is the earliest event-time timer,
and processing-time timers are not available.
"""

from __future__ import annotations

import enum
import types
from typing import Any, Dict, Iterable, Optional

from kindling.datastream.state import KeyState

MIN_WATERMARK = -(2**63)
MAX_WATERMARK = 2**63 - 1
TIMERS = "\x00timers"


class TimeDomain(enum.Enum):
    EVENT_TIME = 0
    PROCESSING_TIME = 1


class TimerService:
    """Flink's TimerService for the key being processed."""

    def __init__(self, runner: "object") -> None:
        self._runner = runner

    def current_processing_time(self) -> int:
        """The micro-batch's processing time (epoch ms): one clock reading per batch, as Spark gives it."""
        return self._runner.processing_time  # type: ignore[attr-defined]

    def current_watermark(self) -> int:
        """Spark's watermark for this micro-batch (epoch ms); Long.MIN before the first, Long.MAX at end of input."""
        return self._runner.watermark  # type: ignore[attr-defined]

    def register_event_time_timer(self, timestamp: int) -> None:
        _timers(self._runner.state)["event"].add(int(timestamp))  # type: ignore[attr-defined]
        self._runner.state.touch()  # type: ignore[attr-defined]

    def register_processing_time_timer(self, timestamp: int) -> None:
        if getattr(self._runner, "event_time_mode", False):
            raise RuntimeError(
                f"register_processing_time_timer in '{self._runner.operator_name}': this keyed operator runs in Spark's "  # type: ignore[attr-defined]
                "event-time mode (it passes the watermark on to the operators after it), which has no processing-time "
                "timers. Call register_processing_time_timer directly in the function's own methods (kindling looks "
                "for it there to choose the mode), or use an event-time timer."
            )
        _timers(self._runner.state)["proc"].add(int(timestamp))  # type: ignore[attr-defined]
        self._runner.state.touch()  # type: ignore[attr-defined]

    def delete_event_time_timer(self, timestamp: int) -> None:
        _timers(self._runner.state)["event"].discard(int(timestamp))  # type: ignore[attr-defined]
        self._runner.state.touch()  # type: ignore[attr-defined]

    def delete_processing_time_timer(self, timestamp: int) -> None:
        _timers(self._runner.state)["proc"].discard(int(timestamp))  # type: ignore[attr-defined]
        self._runner.state.touch()  # type: ignore[attr-defined]


def _timers(state: KeyState) -> dict:
    timers = state.data.get(TIMERS)
    if timers is None:
        timers = {"event": set(), "proc": set()}
        state.data[TIMERS] = timers
    return timers


def first_due(data: Optional[Dict[str, Any]], watermark: int, processing_time: int) -> Optional[tuple[int, int]]:
    """A key's earliest due timer (its state dict ``data``) as (timestamp, 0 for event time or 1 for processing time),
    ordered as :func:`next_due` fires them; None when none is due."""
    timers = data.get(TIMERS) if data else None
    if not timers:
        return None
    event = min((t for t in timers["event"] if t <= watermark), default=None)
    proc = min((t for t in timers["proc"] if t <= processing_time), default=None)
    if event is not None and (proc is None or event <= proc):
        return event, 0
    return None if proc is None else (proc, 1)


def next_due(state: KeyState, watermark: int, processing_time: int) -> Optional[tuple[int, TimeDomain]]:
    """Remove and return the earliest due timer (event time first on ties), or None."""
    due = first_due(state.data, watermark, processing_time)
    if due is None:
        return None
    timestamp, rank = due
    state.touch()
    domain = TimeDomain.EVENT_TIME if rank == 0 else TimeDomain.PROCESSING_TIME
    state.data[TIMERS]["event" if rank == 0 else "proc"].discard(timestamp)
    return timestamp, domain


def next_wake_up(states: Iterable[Dict[str, Any]], processing_time: int, event_time_mode: bool) -> Optional[int]:
    """When Spark must next wake the keys whose state dicts are ``states`` so that their pending timers fire.

    In Spark's event-time mode, at their earliest event-time timer (its firing fires every timer up
    to the watermark); in processing-time mode, at their earliest processing-time timer, or at the
    next micro-batch while event-time timers are pending (they fire when a batch's watermark passes them).
    """
    earliest: Optional[int] = None
    for data in states:
        timers = data.get(TIMERS)
        if not timers:
            continue
        candidates = set(timers["event"]) if event_time_mode else set(timers["proc"])
        if not event_time_mode and timers["event"]:
            candidates.add(processing_time + 1)
        if candidates:
            first = min(candidates)
            earliest = first if earliest is None else min(earliest, first)
    return earliest


def prune(state: KeyState) -> None:
    """Drop the timer entry when nothing is pending, so an idle key's state can be removed."""
    timers = state.data.get(TIMERS)
    if timers is not None and not timers["event"] and not timers["proc"]:
        del state.data[TIMERS]


_PROCESSING_TIMER_CALLS = frozenset({"register_processing_time_timer"})
_TIMER_CALLS = frozenset({"register_processing_time_timer", "register_event_time_timer"})


def registers_processing_time_timers(function: Any) -> bool:
    """Whether a user function (or trigger) calls ``register_processing_time_timer`` in its code.

    Its class's methods, and the objects it holds (a nested trigger, a wrapped function), are
    searched; a keyed operator needs Spark's processing-time mode exactly when this is true.
    """
    return _calls_any(function, _PROCESSING_TIMER_CALLS)


def registers_timers(function: Any) -> bool:
    """Whether a function, trigger or operator adapter calls ``register_event_time_timer`` or
    ``register_processing_time_timer`` in its code (searched as in :func:`registers_processing_time_timers`)."""
    return _calls_any(function, _TIMER_CALLS)


def _calls_any(function: Any, names: frozenset) -> bool:
    seen: set = set()

    def code_calls(code: types.CodeType) -> bool:
        if names & set(code.co_names):
            return True
        return any(isinstance(c, types.CodeType) and code_calls(c) for c in code.co_consts)

    def search(obj: Any, depth: int) -> bool:
        if obj is None or id(obj) in seen or depth > 3 or isinstance(obj, (str, bytes, int, float, bool)):
            return False
        seen.add(id(obj))
        code = getattr(obj, "__code__", None)
        if isinstance(code, types.CodeType):
            return code_calls(code)
        for cls in type(obj).__mro__:
            if cls.__module__ == "builtins":
                continue
            for member in vars(cls).values():
                member = getattr(member, "__func__", member)
                code = getattr(member, "__code__", None)
                if isinstance(code, types.CodeType) and code_calls(code):
                    return True
        held = vars(obj).values() if hasattr(obj, "__dict__") else ()
        return any(search(value, depth + 1) for value in held)

    return search(function, 0)
