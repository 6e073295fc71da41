"""The search client of a sink: the official ``elasticsearch`` 8.x client, or ``opensearch-py`` for OpenSearch
(the Elasticsearch client refuses servers that are not Elasticsearch), built from Flink's connection options,
and the first request that checks hosts and credentials before a job starts."""

from __future__ import annotations

import hashlib
import ssl
from typing import Any

from kindling.connectors.elasticsearch.options import CA_CERTIFICATE, SinkConfig
from kindling.options import OptionError

DEFAULT_TIMEOUT_S = 60.0


def _timeout(config: SinkConfig) -> float:
    """One timeout for the whole request: the Python clients have no separate connect/socket/pool timeouts, so the
    largest of the three options (each a real duration) bounds a request; 60 s when none is set."""
    given = [t for t in (config.connect_timeout_s, config.socket_timeout_s, config.request_timeout_s) if t]
    return max(given) if given else DEFAULT_TIMEOUT_S


def _ssl_context(config: SinkConfig) -> ssl.SSLContext:
    """https trust: the CA certificates of ``kindling.ssl.ca-certificate`` (hostname checked), or -- with
    ``ssl.certificate-fingerprint`` -- no chain check, the client pinning the fingerprint instead."""
    if config.fingerprint:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return ssl.create_default_context(cadata=config.ca_certificates)


def make_client(config: SinkConfig) -> Any:
    """A client for the configured hosts, path prefix, basic auth and https trust (a CA file or a fingerprint); the
    client never retries by itself (the sink's backoff decides)."""
    timeout = _timeout(config)
    tls: dict[str, Any] = {}
    if config.flavor.client == "opensearch":
        from opensearchpy import OpenSearch

        nodes = [{"host": h.host, "port": h.port, "scheme": h.scheme, **({"url_prefix": config.path_prefix} if config.path_prefix else {})}
                 for h in config.hosts]
        if config.https and (config.fingerprint or config.ca_certificates):
            tls = {"ssl_context": _ssl_context(config), "ssl_assert_fingerprint": _hex(config.fingerprint)}
        kwargs: dict[str, Any] = {"hosts": nodes, "timeout": timeout, "max_retries": 0, "retry_on_timeout": False,
                                  "use_ssl": config.https, **tls}
        if config.username:
            kwargs["http_auth"] = (config.username, config.password)
        return OpenSearch(**kwargs)
    from elasticsearch import Elasticsearch

    nodes = [{"scheme": h.scheme, "host": h.host, "port": h.port, **({"path_prefix": config.path_prefix} if config.path_prefix else {})}
             for h in config.hosts]
    if config.https and config.fingerprint:
        tls = {"ssl_assert_fingerprint": _hex(config.fingerprint)}  # matched against every certificate of the chain
    elif config.https and config.ca_certificates:
        tls = {"ssl_context": _ssl_context(config)}
    kwargs = {"hosts": nodes, "request_timeout": timeout, "max_retries": 0, "retry_on_timeout": False, **tls}
    if config.username:
        kwargs["basic_auth"] = (config.username, config.password)
    return Elasticsearch(**kwargs)


def _hex(fingerprint: str | None) -> str | None:
    """A SHA-256 fingerprint as the clients compare it: hex digits, without ':' or spaces."""
    return fingerprint.replace(":", "").replace(" ", "").lower() if fingerprint else None


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a client error (both clients), or None for a connection failure."""
    meta = getattr(exc, "meta", None)
    if meta is not None and getattr(meta, "status", None):
        return int(meta.status)
    code = getattr(exc, "status_code", None)
    return int(code) if isinstance(code, int) else None


def check_connection(config: SinkConfig) -> None:
    """``GET /`` with the sink's settings; an error naming the option to fix (hosts, credentials, path prefix)."""
    hosts = ";".join(h.url for h in config.hosts)
    client = make_client(config)
    try:
        client.info()
    except Exception as exc:  # both clients' errors; classified by HTTP status
        status = status_of(exc)
        name = type(exc).__name__
        if status == 401:
            raise OptionError(f"{config.flavor.name} sink: {hosts} refused the credentials of options 'username' and "
                              f"'password' (HTTP 401)") from None
        if status == 403:
            raise OptionError(f"{config.flavor.name} sink: user '{config.username}' (option 'username') may not read "
                              f"the cluster info of {hosts} (HTTP 403)") from None
        if status == 404 and config.path_prefix:
            raise OptionError(f"{config.flavor.name} sink: {hosts} answers 404 under option 'connection.path-prefix' = "
                              f"'{config.path_prefix}'") from None
        tls = _tls_problem(config, exc)
        if tls is not None:
            raise OptionError(tls) from None
        if name == "UnsupportedProductError":
            raise OptionError(f"{config.flavor.name} sink: the server at option 'hosts' = '{hosts}' is not Elasticsearch "
                              "(the client's product check failed); for OpenSearch use 'connector' = 'opensearch'") from None
        if status is None:
            raise OptionError(f"{config.flavor.name} sink: cannot reach option 'hosts' = '{hosts}': {name}: "
                              f"{_short(exc)}") from None
        raise OptionError(f"{config.flavor.name} sink: {hosts} (option 'hosts') answered HTTP {status}: {_short(exc)}") from None
    finally:
        client.close()


def _tls_problem(config: SinkConfig, exc: BaseException) -> str | None:
    """A message naming the https option to fix when the connection failed on the server's certificate."""
    text = " ".join(str(e) for e in _causes(exc)).lower()
    hosts = ";".join(h.url for h in config.hosts)
    label = f"{config.flavor.name} sink"
    if config.fingerprint and "fingerprint" in text:
        seen = _server_fingerprint(config)
        return (f"{label}: no certificate of {hosts} matches option 'ssl.certificate-fingerprint' = '{config.fingerprint}'"
                + (f" (the server's certificate has SHA-256 fingerprint {seen})" if seen else ""))
    if "certificate verify failed" in text or "certificate_verify_failed" in text:
        if config.ca_certificates:
            return (f"{label}: the https certificate of {hosts} is not signed by the CA of option '{CA_CERTIFICATE}', or "
                    "does not name the host ('certificate verify failed')")
        return (f"{label}: the https certificate of {hosts} (option 'hosts') is not trusted by the system's CAs; give its CA "
                f"in option '{CA_CERTIFICATE}' (a PEM file) or its fingerprint in 'ssl.certificate-fingerprint'")
    if any(h.scheme == "https" for h in config.hosts) and ("wrong version number" in text or "ssl" in text and "record" in text):
        return f"{label}: {hosts} (option 'hosts') does not speak https ({_short(exc)})"
    return None


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception, its causes and contexts, and the errors a client error wraps (``errors``)."""
    seen: list[BaseException] = []
    pending = [exc]
    while pending and len(seen) < 20:
        current = pending.pop()
        if current in seen:
            continue
        seen.append(current)
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
        pending += [e for e in getattr(current, "errors", ()) or () if isinstance(e, BaseException)]
        info = getattr(current, "info", None)
        if isinstance(info, BaseException):
            pending.append(info)
    return seen


def _server_fingerprint(config: SinkConfig) -> str | None:
    """The SHA-256 fingerprint of the first https host's certificate (for the message), or None if unreachable."""
    host = next(h for h in config.hosts if h.scheme == "https")
    try:
        pem = ssl.get_server_certificate((host.host, host.port), timeout=5)
    except OSError:
        return None
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
