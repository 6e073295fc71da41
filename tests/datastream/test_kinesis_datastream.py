"""PyFlink's Kinesis DataStream API on kindling: ``env.add_source(FlinkKinesisConsumer(...))`` and
``sink_to(KinesisStreamsSink.builder()...build())``.

The integration test runs a PyFlink-style program against kinesis-local: records put into a 2-shard stream are
read from TRIM_HORIZON, mapped, and written to another stream with ``PartitionKeyGenerator.fixed()``; every
record arrives once, keyed by the index of the task that wrote it. The program is stopped as the other
streaming Kinesis tests stop theirs: once the output holds every record, after the query has processed all
the source has (so a duplicate would have been written by then), the job is cancelled.

PyFlink itself cannot run this program here: its Kinesis connector jar (``flink-connector-kinesis``) comes
from Maven, which is unreachable, so no PyFlink reference output is recorded. The expected output is Flink's
documented behaviour: the consumer reads each record once (exactly once from its shard positions), the sink
writes each once when nothing fails (at least once), and ``fixed()`` keys a record by its writer's subtask.

The unit tests (no servers, no Spark) cover how consumer properties and builder settings map onto the Kinesis
connector's options, and the refusals of what kindling cannot honour.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter

import pytest

from kindling.common.serialization import ByteArraySchema, SimpleStringSchema
from kindling.common.typeinfo import Types
from kindling.connectors.base import Source
from kindling.connectors.kinesis.builder import CONSUMER_KEYS, consumer_options
from kindling.datastream.connectors.kinesis import (
    FlinkKinesisConsumer,
    KinesisDeserializationSchema,
    KinesisFirehoseSink,
    KinesisShardAssigner,
    KinesisStreamsSink,
    PartitionKeyGenerator,
    WatermarkTracker,
)
from kindling.datastream.formats.avro import AvroRowDeserializationSchema
from kindling.datastream.formats.csv import CsvRowSerializationSchema
from kindling.datastream.formats.json import JsonRowDeserializationSchema
from kindling.datastream.functions import SourceFunction
from kindling.env import StreamExecutionEnvironment
from kindling.options import OptionError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "connectors", "kinesis"))
from kinesis_helpers import new_stream, put, read_all  # noqa: E402

AWS = {"aws.region": "us-east-1"}
RECORDS = 40


def drain(client, stream: str) -> list[dict]:
    """Every record the stream holds now: each shard read from TRIM_HORIZON until a read returns none."""
    records: list[dict] = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard["ShardId"],
                                             ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            response = client.get_records(ShardIterator=iterator)
            if not response["Records"]:
                break
            records.extend(response["Records"])
            iterator = response.get("NextShardIterator")
    return records


@pytest.mark.integration
def test_a_pyflink_program_copies_a_two_shard_stream_with_fixed_partition_keys(spark, kinesis, tmp_path):
    client = kinesis.client()
    source_stream, target_stream = new_stream(kinesis, 2), new_stream(kinesis, 2)
    placed = put(client, source_stream, [(f"user-{i}", f"click {i}".encode()) for i in range(RECORDS)])
    assert len({shard for shard, _ in placed}) == 2, "the records were put into both shards"

    # The program, as PyFlink writes it.
    env = StreamExecutionEnvironment.get_execution_environment({"state.checkpoints.dir": str(tmp_path / "checkpoints")})
    env.enable_checkpointing(100)
    aws = {"aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint, "aws.credentials.provider": "BASIC",
           "aws.credentials.provider.basic.accesskeyid": "kindling-local",
           "aws.credentials.provider.basic.secretkey": "kindling-local-secret"}
    consumer_config = {**aws, "flink.stream.initpos": "TRIM_HORIZON", "flink.shard.getrecords.intervalmillis": "50",
                       "flink.shard.discovery.intervalmillis": "500"}
    clicks = env.add_source(FlinkKinesisConsumer(source_stream, SimpleStringSchema(), consumer_config), "clicks")
    sink = (KinesisStreamsSink.builder()
            .set_kinesis_client_properties(aws)
            .set_stream_name(target_stream)
            .set_serialization_schema(SimpleStringSchema())
            .set_partition_key_generator(PartitionKeyGenerator.fixed())
            .set_max_time_in_buffer_ms(100)
            .build())
    clicks.map(lambda line: line.upper(), output_type=Types.STRING()).sink_to(sink)
    job = env.execute_async("kinesis-copy")
    try:
        read_all(client, target_stream, expected=RECORDS, timeout=60)
        for query in job.queries.values():
            query.processAllAvailable()  # everything the source has is written now: a duplicate would show
    finally:
        job.cancel()

    written = drain(client, target_stream)
    assert Counter(r["Data"].decode() for r in written) == Counter(f"CLICK {i}" for i in range(RECORDS))
    # fixed(): the index of the writing task (Spark reads each shard with records in a partition of its own).
    assert {r["PartitionKey"] for r in written} <= {"0", "1"}, {r["PartitionKey"] for r in written}


# ------------------------------------------------------------------------------------------------------
# Consumer properties -> the connector's options
# ------------------------------------------------------------------------------------------------------


def test_every_flink_consumer_property_maps_onto_a_scan_option():
    """Flink's ConsumerConfigConstants keys, as the legacy consumer's docs name them (connectors.md §3)."""
    props = {
        **AWS, "aws.endpoint": "http://127.0.0.1:4568", "aws.credentials.provider": "BASIC",
        "aws.credentials.provider.basic.accesskeyid": "id", "aws.credentials.provider.basic.secretkey": "secret",
        "flink.stream.initpos": "AT_TIMESTAMP", "flink.stream.initpos.timestamp": "2016-04-04",
        "flink.stream.initpos.timestamp.format": "yyyy-MM-dd", "flink.stream.recordpublisher": "EFO",
        "flink.stream.efo.consumername": "reader", "flink.stream.efo.registration": "EAGER",
        "flink.shard.getrecords.maxrecordcount": "500", "flink.shard.getrecords.intervalmillis": "100",
        "flink.shard.getrecords.maxretries": "5", "flink.shard.getrecords.backoff.base": "100",
        "flink.shard.discovery.intervalmillis": "2000", "flink.shard.idle.interval": "3000",
        "flink.list.shards.maxretries": "4", "flink.shard.subscribetoshard.backoff.expconst": "2.0",
        "flink.shard.consumer.error.recoverable[0].exception": "java.net.UnknownHostException",
    }
    options = consumer_options(props)
    assert options == {
        **AWS, "aws.endpoint": "http://127.0.0.1:4568", "aws.credentials.provider": "BASIC",
        "aws.credentials.basic.accesskeyid": "id", "aws.credentials.basic.secretkey": "secret",
        "scan.stream.initpos": "AT_TIMESTAMP", "scan.stream.initpos-timestamp": "2016-04-04",
        "scan.stream.initpos-timestamp-format": "yyyy-MM-dd", "scan.stream.recordpublisher": "EFO",
        "scan.stream.efo.consumername": "reader", "scan.stream.efo.registration": "EAGER",
        "scan.shard.getrecords.maxrecordcount": "500", "scan.shard.getrecords.intervalmillis": "100",
        "scan.shard.getrecords.maxretries": "5", "scan.shard.getrecords.backoff.base": "100",
        "scan.shard.discovery.intervalmillis": "2000", "scan.shard.idle.interval": "3000",
        "scan.list.shards.maxretries": "4", "scan.shard.subscribetoshard.backoff.expconst": "2.0",
        "shard.consumer.error.recoverable[0].exception": "java.net.UnknownHostException",
    }
    # One mapping: each property is the SQL option's flink.* name.
    for flink_key, scan_key in CONSUMER_KEYS.items():
        assert flink_key.replace("initpos.timestamp.format", "initpos-timestamp-format").replace(
            "initpos.timestamp", "initpos-timestamp") == "flink." + scan_key[len("scan."):]
    [source] = FlinkKinesisConsumer("clicks", SimpleStringSchema(), props).as_sources()
    assert source.connector == "kinesis-legacy"
    assert source.options == {"stream": "clicks", "format": "raw", **options}
    assert source.type_info == Types.STRING() and [f.name for f in source.schema.fields] == ["f0"]


def test_several_streams_are_a_source_each_with_the_deserializers_format_and_type():
    row = Types.ROW_NAMED(["page", "n"], [Types.STRING(), Types.INT()])
    consumer = FlinkKinesisConsumer(["clicks", "views"], JsonRowDeserializationSchema.builder().type_info(row).build(),
                                    {**AWS, "flink.stream.efo.consumerarn.views": "arn:aws:kinesis:x"})
    sources = consumer.as_sources()
    assert [s.options["stream"] for s in sources] == ["clicks", "views"]
    assert all(s.options["format"] == "json" and s.type_info == row for s in sources)
    assert sources[1].options["scan.stream.efo.consumerarn.views"] == "arn:aws:kinesis:x"
    assert sources[0].schema.fieldNames() == ["page", "n"]


def test_a_watermark_tracker_synchronises_shards_as_flink_does_once_the_stream_has_event_time(caplog):
    props = {**AWS, "flink.watermark.sync.interval": "1000", "flink.watermark.lookahead.millis": "500"}
    consumer = FlinkKinesisConsumer("clicks", SimpleStringSchema(), props)
    with caplog.at_level(logging.WARNING, logger="kindling.connectors.kinesis"):
        [untracked] = consumer.as_sources(event_time=True)
    assert not any(k.startswith("scan.watermark.") for k in untracked.options)
    assert "takes effect only with set_watermark_tracker" in caplog.text

    consumer.set_watermark_tracker(WatermarkTracker.job_manager_watermark_tracker("clicks-agg"))
    [plain] = consumer.as_sources(event_time=False)  # no watermark strategy: Flink's tracker does nothing either
    assert not any(k.startswith("scan.watermark.") for k in plain.options)
    [synced] = consumer.as_sources(event_time=True)
    # Flink's lookahead is max(lookahead, 3 x sync interval), to offset the synchronisation's latency.
    assert (synced.options["scan.watermark.sync.interval"], synced.options["scan.watermark.lookahead.millis"]) == ("1000", "3000")
    defaults = FlinkKinesisConsumer("c", SimpleStringSchema(), AWS).set_watermark_tracker(
        WatermarkTracker.job_manager_watermark_tracker("agg")).as_sources(event_time=True)[0].options
    assert (defaults["scan.watermark.sync.interval"], defaults["scan.watermark.lookahead.millis"]) == ("30000", "90000")


def test_built_in_shard_assigners_are_accepted_and_java_ones_refused():
    consumer = FlinkKinesisConsumer("clicks", SimpleStringSchema(), AWS)
    assert consumer.set_shard_assigner(KinesisShardAssigner.uniform_shard_assigner()) is consumer
    assert consumer.as_sources()[0].options["scan.shard-assigner"] == "uniform"
    consumer.set_shard_assigner(KinesisShardAssigner.default_shard_assigner())
    assert consumer.as_sources()[0].options["scan.shard-assigner"] == "default"
    with pytest.raises(NotImplementedError, match=r"set_shard_assigner: KinesisShardAssigner\('com.acme.Assigner'\) is a custom"):
        consumer.set_shard_assigner(KinesisShardAssigner("com.acme.Assigner"))
    with pytest.raises(NotImplementedError, match=r"custom WatermarkTracker .*job_manager_watermark_tracker"):
        consumer.set_watermark_tracker(WatermarkTracker("com.acme.Tracker"))
    with pytest.raises(NotImplementedError, match=r"AssignerWithPeriodicWatermarks is a Java object.*assign_timestamps_and_watermarks"):
        consumer.set_periodic_watermark_assigner(object())


@pytest.mark.parametrize("props, message", [
    ({**AWS, "flink.stream.initpos": "EARLIEST"},
     "property 'flink.stream.initpos' has value 'EARLIEST'; allowed values: 'LATEST', 'TRIM_HORIZON', 'AT_TIMESTAMP'"),
    ({**AWS, "scan.stream.initpos": "LATEST"}, "unknown FlinkKinesisConsumer property 'scan.stream.initpos'; did you mean 'flink.stream.initpos'?"),
    ({**AWS, "flink.stream.initpos": "LATEST", "stream": "x"}, "unknown FlinkKinesisConsumer property 'stream'"),
    ({**AWS, "flink.shard.getrecords.intervalmilis": "50"}, "did you mean 'flink.shard.getrecords.intervalmillis'?"),
    ({**AWS, "flink.shard.getrecords.maxrecordcount": "20000"},
     "'flink.shard.getrecords.maxrecordcount' has value 20000; allowed: 1 to 10000"),
    ({**AWS, "flink.shard.discovery.intervalmillis": "soon"}, "'flink.shard.discovery.intervalmillis' has value 'soon'"),
    ({**AWS, "flink.stream.registerstreamconsumer.timeout": "-1"}, "'flink.stream.registerstreamconsumer.timeout' has value '-1'"),
    ({**AWS, "flink.stream.initpos": "AT_TIMESTAMP"}, "'flink.stream.initpos.timestamp' is required when the start position is 'AT_TIMESTAMP'"),
    ({**AWS, "flink.stream.initpos": "AT_TIMESTAMP", "flink.stream.initpos.timestamp": "04/04/2016"},
     "option 'flink.stream.initpos.timestamp.format'"),
    ({**AWS, "flink.stream.recordpublisher": "EFO"}, "'flink.stream.efo.consumername' is required with the EFO record publisher"),
    ({**AWS, "flink.stream.recordpublisher": "EFO", "flink.stream.efo.registration": "NONE"},
     "'flink.stream.efo.consumerarn.clicks' is required with 'flink.stream.efo.registration' = 'NONE'"),
    ({"flink.stream.initpos": "LATEST"}, "property 'aws.region' is required"),
    ({**AWS, "aws.credentials.provider": "BASIC", "aws.credentials.provider.basic.accesskeyid": "id"},
     "'aws.credentials.basic.secretkey' is required with 'aws.credentials.provider' = 'BASIC'"),
])
def test_bad_consumer_properties_are_refused_naming_the_property(props, message):
    with pytest.raises(OptionError) as raised:
        FlinkKinesisConsumer("clicks", SimpleStringSchema(), props)
    assert message in str(raised.value)
    if not any(key.startswith("scan.") for key in props):  # the SQL connector's option names never show
        assert "scan." not in str(raised.value)


def test_secrets_stay_out_of_consumer_errors():
    props = {**AWS, "aws.credentials.provider": "BASIC", "aws.credentials.provider.basic.secretkey": "s3cr3t-value"}
    with pytest.raises(OptionError) as raised:
        FlinkKinesisConsumer("clicks", SimpleStringSchema(), props)
    assert "s3cr3t-value" not in str(raised.value)


def test_deserializers_kindling_cannot_read_from_kinesis_are_refused():
    with pytest.raises(NotImplementedError, match="KinesisDeserializationSchema wraps a Java schema"):
        KinesisDeserializationSchema(None)
    avro = AvroRowDeserializationSchema(avro_schema_string='{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}')
    with pytest.raises(ValueError, match="reads the 'avro' format; kindling's Kinesis connector reads 'json', 'csv', 'raw'"):
        FlinkKinesisConsumer("clicks", avro, AWS)
    with pytest.raises(TypeError, match="the deserializer is a DeserializationSchema"):
        FlinkKinesisConsumer("clicks", "utf-8", AWS)
    with pytest.raises(ValueError, match="Must be subscribed to at least one stream"):
        FlinkKinesisConsumer([], SimpleStringSchema(), AWS)
    [raw] = FlinkKinesisConsumer("clicks", ByteArraySchema(), AWS).as_sources()
    assert raw.options["format"] == "raw" and raw.type_info == Types.PRIMITIVE_ARRAY(Types.BYTE())


# ------------------------------------------------------------------------------------------------------
# add_source
# ------------------------------------------------------------------------------------------------------


def test_add_source_refuses_other_source_functions_naming_them_and_from_source():
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(TypeError, match=r"SourceFunction 'com.acme.MySource' cannot run in kindling.*env.from_source"):
        env.add_source(SourceFunction("com.acme.MySource"))

    class Mine(SourceFunction):
        pass

    with pytest.raises(TypeError, match=r"SourceFunction 'Mine' cannot run in kindling.*FLIP-27"):
        env.add_source(Mine())
    source = Source("datagen", {"number-of-rows": "1"}, Types.ROW_NAMED(["a"], [Types.INT()]).record_schema())
    with pytest.raises(TypeError, match=r"got Source \(a kindling Source: use from_source"):
        env.add_source(source)
    consumer = FlinkKinesisConsumer("clicks", SimpleStringSchema(), AWS)
    with pytest.raises(TypeError, match=r"type_info Types.LONG\(\) differs from the type the source.s deserializer produces, Types.STRING\(\)"):
        env.add_source(consumer, "clicks", Types.LONG())


def test_pyflink_import_path_gives_kindlings_classes():
    from kindling.pyflink_compat import ALIASES, PyFlinkAlias

    module = PyFlinkAlias("pyflink.datastream.connectors.kinesis", ALIASES["pyflink.datastream.connectors.kinesis"])
    assert module.FlinkKinesisConsumer is FlinkKinesisConsumer and module.KinesisStreamsSink is KinesisStreamsSink
    functions = PyFlinkAlias("pyflink.datastream.functions", ALIASES["pyflink.datastream.functions"])
    assert functions.SourceFunction is SourceFunction


# ------------------------------------------------------------------------------------------------------
# The sink builder
# ------------------------------------------------------------------------------------------------------


def sink_builder(generator: PartitionKeyGenerator = PartitionKeyGenerator.random()):
    return (KinesisStreamsSink.builder().set_stream_name("pages").set_serialization_schema(SimpleStringSchema())
            .set_partition_key_generator(generator))


def test_sink_builder_settings_are_the_sink_options():
    sink = (sink_builder(PartitionKeyGenerator.fixed())
            .set_kinesis_client_properties({**AWS, "aws.endpoint": "http://127.0.0.1:4568",
                                            "aws.credentials.provider": "PROFILE", "aws.credentials.provider.profile.name": "dev",
                                            "aws.http-client.max-concurrency": "8", "aws.http.protocol.version": "HTTP1_1"})
            .set_fail_on_error(True).set_max_batch_size(100).set_max_in_flight_requests(4).set_max_buffered_requests(1000)
            .set_max_batch_size_in_bytes(2 * 1024 * 1024).set_max_time_in_buffer_ms(250).set_max_record_size_in_bytes(1024)
            .build())
    assert isinstance(sink, KinesisStreamsSink) and sink.connector == "kinesis" and sink.prepare is not None
    assert sink.options == {
        **AWS, "aws.endpoint": "http://127.0.0.1:4568", "aws.credentials.provider": "PROFILE",
        "aws.credentials.profile.name": "dev", "sink.http-client.max-concurrency": "8",
        "sink.http-client.protocol.version": "HTTP1_1", "sink.fail-on-error": "true", "sink.batch.max-size": "100",
        "sink.requests.max-inflight": "4", "sink.requests.max-buffered": "1000", "sink.flush-buffer.size": str(2 * 1024 * 1024),
        "sink.flush-buffer.timeout": "250", "sink.max-record-size": "1024", "stream": "pages", "sink.partitioner": "fixed",
        "format": "raw"}
    random = sink_builder().set_kinesis_client_properties(AWS).build()
    assert random.options["sink.partitioner"] == "random" and "sink.batch.max-size" not in random.options  # Flink's defaults
    csv = (sink_builder().set_kinesis_client_properties(AWS)
           .set_serialization_schema(CsvRowSerializationSchema.Builder(Types.ROW_NAMED(["a"], [Types.STRING()])).build()).build())
    assert (csv.options["format"], csv.options["csv.line-delimiter"]) == ("csv", "\n")  # records end as Flink's schema ends them


@pytest.mark.parametrize("build, error, message", [
    (lambda: KinesisStreamsSink.builder().set_stream_name("s").build(), ValueError, "No SerializationSchema was supplied"),
    (lambda: KinesisStreamsSink.builder().set_stream_name("s").set_serialization_schema(SimpleStringSchema()).build(),
     ValueError, "No PartitionKeyGenerator lambda was supplied"),
    (lambda: KinesisStreamsSink.builder().set_serialization_schema(SimpleStringSchema())
     .set_partition_key_generator(PartitionKeyGenerator.random()).build(), ValueError, "The stream name must not be null"),
    (lambda: sink_builder().set_stream_name("").build(), ValueError, "The stream name must be set"),
    (lambda: sink_builder().set_stream_name(["a", "b"]), TypeError, "takes one stream name"),
    (lambda: sink_builder().build(), OptionError, "KinesisStreamsSink client property 'aws.region' is required"),
    (lambda: sink_builder().set_kinesis_client_properties(AWS).set_max_batch_size(501).build(), OptionError,
     "KinesisStreamsSinkBuilder.set_max_batch_size(...) has value 501; allowed: 1 to 500"),
    (lambda: sink_builder().set_max_batch_size(0), ValueError, "maxBatchSize must be greater than 0"),
    (lambda: sink_builder().set_kinesis_client_properties({**AWS, "aws.http-client.read-timeout": "long"}).build(), OptionError,
     "client property 'aws.http-client.read-timeout' has value 'long'"),
    (lambda: sink_builder().set_kinesis_client_properties({"region": "us-east-1"}), OptionError,
     "client property 'region' is not a Kinesis client property; allowed: aws.region"),
    (lambda: sink_builder().set_kinesis_client_properties({"sink.fail-on-error": "true"}), OptionError,
     "(set it with KinesisStreamsSinkBuilder.set_fail_on_error(...))"),
    (lambda: sink_builder().set_kinesis_client_properties(AWS).set_max_buffered_requests(500).build(), ValueError,
     "The maximum number of requests that may be buffered should be strictly greater"),
    (lambda: sink_builder().set_kinesis_client_properties(AWS).set_max_batch_size_in_bytes(1000).build(), ValueError,
     "The maximum allowed size in bytes per flush must be greater than or equal"),
    (lambda: sink_builder().set_partition_key_generator(PartitionKeyGenerator("com.acme.Keys")), NotImplementedError,
     "PartitionKeyGenerator('com.acme.Keys') is a custom PartitionKeyGenerator"),
    (lambda: sink_builder().set_serialization_schema(object()), TypeError, "takes a SerializationSchema"),
])
def test_sink_builder_refusals_name_the_setting(build, error, message):
    with pytest.raises(error) as raised:
        build()
    assert message in str(raised.value)


def test_firehose_is_refused_at_build_naming_what_to_use():
    builder = (KinesisFirehoseSink.builder().set_firehose_client_properties(AWS).set_delivery_stream_name("delivery")
               .set_serialization_schema(SimpleStringSchema()).set_max_batch_size(20))
    with pytest.raises(NotImplementedError, match=r"KinesisFirehoseSink \(delivery stream 'delivery'\): kindling has no Kinesis "
                                                  r"Data Firehose connector.*KinesisStreamsSink"):
        builder.build()
