"""Helpers for the Elasticsearch / OpenSearch sink tests: clients, index reads, a counting proxy."""

from __future__ import annotations

import base64
import http.client
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional


def client_for(server) -> Any:
    """The flavor's own client for a local server (LocalElasticsearch or LocalOpenSearch)."""
    if type(server).__name__ == "LocalOpenSearch":
        from opensearchpy import OpenSearch

        return OpenSearch(server.url)
    from elasticsearch import Elasticsearch

    return Elasticsearch(server.url)


def connector_for(server) -> str:
    return "opensearch" if type(server).__name__ == "LocalOpenSearch" else "elasticsearch-7"


def fresh_index(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def documents(server, index: str) -> dict[str, dict]:
    """Every document of an index (or pattern) by id, after a refresh."""
    client = client_for(server)
    client.indices.refresh(index=index)
    response = client.search(index=index, body={"query": {"match_all": {}}, "size": 10000})
    hits = getattr(response, "body", response)["hits"]["hits"]
    return {hit["_id"]: hit["_source"] for hit in hits}


def indexed_sources(server, index: str) -> list[dict]:
    return list(documents(server, index).values())


class BulkProxy:
    """A local HTTP proxy in front of a real search server: counts ``_bulk`` requests (and their action counts
    and sizes), answers 429 to the next N bulk requests on demand, and can require basic auth."""

    def __init__(self, target_url: str, credentials: Optional[tuple[str, str]] = None) -> None:
        target = target_url.split("://", 1)[1]
        self.target_host, port = target.split(":")
        self.target_port = int(port)
        self.credentials = credentials
        self.bulk_requests: list[tuple[int, int]] = []  # (actions, bytes)
        self.reject_next = 0
        self.reject_items_next = 0
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if proxy.credentials is not None:
                    expected = "Basic " + base64.b64encode(":".join(proxy.credentials).encode()).decode()
                    if self.headers.get("Authorization") != expected:
                        self._answer(401, b'{"error":{"type":"security_exception","reason":"unable to authenticate"},"status":401}')
                        return
                if "_bulk" in self.path:
                    actions = sum(1 for line in body.split(b"\n") if line.startswith((b'{"index"', b'{"update"', b'{"delete"')))
                    with proxy.lock:
                        proxy.bulk_requests.append((actions, len(body)))
                        reject = proxy.reject_next > 0
                        if reject:
                            proxy.reject_next -= 1
                        proxy.changed.notify_all()
                    if reject:
                        self._answer(429, b'{"error":{"type":"es_rejected_execution_exception","reason":"rejected"},"status":429}')
                        return
                connection = http.client.HTTPConnection(proxy.target_host, proxy.target_port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization", "connection")}
                connection.request(self.command, self.path, body=body or None, headers=headers)
                response = connection.getresponse()
                data = response.read()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                connection.close()

            def _answer(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Elastic-Product", "Elasticsearch")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "BulkProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for_bulk(self, count: int, timeout: float = 30) -> None:
        """Wait until at least ``count`` bulk requests arrived (a condition with a deadline, no sleeps)."""
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.bulk_requests) >= count, timeout):
                raise TimeoutError(f"only {len(self.bulk_requests)} of {count} bulk requests arrived in {timeout} s")
