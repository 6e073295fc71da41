"""Flink's record formats, shared by every connector: ``json``, ``csv``, ``raw``, ``avro``, ``avro-confluent``.

A connector names a format in its options (:mod:`kindling.formats.settings`), decodes record bytes into
Arrow columns in bulk (:mod:`kindling.formats.decoding`) and encodes Arrow batches into record bytes
(:mod:`kindling.formats.encoding`).
"""

from kindling.formats.decoding import Decoded, ValueDecoder, epoch_millis, parse_timestamps, value_columns
from kindling.formats.encoding import RowEncoder
from kindling.formats.settings import FORMATS, FormatError, FormatSettings, arrow_type, format_options, format_settings

__all__ = ["FORMATS", "Decoded", "FormatError", "FormatSettings", "RowEncoder", "ValueDecoder", "arrow_type",
           "epoch_millis", "format_options", "format_settings", "parse_timestamps", "value_columns"]
