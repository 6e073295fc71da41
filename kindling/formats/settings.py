"""A table's record format as its options name it: ``format`` and the ``json.*``/``csv.*``/``avro-confluent.*`` options.

Every connector that reads or writes records (Kafka, files, Kinesis, Elasticsearch) takes Flink's
format options through :func:`format_options` and turns them into :class:`FormatSettings` with
:func:`format_settings`; the codecs (:mod:`kindling.formats.decoding`, :mod:`kindling.formats.encoding`)
take only the settings, never connector options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import pyarrow as pa
from pyspark.sql.types import DataType

from kindling.formats.avro_confluent import format_options as confluent_options
from kindling.formats.changelog import CHANGELOG_FORMATS, ChangelogSettings
from kindling.options import ConfigOption, OptionError, ParsedOptions, bool_option, enum_option, string_option

# The formats a record-oriented connector accepts, by Flink's names.
FORMATS = ("json", "csv", "raw", "avro", "avro-confluent", *CHANGELOG_FORMATS)
# Format names that prefix their own options ('json.ignore-parse-errors', 'canal-json.table.include', ...).
_OPTION_FAMILIES = ("json", "csv", "avro", "avro-confluent", *CHANGELOG_FORMATS)


class FormatError(ValueError):
    """A schema the format cannot handle."""


def arrow_type(data_type: DataType) -> pa.DataType:
    """The Arrow type Spark expects for a Spark type in a Python Data Source's Arrow batches."""
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(data_type, timezone="UTC")


@dataclass(frozen=True)
class FormatSettings:
    """The value (or key) format and its options, independent of any connector."""

    name: str
    ignore_parse_errors: bool = False
    fail_on_missing_field: bool = False
    timestamp_standard: str = "SQL"
    field_delimiter: str = ","
    line_delimiter: str = ""  # csv: what ends each record ('\n' for the DataStream API's CsvRowSerializationSchema)
    registry: Optional[Any] = None  # avro-confluent: avro_confluent.RegistrySettings
    avro_schema: Optional[str] = None  # avro: the record schema given (JSON text); None: derived from the columns
    changelog: Optional[ChangelogSettings] = None  # debezium-json, canal-json, maxwell-json

    @property
    def is_changelog(self) -> bool:
        """Whether records are change envelopes (each decodes to changelog rows with row kinds)."""
        return self.changelog is not None


def format_options(prefix: str = "") -> list[ConfigOption[Any]]:
    """Options of the formats, under ``json.``/``csv.`` and (Flink's value/key form) ``value.json.`` etc."""
    return [
        bool_option(prefix + "json.ignore-parse-errors", False,
                    "Skip records that are not valid JSON for the schema instead of failing (counted and logged)."),
        bool_option(prefix + "json.fail-on-missing-field", False,
                    "Fail on records that lack a field of the schema (instead of reading it as null)."),
        enum_option(prefix + "json.timestamp-format.standard", ("SQL", "ISO-8601"), "SQL",
                    "How TIMESTAMP values are written: SQL '2026-11-22 01:02:03.123' or ISO-8601 "
                    "'2026-11-22T01:02:03.123'. Reading accepts both."),
        bool_option(prefix + "json.encode.decimal-as-plain-number", False, "Accepted for compatibility."),
        string_option(prefix + "csv.field-delimiter", ",", "Field delimiter character."),
        string_option(prefix + "csv.line-delimiter", "",
                      "What ends each written record: '' (Flink SQL's csv format), '\\n', '\\r' or '\\r\\n' (the DataStream "
                      "API's CsvRowSerializationSchema ends records with '\\n'). Reading accepts records with or without it."),
        bool_option(prefix + "csv.ignore-parse-errors", False,
                    "Skip records that are not valid CSV for the schema instead of failing (counted and logged)."),
        string_option(prefix + "avro.schema", None,
                      "The Avro record schema (JSON) values are written and read with, whose fields are the columns by "
                      "name (what the DataStream API's AvroRowSerializationSchema(avro_schema_string=...) gives); default: "
                      "derived from the columns, as Flink SQL's avro format does."),
        *confluent_options(prefix),
        *changelog_options(prefix),
    ]


def changelog_options(prefix: str = "") -> list[ConfigOption[Any]]:
    """The options of the changelog formats (``debezium-json.*``, ``canal-json.*``, ``maxwell-json.*``)."""
    options: list[ConfigOption[Any]] = []
    for name in CHANGELOG_FORMATS:
        key = prefix + name + "."
        options += [
            bool_option(key + "ignore-parse-errors", False,
                        "Skip messages that are not valid envelopes for the schema instead of failing (counted and logged)."),
            enum_option(key + "timestamp-format.standard", ("SQL", "ISO-8601"), "SQL",
                        "How TIMESTAMP values are written: SQL or ISO-8601. Reading accepts both."),
            enum_option(key + "map-null-key.mode", ("FAIL", "DROP", "LITERAL"), "FAIL", "Accepted for compatibility."),
            string_option(key + "map-null-key.literal", "null", "Accepted for compatibility."),
            bool_option(key + "encode.decimal-as-plain-number", False, "Accepted for compatibility."),
        ]
    options += [
        bool_option(prefix + "debezium-json.schema-include", False,
                    "Whether the Debezium messages carry their schema ({\"schema\": ..., \"payload\": ...}); reading only."),
        string_option(prefix + "canal-json.database.include", None,
                      "A regular expression: only Canal messages of matching databases are read."),
        string_option(prefix + "canal-json.table.include", None,
                      "A regular expression: only Canal messages of matching tables are read."),
    ]
    return options


def format_settings(parsed: ParsedOptions, context: str, raw: Mapping[str, Any]) -> FormatSettings:
    """The record format named by ``format`` (or Kafka's ``value.format``) with its options.

    ``raw`` is the table's options as written, to tell an option given from one defaulted and to refuse
    options of another format (Flink's "Unsupported options found")."""
    fmt, value_fmt = parsed.get("format"), parsed.values.get("value.format")
    if fmt and value_fmt and fmt != value_fmt:
        raise OptionError(
            f"{context} options 'format' = {fmt!r} and 'value.format' = {value_fmt!r} disagree; "
            f"set only one of them (allowed values: {', '.join(FORMATS)})"
        )
    name = fmt or value_fmt
    if not name:
        raise OptionError(
            f"{context} option 'format' (or 'value.format') is required; allowed values: "
            + ", ".join(f"'{f}'" for f in FORMATS)
        )
    lowered = {k.lower() for k in raw}
    for key in sorted(lowered):
        base = key[len("value."):] if key.startswith("value.") else key
        family = base.split(".", 1)[0]
        if family in _OPTION_FAMILIES and "." in base and family != name:
            raise OptionError(
                f"{context} option '{key}' belongs to the '{family}' format, but the value format is {name!r}; "
                f"remove it or set 'format' = '{family}'"
            )

    def pick(key: str) -> Any:
        if "value." + key in lowered:
            return parsed.values.get("value." + key)
        return parsed.get(key)

    if name in CHANGELOG_FORMATS:
        return FormatSettings(
            name=name,
            ignore_parse_errors=bool(pick(f"{name}.ignore-parse-errors")),
            timestamp_standard=pick(f"{name}.timestamp-format.standard") or "SQL",
            changelog=ChangelogSettings(
                name,
                schema_include=bool(pick("debezium-json.schema-include")),
                database_include=_pattern(pick("canal-json.database.include"), "canal-json.database.include", context),
                table_include=_pattern(pick("canal-json.table.include"), "canal-json.table.include", context),
            ),
        )
    return FormatSettings(
        name=name,
        ignore_parse_errors=bool(pick(f"{name}.ignore-parse-errors")) if name in ("json", "csv") else False,
        fail_on_missing_field=bool(pick("json.fail-on-missing-field")),
        timestamp_standard=pick("json.timestamp-format.standard") or "SQL",
        field_delimiter=field_delimiter(pick("csv.field-delimiter") or ",", context),
        line_delimiter=line_delimiter(pick("csv.line-delimiter") or "", context),
        avro_schema=pick("avro.schema") if name == "avro" else None,
    )


def _pattern(value: Optional[str], key: str, context: str) -> Optional[str]:
    if value is None:
        return None
    try:
        re.compile(value)
    except re.error as exc:
        raise OptionError(f"{context} option '{key}' has value {value!r}, which is not a regular expression ({exc})") from None
    return value


def field_delimiter(value: str, context: str) -> str:
    """``csv.field-delimiter`` as one character (``\\t`` spelled out is a tab)."""
    text = value.replace("\\t", "\t")
    if len(text) != 1:
        raise OptionError(f"{context} option 'csv.field-delimiter' has value {value!r}; allowed: a single character")
    return text


_LINE_DELIMITERS = {"": "", "\n": "\n", "\r": "\r", "\r\n": "\r\n", "\\n": "\n", "\\r": "\r", "\\r\\n": "\r\n"}


def line_delimiter(value: str, context: str) -> str:
    """``csv.line-delimiter``: empty, ``\\n``, ``\\r`` or ``\\r\\n`` (as characters or spelled out with backslashes)."""
    if value not in _LINE_DELIMITERS:
        raise OptionError(f"{context} option 'csv.line-delimiter' has value {value!r}; Unsupported new line delimiter. "
                          "Only \\n, \\r, \\r\\n, or empty string are supported.")
    return _LINE_DELIMITERS[value]


__all__ = ["FORMATS", "FormatError", "FormatSettings", "arrow_type", "changelog_options", "field_delimiter", "format_options",
           "format_settings", "line_delimiter"]
