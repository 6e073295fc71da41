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


@pytest.mark.integration
def test_a_ctrl_c_while_the_queries_start_stops_the_job_cleanly_once_they_run(env, capsys, monkeypatch):
    """Ctrl-C between ``execute()`` being called and the job running (query start takes seconds on
    Spark) is kept until the job runs, then stops it as a Ctrl-C while waiting does."""
    from pyspark.sql.types import LongType, StructField, StructType

    from kindling.connectors.base import Sink, Source

    source = Source("datagen", {"rows-per-second": "10", "fields.n.kind": "sequence", "fields.n.start": "1",
                                "fields.n.end": "1000000"}, StructType([StructField("n", LongType(), False)]))
    env.from_source(source).sink_to(Sink("blackhole"))
    started = env.execute_async

    def start_with_ctrl_c(job_name=None):
        _ctrl_c()  # the session installed kindling's handler: this only records the request
        return started(job_name)

    monkeypatch.setattr(env, "execute_async", start_with_ctrl_c)
    client = env.execute("ctrl-c-at-start")
    assert client.get_job_status() == "CANCELED"
    assert "stopped (Ctrl-C)" in capsys.readouterr().err
