"""PyFlink's ``CheckpointConfig`` (``env.get_checkpoint_config()``): Flink's checkpoint settings, read and written
through the environment's configuration (``execution.checkpointing.*``), with Flink's defaults and checks.

A kindling checkpoint is a Spark micro-batch: every ``execution.checkpointing.interval`` the sources' offsets, the
operators' state and the sinks' commit advance together, and a batch always completes (or fails the job). So the
interval and the checkpoint directory change what runs; the other settings (timeout, pause, concurrency, tolerated
failures, unaligned checkpoints, retention) are validated and reported as Flink reports them, and change nothing
kindling computes. Without ``enable_checkpointing`` or the interval option, Flink reports checkpointing as disabled
(interval -1) while kindling still runs a micro-batch every second: its default trigger.

>>> from kindling.config import Configuration
>>> config = CheckpointConfig(Configuration())
>>> config.is_checkpointing_enabled(), config.get_checkpoint_interval(), config.get_checkpointing_mode()
(False, -1, <CheckpointingMode.AT_LEAST_ONCE: 1>)
>>> config.set_checkpoint_interval(5000).set_checkpoint_timeout(60000).get_checkpoint_timeout()
60000
>>> config.get_checkpointing_mode()
<CheckpointingMode.EXACTLY_ONCE: 0>
"""

from __future__ import annotations

from datetime import timedelta
from enum import Enum
from typing import TYPE_CHECKING, Optional

from kindling import config as cfg
from kindling.durations import to_millis

if TYPE_CHECKING:
    from kindling.config import Configuration
    from kindling.datastream import CheckpointingMode

MINIMAL_CHECKPOINT_TIME_MS = 10  # Flink's CheckpointConfig.MINIMAL_CHECKPOINT_TIME


class ExternalizedCheckpointRetention(Enum):
    """What happens to a job's last checkpoint when it is cancelled (``execution.checkpointing.externalized-checkpoint-
    retention``). kindling keeps it in every case: running the job again resumes from it."""

    DELETE_ON_CANCELLATION = 0
    RETAIN_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2


class CheckpointConfig:
    """The checkpoint settings of one environment: a view of its configuration, so setters act on the job."""

    def __init__(self, configuration: "Configuration") -> None:
        self._config = configuration

    # --- interval and mode ----------------------------------------------------------------------
    def is_checkpointing_enabled(self) -> bool:
        """Whether the program (or a -D option) set a checkpoint interval, as Flink answers it."""
        return self._config.contains(cfg.CHECKPOINTING_INTERVAL.key)

    def get_checkpoint_interval(self) -> int:
        """The interval in milliseconds, -1 when checkpointing was not enabled (Flink's answer)."""
        if not self.is_checkpointing_enabled():
            return -1
        return to_millis(self._config.get(cfg.CHECKPOINTING_INTERVAL))

    def set_checkpoint_interval(self, checkpoint_interval: int) -> "CheckpointConfig":
        """Checkpoint (run a micro-batch) every ``checkpoint_interval`` milliseconds (at least 10)."""
        _at_least(checkpoint_interval, MINIMAL_CHECKPOINT_TIME_MS, "Checkpoint interval must be larger than or equal to 10 ms")
        self._config.set(cfg.CHECKPOINTING_INTERVAL.key, f"{checkpoint_interval} ms")
        return self

    def get_checkpointing_mode(self) -> "CheckpointingMode":
        """EXACTLY_ONCE or AT_LEAST_ONCE as set; AT_LEAST_ONCE while checkpointing is not enabled (Flink's answer)."""
        from kindling.datastream import CheckpointingMode

        if not self.is_checkpointing_enabled():
            return CheckpointingMode.AT_LEAST_ONCE
        return CheckpointingMode[self._config.get(cfg.CHECKPOINTING_MODE)]

    def set_checkpointing_mode(self, checkpointing_mode: "CheckpointingMode") -> "CheckpointConfig":
        self._config.set(cfg.CHECKPOINTING_MODE.key, checkpointing_mode.name)
        return self

    # --- accepted and reported ------------------------------------------------------------------
    def get_checkpoint_timeout(self) -> int:
        return to_millis(self._config.get(cfg.CHECKPOINTING_TIMEOUT))

    def set_checkpoint_timeout(self, checkpoint_timeout: int) -> "CheckpointConfig":
        _at_least(checkpoint_timeout, MINIMAL_CHECKPOINT_TIME_MS, "Checkpoint timeout must be larger than or equal to 10 ms")
        self._config.set(cfg.CHECKPOINTING_TIMEOUT.key, f"{checkpoint_timeout} ms")
        return self

    def get_min_pause_between_checkpoints(self) -> int:
        return to_millis(self._config.get(cfg.CHECKPOINTING_MIN_PAUSE))

    def set_min_pause_between_checkpoints(self, min_pause_between_checkpoints: int) -> "CheckpointConfig":
        _at_least(min_pause_between_checkpoints, 0, "Pause value must be zero or positive")
        self._config.set(cfg.CHECKPOINTING_MIN_PAUSE.key, f"{min_pause_between_checkpoints} ms")
        return self

    def get_max_concurrent_checkpoints(self) -> int:
        return int(self._config.get(cfg.CHECKPOINTING_MAX_CONCURRENT))

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> "CheckpointConfig":
        _at_least(max_concurrent_checkpoints, 1, "The maximum number of concurrent attempts must be at least one.")
        self._config.set(cfg.CHECKPOINTING_MAX_CONCURRENT.key, max_concurrent_checkpoints)
        return self

    def get_tolerable_checkpoint_failure_number(self) -> int:
        return int(self._config.get(cfg.CHECKPOINTING_TOLERABLE_FAILURES))

    def set_tolerable_checkpoint_failure_number(self, tolerable_checkpoint_failure_number: int) -> "CheckpointConfig":
        _at_least(tolerable_checkpoint_failure_number, 0, "The tolerable failure checkpoint number must be non-negative.")
        self._config.set(cfg.CHECKPOINTING_TOLERABLE_FAILURES.key, tolerable_checkpoint_failure_number)
        return self

    def is_fail_on_checkpointing_errors(self) -> bool:
        """True while no checkpoint failure is tolerated (Flink derives it from the tolerable number)."""
        return self.get_tolerable_checkpoint_failure_number() == 0

    def set_fail_on_checkpointing_errors(self, fail_on_checkpointing_errors: bool) -> "CheckpointConfig":
        """Flink's deprecated switch: True tolerates no failure, False tolerates any number."""
        return self.set_tolerable_checkpoint_failure_number(0 if fail_on_checkpointing_errors else 2**31 - 1)

    def get_externalized_checkpoint_retention(self) -> Optional[ExternalizedCheckpointRetention]:
        return ExternalizedCheckpointRetention[self._config.get(cfg.CHECKPOINTING_RETENTION)]

    def set_externalized_checkpoint_retention(self, retention_mode: ExternalizedCheckpointRetention) -> "CheckpointConfig":
        self._config.set(cfg.CHECKPOINTING_RETENTION.key, retention_mode.name)
        return self

    def is_externalized_checkpoints_enabled(self) -> bool:
        return self.get_externalized_checkpoint_retention() != ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS

    def is_unaligned_checkpoints_enabled(self) -> bool:
        """Enabled and in EXACTLY_ONCE mode: Flink aligns nothing at least once, so it reports them off there."""
        from kindling.datastream import CheckpointingMode

        return bool(self._config.get(cfg.CHECKPOINTING_UNALIGNED)) and self.get_checkpointing_mode() == CheckpointingMode.EXACTLY_ONCE

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> "CheckpointConfig":
        self._config.set(cfg.CHECKPOINTING_UNALIGNED.key, bool(enabled))
        return self

    def disable_unaligned_checkpoints(self) -> "CheckpointConfig":
        return self.enable_unaligned_checkpoints(False)

    def is_force_unaligned_checkpoints(self) -> bool:
        return bool(self._config.get(cfg.CHECKPOINTING_UNALIGNED_FORCED))

    def set_force_unaligned_checkpoints(self, force_unaligned_checkpoints: bool = True) -> "CheckpointConfig":
        self._config.set(cfg.CHECKPOINTING_UNALIGNED_FORCED.key, bool(force_unaligned_checkpoints))
        return self

    def get_aligned_checkpoint_timeout(self) -> timedelta:
        from kindling.common.time import Duration

        return Duration.of_millis(to_millis(self._config.get(cfg.CHECKPOINTING_ALIGNED_TIMEOUT)))

    def set_aligned_checkpoint_timeout(self, alignment_timeout: timedelta) -> "CheckpointConfig":
        self._config.set(cfg.CHECKPOINTING_ALIGNED_TIMEOUT.key, f"{to_millis(alignment_timeout)} ms")
        return self

    get_alignment_timeout = get_aligned_checkpoint_timeout
    set_alignment_timeout = set_aligned_checkpoint_timeout


def _at_least(value: int, minimum: int, message: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int number of milliseconds or a count, got {value!r}")
    if value < minimum:
        raise ValueError(message)


__all__ = ["CheckpointConfig", "ExternalizedCheckpointRetention"]
