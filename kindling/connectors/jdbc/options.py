"""The ``jdbc`` connector's options: Flink's names, types, defaults and cross-option rules.

One option set serves the source, the sink and (later) lookups, as in Flink's
``JdbcDynamicTableFactory``. :func:`jdbc_config` validates a table's options exactly as
``validateConfigOptions`` does (same rules, same messages) and returns a :class:`JdbcConfig`
holding everything a reader or writer needs. The password lives only in ``JdbcConfig.password``,
which is left out of ``repr`` and of every message; a URL is shown with any ``password=`` query
parameter masked.

URLs: ``jdbc:postgresql://host[:port]/database[?k=v&...]``, ``jdbc:mysql://...`` and
``jdbc:mariadb://...`` (both served by the MySQL dialect through PyMySQL). Query parameters of the
URL and ``connection-properties.*`` options are passed to the Python client where they have a
meaning there (``user``, ``password``, ``connectTimeout``, ``sslmode``, ...) and ignored otherwise
(``rewriteBatchedStatements`` is what PyMySQL's ``executemany`` always does).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Mapping, Optional
from urllib.parse import parse_qsl, unquote

from kindling.connectors.base import TABLE_COLUMN_TYPES, TABLE_PRIMARY_KEY
from kindling.connectors.lookup_cache import lookup_options
from kindling.options import (
    OptionError,
    OptionSet,
    bool_option,
    duration_option,
    enum_option,
    int_option,
    string_option,
)

log = logging.getLogger(__name__)

PROPERTIES_PREFIX = "connection-properties."
LOOKUP_CACHES = ("NONE", "PARTIAL", "FULL")

OPTIONS = OptionSet(
    "jdbc",
    [
        string_option("url", None, "The JDBC database url.", required=True),
        string_option("table-name", None, "The name of JDBC table to connect.", required=True),
        string_option("driver", None, "The class name of the JDBC driver (accepted; kindling picks the Python client from the url)."),
        string_option("compatible-mode", None, "The compatible mode of database (accepted; no effect for MySQL/PostgreSQL)."),
        string_option("username", None, "The JDBC user name."),
        string_option("password", None, "The JDBC password."),
        duration_option("connection.max-retry-timeout", timedelta(seconds=60), "Maximum timeout between retries. "
                        "In kindling: the connect timeout of the new connection a retry opens (a failed sink commit or "
                        "lookup drops its connection; Flink checks the old one's validity with this timeout instead), "
                        "in whole seconds as Flink reads it."),
        string_option("scan.partition.column", None, "The column name used for partitioning the input."),
        int_option("scan.partition.num", None, "The number of partitions."),
        int_option("scan.partition.lower-bound", None, "The smallest value of the first partition."),
        int_option("scan.partition.upper-bound", None, "The largest value of the last partition."),
        int_option("scan.fetch-size", 0, "Gives the reader a hint as to the number of rows that should be fetched "
                   "from the database per round-trip when reading. If the value is zero, the hint is ignored."),
        bool_option("scan.auto-commit", True, "Sets whether the driver is in auto-commit mode."),
        enum_option("filter.handling.policy", ("always", "never"), "always", "Filter push down policy."),
        *lookup_options(LOOKUP_CACHES),
        int_option("lookup.cache.max-rows", -1, "Deprecated: use lookup.partial-cache.max-rows."),
        duration_option("lookup.cache.ttl", timedelta(seconds=10), "Deprecated: use lookup.partial-cache.expire-after-write."),
        bool_option("lookup.cache.caching-missing-key", True, "Deprecated: use lookup.partial-cache.cache-missing-key."),
        int_option("sink.buffer-flush.max-rows", 100, "The flush max size (rows per batched statement), over this "
                   "number of records, will flush data."),
        duration_option("sink.buffer-flush.interval", timedelta(seconds=1), "The flush interval mills (a micro-batch "
                        "is kindling's buffer: accepted, no timer)."),
        int_option("sink.max-retries", 3, "The max retry times if writing records to database failed."),
        int_option("sink.parallelism", None, "Accepted; Spark's partitioning decides."),
    ],
    prefixes=(PROPERTIES_PREFIX,),
)


# Flink 1.16 (FLIP-221) replaced the legacy lookup cache options; they still work, with a warning.
DEPRECATED_LOOKUP_OPTIONS = {
    "lookup.cache.max-rows": "lookup.partial-cache.max-rows",
    "lookup.cache.ttl": "lookup.partial-cache.expire-after-write",
    "lookup.cache.caching-missing-key": "lookup.partial-cache.cache-missing-key",
}
_warned: set[str] = set()


def _warn_deprecated(raw: Mapping[str, Any]) -> None:
    """One warning per process and deprecated key used, naming the option that replaces it."""
    for key, replacement in DEPRECATED_LOOKUP_OPTIONS.items():
        if raw.get(key) is not None and key not in _warned:
            _warned.add(key)
            log.warning("jdbc: option '%s' is deprecated, use '%s' (with 'lookup.cache' = 'PARTIAL') instead",
                        key, replacement)


def _all_or_none(raw: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    """Flink's ``FactoryUtil``-style check: either every key or none of them (its message)."""
    given = [k for k in keys if raw.get(k) is not None]
    if given and len(given) != len(keys):
        raise OptionError("Either all or none of the following options should be provided:\n" + "\n".join(keys))


_PASSWORD_IN_URL = re.compile(r"(?i)(password=)[^&;]*")


def masked_url(url: str) -> str:
    """The URL with a ``password=`` parameter masked, for messages."""
    return _PASSWORD_IN_URL.sub(r"\1******", url)


@dataclass(frozen=True)
class JdbcUrl:
    """A parsed JDBC URL: the dialect's name, where the server is, which database, the query parameters."""

    dialect: str  # 'mysql' or 'postgresql'
    host: str
    port: int
    database: Optional[str]
    params: dict[str, str] = field(repr=False)

    @staticmethod
    def parse(url: str) -> "JdbcUrl":
        match = re.match(r"(?i)^jdbc:(mysql|mariadb|postgresql)://([^/?;]*)(?:/([^?;]*))?(?:[?;](.*))?$", url.strip())
        if match is None:
            raise OptionError(
                f"Could not find any jdbc dialect factory that can handle url '{masked_url(url)}'. kindling's jdbc "
                "connector supports 'jdbc:mysql://host[:port]/database', 'jdbc:mariadb://...' and "
                "'jdbc:postgresql://host[:port]/database' (option 'url')"
            )
        scheme, authority, database, query = match.groups()
        dialect = "postgresql" if scheme.lower() == "postgresql" else "mysql"
        host, port = authority or "localhost", None
        if "@" in host:  # user[:password]@host is not JDBC syntax; refuse rather than leak it
            raise OptionError("option 'url' must not carry credentials before the host; use 'username' and 'password'")
        if host.startswith("["):
            end = host.index("]")
            host, rest = host[1:end], host[end + 1:]
            port = rest[1:] if rest.startswith(":") else None
        elif ":" in host:
            host, port = host.rsplit(":", 1)
        if "," in host or (port is not None and "," in port):
            raise OptionError(f"option 'url' names several hosts ({masked_url(url)}); kindling connects to one")
        try:
            number = int(port) if port else (5432 if dialect == "postgresql" else 3306)
        except ValueError:
            raise OptionError(f"option 'url' has port {port!r}, which is not a number ({masked_url(url)})") from None
        params = dict(parse_qsl(query.replace(";", "&"), keep_blank_values=True)) if query else {}
        return JdbcUrl(dialect, host, number, unquote(database) if database else None, params)


@dataclass(frozen=True)
class JdbcConfig:
    """Everything a JDBC reader or writer needs, validated. ``password`` never appears in ``repr``."""

    url: str
    location: JdbcUrl
    table: str
    username: Optional[str]
    password: Optional[str] = field(repr=False)
    properties: dict[str, str] = field(repr=False)
    max_retry_timeout: timedelta
    primary_key: tuple[str, ...]
    partition_column: Optional[str]
    partition_num: Optional[int]
    lower_bound: Optional[int]
    upper_bound: Optional[int]
    fetch_size: int
    auto_commit: bool
    flush_max_rows: int
    sink_max_retries: int
    lookup_max_retries: int
    options: dict[str, Any] = field(repr=False)
    # the DDL's Flink types per column (``kindling.table.column-types``), for the dialect's checks; None without a DDL
    column_types: Optional[dict[str, str]] = field(default=None, repr=False)

    @property
    def dialect(self) -> str:
        return self.location.dialect

    @property
    def partitioned(self) -> bool:
        return self.partition_column is not None

    def describe(self) -> str:
        """``'<table>' at <url>`` for messages (password masked)."""
        return f"table '{self.table}' at {masked_url(self.url)}"


def jdbc_config(raw: Mapping[str, Any]) -> JdbcConfig:
    """Validate a jdbc table's options (Flink's ``validateConfigOptions`` rules and messages)."""
    parsed = OPTIONS.validate(raw)
    values = {k: v for k, v in raw.items()}
    _all_or_none(values, ("username", "password"))
    _all_or_none(values, ("scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
                          "scan.partition.upper-bound"))
    lower, upper = parsed.get("scan.partition.lower-bound"), parsed.get("scan.partition.upper-bound")
    if lower is not None and upper is not None and lower > upper:
        raise OptionError(f"'scan.partition.lower-bound'='{lower}' must not be larger than "
                          f"'scan.partition.upper-bound'='{upper}'.")
    _all_or_none(values, ("lookup.cache.max-rows", "lookup.cache.ttl"))
    _warn_deprecated(values)
    for key in ("lookup.max-retries", "sink.max-retries"):
        if parsed[key] < 0:
            raise OptionError(f"The value of '{key}' option shouldn't be negative, but is {parsed[key]}.")
    timeout: timedelta = parsed["connection.max-retry-timeout"]
    if int(timeout.total_seconds()) <= 0:  # Flink: Duration.getSeconds() <= 0 (1500 ms is 1 s, 999 ms is refused)
        raise OptionError("The value of 'connection.max-retry-timeout' option must be in second granularity and "
                          f"shouldn't be smaller than 1 second, but is {raw.get('connection.max-retry-timeout')}.")
    num = parsed.get("scan.partition.num")
    if num is not None and num < 1:
        raise OptionError(f"option 'scan.partition.num' must be at least 1, but is {num}")
    if parsed["scan.fetch-size"] < 0:
        raise OptionError(f"option 'scan.fetch-size' must not be negative, but is {parsed['scan.fetch-size']}")
    if parsed["sink.buffer-flush.max-rows"] < 0:
        raise OptionError(f"option 'sink.buffer-flush.max-rows' must not be negative, but is {parsed['sink.buffer-flush.max-rows']}")
    url = parsed["url"]
    location = JdbcUrl.parse(url)
    if not location.database:
        raise OptionError(f"option 'url' names no database ({masked_url(url)}): jdbc:{location.dialect}://host:port/<database>")
    key_text = parsed.extra.get(TABLE_PRIMARY_KEY) or ""
    types_text = parsed.extra.get(TABLE_COLUMN_TYPES)
    column_types = json.loads(types_text) if types_text else None
    primary_key = tuple(k.strip() for k in key_text.split(";") if k.strip())
    properties = {**location.params, **parsed.with_prefix(PROPERTIES_PREFIX)}
    username = parsed.get("username") or properties.pop("user", None)
    password = parsed.get("password") or properties.pop("password", None)
    properties.pop("user", None)
    properties.pop("password", None)
    return JdbcConfig(
        url=url, location=location, table=parsed["table-name"], username=username, password=password,
        properties=properties, max_retry_timeout=timeout, primary_key=primary_key,
        partition_column=parsed.get("scan.partition.column"), partition_num=num, lower_bound=lower, upper_bound=upper,
        fetch_size=parsed["scan.fetch-size"], auto_commit=parsed["scan.auto-commit"],
        flush_max_rows=parsed["sink.buffer-flush.max-rows"], sink_max_retries=parsed["sink.max-retries"],
        lookup_max_retries=parsed["lookup.max-retries"], options=dict(parsed.values), column_types=column_types,
    )


def partition_ranges(lower: int, upper: int, num: int) -> list[tuple[int, int]]:
    """Flink's ``JdbcNumericBetweenParametersProvider(lower, upper).ofBatchNum(num)``: inclusive ranges,
    the first ones one value longer than the later ones, the last ending exactly at ``upper``."""
    count = upper - lower + 1
    batches = min(num, count)
    size = -(-count // batches)  # ceil
    bigger = count - (size - 1) * batches  # how many ranges get ``size`` values
    ranges = []
    start = lower
    for index in range(batches):
        end = start + (size if index < bigger else size - 1) - 1
        ranges.append((start, end))
        start = end + 1
    return ranges
