"""PyFlink's ``Time``, ``Duration`` and ``Instant``.

``Time`` and ``Duration`` are ``timedelta``s, so every kindling API that takes a duration
(windows, watermark strategies, state TTL, checkpoint intervals) takes them unchanged.
"""

from __future__ import annotations

from datetime import timedelta


class Duration(timedelta):
    """A length of time: ``Duration.of_seconds(2)``, ``Duration.of_millis(500)``."""

    @staticmethod
    def of_days(days: int) -> "Duration":
        return Duration(days=days)

    @staticmethod
    def of_hours(hours: int) -> "Duration":
        return Duration(hours=hours)

    @staticmethod
    def of_minutes(minutes: int) -> "Duration":
        return Duration(minutes=minutes)

    @staticmethod
    def of_seconds(seconds: int) -> "Duration":
        return Duration(seconds=seconds)

    @staticmethod
    def of_millis(millis: int) -> "Duration":
        return Duration(milliseconds=millis)

    @staticmethod
    def of_nanos(nanos: int) -> "Duration":
        return Duration(microseconds=nanos / 1000)

    def to_milliseconds(self) -> int:
        return int(self / timedelta(milliseconds=1))

    def to_nanos(self) -> int:
        return int(self / timedelta(microseconds=1)) * 1000


class Time(timedelta):
    """The older window-size type: ``Time.seconds(5)``, ``Time.milliseconds(5)``."""

    @staticmethod
    def milliseconds(milliseconds: int) -> "Time":
        return Time(milliseconds=milliseconds)

    @staticmethod
    def seconds(seconds: int) -> "Time":
        return Time(seconds=seconds)

    @staticmethod
    def minutes(minutes: int) -> "Time":
        return Time(minutes=minutes)

    @staticmethod
    def hours(hours: int) -> "Time":
        return Time(hours=hours)

    @staticmethod
    def days(days: int) -> "Time":
        return Time(days=days)

    @staticmethod
    def of(size: int, unit: str) -> "Time":
        return Time(milliseconds=size * {"MILLISECONDS": 1, "SECONDS": 1000, "MINUTES": 60_000, "HOURS": 3_600_000,
                                         "DAYS": 86_400_000}[str(unit).split(".")[-1].upper()])

    def to_milliseconds(self) -> int:
        return int(self / timedelta(milliseconds=1))


class Instant:
    """A point in time: seconds and nanoseconds since the epoch."""

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds = seconds
        self.nanos = nanos

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> "Instant":
        return Instant(epoch_milli // 1000, (epoch_milli % 1000) * 1_000_000)

    @staticmethod
    def of_epoch_second(epoch_second: int) -> "Instant":
        return Instant(epoch_second, 0)

    def to_epoch_milli(self) -> int:
        return self.seconds * 1000 + self.nanos // 1_000_000

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and (self.seconds, self.nanos) == (other.seconds, other.nanos)

    def __hash__(self) -> int:
        return hash((self.seconds, self.nanos))

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"
