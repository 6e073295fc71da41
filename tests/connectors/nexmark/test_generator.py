"""The Nexmark generator: determinism, the 1:3:46 proportions, id relationships, event time and the table shape."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kindling.arrow import arrow_schema
from kindling.connectors import get_connector
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, with_eos
from kindling.connectors.nexmark import NEXMARK_SCHEMA, GeneratorConfig, generate
from kindling.connectors.nexmark.config import SOURCE_OPTIONS
from kindling.connectors.nexmark.generator import HOT_CHANNELS, US_STATES
from kindling.connectors.nexmark.source import NexmarkStreamReader, to_record_batch
from kindling.options import OptionError

BASE = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def config(**overrides) -> GeneratorConfig:
    options = SOURCE_OPTIONS.validate({"kindling.base-time": str(BASE), **overrides})
    return GeneratorConfig.from_options(options)


def table(cfg: GeneratorConfig, first: int, count: int) -> pa.Table:
    return pa.Table.from_batches([to_record_batch(generate(cfg, first, count), arrow_schema(NEXMARK_SCHEMA))])


def test_same_seed_same_events_and_any_split_gives_the_same_events():
    whole = table(config(**{"kindling.seed": "7"}), 0, 6000)
    again = table(config(**{"kindling.seed": "7"}), 0, 6000)
    pieces = pa.concat_tables([table(config(**{"kindling.seed": "7"}), a, b - a) for a, b in ((0, 1234), (1234, 5000), (5000, 6000))])
    other = table(config(**{"kindling.seed": "8"}), 0, 6000)
    assert whole.equals(again)
    assert whole.equals(pieces)
    assert not whole.column("bid").equals(other.column("bid"))
    # the seed changes the random fields, not the ids or times
    assert whole.column("event_type").equals(other.column("event_type"))
    assert whole.column("dateTime").equals(other.column("dateTime"))


def test_persons_auctions_and_bids_come_in_the_proportions_1_3_46():
    kinds = generate(config(), 0, 50_000).event_type
    assert np.bincount(kinds).tolist() == [1000, 3000, 46000]
    custom = generate(config(**{"person.proportion": "2", "auction.proportion": "2", "bid.proportion": "6"}), 0, 10_000).event_type
    assert np.bincount(custom).tolist() == [2000, 2000, 6000]


def test_each_row_is_set_for_its_event_type_only():
    t = table(config(), 0, 5000).to_pydict()
    for kind, row, person, auction, bid in zip(t["event_type"], t["dateTime"], t["person"], t["auction"], t["bid"]):
        present = [person is not None, auction is not None, bid is not None]
        assert present == [kind == 0, kind == 1, kind == 2]
        assert (person or auction or bid)["dateTime"] == row


def test_ids_grow_and_bids_and_auctions_reference_persons_and_auctions_created_before_them():
    t = table(config(), 0, 100_000).to_pydict()
    last_person = last_auction = None
    persons, auctions = [], []
    bid_auctions, bidders, sellers = [], [], []
    for kind, person, auction, bid in zip(t["event_type"], t["person"], t["auction"], t["bid"]):
        if kind == 0:
            assert last_person is None or person["id"] == last_person + 1
            last_person = person["id"]
            persons.append(last_person)
        elif kind == 1:
            assert last_auction is None or auction["id"] == last_auction + 1
            last_auction = auction["id"]
            auctions.append(last_auction)
            # a seller is a person created so far, or one of the next 10 (the generator's lead)
            assert 1000 <= auction["seller"] <= (last_person or 1000) + 10
            sellers.append(auction["seller"])
        else:
            assert 1000 <= bid["auction"] <= (last_auction or 1000) + 10
            assert 1000 <= bid["bidder"] <= (last_person or 1000) + 10
            bid_auctions.append(bid["auction"])
            bidders.append(bid["bidder"])
    assert persons[0] == 1001 and auctions[0] == 1001
    existing_auctions, existing_persons = set(auctions), set(persons)
    assert np.mean([a in existing_auctions for a in bid_auctions]) > 0.99
    # Event ids start at 1 in the Flink table source, so person 1000 (event 0) is never created,
    # yet it is the hot seller of the first 100 persons' time, as in the suite.
    assert np.mean([s in existing_persons for s in sellers if s != 1000]) > 0.98
    assert np.mean([b in existing_persons for b in bidders]) > 0.98
    # hot auctions and bidders: most bids go to few of them
    assert np.bincount(np.array(bid_auctions) - 1000).max() > 0.1 * len(bid_auctions) / (len(auctions) / 100)


def test_event_time_follows_the_rate():
    cfg = config(**{"first-event.rate": "1000", "next-event.rate": "1000"})
    ms = generate(cfg, 0, 5000).timestamp_ms
    # event n (counted from 1 as the Flink table source does) happens n / rate seconds after the base time
    assert ms.tolist() == (BASE + np.arange(1, 5001)).tolist()
    fast = generate(config(), 0, 100_000).timestamp_ms  # default 10,000 events/s
    assert np.all(np.diff(fast) >= 0)
    assert fast[-1] - fast[0] == pytest.approx(10_000, abs=1)
    # a square rate shape: 10 s at 1000/s, then 10 s at 100/s, repeated
    square = config(**{"first-event.rate": "1000", "next-event.rate": "100", "rate.period": "20 s"})
    times = square.timestamp_ms(np.array([1, 10_000, 10_001, 11_000, 11_001, 22_000]))
    assert (times - BASE).tolist() == [1, 10_000, 10_010, 20_000, 20_001, 40_000]
    assert square.events_due(10_000) == 10_000 and square.events_due(20_000) == 11_000


def test_values_stay_within_the_suites_domains():
    t = table(config(), 0, 50_000).to_pydict()
    bids = [b for b in t["bid"] if b]
    auctions = [a for a in t["auction"] if a]
    persons = [p for p in t["person"] if p]
    prices = np.array([b["price"] for b in bids])
    assert prices.min() >= 100 and prices.max() <= 100_000_000  # round(10^(6u) * 100)
    assert {a["category"] for a in auctions} == {10, 11, 12, 13, 14}
    assert all(a["reserve"] >= a["initialBid"] and a["expires"] > a["dateTime"] for a in auctions)
    assert {p["state"] for p in persons} <= set(US_STATES)
    assert all(len(p["creditCard"]) == 19 and p["emailAddress"].endswith(".com") for p in persons)
    hot = np.mean([b["channel"] in HOT_CHANNELS for b in bids])
    assert 0.45 < hot < 0.55
    assert all(b["url"].startswith("https://www.nexmark.com/") for b in bids)
    # extra pads each kind to its average size (100 / 200 / 500 bytes)
    bid_size = np.mean([32 + len(b["extra"]) for b in bids])
    assert 95 < bid_size < 105


def test_the_table_shape_is_the_flink_nexmark_table():
    assert [f.name for f in NEXMARK_SCHEMA.fields] == ["event_type", "person", "auction", "bid", "dateTime"]
    assert [f.name for f in NEXMARK_SCHEMA["person"].dataType.fields] == [
        "id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"]
    assert [f.name for f in NEXMARK_SCHEMA["auction"].dataType.fields] == [
        "id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"]
    assert [f.name for f in NEXMARK_SCHEMA["bid"].dataType.fields] == [
        "auction", "bidder", "price", "channel", "url", "dateTime", "extra"]
    batch = to_record_batch(generate(config(), 0, 100), arrow_schema(with_eos(NEXMARK_SCHEMA)))
    assert batch.schema == arrow_schema(with_eos(NEXMARK_SCHEMA))
    batch.validate(full=True)


def test_a_ddl_schema_may_name_fewer_fields_in_another_order_and_case():
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType, TimestampNTZType

    schema = StructType([
        StructField("event_type", IntegerType()),
        StructField("bid", StructType([StructField("PRICE", LongType()), StructField("dateTime", TimestampNTZType())])),
    ])
    batch = to_record_batch(generate(config(), 0, 100), arrow_schema(schema))
    full = to_record_batch(generate(config(), 0, 100), arrow_schema(NEXMARK_SCHEMA))
    bids = [b for b in batch.column("bid").to_pylist() if b]
    expected = [b for b in full.column("bid").to_pylist() if b]
    assert [b["PRICE"] for b in bids] == [b["price"] for b in expected]
    assert [b["dateTime"] for b in bids] == [b["dateTime"].replace(tzinfo=None) for b in expected]
    with pytest.raises(OptionError, match="no field 'colour'.*auction, bidder, price"):
        NexmarkStreamReader(StructType([StructField("bid", StructType([StructField("colour", LongType())]))]), {})
    with pytest.raises(OptionError, match="no column 'size'"):
        NexmarkStreamReader(StructType([StructField("size", LongType())]), {})


def test_options_use_the_suites_names_and_defaults_and_bad_ones_are_named():
    parsed = get_connector("nexmark").validate_source({})
    assert (parsed["first-event.rate"], parsed["next-event.rate"], parsed["events.num"]) == (10000, 10000, 0)
    assert (parsed["person.proportion"], parsed["auction.proportion"], parsed["bid.proportion"]) == (1, 3, 46)
    assert (parsed["bid.hot-ratio.auctions"], parsed["bid.hot-ratio.bidders"], parsed["auction.hot-ratio.sellers"]) == (2, 4, 4)
    assert not get_connector("nexmark").is_bounded(parsed)
    assert get_connector("nexmark").is_bounded(get_connector("nexmark").validate_source({"events.num": "10"}))
    assert not get_connector("nexmark").is_bounded(get_connector("nexmark").validate_source({"events.num": "10", "keep-alive": "true"}))
    with pytest.raises(OptionError, match="did you mean 'events.num'"):
        get_connector("nexmark").validate_source({"event.num": "10"})
    with pytest.raises(OptionError, match="'first-event.rate'.*at least 1"):
        get_connector("nexmark").validate_source({"first-event.rate": "0"})
    with pytest.raises(OptionError, match="kindling.base-time"):
        get_connector("nexmark").validate_source({"kindling.base-time": "yesterday"})


def test_offsets_admit_events_per_batch_and_end_with_the_marker():
    schema = with_eos(NEXMARK_SCHEMA)
    reader = NexmarkStreamReader(schema, {"events.num": "100000", "kindling.events-per-batch": "40000", "kindling.base-time": str(BASE),
                                          "scan.parallelism": "2"})
    start = reader.initialOffset()
    assert start == {"events": 0, "base-time": BASE}
    first = reader.latestOffset(start, ReadAllAvailable())
    second = reader.latestOffset(first, ReadMaxRows(10000))
    assert (first["events"], second["events"]) == (40000, 50000)
    last = reader.latestOffset(reader.latestOffset(second, ReadAllAvailable()), ReadAllAvailable())
    assert last == {"events": 100000, "base-time": BASE, EOS_OFFSET_KEY: True}
    assert reader.latestOffset(last, ReadAllAvailable()) == last
    parts = reader.partitions(first, second)
    assert [(p.start, p.end, p.eos) for p in parts] == [(40000, 50000, False)]
    final = reader.partitions({"events": 60000, "base-time": BASE}, last)
    assert [(p.start, p.end) for p in final] == [(60000, 80000), (80000, 100000)] and [p.eos for p in final] == [False, True]
    batches = [b for p in final for b in reader.read(p)]
    eos = pa.concat_arrays([b.column(EOS_COLUMN) for b in batches]).to_pylist()
    assert eos.count(True) == 1 and eos[-1] is True and len(eos) == 40001


def test_paced_sources_admit_events_as_their_event_time_comes():
    now = [100.0]
    reader = NexmarkStreamReader(with_eos(NEXMARK_SCHEMA),
                                 {"max-emit-speed": "false", "first-event.rate": "1000", "next-event.rate": "1000", "kindling.base-time": "0"},
                                 clock=lambda: now[0])
    start = reader.initialOffset()
    first = reader.latestOffset(start, ReadAllAvailable())
    now[0] += 2.5
    second = reader.latestOffset(first, ReadAllAvailable())
    assert second["events"] - first["events"] == pytest.approx(2500, abs=2)
