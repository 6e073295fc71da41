"""A local Confluent-compatible Schema Registry (REST, AVRO schemas) for the ``avro-confluent`` format.

Confluent's registry is a Java service and Karapace is not on PyPI, so kindling ships this stand-in
(FastAPI + uvicorn). It speaks the subset of Confluent's REST API that Confluent's clients and
serializers use, with Confluent's status codes and error bodies (``{"error_code": 40401, "message": ...}``):

* ``POST /subjects/{s}/versions`` (register; idempotent: the same schema gets the same global id and
  version), ``POST /subjects/{s}`` (look up), ``GET /schemas/ids/{id}`` (and ``/subjects``,
  ``/versions``), ``GET /schemas/guids/{guid}``, ``GET /schemas/types``, ``GET /subjects``,
  ``GET /subjects/{s}/versions``, ``GET /subjects/{s}/versions/{n|latest}``,
  ``DELETE /subjects/{s}[/versions/{n}]`` (soft; ``?permanent=true`` after a soft delete),
  ``GET|PUT|DELETE /config[/{s}]``, ``POST /compatibility/subjects/{s}/versions[/{n|latest}]``.
* Schema types: ``AVRO`` only; ``JSON``/``PROTOBUF`` and schema references are refused with 42201.
* Compatibility (``NONE``, ``BACKWARD``, ``FORWARD``, ``FULL`` and their ``_TRANSITIVE`` forms, default
  ``BACKWARD``) is checked by Avro's schema resolution rules, see :func:`can_read`.
* State is persisted as JSON in the data directory after every change, so a restart keeps ids.
* Optional HTTP basic auth (``user:password``), read from a 0600 file, never from the command line.

:class:`LocalSchemaRegistry` is owned by the calling process (tests); :func:`start_background` /
:func:`stop_background` / :func:`status` run a detached one for ``kindling local schema-registry``.
"""

import argparse
import base64
import json
import os
import secrets
import sys
import threading
import uuid
from pathlib import Path
from typing import Any, Optional

from kindling.local.process import OwnedServer, StateFile, start_and_wait

DEFAULT_STATE_DIR = Path(".kindling/local/schema-registry")
DEFAULT_PORT = 8081
COMPATIBILITY_LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                        "FULL_TRANSITIVE")
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_STORE_FILE = "registry.json"
_AUTH_FILE = "auth.json"
_STATE_FILE = "schema-registry.json"
_LOG_FILE = "schema-registry.log"
_PROGRAM = b"kindling.local.schema_registry"


class RegistryError(Exception):
    """An API error as Confluent reports it: HTTP status plus ``error_code`` and ``message``."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


# ----------------------------------------------------------------------------------------------
# Avro schemas: parsing, canonical form, compatibility
# ----------------------------------------------------------------------------------------------

_PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
_PROMOTIONS = {"int": {"long", "float", "double"}, "long": {"float", "double"}, "float": {"double"},
               "string": {"bytes"}, "bytes": {"string"}}


def parse_avro(text: str) -> Any:
    """The schema's JSON, validated as Avro (raises RegistryError 42201 otherwise)."""
    import fastavro

    try:
        schema = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise RegistryError(422, 42201, f"Invalid schema: not JSON ({exc})") from None
    try:
        _check_structure(schema)
        fastavro.parse_schema(schema, _write_hint=False)
    except RegistryError:
        raise
    except Exception as exc:  # fastavro raises several types for invalid schemas
        raise RegistryError(422, 42201, f"Invalid schema: {exc}") from None
    return schema


def _check_structure(schema: Any) -> None:
    """What fastavro lets pass but Avro requires: records with a 'fields' list of named, typed fields."""
    if isinstance(schema, list):
        for branch in schema:
            _check_structure(branch)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "error"):
            fields = schema.get("fields")
            if not isinstance(fields, list):
                raise RegistryError(422, 42201, f"Invalid schema: record {schema.get('name')!r} has no 'fields' list")
            for f in fields:
                if not isinstance(f, dict) or "name" not in f or "type" not in f:
                    raise RegistryError(422, 42201, f"Invalid schema: a field of record {schema.get('name')!r} "
                                                    "lacks 'name' or 'type'")
                _check_structure(f["type"])
        elif kind == "array":
            _check_structure(schema.get("items"))
        elif kind == "map":
            _check_structure(schema.get("values"))
        elif isinstance(kind, (dict, list)):
            _check_structure(kind)


def canonical(schema: Any) -> str:
    """The text identical schemas share (key order and whitespace do not matter)."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


class _Names:
    """Named types (records, enums, fixed) by full name, collected while walking a schema."""

    def __init__(self) -> None:
        self.types: dict[str, dict] = {}

    def resolve(self, schema: Any, namespace: str) -> tuple[Any, str]:
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            full = schema if "." in schema else (f"{namespace}.{schema}" if namespace else schema)
            found = self.types.get(full) or self.types.get(schema)
            if found is None:
                raise RegistryError(422, 42201, f"Invalid schema: unknown type {schema!r}")
            return found, found["__namespace"]
        if isinstance(schema, dict) and schema.get("type") in ("record", "error", "enum", "fixed"):
            ns = schema.get("namespace", namespace) or ""
            name = schema["name"]
            full = name if "." in name else (f"{ns}.{name}" if ns else name)
            ns = full.rsplit(".", 1)[0] if "." in full else ""
            entry = dict(schema, __namespace=ns, __full=full)
            self.types.setdefault(full, entry)
            return entry, ns
        if isinstance(schema, dict) and schema.get("type") in _PRIMITIVES:
            return schema["type"], namespace  # {"type": "long", "logicalType": ...}
        return schema, namespace


def _kind(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, str):
        return schema
    return "record" if schema.get("type") == "error" else schema.get("type")


def can_read(reader: Any, writer: Any) -> Optional[str]:
    """None if data written with ``writer`` can be read with ``reader`` (Avro's resolution rules), else why not.

    Checked: same primitive or a promotion (int->long/float/double, long->float/double, float->double,
    string<->bytes); records by unqualified name, every reader field either in the writer (by name or
    alias; types checked recursively) or with a default, writer-only fields ignored; enums (every writer
    symbol in the reader, or a reader default); arrays' items; maps' values; fixed name and size;
    unions (every writer branch readable by some reader branch). Field default values are not validated.
    """
    return _can_read(reader, writer, _Names(), _Names(), "", "", set())


def _can_read(reader, writer, rn: _Names, wn: _Names, rns: str, wns: str, seen: set) -> Optional[str]:
    reader, rns = rn.resolve(reader, rns)
    writer, wns = wn.resolve(writer, wns)
    rk, wk = _kind(reader), _kind(writer)
    if wk == "union":
        for branch in writer:
            why = _can_read(reader, branch, rn, wn, rns, wns, seen)
            if why:
                return why
        return None
    if rk == "union":
        for branch in reader:
            if _can_read(branch, writer, rn, wn, rns, wns, seen) is None:
                return None
        return f"no branch of the reader's union can read the writer's {wk}"
    if rk != wk:
        if wk in _PROMOTIONS and rk in _PROMOTIONS[wk]:
            return None
        return f"the reader's type {rk} cannot read the writer's {wk}"
    if rk in _PRIMITIVES:
        return None
    if rk in ("record", "enum", "fixed"):
        r_name, w_name = reader["__full"].rsplit(".", 1)[-1], writer["__full"].rsplit(".", 1)[-1]
        aliases = {a.rsplit(".", 1)[-1] for a in reader.get("aliases", [])}
        if r_name != w_name and w_name not in aliases:
            return f"the reader's {rk} {reader['__full']!r} does not match the writer's {writer['__full']!r}"
    if rk == "record":
        key = (reader["__full"], writer["__full"])
        if key in seen:  # recursive types: assume compatible at the repeat
            return None
        seen = seen | {key}
        written = {f["name"]: f for f in writer.get("fields", [])}
        for field in reader.get("fields", []):
            match = written.get(field["name"]) or next(
                (written[a] for a in field.get("aliases", []) if a in written), None)
            if match is None:
                if "default" not in field:
                    return f"reader field {field['name']!r} has no default and is missing in the writer's schema"
                continue
            why = _can_read(field["type"], match["type"], rn, wn, rns, wns, seen)
            if why:
                return f"field {field['name']!r}: {why}"
        return None
    if rk == "enum":
        missing = [s for s in writer.get("symbols", []) if s not in reader.get("symbols", [])]
        if missing and "default" not in reader:
            return f"the reader's enum {reader['__full']!r} lacks symbol {missing[0]!r}"
        return None
    if rk == "fixed":
        return None if reader.get("size") == writer.get("size") else "fixed sizes differ"
    if rk == "array":
        return _can_read(reader["items"], writer["items"], rn, wn, rns, wns, seen)
    if rk == "map":
        return _can_read(reader["values"], writer["values"], rn, wn, rns, wns, seen)
    return f"unknown Avro type {rk!r}"


# ----------------------------------------------------------------------------------------------
# The registry's state
# ----------------------------------------------------------------------------------------------


class Registry:
    """Subjects, versions, global schema ids and compatibility levels, persisted as JSON after each change."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / _STORE_FILE
        self.lock = threading.Lock()
        state = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.next_id: int = state.get("next_id", 1)
        # id -> {"schema": text, "guid": ...}; canonical text -> id
        self.schemas: dict[int, dict] = {int(k): v for k, v in state.get("schemas", {}).items()}
        self.by_canonical = {canonical(json.loads(v["schema"])): i for i, v in self.schemas.items()}
        # subject -> list of {"version", "id", "deleted"}
        self.subjects: dict[str, list[dict]] = state.get("subjects", {})
        self.global_level: str = state.get("global_level", "BACKWARD")
        self.subject_levels: dict[str, str] = state.get("subject_levels", {})

    def _save(self) -> None:
        state = {"next_id": self.next_id, "schemas": self.schemas, "subjects": self.subjects,
                 "global_level": self.global_level, "subject_levels": self.subject_levels}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self.path)

    # -- reading -----------------------------------------------------------------------------

    def live(self, subject: str, deleted: bool = False) -> list[dict]:
        versions = [v for v in self.subjects.get(subject, []) if deleted or not v["deleted"]]
        if not versions:
            raise _subject_not_found(subject)
        return versions

    def version(self, subject: str, version: str, deleted: bool = False) -> dict:
        versions = self.live(subject, deleted)
        if version in ("latest", "-1"):
            return versions[-1]
        try:
            number = int(version)
        except ValueError:
            number = 0
        if number <= 0:
            raise RegistryError(422, 42202,
                                "The specified version '%s' is not a valid version id. Allowed values are between "
                                "[1, 2^31-1] and the string \"latest\"" % version)
        for entry in versions:
            if entry["version"] == number:
                return entry
        raise RegistryError(404, 40402, f"Version {number} not found.")

    def schema(self, schema_id: int) -> dict:
        if schema_id not in self.schemas:
            raise RegistryError(404, 40403, f"Schema {schema_id} not found")
        return self.schemas[schema_id]

    def describe(self, subject: str, entry: dict) -> dict:
        return {"subject": subject, "version": entry["version"], "id": entry["id"],
                "guid": self.schemas[entry["id"]]["guid"], "schema": self.schemas[entry["id"]]["schema"]}

    def level(self, subject: Optional[str]) -> str:
        return self.subject_levels.get(subject, self.global_level) if subject else self.global_level

    # -- writing -----------------------------------------------------------------------------

    def check(self, subject: str, schema: Any, against: list[dict]) -> list[str]:
        """Why ``schema`` breaks the subject's compatibility level against ``against`` (latest first)."""
        level = self.level(subject)
        if level == "NONE" or not against:
            return []
        others = against if level.endswith("_TRANSITIVE") else against[:1]
        problems = []
        for entry in others:
            old = json.loads(self.schemas[entry["id"]]["schema"])
            if level.startswith(("BACKWARD", "FULL")):
                why = can_read(schema, old)
                if why:
                    problems.append(f"{level}: the new schema cannot read version {entry['version']}: {why}")
            if level.startswith(("FORWARD", "FULL")):
                why = can_read(old, schema)
                if why:
                    problems.append(f"{level}: version {entry['version']} cannot read the new schema: {why}")
        return problems

    def register(self, subject: str, text: str) -> dict:
        schema = parse_avro(text)
        key = canonical(schema)
        with self.lock:
            versions = [v for v in self.subjects.get(subject, []) if not v["deleted"]]
            existing = self.by_canonical.get(key)
            for entry in versions:
                if entry["id"] == existing:
                    return self.describe(subject, entry)
            problems = self.check(subject, schema, list(reversed(versions)))
            if problems:
                raise RegistryError(409, 409, "Schema being registered is incompatible with an earlier schema for "
                                              f"subject \"{subject}\", details: {problems}")
            if existing is None:
                existing = self.next_id
                self.next_id += 1
                self.schemas[existing] = {"schema": json.dumps(schema, separators=(",", ":")), "guid": str(uuid.uuid4())}
                self.by_canonical[key] = existing
            history = self.subjects.setdefault(subject, [])
            entry = {"version": (history[-1]["version"] + 1) if history else 1, "id": existing, "deleted": False}
            history.append(entry)
            self._save()
            return self.describe(subject, entry)

    def lookup(self, subject: str, text: str, deleted: bool = False) -> dict:
        schema_id = self.by_canonical.get(canonical(parse_avro(text)))
        versions = self.live(subject, deleted)
        for entry in versions:
            if entry["id"] == schema_id:
                return self.describe(subject, entry)
        raise RegistryError(404, 40403, "Schema not found")

    def delete_subject(self, subject: str, permanent: bool) -> list[int]:
        with self.lock:
            history = self.subjects.get(subject)
            if not history:
                raise _subject_not_found(subject)
            if permanent:
                if any(not v["deleted"] for v in history):
                    raise RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being "
                                                    "permanently deleted")
                del self.subjects[subject]
                self.subject_levels.pop(subject, None)
                self._save()
                return [v["version"] for v in history]
            live = [v for v in history if not v["deleted"]]
            if not live:
                raise RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")
            for v in live:
                v["deleted"] = True
            self._save()
            return [v["version"] for v in live]

    def delete_version(self, subject: str, version: str, permanent: bool) -> int:
        with self.lock:
            entry = self.version(subject, version, deleted=permanent)
            if permanent:
                if not entry["deleted"]:
                    raise RegistryError(404, 40407, f"Subject '{subject}' Version {entry['version']} was not deleted "
                                                    "first before being permanently deleted")
                self.subjects[subject].remove(entry)
                if not self.subjects[subject]:
                    del self.subjects[subject]
            else:
                entry["deleted"] = True
            self._save()
            return entry["version"]

    def set_level(self, subject: Optional[str], level: Any) -> str:
        text = str(level or "").upper()
        if text not in COMPATIBILITY_LEVELS:
            raise RegistryError(422, 42203, f"Invalid compatibility level. Valid values are {', '.join(COMPATIBILITY_LEVELS)}")
        with self.lock:
            if subject:
                self.subject_levels[subject] = text
            else:
                self.global_level = text
            self._save()
        return text

    def clear_level(self, subject: Optional[str]) -> str:
        with self.lock:
            if subject:
                if subject not in self.subject_levels:
                    raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")
                level = self.subject_levels.pop(subject)
            else:
                level, self.global_level = self.global_level, "BACKWARD"
            self._save()
        return level


# ----------------------------------------------------------------------------------------------
# The REST API
# ----------------------------------------------------------------------------------------------


def _true(value: Optional[str]) -> bool:
    return str(value).lower() == "true"


def create_app(data_dir: Path, user_info: Optional[str] = None):
    """The FastAPI application over a :class:`Registry` in ``data_dir``; ``user_info`` 'user:password' enables basic auth."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    registry = Registry(data_dir)
    app = FastAPI(title="kindling local schema registry", docs_url=None, redoc_url=None, openapi_url=None)
    expected = "Basic " + base64.b64encode(user_info.encode()).decode() if user_info else None

    def reply(body: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(body, status_code=status, media_type=CONTENT_TYPE)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if expected is not None and not secrets.compare_digest(request.headers.get("authorization", ""), expected):
            response = reply({"error_code": 401, "message": "Unauthorized"}, 401)
            response.headers["WWW-Authenticate"] = 'Basic realm="kindling-schema-registry"'
            return response
        try:
            return await call_next(request)
        except RegistryError as exc:
            return reply({"error_code": exc.code, "message": exc.message}, exc.status)

    @app.exception_handler(RegistryError)
    async def registry_error(request: Request, exc: RegistryError):
        return reply({"error_code": exc.code, "message": exc.message}, exc.status)

    async def body(request: Request) -> dict:
        try:
            data = json.loads(await request.body() or b"{}")
        except ValueError:
            raise RegistryError(422, 42201, "Invalid schema: the request body is not JSON") from None
        if not isinstance(data, dict):
            raise RegistryError(422, 42201, "Invalid schema: the request body is not a JSON object")
        return data

    async def schema_text(request: Request) -> str:
        data = await body(request)
        kind = str(data.get("schemaType") or "AVRO").upper()
        if kind != "AVRO":
            raise RegistryError(422, 42201, f"Invalid schema: schema type {kind!r} is not supported by kindling's "
                                            "local registry (AVRO only)")
        if data.get("references"):
            raise RegistryError(422, 42201, "Invalid schema: schema references are not supported by kindling's local registry")
        if not isinstance(data.get("schema"), str):
            raise RegistryError(422, 42201, "Invalid schema: the body needs a 'schema' string")
        return data["schema"]

    @app.get("/")
    async def root():
        return reply({})

    @app.get("/schemas/types")
    async def types():
        return reply(["AVRO"])

    @app.get("/subjects")
    async def subjects(deleted: Optional[str] = None, subjectPrefix: Optional[str] = None):  # noqa: N803
        names = [s for s, vs in registry.subjects.items() if vs and (_true(deleted) or any(not v["deleted"] for v in vs))]
        return reply(sorted(s for s in names if not subjectPrefix or s.startswith(subjectPrefix)))

    @app.post("/subjects/{subject}/versions")
    async def register(subject: str, request: Request):
        result = registry.register(subject, await schema_text(request))
        return reply({"id": result["id"], "guid": result["guid"], "subject": subject, "version": result["version"]})

    @app.post("/subjects/{subject}")
    async def lookup(subject: str, request: Request, deleted: Optional[str] = None):
        return reply(registry.lookup(subject, await schema_text(request), _true(deleted)))

    @app.get("/subjects/{subject}/versions")
    async def versions(subject: str, deleted: Optional[str] = None):
        return reply([v["version"] for v in registry.live(subject, _true(deleted))])

    @app.get("/subjects/{subject}/versions/{version}")
    async def version(subject: str, version: str, deleted: Optional[str] = None):
        return reply(registry.describe(subject, registry.version(subject, version, _true(deleted))))

    @app.get("/subjects/{subject}/versions/{version}/schema")
    async def version_schema(subject: str, version: str):
        entry = registry.version(subject, version)
        return JSONResponse(json.loads(registry.schema(entry["id"])["schema"]))

    @app.delete("/subjects/{subject}")
    async def delete_subject(subject: str, permanent: Optional[str] = None):
        return reply(registry.delete_subject(subject, _true(permanent)))

    @app.delete("/subjects/{subject}/versions/{version}")
    async def delete_version(subject: str, version: str, permanent: Optional[str] = None):
        return reply(registry.delete_version(subject, version, _true(permanent)))

    @app.get("/schemas/ids/{schema_id}")
    async def by_id(schema_id: int, subject: Optional[str] = None):
        stored = registry.schema(schema_id)
        return reply({"schema": stored["schema"], "guid": stored["guid"]})

    @app.get("/schemas/ids/{schema_id}/schema")
    async def raw_by_id(schema_id: int):
        return JSONResponse(json.loads(registry.schema(schema_id)["schema"]))

    @app.get("/schemas/guids/{guid}")
    async def by_guid(guid: str):
        for schema_id, stored in registry.schemas.items():
            if stored["guid"] == guid:
                return reply({"id": schema_id, "schema": stored["schema"], "guid": guid})
        raise RegistryError(404, 40403, f"Schema {guid} not found")

    @app.get("/schemas/ids/{schema_id}/subjects")
    async def id_subjects(schema_id: int):
        registry.schema(schema_id)
        return reply(sorted(s for s, vs in registry.subjects.items() if any(v["id"] == schema_id and not v["deleted"] for v in vs)))

    @app.get("/schemas/ids/{schema_id}/versions")
    async def id_versions(schema_id: int):
        registry.schema(schema_id)
        return reply([{"subject": s, "version": v["version"]} for s, vs in sorted(registry.subjects.items())
                      for v in vs if v["id"] == schema_id and not v["deleted"]])

    @app.get("/config")
    async def get_config():
        return reply({"compatibilityLevel": registry.level(None)})

    @app.put("/config")
    async def put_config(request: Request):
        return reply({"compatibility": registry.set_level(None, (await body(request)).get("compatibility"))})

    @app.delete("/config")
    async def delete_config():
        return reply({"compatibilityLevel": registry.clear_level(None)})

    @app.get("/config/{subject}")
    async def get_subject_config(subject: str, defaultToGlobal: Optional[str] = None):  # noqa: N803
        if subject not in registry.subject_levels and not _true(defaultToGlobal):
            raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")
        return reply({"compatibilityLevel": registry.level(subject)})

    @app.put("/config/{subject}")
    async def put_subject_config(subject: str, request: Request):
        return reply({"compatibility": registry.set_level(subject, (await body(request)).get("compatibility"))})

    @app.delete("/config/{subject}")
    async def delete_subject_config(subject: str):
        return reply({"compatibilityLevel": registry.clear_level(subject)})

    async def compatibility(subject: str, request: Request, version: Optional[str], verbose: Optional[str]):
        schema = parse_avro(await schema_text(request))
        if version is None:
            against = list(reversed(registry.subjects.get(subject) and registry.live(subject) or []))
        else:
            against = [registry.version(subject, version)]
        problems = registry.check(subject, schema, against)
        result: dict[str, Any] = {"is_compatible": not problems}
        if _true(verbose):
            result["messages"] = problems
        return reply(result)

    @app.post("/compatibility/subjects/{subject}/versions/{version}")
    async def compatibility_version(subject: str, version: str, request: Request, verbose: Optional[str] = None):
        return await compatibility(subject, request, version, verbose)

    @app.post("/compatibility/subjects/{subject}/versions")
    async def compatibility_all(subject: str, request: Request, verbose: Optional[str] = None):
        return await compatibility(subject, request, None, verbose)

    return app


# ----------------------------------------------------------------------------------------------
# Processes: owned by the caller (tests) or detached (the CLI)
# ----------------------------------------------------------------------------------------------


def registry_answers(url: str, user_info: Optional[str] = None, timeout: float = 2) -> bool:
    """Whether a schema registry at ``url`` answers ``GET /subjects`` (with these credentials)."""
    import urllib.request

    request = urllib.request.Request(url.rstrip("/") + "/subjects")
    if user_info:
        request.add_header("Authorization", "Basic " + base64.b64encode(user_info.encode()).decode())
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - loopback URL we built
        return response.status == 200


def _write_auth(data_dir: Path, user_info: Optional[str]) -> None:
    path = Path(data_dir) / _AUTH_FILE
    if user_info is None:
        path.unlink(missing_ok=True)
        return
    if ":" not in user_info:
        raise ValueError("schema registry credentials must be 'user:password'")
    path.write_text(json.dumps({"user_info": user_info}))
    os.chmod(path, 0o600)


def _command(host: str, port: int, data_dir: Path) -> list[str]:
    return [sys.executable, "-m", "kindling.local.schema_registry", "--host", host, "--port", str(port),
            "--data-dir", str(Path(data_dir).resolve())]


class LocalSchemaRegistry(OwnedServer):
    """A schema registry on ``host:port`` owned by this process (dies with it).

    >>> with LocalSchemaRegistry() as registry:
    ...     options = {"value.format": "avro-confluent", "value.avro-confluent.url": registry.url}
    """

    data_prefix = "kindling-schema-registry-"

    def __init__(self, port: Optional[int] = None, data_dir: Optional[Path] = None, host: str = "127.0.0.1",
                 user_info: Optional[str] = None) -> None:
        super().__init__(port, data_dir, host)
        self.user_info = user_info

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the schema registry has no port until start() is called")
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60) -> "LocalSchemaRegistry":
        """Start the server; return once it answers ``GET /subjects``."""
        if self.running:
            return self
        self._prepare()
        _write_auth(self.data_dir, self.user_info)
        self._process = start_and_wait(_command(self.host, self.port, self.data_dir), self._log_path,
                                       lambda: registry_answers(self.url, self.user_info),
                                       f"the local schema registry on {self.url}", timeout)
        return self

    def __repr__(self) -> str:
        return f"LocalSchemaRegistry({self.host}:{self.port}, {'running' if self.running else 'stopped'})"


def _state(state_dir: Path) -> StateFile:
    return StateFile(Path(state_dir), _STATE_FILE, _PROGRAM)


def _user_info(state_dir: Path) -> Optional[str]:
    try:
        return json.loads((Path(state_dir) / "data" / _AUTH_FILE).read_text())["user_info"]
    except (OSError, ValueError, KeyError):
        return None


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached server's state: ``{running, pid, port, url, basic_auth}`` (never the credentials)."""
    state, running = _state(state_dir).answering(
        lambda st: registry_answers(f"http://{st.get('host', '127.0.0.1')}:{st['port']}", _user_info(state_dir)))
    if not state:
        return {"running": False, "pid": None, "port": None, "url": None, "basic_auth": False}
    return {"running": running, "pid": state.get("pid"), "port": state.get("port"),
            "url": f"http://{state.get('host', '127.0.0.1')}:{state.get('port')}",
            "basic_auth": _user_info(state_dir) is not None}


def start_background(port: int = DEFAULT_PORT, state_dir: Path = DEFAULT_STATE_DIR, host: str = "127.0.0.1",
                     user_info: Optional[str] = None, timeout: float = 60) -> dict:
    """Start a detached registry that outlives this process (data in ``state_dir/data``); return its status."""
    state_dir = Path(state_dir)
    current = status(state_dir)
    if current["running"]:
        return {**current, "already_running": True}
    record = _state(state_dir)
    record.refuse_second("a local schema registry", "kindling local schema-registry stop")
    data = state_dir / "data"
    data.mkdir(parents=True, exist_ok=True)
    _write_auth(data, user_info)
    url = f"http://{host}:{port}"
    process = start_and_wait(_command(host, port, data), state_dir / _LOG_FILE,
                             lambda: registry_answers(url, user_info), f"the local schema registry on {url}",
                             timeout, detached=True)
    record.write({"pid": process.pid, "port": port, "host": host})
    return {**status(state_dir), "already_running": False}


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15) -> bool:
    """Stop the detached registry recorded in ``state_dir`` (only that pid); True if one was stopped."""
    return _state(state_dir).stop(timeout)


def main(argv: Optional[list[str]] = None) -> None:
    """``python -m kindling.local.schema_registry --host H --port P --data-dir D``: serve until terminated."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m kindling.local.schema_registry")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--data-dir", required=True)
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    auth = data_dir / _AUTH_FILE
    user_info = json.loads(auth.read_text())["user_info"] if auth.exists() else None
    uvicorn.run(create_app(data_dir, user_info), host=args.host, port=args.port, log_level="warning",
                access_log=False)


if __name__ == "__main__":
    main()
