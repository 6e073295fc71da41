"""A job is among the process's running jobs until it ends, and no longer: an ended job's queries hold their plans."""

from __future__ import annotations

from kindling.runtime.job import running_jobs


def _is_running(job) -> bool:
    return any(job is other for other in running_jobs())


def test_a_bounded_job_leaves_the_running_jobs_when_it_ends(env):
    env.execute_sql("CREATE TABLE numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    env.execute_sql("CREATE TABLE out_numbers (n BIGINT) WITH ('connector' = 'blackhole')")
    client = env.execute_sql("INSERT INTO out_numbers SELECT n FROM numbers").get_job_client()
    assert client.wait(120) == "FINISHED"
    assert not _is_running(client)


def test_an_unbounded_job_stays_until_it_is_cancelled(env):
    env.execute_sql("CREATE TABLE ticks (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5')")
    env.execute_sql("CREATE TABLE out_ticks (n BIGINT) WITH ('connector' = 'blackhole')")
    client = env.execute_sql("INSERT INTO out_ticks SELECT n FROM ticks").get_job_client()
    try:
        assert client.get_job_status() == "RUNNING"
        assert _is_running(client)
    finally:
        client.cancel()
    assert client.get_job_status() == "CANCELED"
    assert not _is_running(client)


def test_a_batch_job_leaves_the_running_jobs_when_it_ends(env):
    env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    env.execute_sql("CREATE TABLE b_numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    env.execute_sql("CREATE TABLE b_out (n BIGINT) WITH ('connector' = 'blackhole')")
    client = env.execute_sql("INSERT INTO b_out SELECT n FROM b_numbers").get_job_client()
    assert client.wait(120) == "FINISHED"
    assert not _is_running(client)
