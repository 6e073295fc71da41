"""Flink's restart strategies: whether, and after how long, a failed query is restarted from its checkpoint."""

from __future__ import annotations

import time
from collections import deque
from datetime import timedelta
from typing import Optional

from kindling import config as cfg
from kindling.config import Configuration


class RestartStrategy:
    """Decides the delay before the next restart, or None when the job must fail."""

    def __init__(self, conf: Configuration) -> None:
        self.kind = conf.get(cfg.RESTART_STRATEGY)
        self.conf = conf
        self.restarts = 0
        self._failures: deque[float] = deque()
        self._backoff: Optional[timedelta] = None

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
