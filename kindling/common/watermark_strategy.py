"""pyflink.common.watermark_strategy."""

from kindling.datastream.watermarks import TimestampAssigner, WatermarkStrategy

__all__ = ["TimestampAssigner", "WatermarkStrategy"]
