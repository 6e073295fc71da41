"""Stand-in for the wheel's ``connectors/kafka_row_field_extractor_example.py``, to record PyFlink 2.3's output of it.

PyFlink cannot run the example here (Flink's Kafka connector jar is not in the apache-flink wheel, and
there is no Maven). This is the example with the KafkaSink taken out: the same banner, the same Rows of two
byte arrays through the example's ``print_event`` map (whose prints PyFlink shows on standard output), then a
sink that writes nothing; the key and value of each message are made by Flink's RowFieldExtractorSchema(0)
and (1), as the KafkaSink calls them. Standard output: what the example prints; the topic's messages: see
flink_formats.save_messages.
"""

import json

from flink_formats import save_messages, serialize
from pyflink.common import Row
from pyflink.common.serialization import RowFieldExtractorSchema
from pyflink.common.typeinfo import Types
from pyflink.datastream import StreamExecutionEnvironment

EVENTS = [
    {"user_id": "user-001", "event": {"type": "purchase", "item": "laptop", "price": 999.99}},
    {"user_id": "user-002", "event": {"type": "view", "item": "phone", "timestamp": "2024-01-07T10:30:00"}},
    {"user_id": "user-001", "event": {"type": "add_to_cart", "item": "mouse", "quantity": 2}},
    {"user_id": "user-003", "event": {"type": "purchase", "item": "keyboard", "price": 79.99}},
]
ROWS = [(e["user_id"].encode('utf-8'), json.dumps(e["event"]).encode('utf-8')) for e in EVENTS]
BYTES_ROW = Types.ROW([Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.PRIMITIVE_ARRAY(Types.BYTE())])


def print_event(row):
    user_id = row[0].decode('utf-8')
    event_data = json.loads(row[1].decode('utf-8'))
    print(f"Sending: User={user_id}, Event={event_data}")
    return row


if __name__ == '__main__':
    print("=" * 70)
    print("Kafka RowFieldExtractorSchema Example")
    print("=" * 70)
    print("\nMake sure:")
    print("  1. Kafka is running on localhost:9092")
    print("  2. Topic 'row-extractor-example' exists")
    print("  3. Kafka connector JAR is in classpath")
    print("\nTo create topic:")
    print("  kafka-topics.sh --create --topic row-extractor-example \\")
    print("    --bootstrap-server localhost:9092 --partitions 3")
    print("\nTo consume messages:")
    print("  kafka-console-consumer.sh --bootstrap-server localhost:9092 \\")
    print("    --topic row-extractor-example --from-beginning \\")
    print("    --property print.key=true --property key.separator=' => '")
    print("\n" + "=" * 70 + "\n")

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection([Row(*r) for r in ROWS], type_info=BYTES_ROW)
    ds = ds.map(print_event, output_type=BYTES_ROW)
    ds.filter(lambda row: False).print()  # the KafkaSink's place: nothing printed
    save_messages("row-extractor-example", serialize(RowFieldExtractorSchema(1), ROWS),
                  keys=serialize(RowFieldExtractorSchema(0), ROWS))
    env.execute("Kafka RowFieldExtractorSchema Example")
