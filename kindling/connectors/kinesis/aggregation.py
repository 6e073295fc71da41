"""De-aggregation of KPL-aggregated Kinesis records, so that streams written by KPL producers read as their user records.

The Kinesis Producer Library packs many *user records* into one Kinesis record: the 4 magic bytes
``F3 89 9A C2``, a protobuf ``AggregatedRecord`` (a partition key table, an explicit hash key table, and
``Record`` messages that index into them and carry the data), then the 16-byte MD5 of the protobuf bytes.
Flink's legacy consumer de-aggregates with KCL 1.x ``UserRecord.deaggregate``; this module does the same:

* A record whose magic or MD5 does not match (or with nothing between them), or whose protobuf is malformed
  (a wire error, a missing required field, an index past its table, an explicit hash key that is not a
  decimal number), is a plain record and is read as it is. KCL reads all but the last two cases that way;
  for a bad index or hash key it keeps the user records before it and logs an error, where kindling reads
  the whole record as a plain one.
* A user record's hash key is its explicit hash key, else the MD5 of its partition key as a 128-bit
  number. When one user record's hash key lies outside the shard's hash key range, the *whole* Kinesis
  record is dropped, as KCL drops it: that happens when a KPL producer aggregated for a shard its stale
  shard map predicted, the record landed in another one after resharding, and the KPL put those user
  records again ("Wrong Shard"), so this copy is a duplicate. The shard's range comes from ListShards,
  asked by the executor once per stream and process (a shard id's range never changes), and only when
  a batch holds an aggregated record.
* The decoder is a minimal protobuf wire reader (no generated code, so no protobuf runtime to match):
  the ``aws-kinesis-agg`` package loads under protobuf 7, but only after putting its own directory on
  ``sys.path``, and its de-aggregator gives a user record without an explicit hash key the table's first
  one, which would make the hash key check drop records it must keep.

Where it happens: on the executor, where a micro-batch's Kinesis records are decoded into rows (also for a
replayed batch). The driver cuts micro-batches only between whole Kinesis records, so all user records
of a Kinesis record are in one micro-batch, and ``AFTER:<sequence number>`` in an offset means "this
record and every user record in it". Offsets therefore need no sub-sequence number, where Flink's
checkpoint can fall between two user records of one aggregate and keeps ``(sequenceNumber,
subSequenceNumber)``. The metadata columns stay the Kinesis record's: every user record of an aggregate
has its ``sequence-number`` and ``timestamp`` (approximate arrival), as in Flink's legacy consumer. No
column is added for a user record's partition key or sub-sequence number: Flink's metadata keys have none.

Under watermark synchronisation the driver reads each fetched record's event time before any batch is cut
(:mod:`kindling.connectors.kinesis.alignment`). An aggregated record is admitted whole, so it counts at
the *latest* event time of its user records: admission never lets an event time past the shards' limit,
and the slowest shard's next record is always admitted (counting at the earliest would let an aggregate
carry later times past the limit). The driver does not know the shards' hash key ranges, so a record
the executor will drop still counts. A user record earlier than the limit minus the watermark delay
would only be late when its aggregate spans more event time than the delay and is held back; a KPL
producer aggregates what it buffered for ``RecordMaxBufferedTime`` (100 ms by default).
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from kindling.connectors.kinesis.aws import kinesis_client, list_shards
from kindling.connectors.kinesis.options import SourceConfig

log = logging.getLogger("kindling.connectors.kinesis")

MAGIC = b"\xf3\x89\x9a\xc2"
DIGEST_SIZE = 16
HashRange = tuple[int, int]  # a shard's (starting, ending) hash key, both included

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_DECIMAL = re.compile(r"[+-]?[0-9]+")


class UserRecord(NamedTuple):
    """One user record of an aggregated Kinesis record."""

    partition_key: bytes
    explicit_hash_key: Optional[int]
    data: bytes

    def hash_key(self) -> int:
        """Where Kinesis would put it: the explicit hash key, else the MD5 of the partition key."""
        if self.explicit_hash_key is not None:
            return self.explicit_hash_key
        return int.from_bytes(hashlib.md5(self.partition_key).digest(), "big")


class _Malformed(Exception):
    pass


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while pos < end:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _Malformed("varint longer than 10 bytes")
    raise _Malformed("truncated varint")


def _fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value or start, end) of each field in ``buf[pos:end]``; the value of a
    varint, the slice of a length-delimited field, nothing (0, 0) for fixed-size ones."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed("field number 0")
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
            yield number, wire, value, 0
            continue
        if wire == _BYTES:
            length, pos = _varint(buf, pos, end)
            start, pos = pos, pos + length
        elif wire in (_FIXED64, _FIXED32):
            start, pos = 0, pos + (8 if wire == _FIXED64 else 4)
        else:
            raise _Malformed(f"wire type {wire}")  # groups: no field of these messages is one
        if pos > end:
            raise _Malformed("truncated field")
        yield number, wire, start, pos if wire == _BYTES else 0


def _parse(buf: bytes) -> list[UserRecord]:
    """The user records of a serialized ``AggregatedRecord``; ``_Malformed`` when it is not a valid one."""
    keys: list[bytes] = []
    hash_keys: list[int] = []
    entries: list[tuple[int, Optional[int], bytes]] = []
    for number, wire, a, b in _fields(buf, 0, len(buf)):
        if wire != _BYTES:
            continue  # an unknown field, or a known one with another wire type: protobuf skips both
        if number == 1:
            keys.append(buf[a:b])
        elif number == 2:
            text = buf[a:b].decode("ascii", "replace")
            if not _DECIMAL.fullmatch(text):
                raise _Malformed(f"explicit hash key {text!r} is not a decimal number")
            hash_keys.append(int(text))
        elif number == 3:
            key_index: Optional[int] = None
            hash_index: Optional[int] = None
            data: Optional[bytes] = None
            for inner, inner_wire, c, d in _fields(buf, a, b):
                if inner == 1 and inner_wire == _VARINT:
                    key_index = c
                elif inner == 2 and inner_wire == _VARINT:
                    hash_index = c
                elif inner == 3 and inner_wire == _BYTES:
                    data = buf[c:d]
            if key_index is None or data is None:
                raise _Malformed("a record lacks its required partition_key_index or data")
            entries.append((key_index, hash_index, data))
    records = []
    for key_index, hash_index, data in entries:
        if key_index >= len(keys) or (hash_index is not None and hash_index >= len(hash_keys)):
            raise _Malformed("a record's key index is past its table")
        records.append(UserRecord(keys[key_index], None if hash_index is None else hash_keys[hash_index], data))
    return records


def user_records(data: bytes) -> Optional[list[UserRecord]]:
    """The user records of a KPL-aggregated Kinesis record, or None when ``data`` is a plain record."""
    if len(data) <= len(MAGIC) + DIGEST_SIZE or not data.startswith(MAGIC):
        return None
    message = data[len(MAGIC):-DIGEST_SIZE]
    if hashlib.md5(message).digest() != data[-DIGEST_SIZE:]:
        return None
    try:
        return _parse(message)
    except _Malformed:
        return None


@dataclass
class Deaggregated:
    """Kinesis records' data with aggregated records replaced by their user records' data."""

    data: list[bytes]
    origin: Optional[list[int]] = None  # each entry's Kinesis record (index); None: no record was aggregated
    dropped: list[int] = field(default_factory=list)  # aggregated records dropped for the shard's hash key range


def deaggregate(data: Sequence[bytes], hash_range: Optional[Callable[[], HashRange]] = None) -> Deaggregated:
    """Replace every aggregated record in ``data`` by its user records' data. With ``hash_range`` (called at
    most once, on the first aggregated record), drop an aggregated record having a user record outside
    the range, as KCL does."""
    if not any(d[:len(MAGIC)] == MAGIC for d in data):
        return Deaggregated(list(data))
    out: list[bytes] = []
    origin: list[int] = []
    dropped: list[int] = []
    bounds: Optional[HashRange] = None
    for index, item in enumerate(data):
        records = user_records(item) if item[:len(MAGIC)] == MAGIC else None
        if records is None:
            out.append(item)
            origin.append(index)
            continue
        if hash_range is not None:
            bounds = bounds or hash_range()
            if any(not bounds[0] <= r.hash_key() <= bounds[1] for r in records):
                dropped.append(index)
                continue
        out.extend(r.data for r in records)
        origin.extend([index] * len(records))
    return Deaggregated(out, origin, dropped)


def deaggregate_batch(config: SourceConfig, shard: str, records: pa.RecordBatch) -> pa.RecordBatch:
    """The source's record batch (data, sequence number, arrival) of one shard with every aggregated
    record replaced by rows of its user records, which share its sequence number and arrival time."""
    if not pc.any(pc.starts_with(records.column(0), pattern=MAGIC)).as_py():
        return records  # no aggregated record: the common case, checked without copying the data to Python
    result = deaggregate(records.column(0).to_pylist(), lambda: shard_hash_range(config, shard))
    if result.origin is None:
        return records
    if result.dropped:
        first = records.column(1)[result.dropped[0]].as_py()
        log.warning("kinesis source: dropped %d KPL-aggregated record(s) in shard %s of stream %r holding user records "
                    "outside the shard's hash key range (put again by the KPL after resharding, as KCL drops them); "
                    "first at sequence number %s", len(result.dropped), shard, config.stream, first)
    taken = records.take(pa.array(result.origin, pa.int64()))
    return pa.RecordBatch.from_arrays([pa.array(result.data, pa.binary()), *taken.columns[1:]], schema=records.schema)


_ranges: dict[tuple, dict[str, HashRange]] = {}
_ranges_lock = threading.Lock()


def shard_hash_range(config: SourceConfig, shard: str) -> HashRange:
    """The shard's hash key range, from ListShards (asked once per stream in this process, again for a
    shard it did not list yet)."""
    key = (config.aws.endpoint, config.aws.region, config.stream)
    with _ranges_lock:
        known = _ranges.get(key, {})
        if shard in known:
            return known[shard]
        context = "kinesis source"
        try:
            listed: dict[str, HashRange] = {
                entry["ShardId"]: (int(entry["HashKeyRange"]["StartingHashKey"]), int(entry["HashKeyRange"]["EndingHashKey"]))
                for entry in list_shards(kinesis_client(config.aws, context), config.stream, config.list_shards_retry)}
        except Exception as exc:
            raise RuntimeError(f"{context}: cannot list the shards of stream {config.stream!r} at the {config.aws.describe()} "
                               f"for shard {shard}'s hash key range, which de-aggregating its KPL-aggregated records "
                               f"needs (the executors need kinesis:ListShards): {type(exc).__name__}: {exc}") from None
        _ranges[key] = listed
        if shard not in listed:
            raise RuntimeError(f"{context}: ListShards of stream {config.stream!r} does not return shard {shard}, whose "
                               "hash key range de-aggregating its KPL-aggregated records needs")
        return listed[shard]
