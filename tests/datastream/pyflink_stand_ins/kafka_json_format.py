"""Stand-in for the wheel's ``connectors/kafka_json_format.py``, to record PyFlink 2.3's output of it.

PyFlink cannot run the example here (Flink's Kafka connector jar is not in the apache-flink wheel, and
there is no Maven). This is the example with Kafka taken out: the same records are serialized by Flink's
JsonRowSerializationSchema (as the KafkaSink calls it), the messages deserialized by Flink's
JsonRowDeserializationSchema, and the records read are printed by PyFlink's ``print()`` with the same type
information. Standard output: what the example prints; the topic's messages: see flink_formats.save_messages.
"""

import logging
import sys

from flink_formats import deserialize, save_messages, serialize
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

DATA = [(1, 'hi'), (2, 'hello'), (3, 'hi'), (4, 'hello'), (5, 'hi'), (6, 'hello'), (6, 'hello')]

if __name__ == '__main__':
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    env = StreamExecutionEnvironment.get_execution_environment()
    type_info = Types.ROW([Types.INT(), Types.STRING()])

    print("start writing data to kafka")
    messages = serialize(JsonRowSerializationSchema.Builder().with_type_info(type_info).build(), DATA)
    save_messages("test_json_topic", messages)

    print("start reading data from kafka")
    records = deserialize(JsonRowDeserializationSchema.Builder().type_info(Types.ROW([Types.INT(), Types.STRING()])).build(),
                          messages)
    env.from_collection(records, type_info=Types.ROW([Types.INT(), Types.STRING()])).print()
    env.execute()
