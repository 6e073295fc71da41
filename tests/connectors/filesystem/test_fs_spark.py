"""The filesystem connector in running Spark jobs: DataStream FileSink out, FileSource back in."""

from __future__ import annotations

import uuid

import pyarrow.dataset as pads
import pytest
from fs_helpers import Table, local_table

from kindling import FileSink, FileSource

pytestmark = pytest.mark.integration

ROWS = [(i, f"p{i % 3}", f"record-{i}") for i in range(600)]


@pytest.mark.parametrize("where, fmt", [("local", "parquet"), ("s3", "csv")])
def test_sink_output_reads_back_as_the_input(env, tmp_path, request, where, fmt):
    if where == "local":
        path, options = str(tmp_path / "table"), {}
        table = local_table(tmp_path / "table", fmt)
    else:
        s3 = request.getfixturevalue("s3")
        bucket = f"sp-{uuid.uuid4().hex[:8]}"
        s3.create_bucket(bucket)
        path, options = f"s3://{bucket}/table", s3.options()
        table = Table(s3.filesystem(), f"{bucket}/table", fmt)
    stream = env.from_collection(ROWS, "id BIGINT, part STRING, payload STRING", rows_per_batch=150)
    builder = FileSink.for_bulk_format(path, "parquet") if fmt == "parquet" else FileSink.for_row_format(path, fmt)
    for key, value in options.items():
        builder.with_option(key, value)
    stream.sink_to(builder.with_partition_keys("part").with_partition_commit().build()).uid("files")
    env.execute(f"write {where}")
    names = table.all_names()
    assert sorted(n for n in names if n.endswith("_SUCCESS")) == ["part=p0/_SUCCESS", "part=p1/_SUCCESS", "part=p2/_SUCCESS"]
    assert not [n for n in names if "staging" in n]
    if where == "local":  # any engine reading the directory sees exactly the committed records
        dataset = pads.dataset(path, format="parquet", partitioning="hive").to_table()
        assert sorted(dataset.column("id").to_pylist()) == list(range(600))
    source = FileSource.for_bulk_file_format("parquet", path) if fmt == "parquet" else FileSource.for_record_stream_format(fmt, path)
    for key, value in options.items():
        source.with_option(key, value)
    read = env.from_source(source.set_schema("id BIGINT, payload STRING, part STRING").with_partition_keys("part").build())
    rows = read.execute_and_collect(timeout=300)
    assert sorted((r.id, r.part, r.payload) for r in rows) == ROWS


def test_sql_insert_into_a_partitioned_filesystem_table_and_select_it_back(env, tmp_path):
    path = tmp_path / "sql-table"
    env.execute_sql("CREATE TABLE numbers (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '90', "
                    "'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '89')")
    env.execute_sql(f"CREATE TABLE files (id BIGINT, bucket STRING) PARTITIONED BY (bucket) WITH ("
                    f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'json', "
                    f"'sink.partition-commit.policy.kind' = 'success-file')")
    assert env.execute_sql("INSERT INTO files SELECT id, CAST(id % 3 AS STRING) FROM numbers").wait(timeout=300) == "FINISHED"
    assert sorted(p.name for p in path.iterdir() if not p.name.startswith(".")) == ["bucket=0", "bucket=1", "bucket=2"]
    assert all((path / f"bucket={b}" / "_SUCCESS").exists() for b in range(3))
    rows = env.execute_sql("SELECT id, bucket FROM files").collect()
    assert sorted((r[0], r[1]) for r in rows) == [(i, str(i % 3)) for i in range(90)]
