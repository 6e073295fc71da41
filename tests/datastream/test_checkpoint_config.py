"""env.get_checkpoint_config() and the environment's PyFlink settings: Flink's checks with Flink's messages (recorded
from PyFlink 2.3's IllegalArgumentExceptions), and the stream APIs kindling refuses by name. The values a program
reads back are compared with PyFlink's in tests/datastream/pyflink_programs/environment_settings.py."""

from __future__ import annotations

import pytest

from kindling.datastream import CheckpointingMode, ExternalizedCheckpointRetention, StreamExecutionEnvironment
from kindling.options import OptionError


def test_bad_settings_are_refused_with_flinks_messages():
    checkpoints = StreamExecutionEnvironment().get_checkpoint_config()
    for setter, value, message in (
        (checkpoints.set_checkpoint_interval, 5, "Checkpoint interval must be larger than or equal to 10 ms"),
        (checkpoints.set_checkpoint_timeout, 0, "Checkpoint timeout must be larger than or equal to 10 ms"),
        (checkpoints.set_max_concurrent_checkpoints, 0, "The maximum number of concurrent attempts must be at least one."),
        (checkpoints.set_min_pause_between_checkpoints, -1, "Pause value must be zero or positive"),
    ):
        with pytest.raises(ValueError, match=message):
            setter(value)
    assert checkpoints.get_checkpoint_interval() == -1 and checkpoints.get_max_concurrent_checkpoints() == 1


def test_settings_are_the_configurations_options():
    env = StreamExecutionEnvironment({"execution.checkpointing.mode": "at_least_once",
                                      "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION"})
    checkpoints = env.get_checkpoint_config()
    checkpoints.set_checkpoint_interval(250).set_tolerable_checkpoint_failure_number(2)
    assert env.config.to_dict()["execution.checkpointing.interval"] == "250 ms"  # as a -D option would give it
    assert env.get_checkpoint_interval() == 250 and env.get_checkpointing_mode() == CheckpointingMode.AT_LEAST_ONCE
    assert checkpoints.get_externalized_checkpoint_retention() == ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    assert not checkpoints.is_fail_on_checkpointing_errors()
    with pytest.raises(OptionError, match="execution.checkpointing.mode"):
        StreamExecutionEnvironment({"execution.checkpointing.mode": "twice"})


def test_what_kindling_cannot_do_is_refused_by_name(env):
    with pytest.raises(NotImplementedError, match="get_execution_plan"):
        StreamExecutionEnvironment().get_execution_plan()
    stream = env.from_collection([1, 2])
    with pytest.raises(NotImplementedError, match="partition_custom"):
        stream.partition_custom(lambda key, partitions: 0, lambda x: x)
    assert stream.slot_sharing_group("g") is stream and stream.set_max_parallelism(4) is stream
