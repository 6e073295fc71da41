"""The nexmark source read by Spark: a bounded run delivers exactly the generated events, then ends."""

from __future__ import annotations

from collections import Counter

import pytest

from kindling import WatermarkStrategy
from kindling.connectors.base import Source
from kindling.connectors.nexmark import GeneratorConfig, generate
from kindling.connectors.nexmark.config import SOURCE_OPTIONS

BASE = 1_700_000_000_000


@pytest.mark.integration
def test_a_bounded_run_reads_every_generated_event_once_over_several_batches(env):
    options = {"events.num": 30_000, "kindling.base-time": BASE, "kindling.events-per-batch": 12_000, "scan.parallelism": 2}
    source = Source("nexmark", options)
    assert source.bounded
    stream = env.from_source(source, WatermarkStrategy.for_bounded_out_of_orderness("4 s").with_timestamp_assigner("dateTime"))
    rows = stream.execute_and_collect(timeout=300)

    expected = generate(GeneratorConfig.from_options(SOURCE_OPTIONS.validate({k: str(v) for k, v in options.items()})), 0, 30_000)
    assert Counter(r["event_type"] for r in rows) == Counter(expected.event_type.tolist())
    got_bids = Counter((r["bid"]["auction"], r["bid"]["bidder"], r["bid"]["price"], r["bid"]["extra"]) for r in rows if r["event_type"] == 2)
    want_bids = Counter((b["auction"], b["bidder"], b["price"], b["extra"]) for b in expected.bid.to_pylist() if b)
    assert got_bids == want_bids
    got_people = sorted((r["person"]["id"], r["person"]["name"], r["dateTime"].timestamp()) for r in rows if r["event_type"] == 0)
    want_people = sorted((p["id"], p["name"], p["dateTime"].timestamp()) for p in expected.person.to_pylist() if p)
    assert got_people == want_people
