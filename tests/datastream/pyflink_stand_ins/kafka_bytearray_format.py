"""Stand-in for the wheel's ``connectors/kafka_bytearray_format.py``, to record PyFlink 2.3's output of it.

PyFlink cannot run the example here (Flink's Kafka connector jar is not in the apache-flink wheel, and
there is no Maven). This is the example with Kafka taken out: the same byte arrays are serialized by Flink's
ByteArraySchema (as the KafkaSink calls it), the messages deserialized by it again, and the records read go
through the example's own ``map(lambda data: data.decode("utf-8"))`` into PyFlink's ``print()``, from a stream of
the same type (``Types.PRIMITIVE_ARRAY(Types.BYTE())``; made as the example's writer makes one, from one-field Rows:
PyFlink's from_collection takes no bare byte arrays). Standard output: what the example prints; the topic's
messages: see flink_formats.save_messages.
"""

import json
import logging
import sys

from flink_formats import deserialize, save_messages, serialize
from pyflink.common import ByteArraySchema, Types
from pyflink.datastream import StreamExecutionEnvironment

DATA = [json.dumps({"id": 1, "country": "USA"}).encode("utf-8"),
        json.dumps({"id": 2, "country": "Canada"}).encode("utf-8"),
        json.dumps({"id": 3, "country": "Germany"}).encode("utf-8")]

if __name__ == '__main__':
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    env = StreamExecutionEnvironment.get_execution_environment()

    print("start writing data to kafka")
    messages = serialize(ByteArraySchema(), DATA, rows=False)
    save_messages("test_bytearray_topic", messages)

    print("start reading data from kafka")
    records = deserialize(ByteArraySchema(), messages)
    ds = env.from_collection([(r,) for r in records], type_info=Types.ROW([Types.PRIMITIVE_ARRAY(Types.BYTE())]))
    ds = ds.map(lambda x: x[0], output_type=Types.PRIMITIVE_ARRAY(Types.BYTE()))
    ds.map(lambda data: data.decode("utf-8")).print()
    env.execute()
