"""The environment's checkpoint and pipeline settings as a program reads and writes them, and the stream methods
that change no result (partitioning, operator hints) or project a tuple."""

from pyflink.common import Configuration, Duration, Types
from pyflink.datastream import CheckpointingMode, ExternalizedCheckpointRetention, StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
checkpoints = env.get_checkpoint_config()


def show(tag):
    c = checkpoints
    print(tag, c.is_checkpointing_enabled(), c.get_checkpoint_interval(), c.get_checkpoint_timeout(),
          c.get_min_pause_between_checkpoints(), c.get_max_concurrent_checkpoints(), c.get_tolerable_checkpoint_failure_number(),
          c.get_externalized_checkpoint_retention(), c.is_externalized_checkpoints_enabled(), c.get_checkpointing_mode(),
          c.is_unaligned_checkpoints_enabled(), c.is_force_unaligned_checkpoints(), c.is_fail_on_checkpointing_errors())


def environment(tag):
    print(tag, env.get_max_parallelism(), env.get_buffer_timeout(), env.is_chaining_enabled(), env.get_default_savepoint_directory(),
          env.get_checkpointing_mode(), env.is_unaligned_checkpoints_enabled(), env.is_changelog_state_backend_enabled(),
          env.get_checkpoint_interval())


ds = env.from_collection([(1, "a", 10), (2, "b", 20)], type_info=Types.TUPLE([Types.INT(), Types.STRING(), Types.LONG()]))
projected = ds.project(2, 0)
print("projected", type(projected.get_type()).__name__)
try:
    ds.map(lambda t: t[0], output_type=Types.INT()).project(0)
except Exception as e:
    print("not projected:", e)
print("environment of a stream", ds.get_execution_environment().get_parallelism(), type(ds.get_execution_config()).__name__)
(projected.rebalance().shuffle().rescale().forward()
    .map(lambda t: f"{t[0]}:{t[1]}", output_type=Types.STRING())
    .disable_chaining().start_new_chain().set_description("d").name("joined")
    .print())
env.execute("environment_settings")  # first: the settings below are for reading back, not for a job

show("defaults")
environment("environment")
env.enable_checkpointing(5000)
show("enabled")
checkpoints.set_checkpoint_timeout(1000)
checkpoints.set_min_pause_between_checkpoints(200)
checkpoints.set_max_concurrent_checkpoints(2)
checkpoints.set_tolerable_checkpoint_failure_number(3)
checkpoints.set_externalized_checkpoint_retention(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION)
checkpoints.set_checkpointing_mode(CheckpointingMode.AT_LEAST_ONCE)
checkpoints.set_checkpoint_interval(7000)
show("set")
for setter, value in ((checkpoints.set_checkpoint_interval, 5), (checkpoints.set_checkpoint_timeout, 0),
                      (checkpoints.set_max_concurrent_checkpoints, 0), (checkpoints.set_min_pause_between_checkpoints, -1)):
    try:
        setter(value)
        print(setter.__name__, value, "accepted")
    except Exception:
        print(setter.__name__, value, "refused")
checkpoints.set_max_concurrent_checkpoints(1)
checkpoints.enable_unaligned_checkpoints()
checkpoints.set_aligned_checkpoint_timeout(Duration.of_seconds(3))
env.disable_operator_chaining()
env.set_default_savepoint_directory("file:///tmp/savepoints")  # Flink prints it as file:/tmp/savepoints
env.set_max_parallelism(64)
env.set_buffer_timeout(50)
environment("changed")
configuration = Configuration()
configuration.set_string("execution.checkpointing.interval", "3s")
configuration.set_string("pipeline.max-parallelism", "32")
env.configure(configuration)
environment("configured")

checkpoints.set_checkpointing_mode(CheckpointingMode.EXACTLY_ONCE)  # unaligned checkpoints count only in this mode
environment("exactly-once")
show("final")
