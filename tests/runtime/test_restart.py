from datetime import timedelta

from kindling.config import Configuration
from kindling.runtime.restart import RestartStrategy


def test_none_never_restarts():
    assert RestartStrategy(Configuration()).next_delay() is None


def test_fixed_delay_counts_attempts():
    strategy = RestartStrategy(Configuration({
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": 2,
        "restart-strategy.fixed-delay.delay": "3 s",
    }))
    assert strategy.next_delay() == timedelta(seconds=3)
    assert strategy.next_delay() == timedelta(seconds=3)
    assert strategy.next_delay() is None


def test_failure_rate_forgets_old_failures():
    strategy = RestartStrategy(Configuration({
        "restart-strategy.type": "failure-rate",
        "restart-strategy.failure-rate.max-failures-per-interval": 2,
        "restart-strategy.failure-rate.failure-rate-interval": "10 s",
    }))
    assert strategy.next_delay(now=0) is not None
    assert strategy.next_delay(now=1) is not None
    assert strategy.next_delay(now=2) is None
    fresh = RestartStrategy(strategy.conf)
    assert fresh.next_delay(now=0) is not None
    assert fresh.next_delay(now=1) is not None
    assert fresh.next_delay(now=20) is not None  # the first two are out of the interval


def test_exponential_delay_grows_to_the_cap():
    strategy = RestartStrategy(Configuration({
        "restart-strategy.type": "exponential-delay",
        "restart-strategy.exponential-delay.initial-backoff": "1 s",
        "restart-strategy.exponential-delay.max-backoff": "3 s",
        "restart-strategy.exponential-delay.backoff-multiplier": 2.0,
    }))
    assert [strategy.next_delay().total_seconds() for _ in range(4)] == [1, 2, 3, 3]
