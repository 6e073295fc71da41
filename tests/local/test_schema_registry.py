"""The local schema registry, checked with Confluent's own client and serializers: the REST API subset, its
error codes, compatibility levels, persistence across restarts, basic auth, and the CLI."""

from __future__ import annotations

import json
import warnings

import pytest

from kindling.cli import main
from kindling.local import schema_registry as local_registry
from kindling.local.ports import free_port
from kindling.local.process import alive
from kindling.local.schema_registry import LocalSchemaRegistry, can_read

pytestmark = pytest.mark.integration

import authlib.deprecate  # noqa: E402,F401 - installs an 'always' filter for its warning; ours below goes first

with warnings.catch_warnings():  # confluent's registry client imports authlib's deprecated httpx integration
    warnings.simplefilter("ignore", DeprecationWarning)
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402


def record(*fields: dict, name: str = "User") -> str:
    return json.dumps({"type": "record", "name": name, "namespace": "com.example", "fields": list(fields)})


ID = {"name": "id", "type": "long"}
NAME = {"name": "name", "type": "string"}
EMAIL_DEFAULT = {"name": "email", "type": ["null", "string"], "default": None}
EMAIL_REQUIRED = {"name": "email", "type": "string"}


def unique(prefix: str) -> str:
    import uuid

    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def error_of(call) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as info:
        call()
    return info.value


def test_register_is_idempotent_and_ids_are_global(schema_registry):
    client = SchemaRegistryClient({"url": schema_registry.url})
    a, b = unique("a"), unique("b")
    schema = record(ID, NAME)
    first = client.register_schema(a, Schema(schema, "AVRO"))
    # Same schema again (other key order and spacing, a fresh client without a cache): same id, no new version.
    reordered = json.dumps({"fields": [ID, NAME], "namespace": "com.example", "type": "record", "name": "User"}, indent=2)
    fresh = SchemaRegistryClient({"url": schema_registry.url})
    assert fresh.register_schema(a, Schema(reordered, "AVRO")) == first
    assert fresh.get_versions(a) == [1]
    # The same schema under another subject has the same global id.
    assert fresh.register_schema(b, Schema(schema, "AVRO")) == first
    found = fresh.lookup_schema(a, Schema(reordered, "AVRO"))
    assert (found.schema_id, found.version, found.subject) == (first, 1, a)
    assert json.loads(fresh.get_schema(first).schema_str) == json.loads(schema)
    assert {a, b} <= set(fresh.get_subjects())
    latest = fresh.get_latest_version(a)
    assert (latest.schema_id, latest.version) == (first, 1)
    assert fresh.get_version(a, 1).schema_id == first


def test_errors_use_confluents_codes(schema_registry):
    client = SchemaRegistryClient({"url": schema_registry.url})
    missing = unique("missing")
    assert error_of(lambda: client.get_latest_version(missing)).error_code == 40401
    assert error_of(lambda: client.get_schema(987654)).error_code == 40403
    subject = unique("s")
    client.register_schema(subject, Schema(record(ID), "AVRO"))
    assert error_of(lambda: client.get_version(subject, 7)).error_code == 40402
    assert error_of(lambda: client.lookup_schema(subject, Schema(record(ID, NAME), "AVRO"))).error_code == 40403
    invalid = error_of(lambda: client.register_schema(subject, Schema('{"type": "record", "name": "x"}', "AVRO")))
    assert invalid.http_status_code == 422 and invalid.error_code == 42201
    json_schema = error_of(lambda: client.register_schema(subject, Schema('{"type": "object"}', "JSON")))
    assert json_schema.error_code == 42201 and "AVRO only" in json_schema.error_message
    level = error_of(lambda: client.set_compatibility(subject, "SIDEWAYS"))
    assert level.error_code == 42203


def test_backward_compatibility_and_levels(schema_registry):
    client = SchemaRegistryClient({"url": schema_registry.url})
    subject = unique("evolve")
    assert client.get_compatibility() == "BACKWARD"
    client.register_schema(subject, Schema(record(ID, NAME), "AVRO"))
    # BACKWARD: a new field needs a default; removing a field is fine.
    refused = error_of(lambda: client.register_schema(subject, Schema(record(ID, NAME, EMAIL_REQUIRED), "AVRO")))
    assert refused.http_status_code == 409 and "email" in refused.error_message
    assert not client.test_compatibility(subject, Schema(record(ID, NAME, EMAIL_REQUIRED), "AVRO"))
    assert client.test_compatibility(subject, Schema(record(ID, NAME, EMAIL_DEFAULT), "AVRO"))
    v2 = client.register_schema(subject, Schema(record(ID, NAME, EMAIL_DEFAULT), "AVRO"))
    v3 = client.register_schema(subject, Schema(record(ID, EMAIL_DEFAULT), "AVRO"))  # 'name' removed
    assert client.get_versions(subject) == [1, 2, 3] and v2 != v3
    # Type changes: int -> long promotion reads; long -> string does not.
    wider = unique("wider")
    client.register_schema(wider, Schema(record({"name": "n", "type": "int"}), "AVRO"))
    client.register_schema(wider, Schema(record({"name": "n", "type": "long"}), "AVRO"))
    assert error_of(lambda: client.register_schema(
        wider, Schema(record({"name": "n", "type": "string"}), "AVRO"))).http_status_code == 409
    # FORWARD (per subject): the old schema must read the new one, so a removed field needs a default in the old.
    forward = unique("forward")
    client.register_schema(forward, Schema(record(ID, NAME), "AVRO"))
    assert client.set_compatibility(forward, "FORWARD") == {"compatibility": "FORWARD"}
    assert client.get_compatibility(forward) == "FORWARD"
    assert error_of(lambda: client.register_schema(forward, Schema(record(ID), "AVRO"))).http_status_code == 409
    client.register_schema(forward, Schema(record(ID, NAME, EMAIL_REQUIRED), "AVRO"))  # old readers ignore it
    # NONE accepts anything.
    client.set_compatibility(forward, "NONE")
    client.register_schema(forward, Schema(record({"name": "other", "type": "string"}), "AVRO"))
    assert error_of(lambda: client.get_compatibility(unique("no-config"))).error_code == 40408


def test_compatibility_follows_avro_resolution_rules():
    v1 = json.loads(record(ID, NAME))
    v2 = json.loads(record(ID))  # drops 'name'
    v3 = json.loads(record(ID, {"name": "name", "type": "string"}))  # re-adds it without a default
    assert can_read(v2, v1) is None and can_read(v3, v2) is not None and can_read(v3, v1) is None
    assert "name" in can_read(v3, v2)
    assert can_read(json.loads(record(ID, name="Other")), v1) is not None  # records must have the same name
    enum_old = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}
    enum_new = {"type": "enum", "name": "Color", "symbols": ["RED"]}
    assert can_read(enum_old, enum_new) is None and can_read(enum_new, enum_old) is not None
    assert can_read(["null", "long"], "int") is None and can_read("int", ["null", "int"]) is not None


def test_delete_subject_soft_then_permanent(schema_registry):
    client = SchemaRegistryClient({"url": schema_registry.url})
    subject = unique("gone")
    schema_id = client.register_schema(subject, Schema(record(ID), "AVRO"))
    assert error_of(lambda: client.delete_subject(subject, permanent=True)).error_code == 40405
    assert client.delete_subject(subject) == [1]
    assert subject not in client.get_subjects()
    assert subject in SchemaRegistryClient({"url": schema_registry.url}).get_subjects(deleted=True)
    assert client.delete_subject(subject, permanent=True) == [1]
    assert json.loads(client.get_schema(schema_id).schema_str)["fields"] == [ID]  # ids stay resolvable
    assert error_of(lambda: client.get_latest_version(subject)).error_code == 40401


def test_confluent_serializers_round_trip(schema_registry):
    client = SchemaRegistryClient({"url": schema_registry.url})
    topic = unique("topic")
    serializer = AvroSerializer(client, record(ID, NAME))
    value = serializer({"id": 42, "name": "ada"}, SerializationContext(topic, MessageField.VALUE))
    assert value[0] == 0 and int.from_bytes(value[1:5], "big") == client.get_latest_version(f"{topic}-value").schema_id
    assert AvroDeserializer(client)(value, SerializationContext(topic, MessageField.VALUE)) == {"id": 42, "name": "ada"}


def test_restart_keeps_ids_and_basic_auth_is_enforced(tmp_path):
    data = tmp_path / "registry"
    with LocalSchemaRegistry(data_dir=data, user_info="alice:s3cret") as server:
        anonymous = SchemaRegistryClient({"url": server.url})
        denied = error_of(lambda: anonymous.get_subjects())
        assert denied.http_status_code == 401 and denied.error_code == 401
        wrong = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": "alice:nope"})
        assert error_of(lambda: wrong.get_subjects()).http_status_code == 401
        client = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": "alice:s3cret"})
        first = client.register_schema("keep-value", Schema(record(ID), "AVRO"))
        second = client.register_schema("keep-value", Schema(record(ID, EMAIL_DEFAULT), "AVRO"))
        client.set_compatibility("keep-value", "FULL")
        pid = server.pid
    assert not alive(pid)
    with LocalSchemaRegistry(data_dir=data, user_info="alice:s3cret") as server:
        client = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": "alice:s3cret"})
        assert client.get_versions("keep-value") == [1, 2]
        assert client.get_latest_version("keep-value").schema_id == second
        assert client.get_compatibility("keep-value") == "FULL"
        third = client.register_schema("other-value", Schema(record(NAME), "AVRO"))
        assert third not in (first, second)  # the id counter survived the restart too


def test_background_server_start_status_stop(tmp_path, capsys, monkeypatch):
    state = tmp_path / "state"
    port = free_port()
    monkeypatch.setenv("KINDLING_SCHEMA_REGISTRY_USER_INFO", "bob:hunter2")
    assert main(["local", "schema-registry", "start", "--port", str(port), "--state-dir", str(state), "--basic-auth"]) == 0
    try:
        info = local_registry.status(state)
        assert info["running"] and info["port"] == port and info["basic_auth"]
        client = SchemaRegistryClient({"url": info["url"], "basic.auth.user.info": "bob:hunter2"})
        client.register_schema("cli-value", Schema(record(ID), "AVRO"))
        again = local_registry.start_background(port=port, state_dir=state)
        assert again["already_running"] and again["pid"] == info["pid"]
        assert main(["local", "schema-registry", "status", "--state-dir", str(state)]) == 0
        assert "hunter2" not in capsys.readouterr().out
    finally:
        assert main(["local", "schema-registry", "stop", "--state-dir", str(state)]) == 0
    assert not alive(info["pid"])
    assert main(["local", "schema-registry", "status", "--state-dir", str(state)]) == 3
