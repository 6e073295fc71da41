"""The Kinesis connector's options: Flink's two dialects, the AWS options, and the rules between them.

Two source dialects, as Flink users write them (connectors.md §3):

* **4.x / ``kinesis-legacy``**: ``stream``, ``scan.stream.initpos`` (``LATEST``, ``TRIM_HORIZON``,
  ``AT_TIMESTAMP``), ``scan.stream.initpos-timestamp[-format]``, ``scan.stream.recordpublisher``,
  ``scan.stream.efo.*``, ``scan.shard.*``, ``scan.watermark.*``. Unlisted ``scan.*`` keys pass through
  unvalidated, as in Flink (kindling logs a warning naming the nearest known key).
* **5.x ``kinesis``**: ``stream.arn``, ``source.init.position``, ``source.init.timestamp[.format]``,
  ``source.shard.discovery.interval``, ``source.reader.type``, ``source.efo.*``.

``'connector' = 'kinesis'`` accepts either dialect but not both at once (the error names one option of
each); ``kinesis-legacy`` accepts only the legacy one. ``aws.*`` options are shared; unlisted ``aws.*``
keys pass through. ``aws.credentials.X`` and Flink's ``aws.credentials.provider.X`` spellings are the same
option. Secret values (secret key, session token) are never part of an error message or a log line.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Optional

from kindling.connectors.base import TABLE_METADATA, TABLE_PARTITION_KEYS, TABLE_ROWTIME, rowtime_millis
from kindling.formats import FormatSettings
from kindling.formats.settings import line_delimiter
from kindling.options import (
    ConfigOption,
    OptionError,
    OptionSet,
    ParsedOptions,
    bool_option,
    duration_option,
    enum_option,
    float_option,
    int_option,
    memory_option,
    nearest,
    string_option,
)

log = logging.getLogger("kindling.connectors.kinesis")

FORMATS = ("json", "csv", "raw")
INIT_POSITIONS = ("LATEST", "TRIM_HORIZON", "AT_TIMESTAMP")
PUBLISHERS = ("POLLING", "EFO")
REGISTRATIONS = ("LAZY", "EAGER", "NONE")
PROVIDERS = ("AUTO", "BASIC", "ENV_VAR", "SYS_PROP", "PROFILE", "ASSUME_ROLE", "WEB_IDENTITY_TOKEN", "CUSTOM")
DEFAULT_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
# Flink's Kinesis metadata keys -> what the column holds.
METADATA_KEYS = {
    "timestamp": "TIMESTAMP_LTZ(3): the record's approximate arrival time",
    "shard-id": "STRING: the shard the record was read from",
    "sequence-number": "STRING: the record's sequence number",
}
MAX_RECORDS_PER_GET = 10_000
MAX_PARTITION_KEY = 256

_FORMAT_OPTIONS: list[ConfigOption[Any]] = [
    enum_option("format", FORMATS, None, "Format of the record data.", required=True),
    bool_option("json.ignore-parse-errors", False, "Skip records that are not valid JSON for the schema (counted and logged)."),
    bool_option("json.fail-on-missing-field", False, "Fail on records that lack a field of the schema."),
    enum_option("json.timestamp-format.standard", ("SQL", "ISO-8601"), "SQL", "How TIMESTAMP values are written."),
    bool_option("json.encode.decimal-as-plain-number", False, "Accepted for compatibility."),
    string_option("csv.field-delimiter", ",", "Field delimiter character."),
    string_option("csv.line-delimiter", "", "What ends each written record: '' (Flink SQL's csv format), '\\n', '\\r' or "
                  "'\\r\\n' (the DataStream API's CsvRowSerializationSchema ends records with '\\n'); reading accepts either."),
    bool_option("csv.ignore-parse-errors", False, "Skip records that are not valid CSV for the schema (counted and logged)."),
]

# aws.credentials.X keys; each is also accepted as Flink's aws.credentials.provider.X.
_CREDENTIAL_KEYS = (
    "basic.accesskeyid", "basic.secretkey", "basic.sessiontoken", "profile.path", "profile.name",
    "role.arn", "role.sessionName", "role.externalId", "role.stsEndpoint", "role.provider",
    "webIdentityToken.file", "custom.class",
)
SECRET_KEYS = ("aws.credentials.basic.secretkey", "aws.credentials.basic.sessiontoken")

_AWS_OPTIONS: list[ConfigOption[Any]] = [
    string_option("aws.region", None, "AWS region (also used to sign requests to 'aws.endpoint')."),
    string_option("aws.endpoint", None, "A custom endpoint, e.g. http://127.0.0.1:4568 for a local server."),
    bool_option("aws.trust.all.certificates", False, "Do not verify the endpoint's TLS certificate (testing only)."),
    enum_option("aws.credentials.provider", PROVIDERS, "AUTO", "Where the AWS credentials come from."),
    *[string_option("aws.credentials." + key, None) for key in _CREDENTIAL_KEYS],
]


def _retry_options(prefix: str, retries: int, base: int, cap: int, expconst: float = 1.5) -> list[ConfigOption[Any]]:
    return [
        int_option(prefix + ".maxretries", retries, "Retries before failing.", minimum=0),
        int_option(prefix + ".backoff.base", base, "First back-off (ms).", minimum=0),
        int_option(prefix + ".backoff.max", cap, "Longest back-off (ms).", minimum=0),
        float_option(prefix + ".backoff.expconst", expconst, "Back-off growth factor.", minimum=1.0),
    ]


LEGACY_SOURCE_OPTIONS: list[ConfigOption[Any]] = [
    string_option("stream", None, "Name of the stream to read (legacy dialect)."),
    enum_option("scan.stream.initpos", INIT_POSITIONS, None, "Where a new job starts reading (default LATEST)."),
    string_option("scan.stream.initpos-timestamp", None, "AT_TIMESTAMP start: epoch seconds (e.g. 1459799926.480) or a date string."),
    string_option("scan.stream.initpos-timestamp-format", None, "SimpleDateFormat of 'scan.stream.initpos-timestamp'."),
    enum_option("scan.stream.recordpublisher", PUBLISHERS, None, "POLLING (GetRecords) or EFO (SubscribeToShard)."),
    string_option("scan.stream.efo.consumername", None, "EFO consumer name."),
    enum_option("scan.stream.efo.registration", REGISTRATIONS, None, "EFO consumer registration strategy."),
    int_option("scan.stream.efo.http-client.max-concurrency", 10000, minimum=1),
    enum_option("scan.shard-assigner", ("default", "uniform"), "default", "Accepted; Spark assigns shards to tasks."),
    int_option("scan.shard.discovery.intervalmillis", None, "Shard discovery period (ms, default 10000).", minimum=0),
    int_option("scan.shard.getrecords.maxrecordcount", None, "Records per GetRecords call (default and maximum 10000).", minimum=1),
    int_option("scan.shard.getrecords.intervalmillis", 200, "Pause between GetRecords calls to one shard (ms).", minimum=0),
    *_retry_options("scan.shard.getrecords", 3, 300, 1000),
    *_retry_options("scan.shard.getiterator", 3, 300, 1000),
    *_retry_options("scan.shard.subscribetoshard", 10, 1000, 2000),
    *_retry_options("scan.list.shards", 10, 1000, 5000),
    *_retry_options("scan.stream.describe", 50, 2000, 5000),
    bool_option("scan.shard.adaptivereads", False, "Accepted; kindling reads maxrecordcount records per call."),
    int_option("scan.shard.idle.interval", -1, "After this long (ms) without records a shard is idle for watermarks; -1 = never."),
    int_option("scan.watermark.sync.interval", 30000, "Global watermark sync period (ms).", minimum=0),
    int_option("scan.watermark.lookahead.millis", 0, "How far a shard may run ahead of the global watermark (ms).", minimum=0),
    int_option("scan.watermark.sync.queue.capacity", 100, "Per-shard emit queue size under alignment.", minimum=1),
]

NEW_SOURCE_OPTIONS: list[ConfigOption[Any]] = [
    string_option("stream.arn", None, "ARN of the stream to read (5.x dialect)."),
    enum_option("source.init.position", INIT_POSITIONS, None, "Where a new job starts reading (default LATEST)."),
    string_option("source.init.timestamp", None, "AT_TIMESTAMP start, as 'scan.stream.initpos-timestamp'."),
    string_option("source.init.timestamp.format", None, "SimpleDateFormat of 'source.init.timestamp'."),
    duration_option("source.shard.discovery.interval", None, "Shard discovery period (default 10 s)."),
    enum_option("source.reader.type", PUBLISHERS, None, "POLLING or EFO."),
    int_option("source.shard.get-records.max-record-count", None, "Records per GetRecords call (default 10000).", minimum=1),
    duration_option("source.reader.empty-records-fetch-interval", None, "Pause after an empty GetRecords (default 250 ms)."),
    string_option("source.efo.consumer.name", None, "EFO consumer name."),
    enum_option("source.efo.lifecycle", ("JOB_MANAGED", "SELF_MANAGED"), None, "Who registers the EFO consumer."),
    duration_option("source.efo.subscription.timeout", timedelta(seconds=60)),
    duration_option("source.efo.deregister.timeout", timedelta(seconds=10)),
    int_option("source.efo.describe.retry-strategy.attempts.max", 100, minimum=1),
    duration_option("source.efo.describe.retry-strategy.delay.min", timedelta(seconds=2)),
    duration_option("source.efo.describe.retry-strategy.delay.max", timedelta(seconds=60)),
    enum_option("source.shard-assigner", ("default", "uniform"), None, "Accepted; Spark assigns shards to tasks."),
    int_option("retry-strategy.attempts.max", 50, "Attempts of every other AWS call.", minimum=1),
    duration_option("retry-strategy.delay.min", timedelta(milliseconds=300)),
    duration_option("retry-strategy.delay.max", timedelta(seconds=1)),
]

_LEGACY_KEYS = frozenset(o.key for o in LEGACY_SOURCE_OPTIONS)
_NEW_KEYS = frozenset(o.key for o in NEW_SOURCE_OPTIONS)


def _source_set(name: str, legacy_only: bool) -> OptionSet:
    options = _FORMAT_OPTIONS + _AWS_OPTIONS + LEGACY_SOURCE_OPTIONS + ([] if legacy_only else NEW_SOURCE_OPTIONS)
    return OptionSet(f"{name} source", options,
                     prefixes=("aws.", "scan.stream.efo.consumerarn.", "scan.", "shard.consumer.error.recoverable"))


SOURCE_OPTIONS = _source_set("kinesis", legacy_only=False)
LEGACY_OPTIONS = _source_set("kinesis-legacy", legacy_only=True)

SINK_OPTIONS = OptionSet(
    "kinesis sink",
    [
        string_option("stream", None, "Name of the stream to write to."),
        string_option("stream.arn", None, "ARN of the stream to write to."),
        *_FORMAT_OPTIONS,
        *_AWS_OPTIONS,
        string_option("sink.partitioner", None,
                      "'random' (a UUID per record) or 'fixed' (the Spark task index); with PARTITIONED BY the "
                      "partition key is built from those columns."),
        string_option("sink.partitioner-field-delimiter", "|", "Joins the PARTITIONED BY values into the partition key."),
        int_option("sink.batch.max-size", 500, "Records per PutRecords request (at most 500).", minimum=1),
        int_option("sink.requests.max-inflight", 50, "PutRecords requests in flight per task.", minimum=1),
        int_option("sink.requests.max-buffered", 10000, "Records buffered per task before writing waits.", minimum=1),
        memory_option("sink.flush-buffer.size", 5 * 1024 * 1024, "Batch bytes before a PutRecords is sent."),
        int_option("sink.flush-buffer.timeout", 5000, "Longest time (ms) a record waits in the buffer.", minimum=0),
        bool_option("sink.fail-on-error", False, "Fail the task on a failed record instead of re-queuing it."),
        memory_option("sink.max-record-size", 1024 * 1024, "Largest record (data plus partition key) accepted."),
        int_option("sink.http-client.max-concurrency", 10000, minimum=1),
        int_option("sink.http-client.read-timeout", 360000, minimum=1),
        string_option("sink.http-client.protocol.version", "HTTP2"),
    ],
    prefixes=("aws.", "sink.producer."),
)


def canonical(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Flink's ``aws.credentials.provider.X`` spelling -> ``aws.credentials.X``; other keys as given."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        lowered = key.lower()
        if lowered.startswith("aws.credentials.provider."):
            key = "aws.credentials." + key[len("aws.credentials.provider."):]
        out[key] = value
    return out


# ---------------------------------------------------------------------------------------------------------
# AWS connection settings
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AwsSettings:
    """Region, endpoint and credential provider; secrets are kept out of ``repr``."""

    region: Optional[str]
    endpoint: Optional[str]
    trust_all_certificates: bool
    provider: str
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        """Where requests go, for error messages (never a secret)."""
        return f"endpoint {self.endpoint or 'of region ' + str(self.region)!s} (region {self.region}, credentials provider {self.provider})"


def _aws_settings(parsed: ParsedOptions, context: str, region_from_arn: Optional[str] = None) -> AwsSettings:
    credentials = {key: parsed.get("aws.credentials." + key) for key in _CREDENTIAL_KEYS if parsed.get("aws.credentials." + key) is not None}
    region = parsed.get("aws.region") or region_from_arn
    endpoint = parsed.get("aws.endpoint")
    if not region and not endpoint:
        raise OptionError(f"{context} option 'aws.region' is required (or 'aws.endpoint' with it, for a custom endpoint), "
                          "e.g. 'us-east-1'")
    if endpoint and not re.match(r"^https?://[^/\s]+", endpoint):
        raise OptionError(f"{context} option 'aws.endpoint' has value {endpoint!r}; allowed: a URL like 'http://127.0.0.1:4568'")
    provider = parsed["aws.credentials.provider"]
    _check_provider(provider, credentials, context, "aws.credentials")
    return AwsSettings(region or "us-east-1", endpoint, bool(parsed["aws.trust.all.certificates"]), provider, credentials)


def _check_provider(provider: str, credentials: Mapping[str, str], context: str, prefix: str) -> None:
    """The options each credential provider needs, checked before any request."""
    if provider == "BASIC":
        for key in ("basic.accesskeyid", "basic.secretkey"):
            if not credentials.get(key):
                raise OptionError(f"{context} option '{prefix}.{key}' is required with 'aws.credentials.provider' = 'BASIC'")
    elif provider in ("ASSUME_ROLE",):
        for key in ("role.arn", "role.sessionName"):
            if not credentials.get(key):
                raise OptionError(f"{context} option '{prefix}.{key}' is required with 'aws.credentials.provider' = '{provider}'")
        nested = credentials.get("role.provider") or "AUTO"
        if nested.upper() not in PROVIDERS:
            raise OptionError(f"{context} option '{prefix}.role.provider' has value {nested!r}; allowed values: "
                              + ", ".join(f"'{p}'" for p in PROVIDERS))
    elif provider == "CUSTOM":
        raise OptionError(f"{context} option 'aws.credentials.provider' = 'CUSTOM' names a Java class "
                          f"('{prefix}.custom.class'), which kindling cannot load; use AUTO, BASIC, ENV_VAR, PROFILE, "
                          "ASSUME_ROLE or WEB_IDENTITY_TOKEN")


# ---------------------------------------------------------------------------------------------------------
# Timestamps: epoch seconds or a SimpleDateFormat pattern
# ---------------------------------------------------------------------------------------------------------

_SDF = [  # longest tokens first
    ("yyyy", "%Y"), ("yy", "%y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("hh", "%I"), ("mm", "%M"),
    ("ss", "%S"), ("SSS", "%f"), ("XXX", "%z"), ("XX", "%z"), ("X", "%z"), ("Z", "%z"), ("a", "%p"),
    ("EEE", "%a"), ("MMM", "%b"),
]


def _strptime_pattern(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ValueError("unterminated quote")
            out.append(pattern[i + 1:end].replace("%", "%%") if end > i + 1 else "'")
            i = end + 1
            continue
        for token, directive in sorted(_SDF, key=lambda t: -len(t[0])):
            if pattern.startswith(token, i):
                out.append(directive)
                i += len(token)
                break
        else:
            if ch.isalpha():
                raise ValueError(f"pattern letter {ch!r} is not supported")
            out.append("%%" if ch == "%" else ch)
            i += 1
    return "".join(out)


def parse_start_timestamp(text: str, pattern: Optional[str], context: str, key: str, format_key: str) -> int:
    """Flink's AT_TIMESTAMP start: non-negative epoch seconds as a double, or a date in ``pattern``
    (SimpleDateFormat, default ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX``; no zone means UTC) -> epoch milliseconds."""
    value = text.strip()
    if re.fullmatch(r"\d+(\.\d*)?", value):
        return int(round(float(value) * 1000))
    if re.fullmatch(r"-\d+(\.\d*)?", value):
        raise OptionError(f"{context} option '{key}' has value {text!r}; epoch seconds must not be negative")
    fmt = pattern or DEFAULT_TIMESTAMP_FORMAT
    try:
        strp = _strptime_pattern(fmt)
    except ValueError as exc:
        raise OptionError(f"{context} option '{format_key}' has value {fmt!r}: {exc}") from None
    candidate = value
    if "%z" in strp and re.search(r"[+-]00:?00$|Z$", candidate):
        candidate = re.sub(r"Z$", "+0000", candidate)
    try:
        parsed = datetime.strptime(candidate, strp)
    except ValueError:
        raise OptionError(
            f"{context} option '{key}' has value {text!r}, which is neither epoch seconds (e.g. '1459799926.480') "
            f"nor a date in format {fmt!r} (option '{format_key}'), e.g. '2016-04-04T19:58:46.480-00:00'"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


# ---------------------------------------------------------------------------------------------------------
# Source settings
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceConfig:
    stream: str
    stream_arn: Optional[str]
    aws: AwsSettings
    format: FormatSettings
    init_position: str
    init_timestamp_ms: Optional[int]
    publisher: str
    discovery_interval_ms: int
    max_records_per_get: int
    get_records_interval_ms: int
    get_records_retry: tuple[int, int, int, float]
    get_iterator_retry: tuple[int, int, int, float]
    list_shards_retry: tuple[int, int, int, float]
    idle_interval_ms: int
    metadata: tuple[tuple[str, str], ...] = ()
    efo_consumer_name: Optional[str] = None
    efo_registration: str = "LAZY"
    efo_consumer_arn: Optional[str] = None  # scan.stream.efo.consumerarn.<stream>
    subscribe_retry: tuple[int, int, int, float] = (10, 1000, 2000, 1.5)
    # Watermark synchronisation: how far (ms) a shard may run ahead of the slowest one; None when not set.
    lookahead_ms: Optional[int] = None
    sync_interval_ms: int = 30_000
    rowtime: Optional[str] = None  # the event-time column (the table's rowtime), else the arrival time
    rowtime_millis: tuple[int, int] = (1, 0)  # (unit_ms, offset_ms) from the rowtime column to the rowtime


def _retry(parsed: ParsedOptions, prefix: str) -> tuple[int, int, int, float]:
    return (int(parsed[prefix + ".maxretries"]), int(parsed[prefix + ".backoff.base"]),
            int(parsed[prefix + ".backoff.max"]), float(parsed[prefix + ".backoff.expconst"]))


def _format(parsed: ParsedOptions, raw: Mapping[str, Any], context: str) -> FormatSettings:
    name = parsed["format"]
    for key in sorted(k.lower() for k in raw):
        family = key.split(".", 1)[0]
        if family in ("json", "csv") and "." in key and family != name:
            raise OptionError(f"{context} option '{key}' belongs to the '{family}' format, but 'format' is {name!r}; "
                              f"remove it or set 'format' = '{family}'")
    delimiter = str(parsed["csv.field-delimiter"]).replace("\\t", "\t")
    if len(delimiter) != 1:
        raise OptionError(f"{context} option 'csv.field-delimiter' has value {parsed['csv.field-delimiter']!r}; allowed: a single character")
    return FormatSettings(
        name=name,
        ignore_parse_errors=bool(parsed.get(f"{name}.ignore-parse-errors")) if name in ("json", "csv") else False,
        fail_on_missing_field=bool(parsed["json.fail-on-missing-field"]),
        timestamp_standard=parsed["json.timestamp-format.standard"] or "SQL",
        field_delimiter=delimiter,
        line_delimiter=line_delimiter(parsed["csv.line-delimiter"] or "", context),
    )


_ARN = re.compile(r"^arn:aws[a-zA-Z-]*:kinesis:([a-z0-9-]+):(\d{12}):stream/([A-Za-z0-9_.-]{1,128})$")


def parse_metadata(text: Optional[str], context: str) -> tuple[tuple[str, str], ...]:
    """``kindling.table.metadata`` (JSON ``[[column, key, virtual], ...]``) -> ``((column, key), ...)``."""
    import json

    if not text:
        return ()
    try:
        pairs = tuple((str(e[0]), str(e[1]).lower()) for e in json.loads(text))
    except (ValueError, TypeError, IndexError, KeyError):
        raise OptionError(f"{context} option '{TABLE_METADATA}' has value {text!r}; allowed: a JSON list of "
                          '[column, key, virtual] entries, e.g. [["arrival", "timestamp", true]]') from None
    for column, key in pairs:
        if key not in METADATA_KEYS:
            hint = nearest(key, METADATA_KEYS)
            raise OptionError(f"{context}: metadata column {column!r} reads key {key!r}, which Kinesis does not have"
                              + (f"; did you mean '{hint}'?" if hint else "") + " Available keys: " + ", ".join(METADATA_KEYS))
    return pairs


def metadata_option(pairs: list[tuple[str, str]]) -> str:
    """The ``kindling.table.metadata`` value for (column, key) pairs."""
    import json

    return json.dumps([[column, key, True] for column, key in pairs])


def source_config(raw: Mapping[str, Any], connector: str = "kinesis") -> SourceConfig:
    """Validate source options (each one, then the rules between them) and return typed settings."""
    context = f"{connector} source"
    raw = canonical(raw)
    option_set = LEGACY_OPTIONS if connector == "kinesis-legacy" else SOURCE_OPTIONS
    lowered = {k.lower(): k for k in raw}
    if connector == "kinesis-legacy":
        stray = sorted(k for k in lowered if k in _NEW_KEYS or k.startswith("source."))
        if stray:
            raise OptionError(f"{context} option '{lowered[stray[0]]}' belongs to the 5.x 'kinesis' connector; "
                              "'kinesis-legacy' takes 'stream' and 'scan.*' options (or use 'connector' = 'kinesis')")
    parsed = option_set.validate(raw)
    legacy = sorted(k for k in lowered if k in _LEGACY_KEYS or (k.startswith("scan.") and k not in _NEW_KEYS))
    new = sorted(k for k in lowered if k in _NEW_KEYS or k.startswith("source."))
    if legacy and new:
        raise OptionError(
            f"{context} options '{lowered[legacy[0]]}' (4.x/kinesis-legacy dialect) and '{lowered[new[0]]}' (5.x dialect) "
            "cannot be mixed: use 'stream' with 'scan.*' options, or 'stream.arn' with 'source.*' options"
        )
    for key in sorted(parsed.extra):
        if key.lower().startswith("scan.") and not key.lower().startswith("scan.stream.efo.consumerarn."):
            hint = nearest(key.lower(), [k for k in _LEGACY_KEYS if k.startswith("scan.")])
            log.warning("%s: option '%s' is not one kindling knows; passed through unvalidated as Flink does%s",
                        context, key, f" (did you mean '{hint}'?)" if hint else "")
    stream, arn = parsed.get("stream"), parsed.get("stream.arn")
    if bool(stream) == bool(arn):
        given = f"'stream' = {stream!r} and 'stream.arn' = {arn!r}" if stream else "neither"
        raise OptionError(f"{context} needs exactly one of 'stream' (a stream name) and 'stream.arn' (a stream ARN); got {given}")
    region_from_arn = None
    if arn:
        match = _ARN.match(arn)
        if not match:
            raise OptionError(f"{context} option 'stream.arn' has value {arn!r}; allowed: "
                              "'arn:aws:kinesis:<region>:<account>:stream/<name>'")
        region_from_arn, stream = match.group(1), match.group(3)
    aws = _aws_settings(parsed, context, region_from_arn)
    fmt = _format(parsed, raw, context)

    if new:
        position = parsed.get("source.init.position") or "LATEST"
        ts_key, fmt_key = "source.init.timestamp", "source.init.timestamp.format"
        discovery = parsed.get("source.shard.discovery.interval")
        discovery_ms = int(discovery.total_seconds() * 1000) if discovery is not None else 10_000
        publisher = parsed.get("source.reader.type") or "POLLING"
        max_records = parsed.get("source.shard.get-records.max-record-count") or MAX_RECORDS_PER_GET
        empty = parsed.get("source.reader.empty-records-fetch-interval")
        interval_ms = int(empty.total_seconds() * 1000) if empty is not None else 250
        consumer_name = parsed.get("source.efo.consumer.name")
        registration = "NONE" if parsed.get("source.efo.lifecycle") == "SELF_MANAGED" else "LAZY"
    else:
        position = parsed.get("scan.stream.initpos") or "LATEST"
        ts_key, fmt_key = "scan.stream.initpos-timestamp", "scan.stream.initpos-timestamp-format"
        discovery_ms = parsed.get("scan.shard.discovery.intervalmillis")
        discovery_ms = 10_000 if discovery_ms is None else int(discovery_ms)
        publisher = parsed.get("scan.stream.recordpublisher") or "POLLING"
        max_records = parsed.get("scan.shard.getrecords.maxrecordcount") or MAX_RECORDS_PER_GET
        interval_ms = int(parsed["scan.shard.getrecords.intervalmillis"])
        consumer_name = parsed.get("scan.stream.efo.consumername")
        registration = parsed.get("scan.stream.efo.registration") or "LAZY"
    if max_records > MAX_RECORDS_PER_GET:
        key = "source.shard.get-records.max-record-count" if new else "scan.shard.getrecords.maxrecordcount"
        raise OptionError(f"{context} option '{key}' has value {max_records}; allowed: 1 to {MAX_RECORDS_PER_GET} (the GetRecords limit)")
    if interval_ms > 300_000:
        raise OptionError(f"{context} option 'scan.shard.getrecords.intervalmillis' has value {interval_ms}; allowed: at most 300000")
    timestamp_text = parsed.get(ts_key)
    init_ms = None
    if position == "AT_TIMESTAMP":
        if not timestamp_text:
            raise OptionError(f"{context} option '{ts_key}' is required when the start position is 'AT_TIMESTAMP': epoch "
                              "seconds (e.g. '1459799926.480') or a date such as '2016-04-04T19:58:46.480-00:00'")
        init_ms = parse_start_timestamp(timestamp_text, parsed.get(fmt_key), context, ts_key, fmt_key)
    elif timestamp_text:
        raise OptionError(f"{context} option '{ts_key}' is only used with the start position 'AT_TIMESTAMP' "
                          f"(the start position is {position!r})")
    consumer_arn = None
    if publisher == "EFO":
        name_key = "source.efo.consumer.name" if new else "scan.stream.efo.consumername"
        arns = {k.lower(): v for k, v in parsed.extra.items() if k.lower().startswith("scan.stream.efo.consumerarn.")}
        consumer_arn = arns.get(f"scan.stream.efo.consumerarn.{stream}".lower())
        if registration == "NONE" and not new and not consumer_arn:
            raise OptionError(f"{context} option 'scan.stream.efo.consumerarn.{stream}' is required with "
                              "'scan.stream.efo.registration' = 'NONE' (the ARN of the consumer registered for the stream)")
        if not consumer_name and not consumer_arn:
            raise OptionError(f"{context} option '{name_key}' is required with the EFO record publisher "
                              "(or registration NONE with 'scan.stream.efo.consumerarn.<stream>')")
    return SourceConfig(
        stream=stream, stream_arn=arn, aws=aws, format=fmt, init_position=position, init_timestamp_ms=init_ms,
        publisher=publisher, discovery_interval_ms=discovery_ms, max_records_per_get=int(max_records),
        get_records_interval_ms=interval_ms,
        get_records_retry=_retry(parsed, "scan.shard.getrecords"),
        get_iterator_retry=_retry(parsed, "scan.shard.getiterator"),
        list_shards_retry=_retry(parsed, "scan.list.shards"),
        idle_interval_ms=int(parsed["scan.shard.idle.interval"]),
        metadata=parse_metadata(raw.get(TABLE_METADATA), context),
        efo_consumer_name=consumer_name, efo_registration=registration, efo_consumer_arn=consumer_arn,
        subscribe_retry=_retry(parsed, "scan.shard.subscribetoshard"),
        lookahead_ms=(int(parsed["scan.watermark.lookahead.millis"])
                      if any(k.lower() == "scan.watermark.lookahead.millis" for k in raw) else None),
        sync_interval_ms=int(parsed["scan.watermark.sync.interval"]),
        rowtime=raw.get(TABLE_ROWTIME) or None,
        rowtime_millis=rowtime_millis(raw),
    )


# ---------------------------------------------------------------------------------------------------------
# Sink settings
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SinkConfig:
    stream: str
    stream_arn: Optional[str]
    aws: AwsSettings
    format: FormatSettings
    partitioner: str  # 'random', 'fixed' or 'fields'
    partition_fields: tuple[str, ...]
    field_delimiter: str
    batch_max_size: int
    max_inflight: int
    max_buffered: int
    flush_size: int
    flush_timeout_ms: int
    fail_on_error: bool
    max_record_size: int


def sink_config(raw: Mapping[str, Any]) -> SinkConfig:
    """Validate sink options and return typed settings (Flink's KinesisStreamsSink options)."""
    context = "kinesis sink"
    raw = canonical(raw)
    parsed = SINK_OPTIONS.validate(raw)
    stream, arn = parsed.get("stream"), parsed.get("stream.arn")
    if bool(stream) == bool(arn):
        given = f"'stream' = {stream!r} and 'stream.arn' = {arn!r}" if stream else "neither"
        raise OptionError(f"{context} needs exactly one of 'stream' and 'stream.arn'; got {given}")
    region_from_arn = None
    if arn:
        match = _ARN.match(arn)
        if not match:
            raise OptionError(f"{context} option 'stream.arn' has value {arn!r}; allowed: 'arn:aws:kinesis:<region>:<account>:stream/<name>'")
        region_from_arn, stream = match.group(1), match.group(3)
    aws = _aws_settings(parsed, context, region_from_arn)
    fmt = _format(parsed, raw, context)
    fields = tuple(f.strip() for f in (parsed.extra.get(TABLE_PARTITION_KEYS) or "").split(";") if f.strip())
    partitioner = parsed.get("sink.partitioner")
    if fields and partitioner:
        raise OptionError(f"{context} option 'sink.partitioner' = {partitioner!r} cannot be set on a PARTITIONED BY table: "
                          f"the partition key is built from {', '.join(fields)} (as in Flink)")
    if fields:
        strategy = "fields"
    else:
        strategy = (partitioner or "random").strip().lower()
        if strategy not in ("random", "fixed"):
            raise OptionError(f"{context} option 'sink.partitioner' has value {partitioner!r}; allowed values: 'random', "
                              "'fixed' (a PartitionKeyGenerator class is Java, which kindling cannot load; use PARTITIONED BY "
                              "columns for a key built from the row)")
    batch = int(parsed["sink.batch.max-size"])
    if batch > 500:
        raise OptionError(f"{context} option 'sink.batch.max-size' has value {batch}; allowed: 1 to 500 (the PutRecords limit)")
    for key in sorted(parsed.extra):
        if key.lower().startswith("sink.producer."):
            log.warning("%s: deprecated KPL option '%s' is ignored", context, key)
    return SinkConfig(
        stream=stream, stream_arn=arn, aws=aws, format=fmt, partitioner=strategy, partition_fields=fields,
        field_delimiter=parsed["sink.partitioner-field-delimiter"], batch_max_size=batch,
        max_inflight=int(parsed["sink.requests.max-inflight"]), max_buffered=int(parsed["sink.requests.max-buffered"]),
        flush_size=int(parsed["sink.flush-buffer.size"]), flush_timeout_ms=int(parsed["sink.flush-buffer.timeout"]),
        fail_on_error=bool(parsed["sink.fail-on-error"]), max_record_size=int(parsed["sink.max-record-size"]),
    )
