"""Click Event Count throughput on a local Spark standalone cluster with 1 or 2 workers.

Starts a local broker and a cluster (``--workers`` workers of 1 core and 1g), produces the clicks of
``--windows`` complete 15 s windows (6000 per window) up front, then runs the click-count job
(exactly-once Kafka sink) with this process as the driver on ``spark://127.0.0.1:<port>``, and
measures from the start of the first micro-batch that read input to the end of the one that read
the last record. Prints ``workers=<n> rows=<n> seconds=<s> rows_per_s=<r>``.

    python benchmarks/click_count_cluster.py --workers 2 [--windows 20]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime
from pathlib import Path

from kindling.env import StreamEnvironment
from kindling.local.kafka import LocalKafka
from kindling.local.spark import LocalSparkCluster
from kindling.playground import click_count
from kindling.playground.click_generator import ClickEventGenerator


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--windows", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kindling-bench-cluster-"))
    with LocalKafka(data_dir=work / "kafka") as broker, LocalSparkCluster(args.workers, 1, "1g", work_dir=work / "spark") as cluster:
        broker.create_topic("input", partitions=4)
        broker.create_topic("output", partitions=1)
        total = ClickEventGenerator(broker.bootstrap_servers, "input").produce(args.windows * 6000)
        env = StreamEnvironment({
            "kindling.spark.master": cluster.master_url, "spark.executor.memory": "512m",
            "parallelism.default": 2, "state.checkpoints.dir": str(work / "checkpoints"),
            "execution.checkpointing.interval": "1 s", "kindling.log.level": "ERROR",
            # A Python worker gets a fixed 10 s to start; on a busy machine the query restarts instead of failing.
            "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 20,
        })
        click_count.build(env, broker.bootstrap_servers, exactly_once=True)
        job = env.execute_async(click_count.JOB_NAME)
        deadline = time.monotonic() + args.timeout
        progress: dict[int, dict] = {}
        try:
            while time.monotonic() < deadline:
                for query in job.queries.values():
                    for p in query.recentProgress:
                        progress[int(p["batchId"])] = p
                if sum(int(p.get("numInputRows") or 0) for p in progress.values()) >= total:
                    break
                job.wait(timeout=1.0)
            else:
                raise TimeoutError(f"the job read {sum(int(p.get('numInputRows') or 0) for p in progress.values())} of {total} rows")
        finally:
            job.cancel()
        busy = [p for _, p in sorted(progress.items()) if int(p.get("numInputRows") or 0) > 0]
        began = _seconds(busy[0]["timestamp"])
        ended = _seconds(busy[-1]["timestamp"]) + busy[-1]["durationMs"]["triggerExecution"] / 1000
        rows = sum(int(p["numInputRows"]) for p in busy)
        rate = rows / (ended - began)
        print(f"workers={args.workers} rows={rows} seconds={ended - began:.1f} rows_per_s={rate:,.0f} batches={len(busy)}", flush=True)
        env.spark.stop()  # before the cluster stops under it


if __name__ == "__main__":
    main()
