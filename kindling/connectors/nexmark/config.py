"""The Nexmark generator's configuration: Flink's option names and defaults, and event time from the rate.

Mirrors the public Nexmark suite (``NexmarkSourceOptions``, ``NexmarkConfiguration``,
``GeneratorConfig``): event ``n`` (counted from 1, as the Flink table source does) has event
id ``n + 1`` and event time ``base-time + n * inter-event delay``. With ``first-event.rate``
equal to ``next-event.rate`` (the default) the delay is constant; otherwise the rate follows
``rate.shape`` (``SQUARE``: alternate the two rates, ``SINE``: ten steps of a cosine between
them) over ``rate.period``, as in Beam's original generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np

from kindling.durations import parse_duration
from kindling.options import (
    OptionError,
    OptionSet,
    ParsedOptions,
    bool_option,
    enum_option,
    int_option,
    memory_option,
    string_option,
)

# -- options (Flink names and defaults) -------------------------------------------------------

RATE_SHAPE = enum_option("rate.shape", ("SQUARE", "SINE"), "SQUARE", "Shape of the event rate between first-event.rate and next-event.rate.")
RATE_PERIOD = string_option("rate.period", "600 s", "Period of the rate shape.")
RATE_LIMITED = bool_option("rate.limited", False, "Emit events only when they are due by their event time (like max-emit-speed = false).")
FIRST_EVENT_RATE = int_option("first-event.rate", 10000, "Initial event rate (events per second of event time).", minimum=1)
NEXT_EVENT_RATE = int_option("next-event.rate", 10000, "Next event rate (events per second of event time).", minimum=1)
PERSON_AVG_SIZE = memory_option("person.avg-size", 200, "Average size of a person event (pads 'extra').")
AUCTION_AVG_SIZE = memory_option("auction.avg-size", 500, "Average size of an auction event (pads 'extra').")
BID_AVG_SIZE = memory_option("bid.avg-size", 100, "Average size of a bid event (pads 'extra').")
PERSON_PROPORTION = int_option("person.proportion", 1, "Persons per totalProportion events.", minimum=0)
AUCTION_PROPORTION = int_option("auction.proportion", 3, "Auctions per totalProportion events.", minimum=1)
BID_PROPORTION = int_option("bid.proportion", 46, "Bids per totalProportion events.", minimum=0)
HOT_AUCTION_RATIO = int_option("bid.hot-ratio.auctions", 2, "1 - 1/ratio of bids go to the current hot auction.", minimum=1)
HOT_BIDDERS_RATIO = int_option("bid.hot-ratio.bidders", 4, "1 - 1/ratio of bids come from the current hot bidder.", minimum=1)
HOT_SELLERS_RATIO = int_option("auction.hot-ratio.sellers", 4, "1 - 1/ratio of auctions come from the current hot seller.", minimum=1)
EVENTS_NUM = int_option("events.num", 0, "Events to generate; 0 means unbounded.", minimum=0)
KEEP_ALIVE = bool_option("keep-alive", False, "Do not finish when every event was emitted (the source stays unbounded).")
STOP_AT = int_option("stop-at", -1, "Finish after this many events (-1: no limit).", minimum=-1)
MAX_EMIT_SPEED = bool_option("max-emit-speed", True, "Emit as fast as possible; false paces events by their event time.")
# kindling's own options.
SEED = int_option("kindling.seed", None, "Seed of the random fields (kindling's own option; the events are a pure function of it).")
BASE_TIME = string_option(
    "kindling.base-time", None,
    "Event time of event 0: epoch milliseconds or an ISO timestamp (kindling's own option; default: when the job starts).",
)
EVENTS_PER_BATCH = int_option(
    "kindling.events-per-batch", 10_000_000,
    "At most this many events per micro-batch (kindling's own option).", minimum=1,
)
SCAN_PARALLELISM = int_option("scan.parallelism", None, "At most this many Spark partitions per micro-batch (default: the driver's cores).",
                              minimum=1)

SOURCE_OPTIONS = OptionSet(
    "nexmark",
    (
        RATE_SHAPE, RATE_PERIOD, RATE_LIMITED, FIRST_EVENT_RATE, NEXT_EVENT_RATE,
        PERSON_AVG_SIZE, AUCTION_AVG_SIZE, BID_AVG_SIZE,
        PERSON_PROPORTION, AUCTION_PROPORTION, BID_PROPORTION,
        HOT_AUCTION_RATIO, HOT_BIDDERS_RATIO, HOT_SELLERS_RATIO,
        EVENTS_NUM, KEEP_ALIVE, STOP_AT, MAX_EMIT_SPEED,
        SEED, BASE_TIME, EVENTS_PER_BATCH, SCAN_PARALLELISM,
    ),
)

DEFAULT_SEED = 0x6E65786D61726B  # "nexmark"
# As in GeneratorConfig: ids start high so that queries find matches on small runs.
FIRST_AUCTION_ID = 1000
FIRST_PERSON_ID = 1000
FIRST_CATEGORY_ID = 10
# The Flink table source starts event ids and event numbers at 1.
FIRST_EVENT_ID = 1
FIRST_EVENT_NUMBER = 1
# NexmarkConfiguration defaults that have no table option.
NUM_IN_FLIGHT_AUCTIONS = 100
NUM_ACTIVE_PEOPLE = 1000
SINE_STEPS = 10


def parse_base_time(raw: Optional[str]) -> Optional[int]:
    """``kindling.base-time`` as epoch milliseconds (a number, or an ISO-8601 timestamp taken as UTC)."""
    if raw is None:
        return None
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        pass
    from datetime import datetime, timezone

    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise OptionError(
            f"nexmark option 'kindling.base-time' has value {raw!r}: expected epoch milliseconds or an ISO timestamp "
            "such as '2026-01-01T00:00:00'"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


@dataclass(frozen=True)
class GeneratorConfig:
    """Everything an event depends on besides its number: proportions, ratios, sizes, rates, seed, base time."""

    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46
    hot_auction_ratio: int = 2
    hot_bidders_ratio: int = 4
    hot_sellers_ratio: int = 4
    avg_person_size: int = 200
    avg_auction_size: int = 500
    avg_bid_size: int = 100
    first_event_rate: int = 10000
    next_event_rate: int = 10000
    rate_shape: str = "SQUARE"
    rate_period_sec: int = 600
    seed: int = DEFAULT_SEED
    base_time_ms: int = 0
    # Number of events; None means unbounded.
    max_events: Optional[int] = None

    @property
    def total_proportion(self) -> int:
        return self.person_proportion + self.auction_proportion + self.bid_proportion

    @staticmethod
    def from_options(options: ParsedOptions, base_time_ms: Optional[int] = None) -> "GeneratorConfig":
        """The generator's configuration from validated connector options (base time: the option, else the argument)."""
        total = options["person.proportion"] + options["auction.proportion"] + options["bid.proportion"]
        if total <= 0:
            raise OptionError("nexmark options 'person.proportion', 'auction.proportion' and 'bid.proportion' must not all be 0")
        try:
            period = parse_duration(options["rate.period"], name="rate.period")
        except ValueError as exc:
            raise OptionError(f"nexmark option {exc}") from None
        base = parse_base_time(options.get("kindling.base-time"))
        return GeneratorConfig(
            person_proportion=options["person.proportion"],
            auction_proportion=options["auction.proportion"],
            bid_proportion=options["bid.proportion"],
            hot_auction_ratio=options["bid.hot-ratio.auctions"],
            hot_bidders_ratio=options["bid.hot-ratio.bidders"],
            hot_sellers_ratio=options["auction.hot-ratio.sellers"],
            avg_person_size=options["person.avg-size"],
            avg_auction_size=options["auction.avg-size"],
            avg_bid_size=options["bid.avg-size"],
            first_event_rate=options["first-event.rate"],
            next_event_rate=options["next-event.rate"],
            rate_shape=options["rate.shape"],
            rate_period_sec=max(1, int(period.total_seconds())),
            seed=options.get("kindling.seed", DEFAULT_SEED),
            base_time_ms=base if base is not None else (base_time_ms or 0),
            max_events=max_events(options),
        )

    # -- event time from the rate ---------------------------------------------------------------

    def inter_event_delays_us(self) -> list[float]:
        """Microseconds between events for each step of the rate shape (one step when the rates are equal)."""
        first, nxt = self.first_event_rate, self.next_event_rate
        if first == nxt:
            return [1_000_000.0 / first]
        if self.rate_shape == "SQUARE":
            return [1_000_000.0 / first, 1_000_000.0 / nxt]
        mid, amp = (first + nxt) / 2.0, (first - nxt) / 2.0
        return [1_000_000.0 / max(1, _java_round(mid + amp * math.cos(2.0 * math.pi * i / SINE_STEPS))) for i in range(SINE_STEPS)]

    def _steps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
        """Per step: delay, events, first event offset, epoch offset in ms; then events and ms per epoch."""
        delays = np.array(self.inter_event_delays_us(), dtype=np.float64)
        steps = 2 if self.rate_shape == "SQUARE" else SINE_STEPS
        step_length_sec = (self.rate_period_sec + steps - 1) // steps
        counts = np.floor(step_length_sec * 1_000_000 / delays).astype(np.int64)
        durations_ms = (counts * delays / 1000.0).astype(np.int64)
        first_event = np.concatenate([[0], np.cumsum(counts)[:-1]])
        offset_ms = np.concatenate([[0], np.cumsum(durations_ms)[:-1]])
        return delays, first_event, offset_ms, int(counts.sum()), int(durations_ms.sum())

    def timestamp_ms(self, event_number: np.ndarray) -> np.ndarray:
        """Event time (epoch ms) of events by number, as GeneratorConfig.timestampForEvent."""
        n = np.asarray(event_number, dtype=np.int64)
        delays = self.inter_event_delays_us()
        if len(delays) == 1:
            return self.base_time_ms + (np.floor(n * delays[0]).astype(np.int64) // 1000)
        delay, first_event, offset_ms, per_epoch, epoch_ms = self._steps()
        epoch, rest = np.divmod(n, per_epoch)
        step = np.searchsorted(first_event, rest, side="right") - 1
        in_step_us = np.floor((rest - first_event[step]) * delay[step]).astype(np.int64)
        return self.base_time_ms + epoch * epoch_ms + offset_ms[step] + in_step_us // 1000

    def events_due(self, elapsed_ms: float) -> int:
        """How many events (counted from event number FIRST_EVENT_NUMBER) have an event time within ``elapsed_ms`` of the start."""
        delays = self.inter_event_delays_us()
        if len(delays) == 1:
            due = int(elapsed_ms * 1000.0 / delays[0]) + 1
        else:
            delay, first_event, offset_ms, per_epoch, epoch_ms = self._steps()
            epoch, rest_ms = divmod(int(elapsed_ms), max(1, epoch_ms))
            step = int(np.searchsorted(offset_ms, rest_ms, side="right") - 1)
            due = epoch * per_epoch + int(first_event[step]) + int((rest_ms - offset_ms[step]) * 1000.0 / delay[step]) + 1
        return max(0, due - FIRST_EVENT_NUMBER)


def max_events(options: ParsedOptions) -> Optional[int]:
    """Events a source with these options emits before it ends, or None when it never ends."""
    if options["keep-alive"]:
        return None
    limits = [n for n in (options["events.num"], options["stop-at"]) if n and n > 0]
    if options["stop-at"] == 0:
        limits.append(0)
    return min(limits) if limits else None


def _java_round(x: float) -> int:
    return int(math.floor(x + 0.5))


def validate(options: Mapping[str, Any]) -> ParsedOptions:
    """Connector options, checked: the option set, the rate period and the base time."""
    parsed = SOURCE_OPTIONS.validate(options)
    GeneratorConfig.from_options(parsed)
    return parsed


__all__ = ["GeneratorConfig", "SOURCE_OPTIONS", "validate", "max_events"]
