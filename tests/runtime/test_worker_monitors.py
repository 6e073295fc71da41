"""Spark's idle-worker monitor threads inherit a query thread's session; kindling lets it go when a job ends."""

from __future__ import annotations

from kindling.runtime import worker_monitors


def _monitors_holding_values(jvm) -> int:
    inherited = jvm.java.lang.Class.forName("java.lang.Thread").getDeclaredField("inheritableThreadLocals")
    inherited.setAccessible(True)
    return sum(1 for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()
               if thread.getName().startswith("Idle Worker Monitor") and inherited.get(thread) is not None)


def test_the_monitor_threads_a_query_started_let_its_session_go(env, monkeypatch):
    jvm = env.spark._jvm
    monkeypatch.setattr(worker_monitors, "_SWEEP_AFTER_NEW_THREADS", 10**9)  # no sweep at the job's end: this test sweeps
    worker_monitors.release_inherited_sessions(jvm)
    env.execute_sql("CREATE TABLE monitored (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    rows = list(env.execute_sql("SELECT n FROM monitored").collect())
    assert len(rows) == 3
    # Spark 4.3: the query's Python source runner started a monitor thread that inherited the query thread's values
    assert _monitors_holding_values(jvm) >= 1
    assert worker_monitors.release_inherited_sessions(jvm) >= 1
    assert _monitors_holding_values(jvm) == 0


def test_a_job_end_sweeps_once_enough_threads_appeared(env, monkeypatch):
    jvm = env.spark._jvm
    monkeypatch.setattr(worker_monitors, "_SWEEP_AFTER_NEW_THREADS", 1)
    monkeypatch.setattr(worker_monitors, "_threads_after_last_sweep", 0)
    env.execute_sql("CREATE TABLE swept (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    assert len(list(env.execute_sql("SELECT n FROM swept").collect())) == 3
    assert _monitors_holding_values(jvm) == 0
    assert worker_monitors._threads_after_last_sweep > 0
