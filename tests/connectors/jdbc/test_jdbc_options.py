"""The jdbc connector's options and pure sink logic (no database): Flink's rules and messages."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kindling.connectors import get_connector
from kindling.connectors.base import ROWKIND_COLUMN, TABLE_PRIMARY_KEY
from kindling.connectors.jdbc.options import JdbcUrl, jdbc_config, masked_url, partition_ranges
from kindling.connectors.jdbc.sink import reduce_changes
from kindling.options import OptionError

BASE = {"url": "jdbc:postgresql://127.0.0.1:5432/db", "table-name": "t"}


def test_defaults_are_flinks():
    config = jdbc_config(BASE)
    assert config.dialect == "postgresql"
    assert config.options["scan.fetch-size"] == 0
    assert config.options["scan.auto-commit"] is True
    assert config.options["sink.buffer-flush.max-rows"] == 100
    assert config.options["sink.buffer-flush.interval"].total_seconds() == 1
    assert config.options["sink.max-retries"] == 3
    assert config.options["lookup.max-retries"] == 3
    assert config.options["lookup.cache"] == "NONE"
    assert config.options["lookup.partial-cache.cache-missing-key"] is True
    assert config.options["connection.max-retry-timeout"].total_seconds() == 60
    assert config.primary_key == ()


@pytest.mark.parametrize("url,dialect,port", [
    ("jdbc:mysql://localhost:3307/shop", "mysql", 3307),
    ("jdbc:mariadb://db/shop?useSSL=false", "mysql", 3306),
    ("jdbc:postgresql://db/shop", "postgresql", 5432),
])
def test_url_chooses_the_dialect(url, dialect, port):
    location = JdbcUrl.parse(url)
    assert (location.dialect, location.port, location.database) == (dialect, port, "shop")


def test_unknown_url_names_flinks_message():
    with pytest.raises(OptionError, match="Could not find any jdbc dialect factory that can handle url 'jdbc:oracle"):
        jdbc_config({**BASE, "url": "jdbc:oracle:thin:@host:1521:db"})


def test_username_and_password_both_or_neither():
    with pytest.raises(OptionError, match="Either all or none of the following options should be provided:\nusername\npassword"):
        jdbc_config({**BASE, "username": "u"})
    with pytest.raises(OptionError, match="username\npassword"):
        jdbc_config({**BASE, "password": "hunter2"})


def test_partition_options_all_or_none_and_bounds():
    with pytest.raises(OptionError, match="scan.partition.column\nscan.partition.num\nscan.partition.lower-bound\nscan.partition.upper-bound"):
        jdbc_config({**BASE, "scan.partition.column": "id"})
    parts = {"scan.partition.column": "id", "scan.partition.num": "2"}
    with pytest.raises(OptionError, match="'scan.partition.lower-bound'='10' must not be larger than 'scan.partition.upper-bound'='1'."):
        jdbc_config({**BASE, **parts, "scan.partition.lower-bound": "10", "scan.partition.upper-bound": "1"})


def test_retry_and_timeout_rules():
    with pytest.raises(OptionError, match="The value of 'sink.max-retries' option shouldn't be negative, but is -1."):
        jdbc_config({**BASE, "sink.max-retries": "-1"})
    with pytest.raises(OptionError, match="The value of 'lookup.max-retries' option shouldn't be negative"):
        jdbc_config({**BASE, "lookup.max-retries": "-2"})
    with pytest.raises(OptionError, match="must be in second granularity and shouldn't be smaller than 1 second, but is 500ms"):
        jdbc_config({**BASE, "connection.max-retry-timeout": "500ms"})
    with pytest.raises(OptionError, match="shouldn't be smaller than 1 second, but is 0 s"):
        jdbc_config({**BASE, "connection.max-retry-timeout": "0 s"})
    # Flink refuses only Duration.getSeconds() <= 0: 1500 ms is accepted (and read as 1 s)
    assert jdbc_config({**BASE, "connection.max-retry-timeout": "1500ms"}).max_retry_timeout.total_seconds() == 1.5
    with pytest.raises(OptionError, match="Either all or none of the following options should be provided:\nlookup.cache.max-rows\nlookup.cache.ttl"):
        jdbc_config({**BASE, "lookup.cache.max-rows": "10"})


def test_unknown_option_names_the_nearest():
    with pytest.raises(OptionError, match="did you mean 'scan.fetch-size'"):
        jdbc_config({**BASE, "scan.fetch-sise": "10"})


def test_connection_properties_prefix_and_missing_required():
    config = jdbc_config({**BASE, "connection-properties.sslmode": "disable"})
    assert config.properties == {"sslmode": "disable"}
    with pytest.raises(OptionError, match="'table-name' is required"):
        jdbc_config({"url": BASE["url"]})


def test_password_never_in_repr_or_messages():
    secret = "s3cr3t-PW"
    config = jdbc_config({**BASE, "username": "u", "password": secret})
    assert secret not in repr(config)
    assert secret not in config.describe()
    assert masked_url(f"jdbc:mysql://h/db?user=u&password={secret}") == "jdbc:mysql://h/db?user=u&password=******"
    with pytest.raises(OptionError) as error:
        jdbc_config({**BASE, "url": f"jdbc:sybase://h/db?password={secret}"})
    assert secret not in str(error.value)


def test_registered_as_jdbc_and_bounded():
    connector = get_connector("jdbc")
    assert connector.name == "jdbc"
    from kindling.connectors.jdbc.options import OPTIONS

    assert connector.is_bounded(OPTIONS.validate(BASE))


@pytest.mark.parametrize("lower,upper,num,expected", [
    (1, 10, 3, [(1, 4), (5, 7), (8, 10)]),
    (0, 9, 5, [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]),
    (1, 2, 5, [(1, 1), (2, 2)]),
    (5, 5, 1, [(5, 5)]),
    (-10, 10, 4, [(-10, -5), (-4, 0), (1, 5), (6, 10)]),
])
def test_partition_ranges_are_flinks(lower, upper, num, expected):
    assert partition_ranges(lower, upper, num) == expected


def test_changes_reduced_per_key_last_wins():
    table = pa.table({
        "k": [1, 2, 1, 1, 3, 2, 4],
        "v": ["a", "b", "a-old", "a2", "c", "b", "d"],
        ROWKIND_COLUMN: ["+I", "+I", "-U", "+U", "+I", "-D", "-D"],
    })
    upserts, deletes = reduce_changes(table, ("k",))
    assert sorted(zip(upserts["k"].to_pylist(), upserts["v"].to_pylist())) == [(1, "a2"), (3, "c")]
    assert sorted(deletes["k"].to_pylist()) == [2, 4]


def test_a_retraction_without_its_update_deletes_the_key():
    """Flink's reduced executor deletes on UPDATE_BEFORE: a filter over an aggregation let the old row's -U through
    and dropped the new row, so the key leaves the table; a -U followed by its +U leaves the +U."""
    table = pa.table({
        "k": [1, 2, 1, 2],
        "v": ["a", "b", "a", "b-old"],
        ROWKIND_COLUMN: ["+I", "+I", "-U", "-U"],
    })
    table = pa.concat_tables([table, pa.table({"k": [2], "v": ["b2"], ROWKIND_COLUMN: ["+U"]})])
    upserts, deletes = reduce_changes(table, ("k",))
    assert list(zip(upserts["k"].to_pylist(), upserts["v"].to_pylist())) == [(2, "b2")]
    assert deletes["k"].to_pylist() == [1]


def test_primary_key_reaches_the_config():
    assert jdbc_config({**BASE, TABLE_PRIMARY_KEY: "a;b"}).primary_key == ("a", "b")


def test_deprecated_lookup_cache_options_work_with_one_warning_each(caplog):
    import logging

    from kindling.connectors.jdbc import options
    from kindling.connectors.lookup_cache import PartialCache, cache_from_options

    options._warned.clear()
    legacy = {**BASE, "lookup.cache.max-rows": "10", "lookup.cache.ttl": "5 s", "lookup.cache.caching-missing-key": "false"}
    with caplog.at_level(logging.WARNING, logger="kindling.connectors.jdbc.options"):
        config = jdbc_config(legacy)
        jdbc_config(legacy)  # once per process and key
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "jdbc: option 'lookup.cache.max-rows' is deprecated, use 'lookup.partial-cache.max-rows' (with 'lookup.cache' = 'PARTIAL') instead",
        "jdbc: option 'lookup.cache.ttl' is deprecated, use 'lookup.partial-cache.expire-after-write' (with 'lookup.cache' = 'PARTIAL') instead",
        "jdbc: option 'lookup.cache.caching-missing-key' is deprecated, use 'lookup.partial-cache.cache-missing-key' "
        "(with 'lookup.cache' = 'PARTIAL') instead",
    ]
    cache = cache_from_options(config.options, lambda keys: {})
    assert isinstance(cache, PartialCache)  # the legacy options still build Flink's legacy cache
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kindling.connectors.jdbc.options"):
        jdbc_config({**BASE, "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"})
    assert caplog.records == []  # 'lookup.cache' itself is not deprecated


def test_a_lookup_retry_reconnects_within_max_retry_timeout():
    """``connection.max-retry-timeout`` bounds the new connection each retry opens (the first uses the connect timeout)."""
    from kindling.connectors.jdbc.dialects import JdbcError
    from kindling.connectors.jdbc.lookup import JdbcLookup

    config = jdbc_config({"url": "jdbc:postgresql://127.0.0.1:1/db", "table-name": "t", "lookup.max-retries": "2",
                          "connection.max-retry-timeout": "7 s"})
    waits: list[float] = []
    lookup = JdbcLookup(config, ["id"], ["name"], sleep=waits.append)
    timeouts: list = []
    connect = lookup.dialect.connect

    def observed(autocommit=False, timeout=None):
        timeouts.append(timeout)
        return connect(autocommit, timeout)  # the real client: port 1 refuses the connection

    lookup.dialect.connect = observed
    with pytest.raises(JdbcError, match="failed after 3 attempt"):
        lookup.lookup([1])
    assert timeouts == [None, 7, 7] and waits == [1, 2]
