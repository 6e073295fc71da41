"""A job waiting for its queries wakes when Spark's listener bus reports a query's progress or end."""

from __future__ import annotations

from kindling.runtime import progress_events


def test_a_querys_progress_wakes_a_waiter_and_its_session_is_listened_to_once(spark):
    query = spark.readStream.format("rate").option("rowsPerSecond", "5").load().writeStream.format("noop").start()
    try:
        progress_events.listen(query)
        listened = len(progress_events._listeners)
        progress_events.listen(query)  # the same session: no second listener
        assert len(progress_events._listeners) == listened
        mark = progress_events.current()
        progress_events.wait_after(mark, 60)  # returns at the query's first progress report, not after a minute
        assert progress_events.current() != mark
    finally:
        query.stop()


def test_a_bounded_job_ends_through_its_progress_report(env):
    env.execute_sql("CREATE TABLE pe_numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    env.execute_sql("CREATE TABLE pe_out (n BIGINT) WITH ('connector' = 'blackhole')")
    before = progress_events.current()
    client = env.execute_sql("INSERT INTO pe_out SELECT n FROM pe_numbers").get_job_client()
    assert client.wait(120) == "FINISHED"
    assert progress_events.current() > before  # the job's query reported to the listener its start registered
