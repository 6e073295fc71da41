"""The local Kafka broker: start, readiness, topic admin, stop by pid, and the detached CLI broker."""

from __future__ import annotations

import os

import pytest

from kindling.local import kafka as local_kafka
from kindling.local.kafka import LocalKafka, broker_answers
from kindling.local.ports import free_port
from kindling.local.process import alive

pytestmark = pytest.mark.integration


def test_own_broker_lifecycle_leaves_others_running(kafka, tmp_path):
    with LocalKafka(data_dir=tmp_path / "data") as broker:
        assert broker.running and broker_answers(broker.bootstrap_servers)
        assert broker.bootstrap_servers.startswith("127.0.0.1:")
        broker.create_topic("orders", partitions=3)
        from confluent_kafka.admin import AdminClient

        metadata = AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(timeout=10)
        assert len(metadata.topics["orders"].partitions) == 3
        broker.delete_topic("orders")
        broker.delete_topic("never-existed")  # not an error
        assert "orders" not in broker.topics()
        pid = broker.pid
    assert not alive(pid)
    assert not broker.running
    # The session broker is another process and keeps answering.
    assert broker_answers(kafka.bootstrap_servers)


def test_background_broker_start_status_stop(kafka, tmp_path):
    state = tmp_path / "state"
    assert local_kafka.status(state)["running"] is False
    port = free_port()
    try:
        first = local_kafka.start_background(port=port, state_dir=state)
        assert first["running"] and first["port"] == port and first["already_running"] is False
        assert first["bootstrap_servers"] == f"127.0.0.1:{port}"
        again = local_kafka.start_background(port=port, state_dir=state)
        assert again["already_running"] is True and again["pid"] == first["pid"]
        assert (state / "broker.log").exists()
        # It runs in its own session, detached from ours.
        assert os.getsid(first["pid"]) != os.getsid(0)
    finally:
        stopped = local_kafka.stop_background(state)
    assert stopped
    assert not alive(first["pid"])
    assert local_kafka.status(state)["running"] is False
    assert local_kafka.stop_background(state) is False
    assert broker_answers(kafka.bootstrap_servers)
