"""Job configuration with Flink's keys, types and defaults; ``spark.*`` keys pass through to Spark.

Where Spark's semantics differ from Flink's, the description says how.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Iterable, Mapping, Optional

from kindling.object_store import S3_OPTIONS
from kindling.options import (
    ConfigOption,
    OptionError,
    OptionSet,
    bool_option,
    duration_option,
    enum_option,
    int_option,
    string_option,
)

CHECKPOINTING_INTERVAL = duration_option(
    "execution.checkpointing.interval",
    timedelta(seconds=1),
    "How often a checkpoint is taken. In kindling every micro-batch is a checkpoint, so this is "
    "Spark's processing-time trigger interval.",
)
# Flink's checkpoint settings beyond the interval (PyFlink's CheckpointConfig). A micro-batch is Spark's checkpoint:
# it always completes with its state and sink commit (exactly-once state, never concurrent, never timing out by
# these settings), so they are accepted, validated and reported, and change nothing kindling computes.
CHECKPOINTING_MODE = enum_option(
    "execution.checkpointing.mode", ("EXACTLY_ONCE", "AT_LEAST_ONCE"), "EXACTLY_ONCE",
    "Checkpointing mode; kindling's micro-batches always give exactly-once state (at-least-once is implied).")
CHECKPOINTING_TIMEOUT = duration_option("execution.checkpointing.timeout", timedelta(minutes=10),
                                        "Accepted (PyFlink's CheckpointConfig): a micro-batch runs until it commits.")
CHECKPOINTING_MIN_PAUSE = duration_option("execution.checkpointing.min-pause", timedelta(0),
                                          "Accepted (PyFlink's CheckpointConfig): micro-batches follow the interval.")
CHECKPOINTING_MAX_CONCURRENT = int_option("execution.checkpointing.max-concurrent-checkpoints", 1,
                                          "Accepted (PyFlink's CheckpointConfig): micro-batches run one at a time.", minimum=1)
CHECKPOINTING_TOLERABLE_FAILURES = int_option("execution.checkpointing.tolerable-failed-checkpoints", 0,
                                              "Accepted (PyFlink's CheckpointConfig): a failed micro-batch fails the job "
                                              "(then restart-strategy.* applies).", minimum=0)
CHECKPOINTING_RETENTION = enum_option(
    "execution.checkpointing.externalized-checkpoint-retention",
    ("DELETE_ON_CANCELLATION", "RETAIN_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS"), "NO_EXTERNALIZED_CHECKPOINTS",
    "Accepted (PyFlink's CheckpointConfig): kindling keeps a job's checkpoint in state.checkpoints.dir, so that running "
    "the job again resumes it.")
CHECKPOINTING_UNALIGNED = bool_option("execution.checkpointing.unaligned.enabled", False,
                                      "Accepted (PyFlink's CheckpointConfig): micro-batches need no barrier alignment.")
CHECKPOINTING_UNALIGNED_FORCED = bool_option("execution.checkpointing.unaligned.forced", False,
                                             "Accepted (PyFlink's CheckpointConfig).")
CHECKPOINTING_ALIGNED_TIMEOUT = duration_option("execution.checkpointing.aligned-checkpoint-timeout", timedelta(0),
                                                "Accepted (PyFlink's CheckpointConfig).")
BUFFER_TIMEOUT = duration_option("execution.buffer-timeout", timedelta(milliseconds=100),
                                 "Accepted for compatibility: Spark ships records per micro-batch.")
OPERATOR_CHAINING = bool_option("pipeline.operator-chaining.enabled", True,
                                "Accepted for compatibility: Spark fuses stages by its own rules.")
CHECKPOINTS_DIR = string_option(
    "state.checkpoints.dir",
    ".kindling/checkpoints",
    "Where checkpoints live (a path or a filesystem URI). A job's checkpoint is "
    "<dir>/<pipeline.name>/<sink>, so running the same job again resumes where it stopped.",
)
SAVEPOINTS_DIR = string_option(
    "state.savepoints.dir",
    ".kindling/savepoints",
    "Default directory for savepoints: a local path, or an s3:// URI reached with the s3.* options.",
)
SAVEPOINT_PATH = string_option("execution.savepoint.path", None, "A savepoint to resume the job from; it is copied into a fresh checkpoint location.")
SAVEPOINT_IGNORE_UNCLAIMED = bool_option(
    "execution.savepoint.ignore-unclaimed-state",
    False,
    "Allow resuming from a savepoint whose state for some sinks no longer maps onto the pipeline (Flink's allowNonRestoredState).",
)
REST_PORT = int_option("rest.port", 8081, "Port of the job manager's REST API and dashboard.", minimum=0)
REST_ADDRESS = string_option("rest.address", "127.0.0.1", "Address the job manager's REST API binds to and clients connect to.")
STATE_BACKEND = enum_option(
    "state.backend.type",
    ("rocksdb", "hashmap"),
    "rocksdb",
    "Keyed state store: 'rocksdb' (Spark's RocksDB provider) or 'hashmap' (Spark's HDFS-backed in-memory store).",
)
PARALLELISM = int_option(
    "parallelism.default",
    None,
    "Default parallelism: the number of local cores used (local[N]) and Spark's shuffle partitions. "
    "Like Flink's max parallelism, the shuffle partition count is fixed for a checkpoint's lifetime.",
    minimum=1,
)
MAX_PARALLELISM = int_option(
    "pipeline.max-parallelism",
    128,
    "Key groups: the number of hash buckets a keyed operator stores its keys' state by (as Flink's max "
    "parallelism, it cannot change for the life of a job's state).",
    minimum=1,
)
PIPELINE_NAME = string_option("pipeline.name", None, "The job's name, shown in the UI and used for its checkpoint directory.")
RESTART_STRATEGY = enum_option(
    "restart-strategy.type",
    ("none", "off", "disable", "fixed-delay", "failure-rate", "exponential-delay"),
    "none",
    "How a failed job is restarted from its last checkpoint.",
)
RESTART_ATTEMPTS = int_option("restart-strategy.fixed-delay.attempts", 1, "Restarts before the job fails.", minimum=0)
RESTART_DELAY = duration_option("restart-strategy.fixed-delay.delay", timedelta(seconds=1), "Delay between restarts.")
FAILURE_RATE_MAX = int_option("restart-strategy.failure-rate.max-failures-per-interval", 1, "Failures allowed per interval.", minimum=1)
FAILURE_RATE_INTERVAL = duration_option("restart-strategy.failure-rate.failure-rate-interval", timedelta(minutes=1),
                                        "Interval over which failures are counted.")
FAILURE_RATE_DELAY = duration_option("restart-strategy.failure-rate.delay", timedelta(seconds=1), "Delay between restarts.")
EXP_INITIAL = duration_option("restart-strategy.exponential-delay.initial-backoff", timedelta(seconds=1), "First restart delay.")
EXP_MAX = duration_option("restart-strategy.exponential-delay.max-backoff", timedelta(minutes=1), "Largest restart delay.")
EXP_MULTIPLIER = ConfigOption("restart-strategy.exponential-delay.backoff-multiplier", float, 1.5, "Delay growth factor.", type_name="number")
EXP_ATTEMPTS = int_option("restart-strategy.exponential-delay.attempts-before-reset-backoff", 2147483647, "Restarts before the job fails.", minimum=0)
RUNTIME_MODE = enum_option(
    "execution.runtime-mode",
    ("streaming", "batch", "automatic"),
    "streaming",
    "Bounded pipelines always end when their sources end; 'batch' is accepted for compatibility.",
)
SPARK_MASTER = string_option("kindling.spark.master", None, "Spark master URL; default local[N] with N = parallelism.default or all cores.")
LOG_LEVEL = enum_option("kindling.log.level", ("ERROR", "WARN", "INFO", "DEBUG"), "WARN", "Spark's log level.")
WEB_UI = bool_option("kindling.spark.ui.enabled", False, "Whether Spark's own web UI is started.")
OBJECT_REUSE = bool_option("pipeline.object-reuse", False, "Accepted for compatibility; records are always fresh objects in kindling.")
WATERMARK_INTERVAL = duration_option(
    "pipeline.auto-watermark-interval",
    timedelta(milliseconds=200),
    "Accepted for compatibility; Spark advances the watermark once per micro-batch.",
)

# Flink's rule for what its REST API and logs hide: a key containing one of these is shown as "******".
SENSITIVE_KEY_PARTS = ("password", "secret", "token", "apikey", "api-key", "auth-params", "service-key", "basic-auth",
                       "user-info", "jaas.config", "http-headers", "fs.azure.account.key")
HIDDEN_VALUE = "******"

OPTIONS: tuple[ConfigOption[Any], ...] = (
    CHECKPOINTING_INTERVAL,
    CHECKPOINTING_MODE,
    CHECKPOINTING_TIMEOUT,
    CHECKPOINTING_MIN_PAUSE,
    CHECKPOINTING_MAX_CONCURRENT,
    CHECKPOINTING_TOLERABLE_FAILURES,
    CHECKPOINTING_RETENTION,
    CHECKPOINTING_UNALIGNED,
    CHECKPOINTING_UNALIGNED_FORCED,
    CHECKPOINTING_ALIGNED_TIMEOUT,
    BUFFER_TIMEOUT,
    OPERATOR_CHAINING,
    CHECKPOINTS_DIR,
    SAVEPOINTS_DIR,
    SAVEPOINT_PATH,
    SAVEPOINT_IGNORE_UNCLAIMED,
    REST_PORT,
    REST_ADDRESS,
    STATE_BACKEND,
    PARALLELISM,
    MAX_PARALLELISM,
    PIPELINE_NAME,
    RESTART_STRATEGY,
    RESTART_ATTEMPTS,
    RESTART_DELAY,
    FAILURE_RATE_MAX,
    FAILURE_RATE_INTERVAL,
    FAILURE_RATE_DELAY,
    EXP_INITIAL,
    EXP_MAX,
    EXP_MULTIPLIER,
    EXP_ATTEMPTS,
    RUNTIME_MODE,
    SPARK_MASTER,
    LOG_LEVEL,
    WEB_UI,
    OBJECT_REUSE,
    WATERMARK_INTERVAL,
    *S3_OPTIONS,  # how savepoints reach an s3:// directory
)

# PyFlink's Python-worker tuning options: programs set them (the PyFlink walkthrough sets the first), and they
# change how fast Flink's Python workers run, never what a job computes. Spark runs its own Python workers,
# so kindling accepts them with no effect. Options that change what runs (python.files, python.executable,
# python.requirements, ...) are not here: they are refused as unknown rather than silently ignored.
PYTHON_WORKER_OPTIONS = (
    "python.fn-execution.memory.managed",
    "python.fn-execution.bundle.size",
    "python.fn-execution.bundle.time",
    "python.fn-execution.arrow.batch.size",
    "python.state.cache-size",
    "python.map-state.read-cache-size",
    "python.map-state.write-cache-size",
    "python.map-state.iterate-response-batch-size",
    "python.metric.enabled",
    "python.profile.enabled",
    "python.operator-chaining.enabled",
    "python.execution-mode",
)

_OPTION_SET = OptionSet("configuration", OPTIONS, prefixes=("spark.",), ignored=PYTHON_WORKER_OPTIONS)


class Configuration:
    """Validated job configuration: Flink keys with typed values plus pass-through ``spark.*`` keys."""

    def __init__(self, values: Optional[Mapping[str, Any]] = None) -> None:
        self._raw: dict[str, Any] = {}
        if values:
            self.update(values)

    def update(self, values: Mapping[str, Any]) -> "Configuration":
        merged = {**self._raw, **{str(k): v for k, v in values.items()}}
        _OPTION_SET.validate(merged)  # raises OptionError naming a bad or unknown key
        self._raw = merged
        return self

    def set(self, key: str, value: Any) -> "Configuration":
        return self.update({key: value})

    def set_string(self, key: str, value: str) -> "Configuration":
        """PyFlink's name for ``set``."""
        return self.set(key, value)

    def get(self, option: ConfigOption[Any] | str) -> Any:
        parsed = _OPTION_SET.validate(self._raw)
        key = option if isinstance(option, str) else option.key
        if key.startswith("spark."):
            return parsed.extra.get(key)
        if key not in parsed.values:
            raise OptionError(f"unknown configuration option '{key}'")
        return parsed.values[key]

    def contains(self, key: str) -> bool:
        return key in self._raw

    def spark_conf(self) -> dict[str, str]:
        """The ``spark.*`` keys the user set, passed to Spark unchanged."""
        return dict(_OPTION_SET.validate(self._raw).extra)

    def to_dict(self) -> dict[str, str]:
        """Every set key as a string, secrets included: what a job needs to run again."""
        return {k: str(v) for k, v in self._raw.items()}

    def to_display_dict(self) -> dict[str, str]:
        """Every set key as a string, with secrets hidden as Flink hides them: for display and metadata."""
        return {k: HIDDEN_VALUE if is_sensitive(k) else str(v) for k, v in self._raw.items()}

    def keys(self) -> Iterable[str]:
        return self._raw.keys()

    def copy(self) -> "Configuration":
        return Configuration(self._raw)

    def __repr__(self) -> str:
        return f"Configuration({self.to_display_dict()!r})"


def parse_defines(items: Optional[Iterable[str]]) -> dict[str, str]:
    """``-D key=value`` options (the values after each ``-D``) as a dict; a malformed one is an error naming it."""
    defines = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"-D takes key=value, got {item!r}")
        defines[key.strip()] = value.strip()
    return defines


def is_sensitive(key: str) -> bool:
    """Whether a configuration key holds a secret (Flink's rule: the key names a password, secret, token, ...)."""
    lowered = key.lower()
    return any(part in lowered for part in SENSITIVE_KEY_PARTS)


def restart_description(conf: Configuration) -> str:
    """A readable line for the configured restart strategy."""
    kind = conf.get(RESTART_STRATEGY)
    if kind in ("none", "off", "disable"):
        return "no restarts"
    if kind == "fixed-delay":
        return f"fixed-delay: {conf.get(RESTART_ATTEMPTS)} attempts, {conf.get(RESTART_DELAY)} apart"
    if kind == "failure-rate":
        return f"failure-rate: {conf.get(FAILURE_RATE_MAX)} failures per {conf.get(FAILURE_RATE_INTERVAL)}"
    return f"exponential-delay from {conf.get(EXP_INITIAL)} to {conf.get(EXP_MAX)}"


def _pyflink_accessors() -> None:
    """PyFlink's typed getters and setters on Configuration (one implementation: they read and write the same keys)."""

    def getter(convert: Any) -> Any:
        def get(self: Configuration, key: str, default_value: Any = None) -> Any:
            if key not in self._raw:
                return default_value
            return convert(self._raw[key])
        return get

    def setter(self: Configuration, key: str, value: Any) -> Configuration:
        return self.set(key, value)

    def boolean(value: Any) -> bool:
        return value if isinstance(value, bool) else str(value).strip().lower() == "true"

    Configuration.get_string = getter(str)  # type: ignore[attr-defined]
    Configuration.get_integer = getter(int)  # type: ignore[attr-defined]
    Configuration.get_float = getter(float)  # type: ignore[attr-defined]
    Configuration.get_boolean = getter(boolean)  # type: ignore[attr-defined]
    for name in ("set_integer", "set_float", "set_boolean"):
        setattr(Configuration, name, setter)
    Configuration.key_set = lambda self: set(self._raw)  # type: ignore[attr-defined]
    Configuration.contains_key = Configuration.contains  # type: ignore[attr-defined]
    Configuration.add_all = lambda self, other, prefix=None: self.update(  # type: ignore[attr-defined]
        {(prefix or "") + k: v for k, v in other._raw.items()})


_pyflink_accessors()
