"""Flink's ``avro-confluent`` format: Avro records framed with a Confluent Schema Registry schema id.

Wire format (Confluent's): magic byte ``0``, the schema id as 4 big-endian bytes, the Avro binary
record. Writing (sink): the writer schema is ``avro-confluent.schema`` or derived from the columns as
the ``avro`` format does (record ``record`` in ``org.apache.flink.avro.generated``); it is registered
under ``avro-confluent.subject`` (default ``<topic>-value`` / ``<topic>-key``) once per process
(``auto.register.schemas`` = false looks it up instead) and its id prefixes every record.
Reading (source): each record's writer schema is fetched by its id (cached per process) and resolved
against the reader schema (the columns, or ``avro-confluent.schema``), so records written with an
older or newer compatible schema read as the table's columns.

Options (after ``avro-confluent.``, also under ``value.``/``key.``): ``url`` (required; a
','-separated list is tried in order), ``subject``, ``schema``, ``auto.register.schemas``,
``basic-auth.credentials-source`` (``USER_INFO`` or ``URL``), ``basic-auth.user-info``,
``bearer-auth.credentials-source`` (``STATIC_TOKEN``), ``bearer-auth.token``, and ``properties.*``
(the Confluent client keys ``basic.auth.credentials.source``, ``basic.auth.user.info``,
``bearer.auth.token``, ``ssl.ca.location``, ``request.timeout.ms``; Flink's options win).
Differences from Flink: ``ssl.keystore.*``/``ssl.truststore.*`` (Java key stores) are not accepted;
use ``properties.ssl.ca.location`` (a PEM file) for an https registry. Without a credentials source,
``user-info`` means ``USER_INFO`` and credentials in the URL mean ``URL`` (Confluent's default).
Secrets never appear in kindling's errors, logs or ``repr``.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

import pyarrow as pa
from pyspark.sql.types import StructType

from kindling.options import ConfigOption, OptionError, ParsedOptions, bool_option, string_option

if TYPE_CHECKING:
    from kindling.formats.settings import FormatSettings

FORMAT = "avro-confluent"
MAGIC_BYTE = 0
_HEADER = struct.Struct(">bI")
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_PROPERTIES = ("basic.auth.credentials.source", "basic.auth.user.info", "bearer.auth.token", "ssl.ca.location",
               "request.timeout.ms")


class SchemaRegistryError(RuntimeError):
    """The schema registry cannot be used (unreachable, credentials refused, schema refused): fails the task."""


class UnknownSchemaError(ValueError):
    """A record names a schema id the registry does not know: a bad record (reported with its offset)."""


def format_options(prefix: str = "") -> list[ConfigOption[Any]]:
    """The ``avro-confluent.*`` options under ``prefix`` ('', 'value.' or 'key.')."""
    p = prefix + FORMAT + "."
    return [
        string_option(p + "url", None, "URL of the Confluent Schema Registry (','-separated list allowed)."),
        string_option(p + "schema-registry.url", None, "Deprecated fallback key of 'avro-confluent.url'."),
        string_option(p + "subject", None,
                      "Subject the writer schema is registered under (default '<topic>-value' or '<topic>-key')."),
        string_option(p + "schema-registry.subject", None, "Deprecated fallback key of 'avro-confluent.subject'."),
        string_option(p + "schema", None,
                      "The Avro schema (JSON) to register and write with / read into; default: derived from the columns."),
        string_option(p + "schema-registry.schema", None, "Deprecated fallback key of 'avro-confluent.schema'."),
        bool_option(p + "auto.register.schemas", None,
                    "Register the writer schema if the subject does not have it (default true; false: it must be "
                    "registered already)."),
        string_option(p + "basic-auth.credentials-source", None, "'USER_INFO' (from 'basic-auth.user-info') or 'URL'."),
        string_option(p + "basic-auth.user-info", None, "Basic auth credentials 'user:password' (never logged)."),
        string_option(p + "bearer-auth.credentials-source", None, "'STATIC_TOKEN' (from 'bearer-auth.token')."),
        string_option(p + "bearer-auth.token", None, "Bearer token for the registry (never logged)."),
        string_option(p + "properties", None,
                      "Registry client properties in Flink's map form 'key:value,key:value' (same as 'properties.<key>')."),
    ]


def property_prefixes(prefixes: Sequence[str] = ("", "value.", "key.")) -> tuple[str, ...]:
    """The free-form ``avro-confluent.properties.*`` prefixes an OptionSet accepts."""
    return tuple(p + FORMAT + ".properties." for p in prefixes)


@dataclass(frozen=True)
class RegistrySettings:
    """Where and how to reach the registry, and the subject/schema of one format use (value or key)."""

    urls: tuple[str, ...]
    subject: Optional[str]
    schema: Optional[str] = None
    auto_register: bool = True
    option_prefix: str = FORMAT + "."  # how the user spelled the options, for error messages
    user_info: Optional[str] = field(default=None, repr=False)
    bearer_token: Optional[str] = field(default=None, repr=False)
    ca_location: Optional[str] = None
    timeout_s: float = 30.0

    @property
    def display_url(self) -> str:
        """The URL(s) without any credentials in them."""
        return ",".join(_strip_credentials(u) for u in self.urls)


def _strip_credentials(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def registry_settings(parsed: ParsedOptions, prefixes: Sequence[str], role: str, topic: Optional[str],
                      context: str) -> RegistrySettings:
    """Read the ``avro-confluent.*`` options (the first of ``prefixes`` that sets each one wins) for the
    value or key (``role``) of ``topic`` (None for a source of several topics: no default subject)."""

    def given(name: str) -> tuple[Any, str]:
        """Only values the user set (defaults live in every prefix's option)."""
        for prefix in prefixes:
            for key in (f"{prefix}{FORMAT}.{name}", f"{prefix}{FORMAT}.schema-registry.{name}"):
                if parsed.values.get(key) is not None:
                    return parsed.values[key], key
        return None, f"{prefixes[0]}{FORMAT}.{name}"

    url, url_key = given("url")
    option_prefix = url_key.split(FORMAT + ".", 1)[0] + FORMAT + "."
    if not url or not str(url).strip():
        spelled = " or ".join(f"'{p}{FORMAT}.url'" for p in prefixes)
        raise OptionError(
            f"{context} option {spelled} is required with the 'avro-confluent' {role} format: the Confluent Schema "
            "Registry's URL, e.g. 'http://127.0.0.1:8081'"
        )
    urls = tuple(u.strip().rstrip("/") for u in str(url).split(",") if u.strip())
    for u in urls:
        if urllib.parse.urlsplit(u).scheme not in ("http", "https"):
            raise OptionError(f"{context} option '{url_key}' has value {_strip_credentials(u)!r}; allowed: "
                              "http:// or https:// URLs, ','-separated")
    props: dict[str, str] = {}
    for prefix in reversed(prefixes):
        mapped = parsed.values.get(f"{prefix}{FORMAT}.properties")
        for pair in (p.strip() for p in (mapped or "").split(",") if p.strip()):
            key, sep, value = pair.partition(":")
            if not sep or not key.strip():
                raise OptionError(f"{context} option '{prefix}{FORMAT}.properties' needs 'key:value' pairs separated "
                                  f"by ',' (an entry has no ':')")
            props[key.strip()] = value.strip()
        props.update(parsed.with_prefix(f"{prefix}{FORMAT}.properties."))
    unknown = sorted(k for k in props if k not in _PROPERTIES)
    if unknown:
        raise OptionError(
            f"{context} option '{option_prefix}properties.{unknown[0]}' is not understood by kindling's schema "
            f"registry client; supported: " + ", ".join(f"'{option_prefix}properties.{k}'" for k in _PROPERTIES)
        )
    source, source_key = given("basic-auth.credentials-source")
    source = (source or props.get("basic.auth.credentials.source") or "").strip().upper() or None
    user_info, user_key = given("basic-auth.user-info")
    user_info = user_info or props.get("basic.auth.user.info")
    if source is None and user_info:
        source = "USER_INFO"
    elif source is None and urllib.parse.urlsplit(urls[0]).username is not None:
        source = "URL"  # Confluent's default credentials source
    if source not in (None, "USER_INFO", "URL"):
        raise OptionError(f"{context} option '{source_key}' has value {source!r}; allowed values: 'USER_INFO', 'URL' "
                          "(SASL_INHERIT is not supported)")
    if source == "USER_INFO":
        if not user_info or ":" not in user_info:
            raise OptionError(f"{context} option '{user_key}' must be 'user:password' when the basic-auth credentials "
                              "source is 'USER_INFO' (the value is not shown)")
    elif source == "URL":
        parts = urllib.parse.urlsplit(urls[0])
        if parts.username is None:
            raise OptionError(f"{context} option '{source_key}' = 'URL' needs credentials in '{url_key}' "
                              "(http://user:password@host:port)")
        user_info = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
    else:
        user_info = None
    bearer_source, bearer_key = given("bearer-auth.credentials-source")
    token, token_key = given("bearer-auth.token")
    token = token or props.get("bearer.auth.token")
    if bearer_source and bearer_source.strip().upper() != "STATIC_TOKEN":
        raise OptionError(f"{context} option '{bearer_key}' has value {bearer_source!r}; allowed values: 'STATIC_TOKEN'")
    if bearer_source and not token:
        raise OptionError(f"{context} option '{token_key}' is required with '{bearer_key}' = 'STATIC_TOKEN'")
    if token and user_info:
        raise OptionError(f"{context}: set either basic auth ('{user_key}') or bearer auth ('{token_key}'), not both")
    schema, schema_key = given("schema")
    if schema is not None:
        try:
            parsed_schema = json.loads(schema)
            import fastavro

            fastavro.parse_schema(parsed_schema, _write_hint=False)
        except Exception as exc:
            raise OptionError(f"{context} option '{schema_key}' is not a valid Avro schema: {exc}") from None
        if not (isinstance(parsed_schema, dict) and parsed_schema.get("type") == "record"):
            raise OptionError(f"{context} option '{schema_key}' must be an Avro record schema (one field per column)")
    subject, _ = given("subject")
    if not subject and topic:
        subject = f"{topic}-{role}"
    auto_register, _ = given("auto.register.schemas")
    auto_register = True if auto_register is None else bool(auto_register)
    timeout_ms = props.get("request.timeout.ms")
    try:
        timeout_s = float(timeout_ms) / 1000 if timeout_ms else 30.0
    except ValueError:
        raise OptionError(f"{context} option '{option_prefix}properties.request.timeout.ms' has value "
                          f"{timeout_ms!r}; allowed: milliseconds") from None
    return RegistrySettings(urls=tuple(_strip_credentials(u) for u in urls), subject=subject, schema=schema, auto_register=auto_register,
                            option_prefix=option_prefix, user_info=user_info, bearer_token=token,
                            ca_location=props.get("ssl.ca.location"), timeout_s=timeout_s)


# ----------------------------------------------------------------------------------------------
# The REST client
# ----------------------------------------------------------------------------------------------


class RegistryClient:
    """The calls the format needs (register, look up, schema by id) over HTTP, with Confluent's error codes."""

    def __init__(self, settings: RegistrySettings) -> None:
        self.settings = settings
        self._context = None
        if settings.ca_location:
            import ssl

            self._context = ssl.create_default_context(cafile=settings.ca_location)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": CONTENT_TYPE + ", application/json", "Content-Type": CONTENT_TYPE}
        if self.settings.user_info:
            headers["Authorization"] = "Basic " + base64.b64encode(self.settings.user_info.encode()).decode()
        elif self.settings.bearer_token:
            headers["Authorization"] = "Bearer " + self.settings.bearer_token
        return headers

    def request(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        """One call, trying each URL in turn while they cannot be reached."""
        data = json.dumps(body).encode() if body is not None else None
        unreachable = []
        for url in self.settings.urls:
            target = _strip_credentials(url) + path
            request = urllib.request.Request(target, data=data, method=method, headers=self._headers())
            try:
                with urllib.request.urlopen(request, timeout=self.settings.timeout_s, context=self._context) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as exc:
                raise self._http_error(exc, method, path) from None
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                unreachable.append(f"{_strip_credentials(url)} ({reason})")
        raise SchemaRegistryError(
            f"cannot reach the schema registry at {', '.join(unreachable)}; check option "
            f"'{self.settings.option_prefix}url'"
        )

    def _http_error(self, exc: urllib.error.HTTPError, method: str, path: str) -> Exception:
        try:
            payload = json.loads(exc.read() or b"{}")
        except ValueError:
            payload = {}
        code = payload.get("error_code", exc.code) if isinstance(payload, dict) else exc.code
        message = payload.get("message", exc.reason) if isinstance(payload, dict) else exc.reason
        where = f"the schema registry at {self.settings.display_url}"
        if exc.code in (401, 403):
            auth = ("basic-auth.user-info" if self.settings.user_info else
                    "bearer-auth.token" if self.settings.bearer_token else "basic-auth.user-info (not set)")
            return SchemaRegistryError(
                f"{where} refused the credentials for {method} {path} (HTTP {exc.code}: {message}); check option "
                f"'{self.settings.option_prefix}{auth}'"
            )
        if code == 40403 and path.startswith("/schemas/ids/"):
            return UnknownSchemaError(f"schema id {path.rsplit('/', 1)[-1]} is not in {where} (error 40403)")
        return SchemaRegistryError(f"{where} answered {method} {path} with HTTP {exc.code}, error {code}: {message}")

    def register(self, subject: str, schema: str) -> int:
        path = f"/subjects/{urllib.parse.quote(subject, safe='')}/versions"
        try:
            return int(self.request("POST", path, {"schema": schema, "schemaType": "AVRO"})["id"])
        except SchemaRegistryError as exc:
            raise SchemaRegistryError(f"cannot register the writer schema under subject {subject!r}: {exc}") from None

    def lookup(self, subject: str, schema: str) -> int:
        path = f"/subjects/{urllib.parse.quote(subject, safe='')}"
        try:
            return int(self.request("POST", path, {"schema": schema, "schemaType": "AVRO"})["id"])
        except (SchemaRegistryError, UnknownSchemaError) as exc:
            raise SchemaRegistryError(
                f"the writer schema is not registered under subject {subject!r} and "
                f"'{self.settings.option_prefix}auto.register.schemas' is false; register it first ({exc})"
            ) from None

    def schema(self, schema_id: int) -> str:
        result = self.request("GET", f"/schemas/ids/{schema_id}")
        kind = (result.get("schemaType") or "AVRO").upper()
        if kind != "AVRO":
            raise UnknownSchemaError(f"schema id {schema_id} is a {kind} schema, not AVRO")
        return result["schema"]


# Per-process caches shared by every codec: (registry urls, subject, schema text) -> id, (urls, id) -> schema.
_CACHE_LOCK = threading.Lock()
_IDS: dict[tuple, int] = {}
_SCHEMAS: dict[tuple, Any] = {}


# ----------------------------------------------------------------------------------------------
# The codec
# ----------------------------------------------------------------------------------------------


class ConfluentAvroCodec:
    """Arrow record batches <-> Confluent-framed Avro values for one set of columns."""

    def __init__(self, schema: StructType, settings: RegistrySettings, precision: int = 3) -> None:
        import fastavro

        from kindling.formats.avro import avro_schema

        self.columns = schema
        self.settings = settings
        if settings.schema is not None:
            self.schema_json = json.loads(settings.schema)
            _check_columns(self.schema_json, schema, settings)
        else:
            self.schema_json = avro_schema(schema, precision=precision)
        self.schema_text = json.dumps(self.schema_json, separators=(",", ":"))
        self.parsed = fastavro.parse_schema(self.schema_json)
        self._client: Optional[RegistryClient] = None
        self._id: Optional[int] = None
        self._readers: dict[int, tuple[Any, Any]] = {}

    @property
    def client(self) -> RegistryClient:
        if self._client is None:
            self._client = RegistryClient(self.settings)
        return self._client

    # -- writing ---------------------------------------------------------------------------------

    def schema_id(self) -> int:
        """The writer schema's id under the subject: registered (or looked up) once per process."""
        if self._id is not None:
            return self._id
        subject = self.settings.subject
        if not subject:
            raise SchemaRegistryError(f"option '{self.settings.option_prefix}subject' is required to write")
        key = (self.settings.urls, subject, self.schema_text)
        with _CACHE_LOCK:
            found = _IDS.get(key)
        if found is None:
            if self.settings.auto_register:
                found = self.client.register(subject, self.schema_text)
            else:
                found = self.client.lookup(subject, self.schema_text)
            with _CACHE_LOCK:
                _IDS[key] = found
                _SCHEMAS[(self.settings.urls, found)] = self.parsed
        self._id = found
        return found

    def encode(self, batch: pa.RecordBatch, names: Sequence[str]) -> list[Optional[bytes]]:
        import fastavro

        from kindling.formats.avro import _avro_value

        header = _HEADER.pack(MAGIC_BYTE, self.schema_id())
        selected = batch.select(list(names))
        # Arrow gives MAP values as [(key, value)] lists; only then do rows need converting for fastavro.
        has_maps = any(_has_map(f.type) for f in selected.schema)
        out = []
        buffer = io.BytesIO()
        write = fastavro.schemaless_writer
        for row in selected.to_pylist():
            buffer.seek(0)
            buffer.truncate()
            buffer.write(header)
            write(buffer, self.parsed, {k: _avro_value(v) for k, v in row.items()} if has_maps else row)
            out.append(buffer.getvalue())
        return out

    # -- reading ---------------------------------------------------------------------------------

    def _reader_for(self, schema_id: int) -> tuple[Any, Any]:
        """(writer schema, reader schema or None when they are the same) for a schema id."""
        found = self._readers.get(schema_id)
        if found is not None:
            return found
        import fastavro

        key = (self.settings.urls, schema_id)
        with _CACHE_LOCK:
            writer = _SCHEMAS.get(key)
        if writer is None:
            text = self.client.schema(schema_id)
            try:
                writer = fastavro.parse_schema(json.loads(text))
            except Exception as exc:
                raise UnknownSchemaError(f"schema id {schema_id} in the registry is not a usable Avro schema: {exc}") from None
            with _CACHE_LOCK:
                _SCHEMAS[key] = writer
        writer_json = _plain(writer)
        if _same(writer_json, self.schema_json):
            reader = None
        else:
            named = {k: _plain(v) for k, v in writer.get("__named_schemas", {}).items()}
            try:
                reader = fastavro.parse_schema(_adopt_names(self.schema_json, writer_json, named, set()))
            except Exception as exc:  # fastavro's schema errors have several types
                raise ValueError(f"schema id {schema_id} cannot be read as the table's columns: {exc}") from None
        self._readers[schema_id] = (writer, reader)
        return writer, reader

    def decode(self, values: Sequence[bytes], arrow_schema: pa.Schema) -> list[pa.Array]:
        """Decode every value (raises ValueError on a bad one) into one Arrow array per column."""
        import fastavro

        read = fastavro.schemaless_reader
        records = []
        for value in values:
            if len(value) < 5 or value[0] != MAGIC_BYTE:
                first = f"0x{value[0]:02x}" if value else "nothing"
                raise ValueError(f"not in the Confluent wire format: the value starts with {first}, expected magic "
                                 "byte 0 and a 4-byte schema id")
            schema_id = int.from_bytes(value[1:5], "big")
            writer, reader = self._reader_for(schema_id)
            try:
                records.append(read(io.BytesIO(value[5:]), writer, reader))
            except (EOFError, IndexError, KeyError, TypeError, UnicodeDecodeError, OverflowError, struct.error) as exc:
                raise ValueError(f"not an Avro record of schema id {schema_id} ({type(exc).__name__}: {exc})") from None
            except fastavro.read.SchemaResolutionError as exc:
                raise ValueError(f"schema id {schema_id} cannot be read as the table's columns: {exc}") from None
        try:
            return pa.RecordBatch.from_pylist(records, schema=arrow_schema).columns
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"the decoded values do not fit the table's column types: {exc}") from None


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_map(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    return False


def _check_columns(schema_json: dict, columns: StructType, settings: RegistrySettings) -> None:
    fields = {f["name"]: f for f in schema_json.get("fields", [])}
    missing = [c for c in columns.names if c not in fields]
    extra = [n for n, f in fields.items() if n not in columns.names and "default" not in f]
    if missing or extra:
        problem = (f"has no field for column {missing[0]!r}" if missing
                   else f"has field {extra[0]!r} without a default, which is not a column")
        raise OptionError(f"option '{settings.option_prefix}schema' does not match the columns "
                          f"({', '.join(columns.names)}): it {problem}")


def _plain(parsed: Any) -> Any:
    """A parsed fastavro schema as plain JSON (without fastavro's bookkeeping keys)."""
    if isinstance(parsed, dict):
        return {k: _plain(v) for k, v in parsed.items() if not k.startswith("__")}
    if isinstance(parsed, list):
        return [_plain(v) for v in parsed]
    return parsed


def _same(a: Any, b: Any) -> bool:
    import fastavro

    try:
        return fastavro.schema.to_parsing_canonical_form(a) == fastavro.schema.to_parsing_canonical_form(b)
    except Exception:
        return False


def _adopt_names(reader: Any, writer: Any, named: dict[str, Any], defined: set[str]) -> Any:
    """The reader schema with its records named as the writer's, so Avro's name check lets them resolve
    (Flink's reader schema is always 'record' in 'org.apache.flink.avro.generated', whatever wrote the data).
    ``named``: the writer's named types by full name; ``defined``: names the reader already defines (a
    writer type used twice becomes a reference to the reader's first definition)."""
    if isinstance(reader, list):
        return [b if b == "null" else _adopt_names(b, writer, named, defined) for b in reader]
    w = _non_null(writer)
    if isinstance(w, str):
        w = named.get(w, w)
    if not isinstance(reader, dict) or not isinstance(w, dict):
        return reader
    kind = reader.get("type")
    if kind == "array" and w.get("type") == "array":
        return dict(reader, items=_adopt_names(reader["items"], w["items"], named, defined))
    if kind == "map" and w.get("type") == "map":
        return dict(reader, values=_adopt_names(reader["values"], w["values"], named, defined))
    if kind != "record" or w.get("type") != "record":
        return reader
    full = w["name"] if "." in w["name"] or not w.get("namespace") else f"{w['namespace']}.{w['name']}"
    if full in defined:
        return full
    defined.add(full)
    written = {f["name"]: f for f in w.get("fields", [])}
    renamed = {k: v for k, v in reader.items() if k != "namespace"}
    renamed["name"] = full
    renamed["fields"] = [
        dict(f, type=_adopt_names(f["type"], written[f["name"]]["type"], named, defined)) if f["name"] in written else f
        for f in reader.get("fields", [])
    ]
    return renamed


def _non_null(schema: Any) -> Any:
    if isinstance(schema, list):
        rest = [b for b in schema if b != "null"]
        return rest[0] if len(rest) == 1 else None
    return schema


def confluent_codec(schema: StructType, settings: FormatSettings) -> ConfluentAvroCodec:
    """The ``avro-confluent`` codec; it reaches the registry only when it first encodes or decodes."""
    from kindling.formats.settings import FormatError  # settings imports this module

    if settings.registry is None:
        raise FormatError("the 'avro-confluent' format needs the schema registry options ('avro-confluent.url')")
    try:
        return ConfluentAvroCodec(schema, settings.registry)
    except FormatError:
        raise
    except ValueError as exc:
        raise FormatError(str(exc)) from None


__all__ = ["ConfluentAvroCodec", "RegistryClient", "RegistrySettings", "SchemaRegistryError", "UnknownSchemaError",
           "confluent_codec",
           "format_options", "property_prefixes", "registry_settings"]
