"""Enhanced fan-out (EFO) for the Kinesis source: the stream consumer, and ``SubscribeToShard`` over HTTP/2.

Kinesis serves ``SubscribeToShard`` over HTTP/2 only, which botocore cannot speak; kindling signs the
request with botocore's SigV4 and sends it with httpx's HTTP/2 client (the ``h2`` package), then reads the
response's ``application/vnd.amazon.eventstream`` messages with botocore's event-stream decoder.

* **Consumer** (``scan.stream.efo.registration`` / ``source.efo.lifecycle``): ``LAZY`` and ``EAGER`` (and
  5.x ``JOB_MANAGED``) find the consumer named by ``scan.stream.efo.consumername`` on the stream, register
  it when it is missing and wait until it is ACTIVE. ``NONE`` uses ``scan.stream.efo.consumerarn.<stream>``
  (or, for 5.x ``SELF_MANAGED``, the named consumer, which must exist). Flink registers LAZY consumers from
  every subtask and EAGER ones from the client; kindling's driver is both, so EAGER registers when the
  source is created and LAZY when it first reads. When the job ends FINISHED or CANCELED, the job layer
  deregisters a consumer the source registered (``KinesisConnector.on_job_end``), since Spark ends the
  source's Python runner without letting its ``stop()`` call Kinesis. After a crash it stays, as in
  Flink, and the next start reuses it.
* **Subscriptions**: one thread per shard holds a subscription (Kinesis ends each after about 5 minutes)
  and renews it from the last continuation sequence number; records collect in the thread until the
  driver takes them for a micro-batch. A failed subscription is retried with Flink's back-off
  (``scan.shard.subscribetoshard.*``); ``ResourceInUseException`` (the previous subscription still
  closing) is always retried. ``maxretries`` bounds failures with no event in between: a subscription that
  fails after it delivered events counts as the first failure again, so a shard that keeps reading is not
  failed by connections that drop now and then (Flink 5.x retries a broken connection without limit; 1.x
  counts failures until a subscription ends normally). The event that ends a closed shard carries its
  child shards.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import threading
import time
from typing import Any, Optional

from kindling.connectors.kinesis.aws import RequestSigner, arrival_ms, error_code, kinesis_client
from kindling.connectors.kinesis.options import SourceConfig
from kindling.options import OptionError

log = logging.getLogger("kindling.connectors.kinesis")

# Records a subscription holds before it stops reading until the driver takes them.
MAX_HELD = 100_000
_AFTER, _AT_TIMESTAMP = "AFTER:", "AT_TIMESTAMP:"


def _stream_arn(config: SourceConfig, client: Any) -> str:
    return config.stream_arn or client.describe_stream_summary(StreamName=config.stream)["StreamDescriptionSummary"]["StreamARN"]


def consumer_arn(config: SourceConfig, client: Any, context: str) -> str:
    """The ARN of the consumer to read with, registered first when the strategy allows and it is missing."""
    if config.efo_consumer_arn:
        return config.efo_consumer_arn
    stream_arn = _stream_arn(config, client)
    name = config.efo_consumer_name
    try:
        found = client.describe_stream_consumer(StreamARN=stream_arn, ConsumerName=name)["ConsumerDescription"]
    except Exception as exc:
        if error_code(exc) != "ResourceNotFoundException":
            raise
        if config.efo_registration == "NONE":
            raise OptionError(f"{context}: no stream consumer named {name!r} is registered on stream {config.stream!r}; "
                              "register it, or let the source do it ('source.efo.lifecycle' = 'JOB_MANAGED')") from None
        found = client.register_stream_consumer(StreamARN=stream_arn, ConsumerName=name)["Consumer"]
        log.info("%s: registered stream consumer %r on stream %r", context, name, config.stream)
    arn = found["ConsumerARN"]
    deadline = time.monotonic() + 300
    while found.get("ConsumerStatus") != "ACTIVE":
        if time.monotonic() > deadline:
            raise RuntimeError(f"{context}: stream consumer {name!r} is not ACTIVE after 300 s ({found.get('ConsumerStatus')})")
        time.sleep(1.0)  # DescribeStreamConsumer allows 20 calls/s per stream: Flink polls it with back-off too
        found = client.describe_stream_consumer(ConsumerARN=arn)["ConsumerDescription"]
    return arn


def deregister_consumer(config: SourceConfig, context: str) -> None:
    """Deregister the consumer named by the options, if it is registered (the job that registered it ended)."""
    client = kinesis_client(config.aws, context)
    stream_arn = _stream_arn(config, client)
    try:
        client.deregister_stream_consumer(StreamARN=stream_arn, ConsumerName=config.efo_consumer_name)
        log.info("%s: deregistered stream consumer %r of stream %r", context, config.efo_consumer_name, config.stream)
    except Exception as exc:
        if error_code(exc) != "ResourceNotFoundException":  # already gone: nothing to do
            raise


class SubscribeError(RuntimeError):
    """A SubscribeToShard request or event stream failed; ``code`` is the Kinesis error type."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class Http2Signer(RequestSigner):
    """Signed HTTP/2 ``SubscribeToShard`` requests to the source's endpoint, with the source's credentials."""

    def connection(self) -> Any:
        """An HTTP/2 client for one subscription: prior knowledge (h2c) on a plain http:// endpoint, ALPN on
        https:// (AWS). One per shard: httpx's synchronous client stalls the other streams of a connection
        while one thread waits on its long-lived event stream."""
        import httpx

        return httpx.Client(http1=False, http2=True, verify=self.verify, timeout=httpx.Timeout(30.0, read=60.0))

    def request(self, body: bytes) -> tuple[str, dict[str, str]]:
        return self.signed("SubscribeToShard", body)


def starting_position(position: str) -> dict[str, Any]:
    """SubscribeToShard's StartingPosition for a source position (TRIM_HORIZON, AT_TIMESTAMP:ms, AFTER:seq)."""
    if position.startswith(_AFTER):
        return {"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": position[len(_AFTER):]}
    if position.startswith(_AT_TIMESTAMP):
        return {"Type": "AT_TIMESTAMP", "Timestamp": int(position[len(_AT_TIMESTAMP):]) / 1000.0}
    return {"Type": "TRIM_HORIZON"}


class ShardSubscription:
    """One shard read through SubscribeToShard from ``position`` on, renewed until the shard ends or it is closed."""

    def __init__(self, signer: Http2Signer, consumer: str, shard: str, position: str,
                 retry: tuple[int, int, int, float]) -> None:
        self.signer, self.consumer, self.shard = signer, consumer, shard
        self.retry = retry
        self._position = position  # where a renewed subscription continues
        self._delivered = False  # the current subscription delivered an event: its failure is a first one
        self._records: list[tuple[str, bytes, int]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self.ended = False  # the shard is closed and every record is taken or held here
        self.caught_up = False
        self.error: Optional[BaseException] = None
        threading.Thread(target=self._run, name=f"kinesis-efo-{shard}", daemon=True).start()

    def take(self) -> tuple[list[tuple[str, bytes, int]], bool, bool]:
        """The records received since the last take, whether the shard ended, whether it is caught up."""
        if self.error is not None:
            raise self.error
        with self._lock:
            records, self._records = self._records, []
            return records, self.ended, self.caught_up

    def close(self) -> None:
        self._closed.set()

    def _run(self) -> None:
        with self.signer.connection() as http:
            self._subscriptions(http)

    def _subscriptions(self, http: Any) -> None:
        failures = 0
        while not self._closed.is_set() and not self.ended:
            self._delivered = False
            try:
                self._subscribe(http)
                failures = 0
            except SubscribeError as exc:
                if exc.code != "ResourceInUseException":
                    failures = 1 if self._delivered else failures + 1
                if exc.code in ("ResourceNotFoundException", "InvalidArgumentException", "AccessDeniedException") \
                        or failures > self.retry[0]:
                    self.error = exc
                    return
                self._back_off(failures)
            except Exception as exc:  # connection errors: retried like Flink's recoverable errors
                failures = 1 if self._delivered else failures + 1
                if failures > self.retry[0]:
                    self.error = RuntimeError(f"SubscribeToShard on shard {self.shard} failed: {type(exc).__name__}: {exc}")
                    return
                self._back_off(failures)

    def _back_off(self, failures: int) -> None:
        _, base, cap, expconst = self.retry
        self._closed.wait(random.uniform(0, min(cap, base * (expconst ** max(0, failures - 1)))) / 1000.0)

    def _subscribe(self, http: Any) -> None:
        from botocore.eventstream import EventStreamBuffer

        body = json.dumps({"ConsumerARN": self.consumer, "ShardId": self.shard,
                           "StartingPosition": starting_position(self._position)}).encode()
        url, headers = self.signer.request(body)
        with http.stream("POST", url, content=body, headers=headers) as response:
            if response.status_code != 200:
                text = response.read().decode("utf-8", "replace")
                try:
                    detail = json.loads(text)
                    code = str(detail.get("__type", "")).rsplit("#", 1)[-1] or f"HTTP {response.status_code}"
                    message = detail.get("message") or detail.get("Message") or text
                except ValueError:
                    code, message = f"HTTP {response.status_code}", text
                raise SubscribeError(code, message)
            messages = EventStreamBuffer()
            for chunk in response.iter_bytes():
                messages.add_data(chunk)
                for message in messages:
                    self._event(message)
                if self._closed.is_set() or self.ended:
                    return

    def _event(self, message: Any) -> None:
        headers = message.headers
        kind = headers.get(":message-type")
        if kind in ("exception", "error"):
            code = headers.get(":exception-type") or headers.get(":error-code") or "SubscribeToShardError"
            raise SubscribeError(code, message.payload.decode("utf-8", "replace"))
        if headers.get(":event-type") != "SubscribeToShardEvent":
            return  # initial-response
        event = json.loads(message.payload)
        records = [(r["SequenceNumber"], base64.b64decode(r["Data"]), arrival_ms(r["ApproximateArrivalTimestamp"]))
                   for r in event.get("Records") or ()]
        self._delivered = True
        while len(self._records) > MAX_HELD and not self._closed.is_set():
            self._closed.wait(0.05)  # the driver has not taken the records yet: hold the stream back
        continuation = event.get("ContinuationSequenceNumber")
        with self._lock:
            self._records.extend(records)
            self.caught_up = not records and int(event.get("MillisBehindLatest") or 0) == 0
            if continuation is None:
                self.ended = True  # the shard is closed: its children are in event["ChildShards"]
            else:
                self._position = _AFTER + continuation
