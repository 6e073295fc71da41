"""A job for the kill-and-restart tests: a sequence 0..rows-1 into the filesystem sink, exactly once.

    python file_copy_job.py --path <dir or s3://bucket/prefix> --format parquet --checkpoint-dir <dir> \\
        --rows 12000 --rows-per-batch 500 [--compaction 2kb]
        [--s3-path s3://bucket/prefix --s3-format json --s3-endpoint ... --s3-access-key ... --s3-secret-key ...]

Records are ``(id, part = id % 3, payload)``, partitioned by ``part`` with ``_SUCCESS`` markers, into ``--path`` and, with ``--s3-path``,
into a second sink on S3 in the same job (two streaming queries, one driver: one kill takes both down). Running
the same command again resumes from the checkpoint; the job ends when the sequence is written.
"""

from __future__ import annotations

import argparse

from pyspark.sql import functions as F

from kindling import FileSink, StreamEnvironment

JOB_NAME = "File Copy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", required=True)
    parser.add_argument("--format", default="parquet")
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--rows", type=int, default=30000)
    parser.add_argument("--rows-per-batch", type=int, default=500, help="input rows per micro-batch (checkpoint)")
    parser.add_argument("--compaction", default=None, help="compaction.file-size (turns auto-compaction on)")
    parser.add_argument("--file-size", default="128mb", help="sink.rolling-policy.file-size")
    parser.add_argument("--rollover", default="30 min", help="sink.rolling-policy.rollover-interval")
    parser.add_argument("--s3-path", help="a second sink, on S3, in the same job")
    parser.add_argument("--s3-format", default="json")
    parser.add_argument("--s3-endpoint")
    parser.add_argument("--s3-access-key")
    parser.add_argument("--s3-secret-key")
    args = parser.parse_args()

    # A restart strategy, as a production job has: a transient Spark failure (say, a Python worker that
    # does not connect back in time on an overloaded machine) restarts the query from its checkpoint.
    env = StreamEnvironment({"state.checkpoints.dir": args.checkpoint_dir, "execution.checkpointing.interval": "500 ms",
                             "parallelism.default": 2, "restart-strategy.type": "fixed-delay",
                             "restart-strategy.fixed-delay.attempts": 3, "restart-strategy.fixed-delay.delay": "1 s"})
    # A fixed number of rows per micro-batch, however slow the machine: every run makes some progress
    # and the input lasts across every kill.
    ids = env.from_collection([(i,) for i in range(args.rows)], "id BIGINT", rows_per_batch=args.rows_per_batch)
    records = ids.map(
        F.col("id"), (F.col("id") % 3).cast("string").alias("part"), F.concat(F.lit("record-"), F.col("id").cast("string")).alias("payload"))
    sinks = [(args.path, args.format, None)]
    if args.s3_path:
        sinks.append((args.s3_path, args.s3_format, (args.s3_endpoint, args.s3_access_key, args.s3_secret_key)))
    for index, (path, fmt, s3) in enumerate(sinks):
        if fmt == "parquet":
            builder = FileSink.for_bulk_format(path, "parquet")
        else:
            builder = FileSink.for_row_format(path, fmt)
        builder = (builder.with_partition_keys("part").with_partition_commit("process-time")
                   .with_option("sink.rolling-policy.file-size", args.file_size)
                   .with_option("sink.rolling-policy.rollover-interval", args.rollover))
        if args.compaction:
            builder = builder.with_compaction(args.compaction)
        if s3:
            builder = builder.with_s3(endpoint=s3[0], access_key=s3[1], secret_key=s3[2], path_style_access=True)
        records.sink_to(builder.build()).name(f"Files {index}").uid(f"file-sink-{index}")
    env.execute(JOB_NAME)


if __name__ == "__main__":
    main()
