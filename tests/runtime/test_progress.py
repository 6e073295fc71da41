from kindling.runtime.progress import QueryMetrics, bounded_input_done


def progress(end_offset, watermark=None, state=True, rows=0):
    report = {
        "batchId": 3,
        "numInputRows": rows,
        "sources": [{"endOffset": end_offset}],
        "stateOperators": [{"numRowsTotal": 5, "memoryUsedBytes": 100}] if state else [],
        "eventTime": {"watermark": watermark} if watermark else {},
        "durationMs": {"triggerExecution": 42},
    }
    return report


def test_unbounded_source_never_done():
    assert not bounded_input_done(progress('{"rows": 10}'))
    assert not bounded_input_done(None)


def test_stateful_query_waits_for_the_final_watermark():
    assert not bounded_input_done(progress('{"rows": 10, "eos": true}', "2026-01-01T00:00:15.000Z"))
    assert bounded_input_done(progress('{"rows": 10, "eos": true}', "9999-12-30T23:59:59.000Z"))


def test_stateless_query_is_done_when_sources_end():
    assert bounded_input_done(progress({"rows": 10, "eos": True}, "2026-01-01T00:00:15.000Z", state=False))
    assert bounded_input_done(progress('{"rows": 10, "eos": true}', None))


def test_metrics_in_flink_terms():
    m = QueryMetrics.from_progress(progress('{"rows": 1}', "2026-01-01T00:00:15.000Z", rows=7))
    assert (m.records_in, m.state_rows, m.state_bytes, m.batch_duration_ms) == (7, 5, 100, 42)
    assert m.watermark_text() == "2026-01-01 00:00:15.000"
    assert QueryMetrics.from_progress(progress("{}", "1970-01-01T00:00:00.000Z")).watermark_text() == "-"
