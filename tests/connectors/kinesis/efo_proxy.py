"""A local proxy in front of kinesis-local that ends ``SubscribeToShard`` subscriptions early, as AWS does.

AWS ends every ``SubscribeToShard`` event stream after about 5 minutes, and the client subscribes again from
the last ``ContinuationSequenceNumber``; kinesis-local keeps a subscription open far longer than a test can
wait. :class:`SubscriptionProxy` relays kinesis-local's answers unchanged and only shortens subscriptions:

* ``mode="end"``: after ``messages`` complete event-stream messages the HTTP/2 stream ends cleanly
  (END_STREAM), exactly as AWS ends an expired subscription;
* ``mode="drop"``: after ``messages`` complete messages, the first half of the next one is sent and the TCP
  connection is closed without a GOAWAY (a network failure in the middle of an event).

One loopback port speaks both protocols, so a source's ``aws.endpoint`` can name it: a connection that opens
with the HTTP/2 preface (prior knowledge, h2c, as kindling's EFO client connects to an ``http://`` endpoint)
is served over HTTP/2 with the ``h2`` package, and every request on it is sent to kinesis-local over a
connection of its own (httpx, HTTP/2); any other connection (boto3's HTTP/1.1 API calls) is relayed to
kinesis-local byte for byte. A subscription's upstream connection is closed before the client sees its end;
kinesis-local notices at its next event (within a second) and until then answers a new subscription with
``ResourceInUseException``, as AWS does within 5 seconds of a successful call (the client retries it).

The proxy runs an asyncio loop in a daemon thread and counts, per shard, the subscriptions kinesis-local
accepted (``subscriptions``: the first message is an event), those it refused (``refused``: an error, e.g.
that ``ResourceInUseException``), those
the proxy ended or dropped (``cut``), and the records in messages it broke off (``withheld``: the client must
read them again from the next subscription); :meth:`SubscriptionProxy.wait_changed` wakes a test when a count
moves.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from typing import Any, Optional
from urllib.parse import urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import httpx
from botocore.eventstream import EventStreamBuffer

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SUBSCRIBE_TARGET = b"Kinesis_20131202.SubscribeToShard"
# Connection-specific header fields: HTTP/2 forbids them (RFC 9113, 8.2.2), so they are never relayed.
HOP_BY_HOP = {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade", b"te", b"host"}
PRELUDE = 12  # an event-stream message starts with its total length, its headers' length and a CRC
MODES = ("end", "drop")


class SubscriptionProxy:
    """An h2c + HTTP/1.1 proxy to ``upstream`` (kinesis-local) that ends each subscription after ``messages`` messages."""

    def __init__(self, upstream: str, messages: int = 3, mode: str = "end") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if messages < 1:
            raise ValueError("a subscription must relay at least one message, or the client would never progress")
        parts = urlsplit(upstream)
        self.upstream = upstream.rstrip("/")
        self._upstream_address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.messages, self.mode = messages, mode
        self.port = 0
        self.subscriptions: Counter[str] = Counter()  # shard -> SubscribeToShard requests kinesis-local accepted
        self.refused: Counter[str] = Counter()  # shard -> SubscribeToShard requests kinesis-local answered with an error
        self.cut: Counter[str] = Counter()  # shard -> subscriptions the proxy ended (or dropped)
        self.withheld: Counter[str] = Counter()  # shard -> records in the messages the proxy broke off (drop mode)
        self.errors: list[BaseException] = []  # failures of the proxy itself (not of a connection a peer closed)
        self._changed = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: Optional[asyncio.AbstractServer] = None
        self._tasks: set[asyncio.Task] = set()
        self._thread = threading.Thread(target=self._run, name="efo-subscription-proxy", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10) -> "SubscriptionProxy":
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"the subscription proxy did not listen within {timeout} s")
        return self

    def stop(self, timeout: float = 10) -> None:
        """Close the port and every connection, then end the loop's thread."""
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout)
            self._thread.join(timeout)

    def wait_changed(self, timeout: float) -> None:
        """Return when a count changes, or after ``timeout`` seconds."""
        with self._changed:
            self._changed.wait(timeout)

    def _count(self, counter: Counter[str], shard: str, amount: int = 1) -> None:
        with self._changed:
            counter[shard] += amount
            self._changed.notify_all()

    # ---------------------------------------------------------------------------------- the loop's thread

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._loop.call_soon(self._loop.stop)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = b""
            while len(head) < len(PREFACE) and PREFACE.startswith(head):
                chunk = await reader.read(len(PREFACE) - len(head))
                if not chunk:
                    return
                head += chunk
            if head == PREFACE:
                await _Http2Connection(self, reader, writer).serve(head)
            else:
                await self._pipe(head, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # a peer went away, or the proxy stops
        except Exception as exc:
            self.errors.append(exc)
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _pipe(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Relay an HTTP/1.1 connection to kinesis-local byte for byte, until either side closes it."""
        upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream_address)
        upstream_writer.write(head)

        async def copy(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                target.write(data)
                await target.drain()

        copies = [asyncio.ensure_future(copy(reader, upstream_writer)), asyncio.ensure_future(copy(upstream_reader, writer))]
        try:
            await asyncio.wait(copies, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for each in copies:
                each.cancel()
            await asyncio.gather(*copies, return_exceptions=True)
            upstream_writer.close()


class _Http2Connection:
    """One HTTP/2 connection from a client; each request on it is relayed to kinesis-local by a task of its own."""

    def __init__(self, proxy: SubscriptionProxy, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.proxy = proxy
        self.reader, self.writer = reader, writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        self.requests: dict[int, tuple[list[tuple[bytes, bytes]], bytearray]] = {}
        self.relays: dict[int, asyncio.Task] = {}
        self.credit: dict[int, asyncio.Event] = {}  # streams waiting for flow-control window
        self.dropped = False

    async def serve(self, head: bytes) -> None:
        self.h2.initiate_connection()
        try:
            events = self.h2.receive_data(head)
            while True:
                for event in events:
                    self._handle(event)
                await self.flush()
                data = await self.reader.read(65536)
                if not data:
                    return
                events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            if not self.dropped:
                raise
        finally:
            for relay in self.relays.values():
                relay.cancel()
            await asyncio.gather(*self.relays.values(), return_exceptions=True)

    def _handle(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            self.requests[event.stream_id] = (list(event.headers), bytearray())
        elif isinstance(event, h2.events.DataReceived):
            self.requests[event.stream_id][1].extend(event.data)
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            headers, body = self.requests.pop(event.stream_id)
            self.relays[event.stream_id] = asyncio.ensure_future(self._answer(event.stream_id, headers, bytes(body)))
        elif isinstance(event, h2.events.StreamReset):
            relay = self.relays.pop(event.stream_id, None)
            if relay is not None:
                relay.cancel()
        elif isinstance(event, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
            stream = getattr(event, "stream_id", 0)
            for waiting, credit in list(self.credit.items()):
                if stream in (0, waiting):
                    credit.set()

    async def flush(self) -> None:
        data = self.h2.data_to_send()
        if data and not self.dropped:
            self.writer.write(data)
            await self.writer.drain()

    async def send(self, stream: int, data: bytes) -> None:
        """DATA frames on ``stream``, within the client's flow-control window and frame size."""
        view = memoryview(data)
        while view:
            size = min(self.h2.local_flow_control_window(stream), self.h2.max_outbound_frame_size, len(view))
            if size <= 0:
                credit = self.credit[stream] = asyncio.Event()
                await credit.wait()
                del self.credit[stream]
                continue
            self.h2.send_data(stream, view[:size].tobytes())
            view = view[size:]
            await self.flush()

    async def _answer(self, stream: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        try:
            await self._relay(stream, headers, body)
        except (ConnectionError, h2.exceptions.StreamClosedError):
            pass  # the client went away, or reset the stream
        except Exception as exc:  # a failure of the proxy: the test reports it
            self.proxy.errors.append(exc)
            if not self.dropped:
                self.h2.reset_stream(stream, h2.errors.ErrorCodes.INTERNAL_ERROR)
                await self.flush()
        finally:
            self.relays.pop(stream, None)

    async def _relay(self, stream: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        """Send one request to kinesis-local and its answer back; a subscription's answer is cut short."""
        fields = dict(headers)
        forward = [(name, value) for name, value in headers if not name.startswith(b":") and name.lower() not in HOP_BY_HOP]
        forward.append((b"host", fields.get(b":authority", b"")))
        subscribe = fields.get(b"x-amz-target") == SUBSCRIBE_TARGET
        shard = str(json.loads(body).get("ShardId", "")) if subscribe else ""
        url = self.proxy.upstream + fields[b":path"].decode()
        cut: Optional[bytes] = None  # what remains to send once the upstream subscription is closed
        async with httpx.AsyncClient(http1=False, http2=True, timeout=httpx.Timeout(30.0, read=None)) as upstream:
            async with upstream.stream(fields[b":method"].decode(), url, headers=forward, content=body) as response:
                self.h2.send_headers(stream, [(b":status", str(response.status_code).encode())] + [
                    (name, value) for name, value in response.headers.raw if name.lower() not in HOP_BY_HOP])
                await self.flush()
                if subscribe and response.status_code == 200:
                    cut = await self._relay_events(stream, shard, response)
                else:
                    if subscribe:
                        self.proxy._count(self.proxy.refused, shard)
                    async for chunk in response.aiter_raw():
                        await self.send(stream, chunk)
        # The upstream connection is closed: kinesis-local has ended its side of the subscription.
        if cut is not None and self.proxy.mode == "drop":
            await self.send(stream, cut)
            await self.drop()
        else:
            self.h2.end_stream(stream)
            await self.flush()
        if cut is not None:
            self.proxy._count(self.proxy.cut, shard)

    async def _relay_events(self, stream: int, shard: str, response: httpx.Response) -> Optional[bytes]:
        """Relay whole event-stream messages until ``messages`` were sent; then return what the client gets
        before the cut: nothing more (``end``), or the first half of the next message (``drop``). None when
        kinesis-local ended the stream itself (a refused subscription: its first message is an exception)."""
        pending = bytearray()
        relayed = 0
        accepted: Optional[bool] = None
        async for chunk in response.aiter_raw():
            pending.extend(chunk)
            while len(pending) >= PRELUDE and len(pending) >= int.from_bytes(pending[:4], "big"):
                size = int.from_bytes(pending[:4], "big")
                message = bytes(pending[:size])
                del pending[:size]
                decoded = _decode(message)
                if accepted is None:
                    accepted = decoded.headers.get(":message-type") == "event"
                    self.proxy._count(self.proxy.subscriptions if accepted else self.proxy.refused, shard)
                if accepted and relayed == self.proxy.messages:  # only in drop mode: the message to break off
                    if decoded.headers.get(":event-type") == "SubscribeToShardEvent":
                        self.proxy._count(self.proxy.withheld, shard, len(json.loads(decoded.payload).get("Records") or ()))
                    return message[:size // 2]
                await self.send(stream, message)
                relayed += 1
                if accepted and relayed == self.proxy.messages and self.proxy.mode == "end":
                    return b""
        await self.send(stream, bytes(pending))
        return None

    async def drop(self) -> None:
        """End the connection (TCP FIN) once what was sent reached the socket: no GOAWAY, no end of stream. The
        client finds it closed in the middle of a message and closes its side, which ends :meth:`serve`."""
        transport: Any = self.writer.transport
        transport.set_write_buffer_limits(high=0)  # drain() now returns only once every byte is in the kernel
        await self.writer.drain()
        self.dropped = True
        self.writer.write_eof()  # FIN after the half message; the client sees the connection end mid-event


def _decode(message: bytes) -> Any:
    """The one event-stream message in ``message``, read (and its CRCs checked) by botocore's decoder."""
    decoder = EventStreamBuffer()
    decoder.add_data(message)
    decoded = list(decoder)
    assert len(decoded) == 1, "kinesis-local sent a malformed event-stream message"
    return decoded[0]
