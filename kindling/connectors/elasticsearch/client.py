"""The search client of a sink: the official ``elasticsearch`` 8.x client, or ``opensearch-py`` for OpenSearch
(the Elasticsearch client refuses servers that are not Elasticsearch), built from Flink's connection options,
and the first request that checks hosts and credentials before a job starts."""

from __future__ import annotations

from typing import Any

from kindling.connectors.elasticsearch.options import SinkConfig
from kindling.options import OptionError

DEFAULT_TIMEOUT_S = 60.0


def _timeout(config: SinkConfig) -> float:
    """One timeout for the whole request: the Python clients have no separate connect/socket/pool timeouts, so the
    largest of the three options (each a real duration) bounds a request; 60 s when none is set."""
    given = [t for t in (config.connect_timeout_s, config.socket_timeout_s, config.request_timeout_s) if t]
    return max(given) if given else DEFAULT_TIMEOUT_S


def make_client(config: SinkConfig) -> Any:
    """A client for the configured hosts, path prefix, basic auth and fingerprint; the client never retries by itself
    (the sink's backoff decides)."""
    timeout = _timeout(config)
    if config.flavor.client == "opensearch":
        from opensearchpy import OpenSearch

        nodes = [{"host": h.host, "port": h.port, "scheme": h.scheme, **({"url_prefix": config.path_prefix} if config.path_prefix else {})}
                 for h in config.hosts]
        kwargs: dict[str, Any] = {"hosts": nodes, "timeout": timeout, "max_retries": 0, "retry_on_timeout": False,
                                  "use_ssl": any(h.scheme == "https" for h in config.hosts)}
        if config.username:
            kwargs["http_auth"] = (config.username, config.password)
        if config.fingerprint:
            kwargs["ssl_assert_fingerprint"] = config.fingerprint
        return OpenSearch(**kwargs)
    from elasticsearch import Elasticsearch

    nodes = [{"scheme": h.scheme, "host": h.host, "port": h.port, **({"path_prefix": config.path_prefix} if config.path_prefix else {})}
             for h in config.hosts]
    kwargs = {"hosts": nodes, "request_timeout": timeout, "max_retries": 0, "retry_on_timeout": False}
    if config.username:
        kwargs["basic_auth"] = (config.username, config.password)
    if config.fingerprint:
        kwargs["ssl_assert_fingerprint"] = config.fingerprint
    return Elasticsearch(**kwargs)


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
        if name == "UnsupportedProductError":
            raise OptionError(f"{config.flavor.name} sink: the server at option 'hosts' = '{hosts}' is not Elasticsearch "
                              "(the client's product check failed); for OpenSearch use 'connector' = 'opensearch'") from None
        if status is None:
            raise OptionError(f"{config.flavor.name} sink: cannot reach option 'hosts' = '{hosts}': {name}: "
                              f"{_short(exc)}") from None
        raise OptionError(f"{config.flavor.name} sink: {hosts} (option 'hosts') answered HTTP {status}: {_short(exc)}") from None
    finally:
        client.close()


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
