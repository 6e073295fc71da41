"""Watermark synchronisation across shards, without a server: where each shard's admission is cut."""

from __future__ import annotations

import time

from kindling.connectors.kinesis.alignment import ShardAligner


def test_every_shard_is_cut_at_the_slowest_frontier_plus_the_lookahead():
    aligner = ShardAligner(lookahead_ms=20, idle_interval_ms=-1, sync_interval_ms=0)
    for shard in ("a", "b", "c"):
        aligner.fetched(shard, 1)
    counts = aligner.admit({"a": [0, 10, 25, 30], "b": [100, 110], "c": [5, None, 21]}, set())
    assert counts == {"a": 2, "b": 0, "c": 2}
    # 'a' gave 10 last and has nothing new: without an idle interval it holds 'b' back (limit 30)
    assert aligner.admit({"a": [], "b": [100, 110], "c": [21]}, set()) == {"a": 0, "b": 0, "c": 1}


def test_quiet_closed_and_never_read_shards_hold_nothing_back():
    aligner = ShardAligner(lookahead_ms=0, idle_interval_ms=50, sync_interval_ms=0)
    aligner.fetched("a", 1)
    aligner.fetched("b", 1)
    aligner.fetched("never", 0)
    assert aligner.admit({"a": [1], "b": [100, 200], "never": []}, set()) == {"a": 1, "b": 0, "never": 0}
    assert aligner.admit({"a": [], "b": [100, 200], "never": []}, set()) == {"a": 0, "b": 0, "never": 0}
    time.sleep(0.06)  # 'a' is quiet for longer than the idle interval now
    assert aligner.admit({"a": [], "b": [100, 200], "never": []}, set()) == {"a": 0, "b": 1, "never": 0}
    assert aligner.idle == {"a", "never"}
    assert aligner.admit({"a": [], "b": [200], "never": []}, {"a"}) == {"a": 0, "b": 1, "never": 0}
