"""Flink's restart strategies: whether, and after how long, a failed query is restarted from its checkpoint."""

from __future__ import annotations

import time
from collections import deque
from datetime import timedelta
from typing import Optional

from kindling import config as cfg
from kindling.config import Configuration

# Spark gives a Python process it starts (a Python data source's planner, a UDF worker without the daemon) a fixed
# 10 s to connect back (PythonWorkerFactory.createSimpleWorker, not configurable); a loaded machine misses it. Nothing
# ran in that process, so the query restarts from its checkpoint as if nothing happened, a few times in a while.
WORKER_START_MESSAGE = "Python worker failed to connect back"  # Spark's SparkException
WORKER_START_FAILURES = ("Timed out while waiting for the Python worker to connect back", WORKER_START_MESSAGE)
WORKER_START_RESTARTS = 3  # in WORKER_START_WINDOW_S
WORKER_START_WINDOW_S = 600.0


def is_worker_start_failure(error: str) -> bool:
    """Whether a failure's text is Spark's Python process missing its 10 s to connect back."""
    return any(marker in error for marker in WORKER_START_FAILURES)


class RestartStrategy:
    """Decides the delay before the next restart, or None when the job must fail."""

    def __init__(self, conf: Configuration) -> None:
        self.kind = conf.get(cfg.RESTART_STRATEGY)
        self.conf = conf
        self.restarts = 0
        self._failures: deque[float] = deque()
        self._backoff: Optional[timedelta] = None
        self._worker_starts: deque[float] = deque()

    def restarts_worker_start(self, error: str, now: Optional[float] = None) -> bool:
        """Whether ``error`` (a query's whole failure text) is Spark missing its 10 s for a Python process to connect
        back and the query restarts from its checkpoint outside the configured strategy (Flink has no such failure:
        it is the engine's, not the job's). At most WORKER_START_RESTARTS in WORKER_START_WINDOW_S; after that the
        failure goes to the configured strategy like any other."""
        if not is_worker_start_failure(error):
            return False
        now = time.monotonic() if now is None else now
        while self._worker_starts and self._worker_starts[0] < now - WORKER_START_WINDOW_S:
            self._worker_starts.popleft()
        if len(self._worker_starts) >= WORKER_START_RESTARTS:
            return False
        self._worker_starts.append(now)
        return True

    def next_delay(self, now: Optional[float] = None) -> Optional[timedelta]:
        """Record a failure; return how long to wait before restarting, or None to give up."""
        now = time.monotonic() if now is None else now
        conf = self.conf
        if self.kind in ("none", "off", "disable"):
            return None
        if self.kind == "fixed-delay":
            if self.restarts >= conf.get(cfg.RESTART_ATTEMPTS):
                return None
            self.restarts += 1
            return conf.get(cfg.RESTART_DELAY)
        if self.kind == "failure-rate":
            interval = conf.get(cfg.FAILURE_RATE_INTERVAL).total_seconds()
            self._failures.append(now)
            while self._failures and self._failures[0] < now - interval:
                self._failures.popleft()
            if len(self._failures) > conf.get(cfg.FAILURE_RATE_MAX):
                return None
            self.restarts += 1
            return conf.get(cfg.FAILURE_RATE_DELAY)
        # exponential-delay
        if self.restarts >= conf.get(cfg.EXP_ATTEMPTS):
            return None
        initial, maximum = conf.get(cfg.EXP_INITIAL), conf.get(cfg.EXP_MAX)
        if self._backoff is None:
            self._backoff = initial
        else:
            self._backoff = min(maximum, self._backoff * conf.get(cfg.EXP_MULTIPLIER))
        self.restarts += 1
        return self._backoff
