"""Run Flink's operations-playground job "Click Event Count" on kindling.

    python examples/click_count.py --bootstrap-servers 127.0.0.1:9092 [--processing-time] [--backpressure]
        [--exactly-once] [-D kindling.spark.master=spark://127.0.0.1:<port>]

The pipeline itself is in kindling/playground/click_count.py. Stop with Ctrl-C; running the
same command again resumes from the checkpoint (state.checkpoints.dir/Click Event Count).
"""

from __future__ import annotations

import argparse

from kindling.env import StreamEnvironment
from kindling.playground import click_count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap-servers", default="127.0.0.1:9092")
    parser.add_argument("--input-topic", default="input")
    parser.add_argument("--output-topic", default="output")
    time_mode = parser.add_mutually_exclusive_group()
    time_mode.add_argument("--event-time", dest="event_time", action="store_true", default=True, help="count by event time (default)")
    time_mode.add_argument("--processing-time", dest="event_time", action="store_false", help="count by processing time")
    parser.add_argument("--backpressure", action="store_true", help="slow records down in even minutes")
    parser.add_argument("--max-records-per-batch", type=int, default=0, help="scan.max-records-per-trigger (0: no limit)")
    parser.add_argument("--checkpoint-dir", default=".kindling/checkpoints", help="state.checkpoints.dir")
    parser.add_argument("--checkpoint-interval", default="1 s", help="execution.checkpointing.interval")
    parser.add_argument("--exactly-once", action="store_true", help="write windows in one Kafka transaction per micro-batch")
    parser.add_argument("-D", dest="define", action="append", default=[], metavar="key=value",
                        help="a configuration option, e.g. -D kindling.spark.master=spark://127.0.0.1:7077 (repeatable)")
    args = parser.parse_args()

    options = {
        "state.checkpoints.dir": args.checkpoint_dir,
        "execution.checkpointing.interval": args.checkpoint_interval,
        "parallelism.default": 2,
    }
    for item in args.define:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"-D takes key=value, got {item!r}")
        options[key.strip()] = value.strip()
    env = StreamEnvironment(options)
    click_count.build(env, args.bootstrap_servers, args.input_topic, args.output_topic, args.event_time, args.backpressure,
                      args.max_records_per_batch, args.exactly_once)
    env.execute(click_count.JOB_NAME)


if __name__ == "__main__":
    main()
