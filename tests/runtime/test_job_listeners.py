"""Job listeners (PyFlink's register_job_listener) and the process-wide listeners a driver or `kindling run` registers."""

from __future__ import annotations

import pytest

from kindling.common import Types
from kindling.env import StreamEnvironment
from kindling.runtime import job_listeners
from kindling.runtime.job_listeners import ImposedSettings, JobListener

pytestmark = pytest.mark.integration


class Recorder(JobListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def on_job_submitted(self, job_client, throwable) -> None:
        self.events.append(("submitted", job_client.get_job_id() if job_client else type(throwable).__name__))

    def on_job_executed(self, job_execution_result, throwable) -> None:
        self.events.append(("executed", job_execution_result.get_job_status() if job_execution_result else type(throwable).__name__))


def test_a_registered_listener_hears_of_submission_and_execution(spark, tmp_path):
    env = StreamEnvironment({"state.checkpoints.dir": str(tmp_path), "execution.checkpointing.interval": "100 ms"}, spark=spark)
    recorder = Recorder()
    env.register_job_listener(recorder)
    env.from_collection([1, 2, 3], type_info=Types.INT()).map(lambda n: n + 1, output_type=Types.INT()).print()
    client = env.execute("listened")
    assert recorder.events == [("submitted", client.get_job_id()), ("executed", "FINISHED")]
    env.clear_job_listeners()
    env.from_collection([4], type_info=Types.INT()).print()
    env.execute("not listened")
    assert len(recorder.events) == 2


def test_process_listeners_configure_every_new_environment_and_name_unnamed_jobs_stably(monkeypatch, tmp_path):
    monkeypatch.setattr(job_listeners, "_PROCESS_LISTENERS", [])

    class Stable(JobListener):
        stable_job_names = True

    job_listeners.register_process_listener(ImposedSettings({"parallelism.default": "3", "pipeline.max-parallelism": "64"}))
    job_listeners.register_process_listener(Stable())
    env = StreamEnvironment({"pipeline.max-parallelism": "32", "state.checkpoints.dir": str(tmp_path)})
    # Imposed settings replace what the constructor was given (a job manager's -D over the program's configuration);
    # what the program sets afterwards stands, as env.set_parallelism over Flink's -p.
    assert env.config.get("parallelism.default") == 3 and env.config.get("pipeline.max-parallelism") == 64
    assert [env._job_name(None), env._job_name(None)] == ["kindling-job", "kindling-job-2"]
    assert StreamEnvironment()._job_name(None) == "kindling-job"
