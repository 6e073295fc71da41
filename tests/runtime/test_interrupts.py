"""Ctrl-C while a job is waited on lands between two JVM calls; elsewhere it interrupts at once."""

import os
import signal

import pytest

from kindling.runtime import interrupts


@pytest.fixture
def kindling_handler():
    previous = signal.getsignal(signal.SIGINT)
    interrupts.install()
    yield
    signal.signal(signal.SIGINT, previous)


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # the handler runs before os.kill returns to Python code


def test_a_ctrl_c_while_waiting_is_raised_at_the_next_safe_point(kindling_handler):
    with interrupts.deferred():
        _ctrl_c()
        reached = True  # nothing was raised in the middle of the "JVM call"
        with pytest.raises(KeyboardInterrupt):
            interrupts.raise_if_requested()
    assert reached
    interrupts.raise_if_requested()  # the request ended with the wait that took it


def test_a_second_ctrl_c_stops_waiting_at_once(kindling_handler):
    with interrupts.deferred():
        _ctrl_c()
        with pytest.raises(KeyboardInterrupt):
            _ctrl_c()


def test_a_ctrl_c_outside_a_wait_interrupts_at_once(kindling_handler):
    with pytest.raises(KeyboardInterrupt):
        _ctrl_c()
