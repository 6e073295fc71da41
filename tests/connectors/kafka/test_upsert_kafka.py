"""upsert-kafka: a changelog becomes keyed values and tombstones; the topic's last record per key is the row."""

from __future__ import annotations

import json
import os
import sys

import pytest

from kindling.connectors import Sink
from kindling.connectors.base import ROWKIND_COLUMN
from kindling.connectors.kafka.upsert import upsert_sink_config
from kindling.options import OptionError

sys.path.insert(0, os.path.dirname(__file__))
from kafka_helpers import read_back  # noqa: E402

# (account, province, total, row kind) as an updating GROUP BY emits them, in order, three rows a batch.
# The last -U has no +U after it (a HAVING dropped the new value): Flink's writer deletes on UPDATE_BEFORE.
CHANGELOG = [
    (1, "Beijing", 10, "+I"),
    (2, "Shanghai", 5, "+I"),
    (3, "Hubei", 7, "+I"),
    (1, "Beijing", 10, "-U"),
    (1, "Beijing", 25, "+U"),
    (2, "Shanghai", 5, "-D"),
    (3, "Hubei", 7, "-U"),
    (3, "Hubei", 9, "+U"),
    (4, "Wuhan", 1, "+I"),
    (4, "Wuhan", 1, "-U"),
]


def options(kafka, topic, **extra):
    return {"topic": topic, "properties.bootstrap.servers": kafka.bootstrap_servers, "key.format": "json",
            "value.format": "json", "kindling.table.primary-key": "account", **extra}


def test_needs_a_primary_key_and_key_format():
    base = {"topic": "t", "properties.bootstrap.servers": "h:1", "value.format": "json", "key.format": "json"}
    with pytest.raises(OptionError, match="PRIMARY KEY"):
        upsert_sink_config(base)
    with pytest.raises(OptionError, match="'key.format' is required"):
        upsert_sink_config({k: v for k, v in base.items() if k != "key.format"} | {"kindling.table.primary-key": "a"})
    config = upsert_sink_config(base | {"kindling.table.primary-key": "a;b", "value.fields-include": "EXCEPT_KEY"})
    assert config.key_fields == ("a", "b") and config.upsert
    assert config.value_columns(["a", "b", "c"]) == ["c"]


@pytest.mark.integration
@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_changelog_to_upserts_and_tombstones(env, kafka, topic, guarantee):
    from pyspark.sql import functions as F

    stream = env.from_collection(CHANGELOG, "account BIGINT, province STRING, total BIGINT, kind STRING", rows_per_batch=3)
    changelog = stream.map(F.col("account"), F.col("province"), F.col("total"), F.col("kind").alias(ROWKIND_COLUMN))
    extra = {"sink.delivery-guarantee": guarantee, "value.fields-include": "EXCEPT_KEY"}
    if guarantee == "exactly-once":
        extra["sink.transactional-id-prefix"] = f"upsert-{topic}"
    changelog.sink_to(Sink("upsert-kafka", options(kafka, topic, **extra)))
    assert env.execute(f"upsert-{guarantee}").get_job_status() == "FINISHED"

    records = read_back(kafka.bootstrap_servers, topic, expected=8)
    assert len(records) == 8, "a -U followed by its +U is not written; the lone one is a tombstone"
    latest = {}
    for record in records:  # one partition per key, so per-key order is the changelog's order
        value = record.value()
        latest[json.loads(record.key())["account"]] = None if value is None else json.loads(value)
    assert latest == {1: {"province": "Beijing", "total": 25}, 2: None, 3: {"province": "Hubei", "total": 9}, 4: None}
