import os
from datetime import timedelta

import pytest

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


def test_sparks_missed_connect_back_window_restarts_a_few_times_in_a_while():
    strategy = RestartStrategy(Configuration())  # restart-strategy none: other failures fail the job
    spark_text = "org.apache.spark.SparkException: Python worker failed to connect back.\n" \
                 "Caused by: java.net.SocketTimeoutException: Timed out while waiting for the Python worker to connect back"
    assert not strategy.restarts_worker_start("java.lang.ArithmeticException: / by zero", now=0)
    assert [strategy.restarts_worker_start(spark_text, now=t) for t in (0, 1, 2, 3)] == [True, True, True, False]
    assert strategy.restarts_worker_start(spark_text, now=700)  # the first three are out of the window
    assert strategy.next_delay() is None


@pytest.mark.integration
def test_a_query_whose_python_process_missed_the_window_restarts_from_its_checkpoint(env, tmp_path):
    """The failure is raised by the UDF once, with Spark's text, as Spark raises it when a worker starts too slowly
    (10 s, fixed); the job restarts the query with no restart strategy configured and gives the whole answer."""
    from kindling.table import DataTypes, StreamTableEnvironment, udf

    marker = str(tmp_path / "failed-once")

    @udf(result_type=DataTypes.BIGINT())
    def tenfold(n):
        if not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("Python worker failed to connect back.")
        return n * 10

    t_env = StreamTableEnvironment.create(env)
    t_env.create_temporary_system_function("tenfold", tenfold)
    env.execute_sql("CREATE TABLE slow_start (n BIGINT) WITH ('connector' = 'collection', 'data' = '[[1], [2], [3]]')")
    result = env.execute_sql("SELECT tenfold(n) AS t FROM slow_start")
    assert sorted(tuple(r) for r in result.final_rows(timeout=300)) == [(10,), (20,), (30,)]
    client = result.get_job_client()
    assert client.get_job_status() == "FINISHED"
    (failure,) = client.exceptions  # kept in the job's exception history
    assert "Python worker failed to connect back" in failure.message
