"""The bulk processor against the real local servers (no Spark): flush triggers seen in the requests, backoff on
rejected items, the failure handler on a mapping error, and the start-up connection check."""

from __future__ import annotations

import os
import sys
import threading

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors.elasticsearch.actions import ActionBuilder
from kindling.connectors.elasticsearch.bulk import BulkFailure, BulkProcessor
from kindling.connectors.elasticsearch.client import check_connection, make_client
from kindling.connectors.elasticsearch.options import FLAVORS, sink_config
from kindling.local.ports import free_port
from kindling.options import OptionError

sys.path.insert(0, os.path.dirname(__file__))
from es_helpers import BulkProxy, client_for, connector_for, documents, fresh_index, make_certificates  # noqa: E402

pytestmark = pytest.mark.integration
SCHEMA = StructType([StructField("id", StringType()), StructField("n", LongType())])


@pytest.fixture(params=["elasticsearch", "opensearch"])
def server(request):
    return request.getfixturevalue(request.param)


def _config(url, index, flavor="elasticsearch-7", **extra):
    return sink_config(FLAVORS[flavor], {"hosts": url, "index": index, **extra})


def _server_config(server, url, index, **extra):
    """A sink's settings for the flavor of ``server`` (elasticsearch-7 or opensearch), pointed at ``url``."""
    return _config(url, index, connector_for(server), **extra)


def _batch(start, count, n=None):
    return pa.RecordBatch.from_arrays([pa.array([f"d{i}" for i in range(start, start + count)]),
                                       pa.array([n if n is not None else i for i in range(start, start + count)], pa.int64())],
                                      names=["id", "n"])


def _write(config, batches):
    builder = ActionBuilder(config, SCHEMA)
    client = make_client(config)
    processor = BulkProcessor(config, client)
    try:
        for batch in batches:
            processor.add(builder.build(batch))
        processor.close()
    finally:
        processor.stop()
        client.close()
    return processor.stats


def test_flush_by_max_actions(server):
    index = fresh_index()
    with BulkProxy(server.url) as proxy:
        config = _server_config(server, proxy.url, index, **{"sink.bulk-flush.max-actions": "10", "sink.bulk-flush.interval": "0",
                                                             "kindling.table.primary-key": "id", "sink.retry-on-conflicts": "2"})
        _write(config, [_batch(0, 7), _batch(7, 18)])
    assert [a for a, _ in proxy.bulk_requests] == [10, 10, 5]
    assert len(documents(server, index)) == 25


def test_flush_by_max_size(server):
    index = fresh_index()
    with BulkProxy(server.url) as proxy:
        config = _config(proxy.url, index, **{"sink.bulk-flush.max-actions": "0", "sink.bulk-flush.max-size": "1mb",
                                              "sink.bulk-flush.interval": "0"})
        config = config.__class__(**{**config.__dict__, "flavor": FLAVORS[connector_for(server)]})
        big = pa.RecordBatch.from_arrays([pa.array(["x" * 10_000] * 250), pa.array(range(250), pa.int64())], names=["id", "n"])
        _write(config, [big])
    sizes = [size for _, size in proxy.bulk_requests]
    # 250 actions of ~10 kB: a request is sent as soon as it reaches 1 MiB (the item that crosses it included)
    assert len(sizes) == 3 and all(s >= 1024 * 1024 for s in sizes[:2]) and sizes[2] < 1024 * 1024
    assert sum(a for a, _ in proxy.bulk_requests) == 250
    assert len(documents(server, index)) == 250


def test_flush_by_interval_while_the_input_waits(server):
    index = fresh_index()
    with BulkProxy(server.url) as proxy:
        config = _server_config(server, proxy.url, index, **{"sink.bulk-flush.interval": "200 ms", "kindling.table.primary-key": "id"})

        def batches():
            yield _batch(0, 3)
            proxy.wait_for_bulk(1, timeout=20)  # only the interval timer can send these 3 actions
            yield _batch(3, 2)

        _write(config, batches())
    assert [a for a, _ in proxy.bulk_requests][0] == 3
    assert sum(a for a, _ in proxy.bulk_requests) == 5


def test_rejected_bulk_is_retried_with_backoff_and_fails_without(server):
    index = fresh_index()
    with BulkProxy(server.url) as proxy:
        proxy.reject_next = 2
        config = _server_config(server, proxy.url, index, **{
            "sink.bulk-flush.backoff.strategy": "CONSTANT", "kindling.table.primary-key": "id",
            "sink.bulk-flush.backoff.max-retries": "3", "sink.bulk-flush.backoff.delay": "10 ms"})
        stats = _write(config, [_batch(0, 4)])
        assert len(proxy.bulk_requests) == 3 and stats.retried == 8
        assert len(documents(server, index)) == 4
        proxy.reject_next = 1
        with pytest.raises(BulkFailure, match="es_rejected_execution_exception"):
            _write(_server_config(server, proxy.url, index, **{"kindling.table.primary-key": "id"}), [_batch(10, 2)])
        proxy.reject_next = 5  # retry-rejected re-adds rejected items until they get through
        stats = _write(_server_config(server, proxy.url, index, **{
            "failure-handler": "retry-rejected", "kindling.table.primary-key": "id", "sink.bulk-flush.backoff.strategy": "CONSTANT",
            "sink.bulk-flush.backoff.max-retries": "1", "sink.bulk-flush.backoff.delay": "5 ms"}), [_batch(20, 2)])
        assert stats.retried == 10
    assert set(documents(server, index)) == {"d0", "d1", "d2", "d3", "d20", "d21"}


def test_items_rejected_in_a_bulk_response_are_retried_alone_after_the_backoff_delays(server):
    """The server answers 200 but rejects some items (429, es_rejected_execution_exception): only those are sent again,
    after each configured delay; the items it accepted are not."""
    index = fresh_index()
    options = {"kindling.table.primary-key": "id", "sink.bulk-flush.max-actions": "0", "sink.bulk-flush.interval": "0",
               "sink.bulk-flush.backoff.strategy": "EXPONENTIAL", "sink.bulk-flush.backoff.max-retries": "3",
               "sink.bulk-flush.backoff.delay": "150 ms"}
    with BulkProxy(server.url) as proxy:
        proxy.reject_items_next = [3, 2]  # the first response rejects d0..d2, the second (their retry) d0..d1
        stats = _write(_server_config(server, proxy.url, index, **options), [_batch(0, 6)])
        assert proxy.bulk_ids == [["d0", "d1", "d2", "d3", "d4", "d5"], ["d0", "d1", "d2"], ["d0", "d1"]]
        assert stats.retried == 5 and stats.ignored == 0
        # the waits before each retry: 150 ms, then 300 ms (a lower bound: a loaded machine only adds to it)
        waits = [later - earlier for earlier, later in zip(proxy.bulk_times, proxy.bulk_times[1:])]
        assert waits[0] >= 0.15 and waits[1] >= 0.30, waits
        # rejected again after the last retry: 'fail' names the backoff options and the handler
        proxy.reject_items_next = [1, 1, 1, 1]
        with pytest.raises(BulkFailure, match=r"1 of 1 bulk item\(s\) failed after the backoff retries.*es_rejected_execution_exception"):
            _write(_server_config(server, proxy.url, index, **options), [_batch(10, 2)])
        assert proxy.bulk_ids[3:] == [["d10", "d11"], ["d10"], ["d10"], ["d10"]]
    assert set(documents(server, index)) == {f"d{i}" for i in range(6)} | {"d10", "d11"}


def test_failure_handler_ignore_vs_fail_on_a_mapping_error(server):
    index = fresh_index()
    client = client_for(server)
    client.indices.create(index=index, body={"mappings": {"properties": {"n": {"type": "long"}, "id": {"type": "long"}}}})
    flavor = connector_for(server)
    bad = _batch(0, 3)  # ids "d0".. are not longs: every document fails to map
    good = pa.RecordBatch.from_arrays([pa.array(["1", "2"]), pa.array([1, 2], pa.int64())], names=["id", "n"])
    with pytest.raises(BulkFailure, match="3 of 5 bulk item.*failure-handler' = 'fail'"):
        _write(_config(server.url, index, flavor), [good, bad])
    stats = _write(_config(server.url, index, flavor, **{"failure-handler": "ignore"}), [bad, good])
    indexed = documents(server, index).values()
    assert stats.ignored == 3 and sorted(d["id"] for d in indexed) == ["1", "1", "2", "2"]  # no "d0".."d2" (generated ids may hold "d0")
    assert sorted(d["n"] for d in indexed) == [1, 1, 2, 2]


def test_delivery_guarantee_none_does_not_swallow_item_failures(server):
    """'sink.delivery-guarantee' = 'NONE' (and 'sink.flush-on-checkpoint' = 'false', its 3.x form) only change flushing
    in Flink: a mapping error still goes through 'failure-handler'."""
    index = fresh_index()
    client_for(server).indices.create(index=index, body={"mappings": {"properties": {"id": {"type": "long"}}}})
    flavor = connector_for(server)
    for option in ({"sink.delivery-guarantee": "NONE"}, {"sink.flush-on-checkpoint": "false"}):
        with pytest.raises(BulkFailure, match="2 of 2 bulk item.*failure-handler' = 'fail'"):
            _write(_config(server.url, index, flavor, **option), [_batch(0, 2)])
        stats = _write(_config(server.url, index, flavor, **option, **{"failure-handler": "ignore"}), [_batch(0, 2)])
        assert stats.ignored == 2
    assert documents(server, index) == {}


def test_connection_check_names_the_option(elasticsearch, opensearch):
    check_connection(_config(elasticsearch.url, "i"))
    check_connection(_config(opensearch.url, "i", "opensearch"))
    with pytest.raises(OptionError, match="cannot reach option 'hosts' = 'http://127.0.0.1:"):
        check_connection(_config(f"http://127.0.0.1:{free_port()}", "i"))
    with BulkProxy(elasticsearch.url, credentials=("elastic", "secret")) as proxy:
        check_connection(_config(proxy.url, "i", username="elastic", password="secret"))
        with pytest.raises(OptionError, match="refused the credentials of options 'username' and 'password'") as caught:
            check_connection(_config(proxy.url, "i", username="elastic", password="wrong"))
        assert "wrong" not in str(caught.value)


def test_processor_is_safe_against_its_timer(elasticsearch):
    index = fresh_index()
    config = _config(elasticsearch.url, index, **{"sink.bulk-flush.interval": "1 ms", "sink.bulk-flush.max-actions": "7",
                                                  "kindling.table.primary-key": "id"})
    threads = [threading.Thread(target=_write, args=(config, [_batch(i * 100, 50) for _ in range(1)])) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(documents(elasticsearch, index)) == 150


def test_https_with_a_ca_file_and_with_a_fingerprint(server, tmp_path):
    """A TLS-terminating proxy with a throwaway CA in front of the local server: the sink trusts it through
    'kindling.ssl.ca-certificate' or 'ssl.certificate-fingerprint'; a wrong fingerprint or no trust fails at start,
    naming the option (and the fingerprint the server has)."""
    certificates = make_certificates(tmp_path / "tls")
    index = fresh_index()
    with BulkProxy(server.url, certificates=certificates) as proxy:
        assert proxy.url.startswith("https://")
        by_ca = _server_config(server, proxy.url, index, **{"kindling.ssl.ca-certificate": str(certificates.ca),
                                                            "kindling.table.primary-key": "id"})
        check_connection(by_ca)
        _write(by_ca, [_batch(0, 3)])
        # Flink's option is the fingerprint of the HTTP CA: the elasticsearch client matches any certificate of the chain.
        # opensearch-py (urllib3) compares the server's own certificate only, so the 'opensearch' flavor pins that one.
        pinned = certificates.server_fingerprint if connector_for(server) == "opensearch" else certificates.ca_fingerprint
        by_fingerprint = _server_config(server, proxy.url, index, **{"ssl.certificate-fingerprint": pinned,
                                                                     "kindling.table.primary-key": "id"})
        check_connection(by_fingerprint)
        _write(by_fingerprint, [_batch(3, 2)])
        assert sum(a for a, _ in proxy.bulk_requests) == 5  # both went through the TLS proxy
        wrong = "AB:" * 31 + "AB"
        with pytest.raises(OptionError) as caught:
            check_connection(_server_config(server, proxy.url, index, **{"ssl.certificate-fingerprint": wrong}))
        served = certificates.server_fingerprint.replace(":", "")
        assert str(caught.value) == (f"{connector_for(server)} sink: no certificate of {proxy.url} matches option "
                                     f"'ssl.certificate-fingerprint' = '{wrong}' (the server's certificate has SHA-256 "
                                     f"fingerprint {served})")
        with pytest.raises(OptionError, match="is not trusted by the system's CAs; give its CA in option "
                                              "'kindling.ssl.ca-certificate' .* or its fingerprint in 'ssl.certificate-fingerprint'"):
            check_connection(_server_config(server, proxy.url, index))
        other = make_certificates(tmp_path / "other")
        with pytest.raises(OptionError, match="is not signed by the CA of option 'kindling.ssl.ca-certificate'"):
            check_connection(_server_config(server, proxy.url, index, **{"kindling.ssl.ca-certificate": str(other.ca)}))
    assert set(documents(server, index)) == {f"d{i}" for i in range(5)}
