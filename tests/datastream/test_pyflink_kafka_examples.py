"""The wheel's Kafka examples and its streaming word count run unchanged through ``kindling run``.

The Kafka examples (pyflink_examples.RUNNABLE, kind "kafka") hard-code a broker at ``localhost:9092``:
this module starts kindling's local broker on that port (and is skipped, saying so, if something
else has it). Each example runs as ``kindling run program > out.txt`` runs it, unchanged. Those reading
with a KafkaSource never end (an unbounded read), so such a run is stopped (its process group: the driver,
its JVM and Python workers) once it has printed as many lines as PyFlink did and the topic holds as many
messages as Flink's, SETTLE_S later so that extra lines would show; a program that only writes must end
by itself, with status 0. Then:

* the printed lines are compared with PyFlink's as test_pyflink_examples.py compares them (a multiset,
  subtask prefixes removed, their presence compared);
* the topic's messages, read with a plain Kafka client, are compared byte for byte (keys and values,
  as a multiset: which partition a message lands in, and so the order across partitions, is the
  sink's choice) with the messages Flink's own schemas make of the same records (``*.messages.json``).

PyFlink cannot run these examples here (its Kafka connector jar is not in the wheel); the references
are PyFlink's output of stand-ins (pyflink_stand_ins/) that put the same records through Flink's
schemas. ``streaming_word_count.py`` (kind "structure") reads a random datagen table forever: its
first printed lines are checked for the shape PyFlink's have (see ``word_count_shape``), the same
check being applied to PyFlink's recorded lines.
"""

from __future__ import annotations

import ast
import gc
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Optional

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from pyflink_examples import RUNNABLE, examples_dir, messages_reference_name, reference_dir  # noqa: E402
from test_pyflink_examples import ROOT, SUBTASK, comparable, expected_lines, program_lines  # noqa: E402

pytestmark = pytest.mark.integration

KAFKA_EXAMPLES = [p for p, kind in RUNNABLE.items() if kind == "kafka"]
STRUCTURE_EXAMPLES = [p for p, kind in RUNNABLE.items() if kind == "structure"]
PORT = 9092  # what the examples hard-code
SETTLE_S = 5.0  # how long a run goes on after printing the expected lines, for extra lines to show
DEADLINE_S = 600.0
WORD_COUNT_LINES = 25  # records of streaming_word_count.py checked (5 random words a second)


def port_taken(port: int) -> Optional[str]:
    """Why ``localhost:port`` cannot be this module's broker, or None if it is free."""
    for family, kind, proto, _, address in socket.getaddrinfo("localhost", port, type=socket.SOCK_STREAM):
        with socket.socket(family, kind, proto) as probe:
            probe.settimeout(1.0)
            if probe.connect_ex(address) == 0:
                return f"something already listens on localhost:{port} ({address[0]})"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return f"127.0.0.1:{port} cannot be bound: {exc}"
    return None


@pytest.fixture(scope="module")
def kafka_9092(tmp_path_factory):
    """kindling's local Kafka broker on localhost:9092, where the wheel's examples look for one; skips if the port is taken
    (a broker of someone else's is not this test's to write topics into)."""
    from kindling.local.kafka import LocalKafka

    taken = port_taken(PORT)
    if taken:
        pytest.skip(f"the wheel's Kafka examples hard-code localhost:{PORT}, and {taken}")
    broker = LocalKafka(port=PORT, data_dir=tmp_path_factory.mktemp("kafka9092"))
    broker.start()
    yield broker
    gc.collect()  # drop Kafka clients while the broker still answers
    broker.stop()


class Run:
    """A ``kindling run`` of a program: its exit status (None if it was stopped), what it printed, its standard error."""

    def __init__(self, returncode: Optional[int], stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_kindling_until(program: Path, cwd: Path, until: Optional[Callable[[str], bool]], deadline_s: float = DEADLINE_S) -> Run:
    """``kindling run program > out.txt``, as test_pyflink_examples.run_kindling runs it. With ``until`` (a test of what
    was printed so far), a program that never ends is stopped SETTLE_S after the test first holds; without, the
    program runs to its end. Either way it is stopped at the deadline."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out, err = cwd / "out.txt", cwd / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "kindling", "run", "-m", "127.0.0.1:1", "-D", "restart-strategy.type=fixed-delay",
                                    "-D", "restart-strategy.fixed-delay.attempts=3", str(program)],
                                   stdout=stdout, stderr=stderr, cwd=cwd, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + deadline_s
        while process.poll() is None and time.monotonic() < deadline:
            if until is not None and until(out.read_text(errors="replace")):
                try:
                    process.wait(SETTLE_S)
                except subprocess.TimeoutExpired:
                    pass
                break
            time.sleep(0.5)
    finally:
        stopped = process.poll() is None
        if stopped:
            stop_group(process)
    printed = out.read_text(errors="replace")
    if stopped and not printed.endswith("\n"):
        printed = printed[:printed.rfind("\n") + 1]  # a line cut short by the stop is no line the program printed
    return Run(None if stopped else process.returncode, printed, err.read_text(errors="replace"))


def stop_group(process: subprocess.Popen) -> None:
    """End the run's process group (the driver, its JVM, the JVM's Python workers): SIGTERM, then SIGKILL."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(30)


def messages_in(servers: str, topic: str) -> int:
    """How many messages ``topic`` holds (0 if it does not exist yet)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": servers, "group.id": "kindling-test-count"})
    try:
        found = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if found is None or found.error is not None:
            return 0
        return sum(high - low for low, high in (consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                                                for p in found.partitions))
    finally:
        consumer.close()


def topic_messages(servers: str, topic: str, expected: int, timeout: float = 30) -> list[tuple[Optional[bytes], Optional[bytes]]]:
    """Every message of ``topic`` as (key, value), read by a plain consumer from the start: once ``expected`` arrived,
    a little longer, so that messages beyond them would be seen."""
    from kindling.connectors.kafka.tail import TopicTail

    messages = []
    with TopicTail({"bootstrap.servers": servers}, [topic]) as tail:
        deadline = time.monotonic() + timeout
        while len(messages) < expected and time.monotonic() < deadline:
            messages.extend(tail.poll(0.5))
        messages.extend(tail.poll(1.0))
    errors = [m.error() for m in messages if m.error() is not None]
    assert not errors, errors
    return [(m.key(), m.value()) for m in messages]


def reference_messages(program: str) -> tuple[str, list[tuple[Optional[bytes], Optional[bytes]]]]:
    """The topic and its messages as Flink's schemas make them (recorded from PyFlink: the stand-ins)."""
    recorded = json.loads((reference_dir() / messages_reference_name(program)).read_text())
    encode = lambda text: None if text is None else text.encode("utf-8")  # noqa: E731
    return recorded["topic"], [(encode(m["key"]), encode(m["value"])) for m in recorded["messages"]]


def ordered(messages: list[tuple[Optional[bytes], Optional[bytes]]]) -> list[tuple[bytes, bytes]]:
    return sorted((k if k is not None else b"\0null", v if v is not None else b"\0null") for k, v in messages)


@pytest.mark.parametrize("program", KAFKA_EXAMPLES)
def test_kafka_example_prints_and_writes_what_pyflink_does(program, kafka_9092, tmp_path):
    """A program reading with a KafkaSource never ends: it is stopped once it printed as many lines as PyFlink's, and the
    topic holds as many messages; one that only writes must end by itself, with status 0."""
    expected = expected_lines(program)
    topic, messages = reference_messages(program)
    servers = kafka_9092.bootstrap_servers
    if "KafkaSource" in (examples_dir() / program).read_text():
        run = run_kindling_until(examples_dir() / program, tmp_path, lambda printed: len(program_lines(printed)) >= len(expected)
                                 and messages_in(servers, topic) >= len(messages))
        assert run.returncode is None, f"an unbounded read ended (exit {run.returncode}): {run.stderr[-3000:]}"
    else:
        run = run_kindling_until(examples_dir() / program, tmp_path, None)
        assert run.returncode == 0, run.stderr[-3000:]
    got = program_lines(run.stdout)
    assert comparable(got) == comparable(expected), run.stderr[-3000:]
    assert ordered(topic_messages(servers, topic, len(messages))) == ordered(messages)


def zigzag(number: int) -> bytes:
    """An Avro ``int``/``long``: zig-zag encoded, then base-128 with a continuation bit (the Avro specification)."""
    value, out = (number << 1) ^ (number >> 63), bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def avro_record(number: int, text: str) -> bytes:
    """The Avro binary datum of ``{"id": int, "name": string}``: the fields in order, a string as its length then UTF-8."""
    encoded = text.encode("utf-8")
    return zigzag(number) + zigzag(len(encoded)) + encoded


def test_the_avro_example_writes_avro_binary_and_prints_the_rows_as_pyflink_does(kafka_9092, tmp_path):
    """kafka_avro_format.py writes (id, name) Rows with AvroRowSerializationSchema and reads them back. The topic must
    hold the Avro specification's encoding of each record (no header: Flink's schema writes bare datums); the printed
    lines must be PyFlink's for the same seven Rows, which it printed reading them through its JSON schema
    (kafka_json_format.py writes the same records), since PyFlink has no Avro jar here to record this example."""
    program = "connectors/kafka_avro_format.py"
    rows = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"), (6, "hello")]
    assert "(1, 'hi'), (2, 'hello'), (3, 'hi')" in (examples_dir() / program).read_text(), "the example's records changed"
    expected = expected_lines("connectors/kafka_json_format.py")
    servers = kafka_9092.bootstrap_servers
    run = run_kindling_until(examples_dir() / program, tmp_path, lambda printed: len(program_lines(printed)) >= len(expected)
                             and messages_in(servers, "test_avro_topic") >= len(rows))
    assert run.returncode is None, f"an unbounded read ended (exit {run.returncode}): {run.stderr[-3000:]}"
    assert comparable(program_lines(run.stdout)) == comparable(expected), run.stderr[-3000:]
    assert ordered(topic_messages(servers, "test_avro_topic", len(rows))) == ordered([(None, avro_record(*r)) for r in rows])


def example_words(program: str) -> list[str]:
    """The ``words`` list of the example program (its random source picks among them)."""
    tree = ast.parse((examples_dir() / program).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["words"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{program} has no words list")


RECORD = re.compile(r"^\((\w+),(-?\d+)\)$")


def word_count_shape(lines: list[str], words: list[str]) -> tuple[str, bool]:
    """The header line and whether the records carry subtask prefixes, after checking each record is ``(word,count)``
    of a known word, and that each word's counts run 1, 2, 3, ... in the order printed (a rolling reduce emits every
    record's running count, and one key's records are printed in order by one subtask)."""
    header, records = lines[0], lines[1:]
    assert records, lines
    counts: dict[str, list[int]] = defaultdict(list)
    for line in records:
        match = RECORD.match(SUBTASK.sub("", line))
        assert match, f"not a (word,count) record: {line!r}"
        word, count = match.group(1), int(match.group(2))
        assert word in words, f"not one of the example's words: {line!r}"
        counts[word].append(count)
    for word, seen in counts.items():
        assert seen == list(range(1, len(seen) + 1)), f"{word}: counts {seen} where a rolling count runs 1, 2, 3, ..."
    prefixed = [bool(SUBTASK.match(line)) for line in records]
    assert len(set(prefixed)) == 1, f"some records carry a subtask prefix, some do not: {records}"
    return header, prefixed[0]


@pytest.mark.parametrize("program", STRUCTURE_EXAMPLES)
def test_random_example_prints_records_shaped_as_pyflinks(program, tmp_path):
    words = example_words(program)
    reference = word_count_shape(expected_lines(program), words)
    run = run_kindling_until(examples_dir() / program, tmp_path, lambda printed: len(program_lines(printed)) > WORD_COUNT_LINES)
    assert run.returncode is None, f"an unbounded program ended (exit {run.returncode}): {run.stderr[-3000:]}"
    got = program_lines(run.stdout)
    assert len(got) > WORD_COUNT_LINES, run.stderr[-3000:]
    assert word_count_shape(got, words) == reference
