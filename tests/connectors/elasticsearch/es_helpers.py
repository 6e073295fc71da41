"""Helpers for the Elasticsearch / OpenSearch sink tests: clients, index reads, a counting (and TLS-terminating)
proxy, and a throwaway certificate authority."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import http.client
import ipaddress
import json
import ssl
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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


@dataclass(frozen=True)
class Certificates:
    """A CA and a server certificate for 127.0.0.1 signed by it, as PEM files, and their SHA-256 fingerprints."""

    ca: Path  # the CA certificate (what 'kindling.ssl.ca-certificate' takes)
    chain: Path  # the server certificate followed by the CA's, as a server sends them
    key: Path  # the server's private key
    ca_fingerprint: str  # hex, upper case, with ':' as Elasticsearch prints it
    server_fingerprint: str


def _fingerprint(pem: bytes) -> str:
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem.decode())).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def make_certificates(directory: Path) -> Certificates:
    """A throwaway CA and a server certificate (SAN IP 127.0.0.1, DNS localhost), with the ``cryptography`` package
    when it is installed, else with the ``openssl`` command."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, chain, key = directory / "ca.pem", directory / "server-chain.pem", directory / "server-key.pem"
    try:
        ca_pem, server_pem, key_pem = _certificates_with_cryptography()
    except ImportError:
        ca_pem, server_pem, key_pem = _certificates_with_openssl(directory)
    ca.write_bytes(ca_pem)
    chain.write_bytes(server_pem + ca_pem)
    key.write_bytes(key_pem)
    return Certificates(ca, chain, key, _fingerprint(ca_pem), _fingerprint(server_pem))


def _certificates_with_cryptography() -> tuple[bytes, bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.timezone.utc)
    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kindling test CA")])
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
               .not_valid_after(now + dt.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False, key_agreement=False,
                                            encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
               .sign(ca_key, hashes.SHA256()))
    server_cert = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])).issuer_name(ca_name)
                   .public_key(server_key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                               x509.DNSName("localhost")]), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
                   .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    key_pem = server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca_cert.public_bytes(pem), server_cert.public_bytes(pem), key_pem


def _certificates_with_openssl(directory: Path) -> tuple[bytes, bytes, bytes]:
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)

    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=kindling test CA", "-keyout", "ca-key.pem", "-out", "ca-only.pem",
            "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "server-only-key.pem", "-out", "server.csr")
    (directory / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n"
                                          "extendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca-only.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
            "-days", "1", "-extfile", "server.ext", "-out", "server-only.pem")
    return ((directory / "ca-only.pem").read_bytes(), (directory / "server-only.pem").read_bytes(),
            (directory / "server-only-key.pem").read_bytes())


def _rejected_items(data: bytes, count: int) -> bytes:
    """A bulk response with its first ``count`` items turned into HTTP 429 rejections (a full write queue)."""
    response = json.loads(data)
    for entry in response.get("items", [])[:count]:
        operation, outcome = next(iter(entry.items()))
        entry[operation] = {"_index": outcome.get("_index"), "_id": outcome.get("_id"), "status": 429,
                            "error": {"type": "es_rejected_execution_exception",
                                      "reason": "rejected execution of coordinating operation [test proxy]"}}
    response["errors"] = True
    return json.dumps(response).encode()


def action_ids(body: bytes) -> list[Optional[str]]:
    """The document id of every action of a bulk body (None for an index action without one)."""
    ids = []
    for line in body.split(b"\n"):
        if line.startswith((b'{"index"', b'{"update"', b'{"delete"')):
            ids.append(next(iter(json.loads(line).values())).get("_id"))
    return ids


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    tls: Optional[ssl.SSLContext] = None

    def get_request(self):  # type: ignore[no-untyped-def]
        sock, address = super().get_request()
        if self.tls is not None:  # the handshake happens in the handler's thread, on the first read
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        """A client that gives up on the handshake (a wrong fingerprint) is expected: no traceback."""


class BulkProxy:
    """A local HTTP proxy in front of a real search server: counts ``_bulk`` requests (and their action counts,
    sizes and document ids), answers 429 to the next N bulk requests on demand (``reject_next``), turns the first
    items of the next real bulk responses into 429 rejections (``reject_items_next``: one count per response), can
    require basic auth, and with ``certificates`` speaks https (TLS ends here; the server behind is plain http)."""

    def __init__(self, target_url: str, credentials: Optional[tuple[str, str]] = None,
                 certificates: Optional[Certificates] = None) -> None:
        target = target_url.split("://", 1)[1]
        self.target_host, port = target.split(":")
        self.target_port = int(port)
        self.credentials = credentials
        self.bulk_requests: list[tuple[int, int]] = []  # (actions, bytes)
        self.bulk_ids: list[list[Optional[str]]] = []  # the document ids of each bulk request
        self.bulk_times: list[float] = []  # time.monotonic() when each bulk request arrived
        self.reject_next = 0
        self.reject_items_next: list[int] = []
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
                reject_items = 0
                if "_bulk" in self.path:
                    ids = action_ids(body)
                    with proxy.lock:
                        proxy.bulk_requests.append((len(ids), len(body)))
                        proxy.bulk_ids.append(ids)
                        proxy.bulk_times.append(time.monotonic())
                        reject = proxy.reject_next > 0
                        if reject:
                            proxy.reject_next -= 1
                        elif proxy.reject_items_next:
                            reject_items = proxy.reject_items_next.pop(0)
                        proxy.changed.notify_all()
                    if reject:
                        self._answer(429, b'{"error":{"type":"es_rejected_execution_exception","reason":"rejected"},"status":429}')
                        return
                connection = http.client.HTTPConnection(proxy.target_host, proxy.target_port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization", "connection")}
                connection.request(self.command, self.path, body=body or None, headers=headers)
                response = connection.getresponse()
                data = response.read()
                if reject_items and response.status == 200:
                    data = _rejected_items(data, reject_items)
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

        self.server = _ProxyServer(("127.0.0.1", 0), Handler)
        if certificates is not None:
            self.server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.server.tls.load_cert_chain(certificates.chain, certificates.key)
        scheme = "https" if certificates is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
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
