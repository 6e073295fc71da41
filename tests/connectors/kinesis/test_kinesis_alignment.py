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


def test_without_a_lookahead_no_shard_runs_past_another_shards_last_record():
    """Flink's per-shard watermark: each shard gives its records up to the smallest of the shards' last
    fetched event times, recomputed every batch whatever the sync interval."""
    aligner = ShardAligner(lookahead_ms=None, idle_interval_ms=-1, sync_interval_ms=60_000)
    for shard in ("a", "b"):
        aligner.fetched(shard, 1)
    assert aligner.admit({"a": [0, 10, 20], "b": [5, 15, 25, 35]}, set()) == {"a": 3, "b": 2}
    assert aligner.admit({"a": [30], "b": [25, 35]}, set()) == {"a": 1, "b": 1}, "limit 30 at once, not after 60 s"
    # 'a' gave 30 last and has nothing new: it holds 'b' at 30 until it is idle or gives more
    assert aligner.admit({"a": [], "b": [35, 45]}, set()) == {"a": 0, "b": 0}
    assert aligner.admit({"a": [], "b": [35, 45]}, {"a"}) == {"a": 0, "b": 2}, "a closed shard holds nothing back"
