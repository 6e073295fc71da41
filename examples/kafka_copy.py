"""Copy a Kafka topic of JSON records to another topic, exactly once.

    python examples/kafka_copy.py --bootstrap-servers 127.0.0.1:9092 --input-topic in --output-topic out \\
        --checkpoint-dir .kindling/checkpoints --transactional-id-prefix kafka-copy

Reads ``{"id": <bigint>, "payload": <string>}`` records from the earliest offset and writes them to the
output topic with ``sink.delivery-guarantee = exactly-once``: each micro-batch (checkpoint) is one
Kafka transaction, fenced by its batch id, so a killed and restarted job writes every input record
exactly once to ``read_committed`` consumers. Running the same command again resumes from the
checkpoint (state.checkpoints.dir/Kafka Copy).
"""

from __future__ import annotations

import argparse

from kindling.connectors.kafka import DeliveryGuarantee, KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.datastream import WatermarkStrategy
from kindling.env import StreamEnvironment

JOB_NAME = "Kafka Copy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap-servers", default="127.0.0.1:9092")
    parser.add_argument("--input-topic", default="input")
    parser.add_argument("--output-topic", default="output")
    parser.add_argument("--checkpoint-dir", default=".kindling/checkpoints", help="state.checkpoints.dir")
    parser.add_argument("--checkpoint-interval", default="500 ms", help="execution.checkpointing.interval")
    parser.add_argument("--transactional-id-prefix", default="kafka-copy", help="sink.transactional-id-prefix")
    parser.add_argument("--sink-parallelism", type=int, default=1,
                        help="sink.parallelism: transactional producers publishing each micro-batch in parallel")
    args = parser.parse_args()

    env = StreamEnvironment(
        {
            "state.checkpoints.dir": args.checkpoint_dir,
            "execution.checkpointing.interval": args.checkpoint_interval,
            "parallelism.default": 2,
        }
    )
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(args.bootstrap_servers)
        .set_topics(args.input_topic)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_value_format("json")
        .set_schema("id BIGINT, payload STRING")
        .build()
    )
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers(args.bootstrap_servers)
        .set_topic(args.output_topic)
        .set_value_format("json")
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .set_transactional_id_prefix(args.transactional_id_prefix)
        .set_option("sink.parallelism", args.sink_parallelism)
        .build()
    )
    records = env.from_source(source, WatermarkStrategy.no_watermarks(), "Input")
    records.sink_to(sink).name("Output").uid("kafka-copy-sink")
    env.execute(JOB_NAME)


if __name__ == "__main__":
    main()
