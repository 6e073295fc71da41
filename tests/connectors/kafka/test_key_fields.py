"""key.format / key.fields / value.fields-include: key columns travel in the record key, as in Flink."""

from __future__ import annotations

import json
import os
import sys

import pytest

from kindling.connectors.kafka import KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.connectors.kafka.options import source_config
from kindling.options import OptionError

sys.path.insert(0, os.path.dirname(__file__))
from kafka_helpers import read_back  # noqa: E402


def test_key_options_need_each_other():
    base = {"topic": "t", "properties.bootstrap.servers": "h:1", "format": "json"}
    with pytest.raises(OptionError, match="'key.fields' = 'id' needs 'key.format'"):
        source_config(base | {"key.fields": "id"})
    with pytest.raises(OptionError, match="'value.fields-include' = 'EXCEPT_KEY' needs 'key.fields'"):
        source_config(base | {"value.fields-include": "EXCEPT_KEY"})


@pytest.mark.integration
def test_key_fields_round_trip(env, kafka, topic):
    rows = [(i, f"user{i % 3}", i * 10) for i in range(12)]
    env.from_collection(rows, "id BIGINT, user STRING, amount BIGINT").sink_to(
        KafkaSink.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topic(topic).set_value_format("json")
        .set_key_fields("id", "user").set_option("value.fields-include", "EXCEPT_KEY").build())
    env.execute("key-fields-write")
    written = read_back(kafka.bootstrap_servers, topic, expected=12)
    assert sorted(json.loads(m.key())["id"] for m in written) == list(range(12))
    assert all(set(json.loads(m.value())) == {"amount"} for m in written), "EXCEPT_KEY leaves the key out of the value"

    source = (KafkaSource.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest()).set_bounded(KafkaOffsetsInitializer.latest())
              .set_value_format("json").set_schema("id BIGINT, user STRING, amount BIGINT")
              .set_option("key.format", "json").set_option("key.fields", "id;user")
              .set_option("value.fields-include", "EXCEPT_KEY").build())
    back = env.from_source(source).execute_and_collect(timeout=180)
    assert sorted((r.id, r.user, r.amount) for r in back) == rows
