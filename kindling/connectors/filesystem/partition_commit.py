"""Partition commit: when a partition is complete, say so with a ``_SUCCESS`` file (Flink's success-file policy).

* ``sink.partition-commit.trigger = process-time``: a partition is committed once the processing
  time passes the time it was created (its first record arrived) plus ``sink.partition-commit.delay``.
* ``partition-time``: once the watermark passes the time extracted from the partition values
  (``partition.time-extractor.timestamp-pattern``, e.g. ``$dt $hour:00:00``) plus the delay.
  The watermark is Spark's: the ``batchWatermarkMs`` that Spark logged for the micro-batch in the
  query's offset log (max event time - the watermark strategy's bound, as of the previous batch),
  so no event-time column has to reach the sink. At the end of a bounded input the watermark is
  +infinity and every partition is committed, as in Flink.

Before a partition is committed, its pending files are published; the ``_SUCCESS`` file is written
in the same roll-forward step as the batch, so it is exactly-once too. A partition that receives
records again later is committed again.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Optional
from zoneinfo import ZoneInfo

from kindling.connectors.filesystem.buckets import java_pattern_to_strftime, parse_partition_path
from kindling.connectors.filesystem.options import FileSystemConfig


def partition_time_ms(config: FileSystemConfig, bucket: str) -> Optional[int]:
    """The time of a partition from its values (Flink's default extractor), or None if it has none."""
    values = parse_partition_path(bucket)
    if not values:
        return None
    pattern = config.timestamp_pattern
    if pattern:
        text = re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: values.get(m.group(1)) or "", pattern)
    else:
        text = next(iter(values.values())) or ""
    zone = ZoneInfo(config.watermark_time_zone)
    formats = [java_pattern_to_strftime(config.timestamp_formatter), "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"]
    for fmt in formats:
        try:
            parsed = datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
        return int(parsed.replace(tzinfo=zone).timestamp() * 1000)
    raise ValueError(
        f"filesystem sink: cannot extract a time from partition {bucket!r} with "
        f"partition.time-extractor.timestamp-pattern {pattern!r} (got {text!r}, expected "
        f"partition.time-extractor.timestamp-formatter {config.timestamp_formatter!r})"
    )


def committable(config: FileSystemConfig, bucket: str, created_ms: int, now_ms: int, watermark_ms: Optional[int]) -> bool:
    """Whether a partition that has new records should be committed now."""
    if not config.commit_policies:
        return False
    if config.commit_trigger == "process-time":
        return now_ms >= created_ms + config.commit_delay_ms
    if watermark_ms is None:
        return False
    start = partition_time_ms(config, bucket)
    return start is not None and watermark_ms >= start + config.commit_delay_ms


def success_file(root: str, bucket: str, config: FileSystemConfig) -> str:
    return "/".join(p for p in (root, bucket, config.success_file_name) if p)
