"""Async I/O throughput (issue 13): an AsyncFunction awaiting a 10 ms HTTP call, kindling vs PyFlink 2.3, in one run.

Starts one local HTTP/1.1 server (asyncio, in a thread of this process) that answers every request
after ``--delay-ms`` (10 ms), then runs the same PyFlink program (``PROGRAM``, written to a temporary
file) on each side against that server:

- kindling: ``python -m kindling run -m 127.0.0.1:<unused port> prog.py ...`` (``kindling run``; the
  address answers nothing, so the program runs in that process as it does without a job manager,
  whatever else on the machine listens on the default 8081);
- PyFlink 2.3: ``python prog.py ...`` in ``.venv/pyflink`` (a local mini-cluster in its own JVM).

Each side runs as in a shell with its venv activated (its ``bin`` first on PATH: PyFlink starts its
Python workers as ``python``) and ``PYTHONUNBUFFERED=1`` (PyFlink prints from its JVM, kindling from
Python; unbuffered, a record reaches the pipe when it is printed on both sides).

The program: ``from_collection(range(N))`` of LONGs, ``AsyncDataStream.unordered_wait(stream,
HttpLookup(port), Time.seconds(60), 100, Types.LONG())`` (capacity 100), ``print()``. ``HttpLookup``
is a small HTTP/1.1 client on asyncio streams (the PyFlink venv has no httpx), keeping its
connections alive in a pool per event loop, so both sides do the same work per record: one request,
a 10 ms wait on the server, one response. Parallelism 2 on both sides (``env.set_parallelism(2)``;
the machine has 2 cores), so at most 2 x 100 calls are in flight: the ideal is 20,000 records/s.

Each run first executes an untimed warm-up job of ``--warmup`` records in the same process (the JVM,
kindling's Spark session and Python workers), then the timed job, timed inside the program around
``env.execute()`` (submission to end) and printed on an ``ASYNC_IO_RESULT`` line. PyFlink's local
environment starts a mini-cluster for every job, so that start is in its timed job, as Spark's
per-query start is in kindling's. Every printed record is counted and the server counts the requests
it answered: a side that lost a record fails the benchmark.

Separately, the time to first record: the same program with 10 records and no warm-up, from starting
the process to its first line of stdout that is a record, on each side.

Prints both rates in records/s, both times to first record and, last, ``ratio=<kindling/pyflink>``.

    python benchmarks/async_io.py [--records 100000] [--capacity 100] [--delay-ms 10] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
PYFLINK = ROOT / ".venv" / "pyflink" / "bin" / "python"
RECORD = re.compile(r"^(\d+> )?\d+$")
RESULT = "ASYNC_IO_RESULT "

PROGRAM = '''\
"""Async I/O benchmark job (written by kindling's benchmarks/async_io.py): the same text on PyFlink and on kindling."""

import argparse
import asyncio
import json
import time

from pyflink.common import Time, Types
from pyflink.datastream import AsyncDataStream, StreamExecutionEnvironment
from pyflink.datastream.functions import AsyncFunction

REQUEST = b"GET /lookup HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n"


class HttpLookup(AsyncFunction):
    """One HTTP/1.1 GET per record to the local server, over connections kept alive per event loop.

    The calls in flight are held in ``running``: PyFlink drops its reference to the task of each call
    (``asyncio.run_coroutine_threadsafe``), and asyncio holds a client connection's reader weakly, so a
    call waiting for its response is otherwise garbage that the collector may take, never to finish.
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self.loop = None
        self.idle = []
        self.running = set()

    async def async_invoke(self, value: int) -> list:
        loop = asyncio.get_running_loop()
        if self.loop is not loop:
            self.loop, self.idle, self.running = loop, [], set()
        task = asyncio.current_task()
        self.running.add(task)
        try:
            reader, writer = self.idle.pop() if self.idle else await asyncio.open_connection("127.0.0.1", self.port)
            writer.write(REQUEST)
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError("server answered " + head.split(b"\\r\\n", 1)[0].decode())
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\\r\\n") if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
            self.idle.append((reader, writer))
            return [value]
        finally:
            self.running.discard(task)


def run_job(env: StreamExecutionEnvironment, records: int, port: int, capacity: int) -> float:
    """Seconds from submitting the job to its end."""
    stream = env.from_collection(list(range(records)), type_info=Types.LONG())
    AsyncDataStream.unordered_wait(stream, HttpLookup(port), Time.seconds(60), capacity, Types.LONG()).print()
    started = time.perf_counter()
    env.execute()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--records", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--capacity", type=int, default=100)
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(args.parallelism)
    if args.warmup:
        run_job(env, args.warmup, args.port, args.capacity)
    seconds = run_job(env, args.records, args.port, args.capacity)
    print("ASYNC_IO_RESULT " + json.dumps({"records": args.records, "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
'''


class DelayServer:
    """An HTTP/1.1 server on 127.0.0.1 answering each request after ``delay`` seconds, on its own event loop in a thread.

    Connections are kept alive; ``requests`` counts the answers, so a run can be checked against its records.
    """

    RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._stop: Optional[asyncio.Event] = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),), daemon=True)

    def __enter__(self) -> "DelayServer":
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the delay server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)  # type: ignore[union-attr]
        self._thread.join(30)

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        handlers: dict[asyncio.Task, asyncio.StreamWriter] = {}

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            handlers[asyncio.current_task()] = writer  # type: ignore[index]
            try:
                while await reader.readuntil(b"\r\n\r\n"):
                    await asyncio.sleep(self.delay)
                    writer.write(self.RESPONSE)
                    self.requests += 1
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                handlers.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
                writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            for writer in list(handlers.values()):
                writer.close()  # its reader sees the end of the stream, and its handler returns
            await asyncio.gather(*handlers, return_exceptions=True)


@dataclass
class Run:
    """One side's run: the timed job's seconds (None for a first-record run), records printed, seconds to the first."""

    seconds: Optional[float]
    printed: int
    first_record: Optional[float]


def unused_port() -> int:
    """A free TCP port on 127.0.0.1: the job manager address for ``kindling run`` that no one answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def activated(python: str) -> dict[str, str]:
    """The environment of a shell with ``python``'s venv activated: PyFlink starts its Python workers as ``python`` from PATH."""
    bin_dir = str(Path(python).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "VIRTUAL_ENV": str(Path(bin_dir).parent),
            "PYTHONUNBUFFERED": "1"}


def run_program(command: Sequence[str], cwd: str, timeout: float) -> Run:
    """Start ``command`` in its venv, count the records it prints and time its first; its job's seconds from the result line."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=activated(command[0]), start_new_session=True)
    errors: list[str] = []
    drain = threading.Thread(target=lambda: errors.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    drain.start()
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    printed, first, seconds = 0, None, None
    try:
        for line in process.stdout:  # type: ignore[union-attr]
            line = line.strip()
            if RECORD.match(line):
                printed += 1
                if first is None:
                    first = time.perf_counter() - started
            elif line.startswith(RESULT):
                seconds = json.loads(line[len(RESULT):])["seconds"]
        code = process.wait()
    finally:
        timer.cancel()
    drain.join(10)
    if code != 0:
        failure = [e.rstrip() for e in errors if "Error" in e or "Exception" in e or e.startswith("kindling:")] or errors[-5:]
        raise RuntimeError(f"{command[0]} exited {code}: " + " | ".join(failure[-3:])[:2000])
    return Run(seconds, printed, first)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=2_000, help="records of the untimed job each side runs first")
    parser.add_argument("--capacity", type=int, default=100)
    parser.add_argument("--delay-ms", type=float, default=10.0)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--first-records", type=int, default=10, help="records of the time-to-first-record program")
    parser.add_argument("--pyflink-python", default=str(PYFLINK))
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per program run")
    parser.add_argument("--quick", action="store_true", help="10k records, a 500-record warm-up: checks the benchmark, not the figures")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.warmup = 10_000, 500
    if not Path(args.pyflink_python).exists():
        print(f"PyFlink not found at {args.pyflink_python}: run `make nexmark-bench` (it creates .venv/pyflink)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="kindling-async-io-bench-") as work, DelayServer(args.delay_ms / 1000) as server:
        program = Path(work) / "async_io_job.py"
        program.write_text(PROGRAM)
        sides = {
            "kindling": [sys.executable, "-m", "kindling", "run", "-m", f"127.0.0.1:{unused_port()}", str(program)],
            "pyflink": [args.pyflink_python, str(program)],
        }
        common = ["--port", str(server.port), "--capacity", str(args.capacity), "--parallelism", str(args.parallelism)]
        rates: dict[str, float] = {}
        for side, command in sides.items():
            before = server.requests
            run = run_program([*command, *common, "--records", str(args.records), "--warmup", str(args.warmup)], work, args.timeout)
            answered = server.requests - before
            expected = args.records + args.warmup
            if run.seconds is None or run.printed != expected or answered < expected:
                raise RuntimeError(f"{side}: printed {run.printed} records and made {answered} calls, expected {expected}")
            rates[side] = args.records / run.seconds
            print(f"{side} async I/O (capacity {args.capacity}, {args.delay_ms:g} ms calls, parallelism {args.parallelism}): "
                  f"{args.records} records in {run.seconds:.2f} s = {rates[side]:,.0f} records/s", flush=True)
        for side, command in sides.items():
            run = run_program([*command, *common, "--records", str(args.first_records)], work, args.timeout)
            if run.first_record is None or run.printed != args.first_records:
                raise RuntimeError(f"{side}: printed {run.printed} of {args.first_records} records")
            print(f"{side} time to first record ({args.first_records}-record program, process start to first printed record): "
                  f"{run.first_record:.2f} s", flush=True)
    print(f"ratio={rates['kindling'] / rates['pyflink']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
