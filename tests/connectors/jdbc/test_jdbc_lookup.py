"""Batched jdbc lookups against real servers, alone and behind a PARTIAL cache (no Spark)."""

from __future__ import annotations

import os
import sys
from datetime import timedelta

import pytest

from kindling.connectors.jdbc.lookup import JdbcLookup
from kindling.connectors.jdbc.options import jdbc_config
from kindling.connectors.lookup_cache import PartialCache

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import execute, table_name  # noqa: E402

pytestmark = pytest.mark.integration


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("server", ["postgres", "mysql"])
def test_lookup_fetches_a_batch_of_keys_in_one_query(request, server):
    db = request.getfixturevalue(server)
    target = table_name("dim")
    execute(db, f"CREATE TABLE {target} (id BIGINT, country VARCHAR(10), zip VARCHAR(10))",
            f"INSERT INTO {target} VALUES (1, 'US', '10001'), (2, 'DE', '10115'), (3, 'US', '94105'), (3, 'CA', 'H2X')")
    config = jdbc_config({"url": db.url, "username": db.user, "password": db.password, "table-name": target})
    lookup = JdbcLookup(config, ["id"], ["country", "zip"])
    found = lookup.lookup([1, 3, 1, 9, None])
    assert lookup.queries == 1
    assert found[1] == [("US", "10001")] and sorted(found[3]) == [("CA", "H2X"), ("US", "94105")] and 9 not in found
    composite = JdbcLookup(config, ["id", "country"], ["zip"])
    assert composite.lookup([(3, "US"), (2, "DE"), (2, "US")]) == {(3, "US"): [("94105",)], (2, "DE"): [("10115",)]}

    clock = Clock()
    cache = PartialCache(lookup.lookup, expire_after_write=timedelta(seconds=60), clock=clock)
    assert cache.get_all([1, 2]) == {1: [("US", "10001")], 2: [("DE", "10115")]}
    execute(db, f"UPDATE {target} SET zip = '10002' WHERE id = 1")
    assert cache.get(1) == [("US", "10001")]  # cached: the change is not seen yet
    clock.now = 61
    assert cache.get(1) == [("US", "10002")]  # expired after write: the probe sees the current value
    assert (cache.metrics.hits, cache.metrics.misses) == (1, 3)
    lookup.close()
    composite.close()


def test_a_lookup_retries_through_a_database_restart_and_fails_after_max_retries():
    """``lookup.max-retries``: a failed query reconnects and runs again after 1 s, 2 s, ...; here the database is
    restarted during the first wait (the wait is the test's hook), so the second attempt finds the rows."""
    import shutil
    import tempfile
    from pathlib import Path

    from kindling.connectors.jdbc.dialects import JdbcError
    from kindling.local.postgres import LocalPostgres

    # a data directory of its own that outlives a stop (under /tmp: as root the server runs as 'postgres')
    data = Path(tempfile.mkdtemp(prefix="kindling-lookup-restart-"))
    server = LocalPostgres(data_dir=data)
    server.start()
    try:
        execute(server, "CREATE TABLE dim (id BIGINT, name VARCHAR(10))", "INSERT INTO dim VALUES (1, 'one'), (2, 'two')")
        options = {"url": server.url, "username": server.user, "password": server.password, "table-name": "dim"}
        waits: list[float] = []

        def restart_during_the_wait(seconds: float) -> None:
            waits.append(seconds)
            server.start()

        lookup = JdbcLookup(jdbc_config(options), ["id"], ["name"], sleep=restart_during_the_wait)
        assert lookup.lookup([1]) == {1: [("one",)]}
        server.stop()
        assert lookup.lookup([2, 1]) == {1: [("one",)], 2: [("two",)]}
        assert waits == [1]
        server.stop()
        once = JdbcLookup(jdbc_config({**options, "lookup.max-retries": "0"}), ["id"], ["name"], sleep=waits.append)
        with pytest.raises(JdbcError, match="jdbc lookup on table 'dim' at .* failed after 1 attempt") as error:
            once.lookup([1])
        assert server.password not in str(error.value) and waits == [1]
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize("server", ["postgres", "mysql"])
def test_full_cache_reloads_the_table_in_the_background(request, server):
    """``lookup.cache = FULL`` with a short PERIODIC interval against the real table: the first load blocks ``open``,
    the background thread reloads, a probe sees rows changed in the database once a reload ran (never by querying
    on a miss), and a failed reload fails the next lookup."""
    import time

    from kindling.connectors.lookup_cache import FullCache, cache_from_options

    db = request.getfixturevalue(server)
    target = table_name("full")
    execute(db, f"CREATE TABLE {target} (id BIGINT, name VARCHAR(10))",
            f"INSERT INTO {target} VALUES (1, 'one'), (2, 'two')")
    config = jdbc_config({**db.options(), "table-name": target, "lookup.cache": "FULL",
                          "lookup.full-cache.periodic-reload.interval": "200 ms", "lookup.max-retries": "0"})
    lookup = JdbcLookup(config, ["id"], ["name"])
    cache = cache_from_options(config.options, lookup.lookup, lookup.scan)
    assert isinstance(cache, FullCache)
    cache.open()
    try:
        assert cache.get_all([1, 2, 3]) == {1: [("one",)], 2: [("two",)], 3: []}
        loads, queries = cache.metrics.loads, lookup.queries
        execute(db, f"UPDATE {target} SET name = 'uno' WHERE id = 1", f"DELETE FROM {target} WHERE id = 2",
                f"INSERT INTO {target} VALUES (3, 'three')")
        expected = {1: [("uno",)], 2: [], 3: [("three",)]}
        deadline = time.monotonic() + 60
        while cache.get_all([1, 2, 3]) != expected:
            assert time.monotonic() < deadline, (cache.get_all([1, 2, 3]), cache.metrics)
            time.sleep(0.05)  # polling for the background reload
        assert cache.metrics.loads > loads and lookup.queries > queries  # reloads are scans, by the thread
        assert cache.metrics.misses == 0
        execute(db, f"DROP TABLE {target}")
        deadline = time.monotonic() + 60
        while cache.metrics.load_failures == 0:
            assert time.monotonic() < deadline, cache.metrics
            time.sleep(0.05)  # polling for a reload that fails
        with pytest.raises(RuntimeError, match="the FULL lookup cache failed to reload"):
            cache.get_all([1])
    finally:
        cache.close()
        lookup.close()
