"""Copy a Kinesis stream of JSON records into files, exactly once.

    python examples/kinesis_copy.py --endpoint http://127.0.0.1:4568 --stream input --path out/ \\
        --checkpoint-dir .kindling/checkpoints

Reads ``{"id": <bigint>, "payload": <string>}`` records from the stream's first record (TRIM_HORIZON)
with the Kinesis source (per-shard sequence numbers in the checkpoint) and writes them as JSON lines
with the filesystem sink (files published by the driver, fenced by micro-batch id). A killed and
restarted job resumes from its checkpoint: every record lands in the files exactly once.
"""

from __future__ import annotations

import argparse

from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling import FileSink, StreamEnvironment
from kindling.connectors.base import Source
from kindling.datastream import WatermarkStrategy
from kindling.local.kinesis import LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY

JOB_NAME = "Kinesis Copy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", default="http://127.0.0.1:4568", help="aws.endpoint")
    parser.add_argument("--region", default="us-east-1", help="aws.region")
    parser.add_argument("--stream", default="input")
    parser.add_argument("--path", required=True, help="the output directory")
    parser.add_argument("--checkpoint-dir", default=".kindling/checkpoints", help="state.checkpoints.dir")
    args = parser.parse_args()

    # A restart strategy, as a production job has: a transient Spark failure restarts the query from its checkpoint.
    env = StreamEnvironment({"state.checkpoints.dir": args.checkpoint_dir, "execution.checkpointing.interval": "500 ms",
                             "parallelism.default": 2, "restart-strategy.type": "fixed-delay",
                             "restart-strategy.fixed-delay.attempts": 3, "restart-strategy.fixed-delay.delay": "1 s"})
    source = Source("kinesis", {
        "stream": args.stream, "format": "json", "aws.region": args.region, "aws.endpoint": args.endpoint,
        "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": LOCAL_ACCESS_KEY,
        "aws.credentials.basic.secretkey": LOCAL_SECRET_KEY, "scan.stream.initpos": "TRIM_HORIZON",
        "scan.shard.getrecords.intervalmillis": "100", "scan.shard.discovery.intervalmillis": "1000",
    }, schema=StructType([StructField("id", LongType()), StructField("payload", StringType())]))
    records = env.from_source(source, WatermarkStrategy.no_watermarks(), "Input")
    # Small part files, rolled every micro-batch: the records become visible as each batch commits.
    files = (FileSink.for_row_format(args.path, "json").with_option("sink.rolling-policy.file-size", "1b")
             .with_option("sink.rolling-policy.rollover-interval", "1 s").build())
    records.sink_to(files).name("Files").uid("kinesis-copy-files")
    env.execute(JOB_NAME)


if __name__ == "__main__":
    main()
