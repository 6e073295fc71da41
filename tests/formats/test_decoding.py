"""Event time read on the driver: a stored column converted to epoch milliseconds as the rowtime converts it."""

from __future__ import annotations

from datetime import datetime, timezone

import pyarrow as pa

from kindling.formats import epoch_millis

T = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def test_numbers_count_their_unit_and_every_form_takes_the_offset():
    assert epoch_millis(pa.array([T, None])).to_pylist() == [T, None]
    assert epoch_millis(pa.array([T // 1000], pa.int32()), unit_ms=1000).to_pylist() == [T]
    assert epoch_millis(pa.array([T // 1000]), unit_ms=1000, offset_ms=-5000).to_pylist() == [T - 5000]
    stamp = datetime.fromtimestamp(T / 1000, timezone.utc)
    assert epoch_millis(pa.array([stamp]), unit_ms=1000, offset_ms=60_000).to_pylist() == [T + 60_000]
    assert epoch_millis(pa.array(["2023-11-14 22:13:20.000"]), offset_ms=1).to_pylist() == [T + 1]
