"""PyFlink's ``pyflink.datastream.connectors.file_system``: the file source and sink builders."""

from kindling.connectors.filesystem.builder import (
    DateTimeBucketAssigner,
    Encoder,
    FileSink,
    FileSource,
    OutputFileConfig,
    ParquetWriters,
    RollingPolicy,
    StreamFormat,
)

__all__ = ["DateTimeBucketAssigner", "Encoder", "FileSink", "FileSource", "OutputFileConfig", "ParquetWriters", "RollingPolicy",
           "StreamFormat"]
