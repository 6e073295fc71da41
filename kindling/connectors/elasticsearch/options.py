"""Options of the Elasticsearch / OpenSearch sink: Flink's keys, defaults and messages, per connector name.

Flink's 3.x connector (legacy SinkFunction, Flink 1.16-1.20) and 4.x connector (Sink V2, Flink 2.x)
register different option sets under the same names: 3.x has ``failure-handler`` and
``sink.flush-on-checkpoint``, 4.x has ``sink.delivery-guarantee``, the timeouts and ``sink.parallelism``.
DDL from either era must run unchanged, so every name accepts the union; ``elasticsearch-6`` also
requires ``document-type`` and ``elasticsearch-8`` also accepts its AsyncSink keys. The differences
between the four names are data (:class:`Flavor`), not code.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping, Optional
from urllib.parse import urlsplit

from kindling.connectors.base import TABLE_INSTANT_COLUMNS, TABLE_PRIMARY_KEY
from kindling.connectors.lookup_cache import lookup_options
from kindling.formats import FormatSettings
from kindling.options import (
    OptionError,
    OptionSet,
    ParsedOptions,
    bool_option,
    duration_option,
    enum_option,
    int_option,
    memory_option,
    string_option,
)

log = logging.getLogger(__name__)

MB = 1024 * 1024
FAILURE_HANDLERS = ("fail", "ignore", "retry-rejected")
BACKOFF_STRATEGIES = ("DISABLED", "CONSTANT", "EXPONENTIAL")
DELIVERY_GUARANTEES = ("AT_LEAST_ONCE", "NONE", "EXACTLY_ONCE")
# Flink's legacy sink's backoff defaults when a strategy is set without retries or delay (ElasticsearchSinkBase).
DEFAULT_BACKOFF_RETRIES = 8
DEFAULT_BACKOFF_DELAY = timedelta(milliseconds=50)
CA_CERTIFICATE = "kindling.ssl.ca-certificate"
_warned: set[str] = set()


@dataclass(frozen=True)
class Flavor:
    """What distinguishes one connector name: its client library and its version-specific options."""

    name: str  # 'elasticsearch-7'
    client: str  # 'elasticsearch' | 'opensearch'
    document_type: bool = False  # ES 6: 'document-type' is required and sent as '_type'
    async_sink_options: bool = False  # ES 8: the AsyncSink's buffer options are accepted

    @property
    def label(self) -> str:
        """Flink's capitalised identifier, used in messages ('Elasticsearch-7')."""
        return self.name[:1].upper() + self.name[1:]


FLAVORS = {
    "elasticsearch-6": Flavor("elasticsearch-6", "elasticsearch", document_type=True),
    "elasticsearch-7": Flavor("elasticsearch-7", "elasticsearch"),
    "elasticsearch-8": Flavor("elasticsearch-8", "elasticsearch", async_sink_options=True),
    "opensearch": Flavor("opensearch", "opensearch"),
}

_COMMON = [
    string_option("hosts", None, "One or more hosts, 'http://host:port;https://host2:port' (scheme, host and port).",
                  required=True),
    string_option("index", None, "The index for every row, static or dynamic ('logs-{ts|yyyy-MM-dd}').", required=True),
    string_option("document-id.key-delimiter", "_", "Joins the primary key's values into the document id."),
    string_option("username", None, "User for basic authentication."),
    string_option("password", None, "Password for basic authentication (never logged)."),
    string_option("failure-handler", "fail",
                  "What a failed item does: 'fail' the job, 'ignore' it, or 'retry-rejected' (re-add items rejected "
                  "with HTTP 429). Flink 3.x option (Flink 2.x's connector rejects it; kindling honours it, with a warning)."),
    bool_option("sink.flush-on-checkpoint", True, "Flink 3.x option: false is 'sink.delivery-guarantee' = 'NONE' in 4.x. "
                                                  "kindling flushes every task before its micro-batch commits either way."),
    enum_option("sink.delivery-guarantee", DELIVERY_GUARANTEES, "AT_LEAST_ONCE",
                "AT_LEAST_ONCE or NONE. In Flink, NONE only stops checkpoints from waiting for pending requests; a "
                "kindling task always flushes before it ends, so both index every micro-batch before it commits. "
                "Failed items go through 'failure-handler' either way."),
    int_option("sink.retry-on-conflicts", -1, "retry_on_conflict of every upsert (update action); -1 leaves it unset. "
                                              "In Flink 4.x's code, not in its docs."),
    int_option("sink.bulk-flush.max-actions", 1000, "Actions per bulk request; 0 or -1 disables the limit."),
    memory_option("sink.bulk-flush.max-size", 2 * MB, "Bytes per bulk request, in whole MB; 0 or -1 disables the limit."),
    duration_option("sink.bulk-flush.interval", timedelta(seconds=1), "Flush buffered actions this often; 0 disables."),
    enum_option("sink.bulk-flush.backoff.strategy", BACKOFF_STRATEGIES, "DISABLED",
                "Retry items rejected with HTTP 429: DISABLED, CONSTANT or EXPONENTIAL delays."),
    int_option("sink.bulk-flush.backoff.max-retries", None, "Retries of a rejected item."),
    duration_option("sink.bulk-flush.backoff.delay", None, "The constant delay, or the exponential backoff's first delay."),
    string_option("connection.path-prefix", None, "A prefix for every REST path, e.g. '/v1'."),
    duration_option("connection.request-timeout", None, "Time to wait for a connection from the pool."),
    duration_option("connection.timeout", None, "Time to establish a connection."),
    duration_option("socket.timeout", None, "Time to wait for data on an open connection (a real duration, not seconds)."),
    string_option("ssl.certificate-fingerprint", None,
                  "SHA-256 fingerprint (hex, ':' allowed) of the server's HTTP CA certificate: an https server is "
                  "trusted if a certificate of its chain has it (Flink's elasticsearch-8 option). The 'opensearch' "
                  "client (opensearch-py) compares it with the server's own certificate only."),
    string_option(CA_CERTIFICATE, None,
                  "kindling's own option (Flink's connector has no CA option): a PEM file with the CA certificate(s) "
                  "that an https server's certificate must chain to, instead of the system's CAs. Read when the job "
                  "starts; its contents travel with the sink to the executors."),
    int_option("sink.parallelism", None, "Accepted for compatibility: Spark's partitioning decides.", minimum=1),
    string_option("format", "json", "The document format; 'json' (with its 'json.*' options)."),
    enum_option("json.timestamp-format.standard", ("SQL", "ISO-8601"), "SQL",
                "TIMESTAMP text: SQL '2020-03-27 12:25:55' or ISO-8601 '2020-03-27T12:25:55' (what Elasticsearch's "
                "default date mapping parses)."),
    bool_option("json.encode.decimal-as-plain-number", False, "Accepted for compatibility."),
    bool_option("json.ignore-parse-errors", False, "Accepted for compatibility (a decoding option)."),
    bool_option("json.fail-on-missing-field", False, "Accepted for compatibility (a decoding option)."),
    enum_option("json.map-null-key.mode", ("FAIL", "DROP", "LITERAL"), "FAIL", "Accepted for compatibility."),
    string_option("json.map-null-key.literal", "null", "Accepted for compatibility."),
]


def option_set(flavor: Flavor) -> OptionSet:
    """The options one connector name accepts."""
    extra = []
    if flavor.document_type:
        extra.append(string_option("document-type", None, "The Elasticsearch 6 document type.", required=True))
    if flavor.async_sink_options:
        extra += [int_option("sink.bulk-flush.max-buffered-actions", 10000,
                             "The AsyncSink's buffer; must be greater than 'sink.bulk-flush.max-actions'. Checked as "
                             "Flink does; kindling's buffer is one bulk request."),
                  int_option("sink.bulk-flush.max-in-flight-actions", 50,
                             "The AsyncSink's in-flight requests; must be positive. Checked as Flink does; a kindling "
                             "task has one request in flight.")]
    # the lookup source's options (connector 3.1+): PARTIAL caching only, as in Flink
    return OptionSet(f"{flavor.name} sink", [*_COMMON, *extra, *lookup_options(("NONE", "PARTIAL"))])


@dataclass(frozen=True)
class Host:
    scheme: str
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


@dataclass(frozen=True)
class SinkConfig:
    """Everything the writer needs, validated: hosts, index pattern, key, bulk sizing, retries, failures."""

    flavor: Flavor
    hosts: tuple[Host, ...]
    index: str
    key_fields: tuple[str, ...]
    key_delimiter: str
    document_type: Optional[str]
    username: Optional[str]
    password: Optional[str]
    failure_handler: str
    delivery_guarantee: str  # AT_LEAST_ONCE | NONE
    max_actions: int  # -1: no limit
    max_bytes: int  # -1: no limit
    interval_s: float  # 0: no periodic flush
    backoff: str  # DISABLED | CONSTANT | EXPONENTIAL
    backoff_retries: int
    backoff_delay_s: float
    path_prefix: Optional[str]
    request_timeout_s: Optional[float]
    connect_timeout_s: Optional[float]
    socket_timeout_s: Optional[float]
    fingerprint: Optional[str]
    json: FormatSettings
    ca_certificates: Optional[str] = None  # PEM text of 'kindling.ssl.ca-certificate', read on the driver
    instant_fields: tuple[str, ...] = ()  # the TIMESTAMP_LTZ columns (the table's kindling.table.instant-columns)
    retry_on_conflict: int = -1

    @property
    def upsert(self) -> bool:
        return bool(self.key_fields)

    def backoff_delays(self) -> list[float]:
        """The waits before each retry of rejected items (empty when backoff is disabled)."""
        if self.backoff == "DISABLED":
            return []
        if self.backoff == "CONSTANT":
            return [self.backoff_delay_s] * self.backoff_retries
        return [self.backoff_delay_s * (2 ** attempt) for attempt in range(self.backoff_retries)]

    @property
    def https(self) -> bool:
        return any(h.scheme == "https" for h in self.hosts)

    def __repr__(self) -> str:  # never show the password
        return f"SinkConfig({self.flavor.name}, hosts={[h.url for h in self.hosts]}, index={self.index!r})"


def parse_hosts(text: str) -> tuple[Host, ...]:
    """``hosts``: ';'-separated ``scheme://host:port``; Flink's message for a host it cannot parse."""
    hosts = []
    for raw in [h.strip() for h in str(text).split(";") if h.strip()]:
        message = f"Could not parse host '{raw}' in option 'hosts'. It should follow the format 'http://host_name:port'."
        try:
            parts = urlsplit(raw)
            port = parts.port
        except ValueError:
            raise OptionError(message) from None
        if "://" not in raw or not parts.scheme:
            raise OptionError(message[:-1] + ". Missing scheme.")
        if parts.scheme.lower() not in ("http", "https"):
            raise OptionError(message + f" Scheme '{parts.scheme}' is not http or https.")
        if not parts.hostname:
            raise OptionError(message)
        if port is None:
            raise OptionError(message[:-1] + ". Missing port.")
        hosts.append(Host(parts.scheme.lower(), parts.hostname, port))
    if not hosts:
        raise OptionError("option 'hosts' is empty; give one or more hosts as 'http://host_name:port;http://host2:port'")
    return tuple(hosts)


def sink_config(flavor: Flavor, raw: Mapping[str, Any]) -> SinkConfig:
    """Validate a sink's options (Flink's checks and messages) and return its settings."""
    parsed: ParsedOptions = option_set(flavor).validate(raw)
    context = f"{flavor.name} sink option"
    hosts = parse_hosts(parsed["hosts"])
    index = parsed["index"]
    if len(index) < 1:
        raise OptionError("'index' must not be empty")
    if (parsed.get("format") or "json").lower() != "json":
        raise OptionError(f"{context} 'format' = {parsed['format']!r}: only 'json' produces the JSON documents "
                          "Elasticsearch stores here")
    guarantee = parsed["sink.delivery-guarantee"].upper()
    if guarantee == "EXACTLY_ONCE":
        raise OptionError("Elasticsearch sink does not support the EXACTLY_ONCE guarantee. "
                          "(option 'sink.delivery-guarantee'; allowed: AT_LEAST_ONCE, NONE. Upsert mode with a "
                          "PRIMARY KEY writes deterministic ids, so a replayed micro-batch overwrites its own documents.)")
    if not parsed["sink.flush-on-checkpoint"]:
        guarantee = "NONE"
    handler = str(parsed["failure-handler"]).strip().lower()
    if raw_value(raw, "failure-handler") and "failure-handler" not in _warned:
        _warned.add("failure-handler")
        log.warning("%s: option 'failure-handler' is a Flink 3.x option (the legacy SinkFunction of Flink 1.x); "
                    "Flink 2.x's connector rejects it. kindling honours it: '%s'", context, handler)
    if handler not in FAILURE_HANDLERS:
        raise OptionError(f"Could not instantiate the failure handler class: {parsed['failure-handler']} "
                          f"(option 'failure-handler'; kindling supports {', '.join(FAILURE_HANDLERS)}, not Java classes)")
    if flavor.async_sink_options:
        _check_async_sink(parsed, raw)
    actions = parsed["sink.bulk-flush.max-actions"]
    actions = -1 if actions == 0 else actions
    if not (actions == -1 or actions >= 1):
        raise OptionError(f"'sink.bulk-flush.max-actions' must be at least 1. Got: {actions}")
    size = parsed["sink.bulk-flush.max-size"]
    size = -1 if size == 0 else size
    if not (size == -1 or (size >= MB and size % MB == 0)):
        raise OptionError(f"'sink.bulk-flush.max-size' must be in MB granularity. Got: {raw_value(raw, 'sink.bulk-flush.max-size')}")
    retries = parsed.get("sink.bulk-flush.backoff.max-retries")
    if retries is not None and retries < 1:
        raise OptionError(f"'sink.bulk-flush.backoff.max-retries' must be at least 1. Got: {retries}")
    username, password = parsed.get("username"), parsed.get("password")
    if username is not None and username.strip():
        if password is None or not password.strip():
            raise OptionError(f"'username' and 'password' must be set at the same time. Got: username '{username}' "
                              "and password ''")
    else:
        username = None
    retry_on_conflict = parsed["sink.retry-on-conflicts"]
    if retry_on_conflict < -1:
        raise OptionError(f"{context} 'sink.retry-on-conflicts' = {retry_on_conflict}: give a number of retries (0 or more), "
                          "or -1 to leave Elasticsearch's default")
    delay = parsed.get("sink.bulk-flush.backoff.delay")
    document_type = parsed.get("document-type") if flavor.document_type else None
    key_text = parsed.extra.get(TABLE_PRIMARY_KEY) or ""
    prefix = parsed.get("connection.path-prefix")

    def seconds(key: str) -> Optional[float]:
        value = parsed.get(key)
        return value.total_seconds() if value is not None else None

    return SinkConfig(
        flavor=flavor, hosts=hosts, index=index,
        key_fields=tuple(k.strip() for k in key_text.split(";") if k.strip()),
        key_delimiter=parsed["document-id.key-delimiter"], document_type=document_type,
        username=username, password=password if username else None, failure_handler=handler,
        delivery_guarantee=guarantee, max_actions=actions, max_bytes=size,
        interval_s=parsed["sink.bulk-flush.interval"].total_seconds(),
        backoff=parsed["sink.bulk-flush.backoff.strategy"].upper(),
        backoff_retries=retries if retries is not None else DEFAULT_BACKOFF_RETRIES,
        backoff_delay_s=(delay if delay is not None else DEFAULT_BACKOFF_DELAY).total_seconds(),
        path_prefix=prefix.strip() if prefix and prefix.strip() else None,
        request_timeout_s=seconds("connection.request-timeout"), connect_timeout_s=seconds("connection.timeout"),
        socket_timeout_s=seconds("socket.timeout"), fingerprint=parsed.get("ssl.certificate-fingerprint"),
        json=FormatSettings("json", timestamp_standard=parsed["json.timestamp-format.standard"]),
        ca_certificates=_read_ca_certificates(parsed.get(CA_CERTIFICATE), parsed.get("ssl.certificate-fingerprint"), hosts),
        retry_on_conflict=retry_on_conflict,
        instant_fields=tuple(n for n in (parsed.extra.get(TABLE_INSTANT_COLUMNS) or "").split(";") if n),
    )


def _check_async_sink(parsed: ParsedOptions, raw: Mapping[str, Any]) -> None:
    """elasticsearch-8 (Flink's AsyncSink): every size is positive, nothing disables a trigger, and the buffer is
    larger than a bulk request -- Flink's factory and AsyncSinkBase messages, with the options named."""
    actions = parsed["sink.bulk-flush.max-actions"]
    if actions < 1:
        raise OptionError(f"'sink.bulk-flush.max-actions' must be at least 1. Got: {actions}")
    size = parsed["sink.bulk-flush.max-size"]
    if not (size >= MB and size % MB == 0):
        raise OptionError(f"'sink.bulk-flush.max-size' must be in MB granularity. Got: {raw_value(raw, 'sink.bulk-flush.max-size')}")
    if parsed["sink.bulk-flush.interval"].total_seconds() <= 0:
        raise OptionError("Max time in buffer must be positive. (option 'sink.bulk-flush.interval' = "
                          f"'{raw_value(raw, 'sink.bulk-flush.interval')}'; elasticsearch-8 cannot disable the interval)")
    in_flight = parsed["sink.bulk-flush.max-in-flight-actions"]
    if in_flight < 1:
        raise OptionError(f"Max in flight requests must be positive. (option 'sink.bulk-flush.max-in-flight-actions' = {in_flight})")
    buffered = parsed["sink.bulk-flush.max-buffered-actions"]
    if buffered < 1:
        raise OptionError(f"Max buffered requests must be positive. (option 'sink.bulk-flush.max-buffered-actions' = {buffered})")
    if buffered <= actions:
        raise OptionError("The maximum number of requests that may be buffered should be strictly greater than the maximum "
                          f"number of requests per batch. (options 'sink.bulk-flush.max-buffered-actions' = {buffered} and "
                          f"'sink.bulk-flush.max-actions' = {actions})")


def _read_ca_certificates(path: Optional[str], fingerprint: Optional[str], hosts: tuple[Host, ...]) -> Optional[str]:
    """The PEM text of ``kindling.ssl.ca-certificate`` (read where the job starts), checked to hold a certificate."""
    if path is None or not path.strip():
        return None
    if fingerprint:
        raise OptionError(f"options 'ssl.certificate-fingerprint' and '{CA_CERTIFICATE}' are both set; give one: the "
                          "fingerprint pins the server's certificate instead of checking its chain against a CA")
    if not any(h.scheme == "https" for h in hosts):
        raise OptionError(f"option '{CA_CERTIFICATE}' is set but no host of option 'hosts' uses https")
    try:
        with open(path.strip(), encoding="ascii") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise OptionError(f"option '{CA_CERTIFICATE}' = '{path}': cannot read the file ({type(exc).__name__}: {exc})") from None
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise OptionError(f"option '{CA_CERTIFICATE}' = '{path}': the file holds no PEM certificate "
                          "('-----BEGIN CERTIFICATE-----')")
    return text


def raw_value(raw: Mapping[str, Any], key: str) -> str:
    for k, v in raw.items():
        if k.lower() == key:
            return str(v)
    return ""
