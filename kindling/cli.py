"""The ``kindling`` command line."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Optional

from kindling.config import parse_defines


def _local(args: argparse.Namespace) -> int:
    from kindling.local import kafka

    state_dir = Path(args.state_dir)
    if args.action == "start":
        info = kafka.start_background(port=args.port, state_dir=state_dir)
        print(f"Kafka broker running on {info['bootstrap_servers']} (pid {info['pid']})")
        return 0
    return _stop_or_status(kafka, "Kafka broker", args.action, state_dir)


def _stop_or_status(service, label: str, action: str, state_dir: Path) -> int:
    """``stop`` or ``status`` of a local service module (``stop_background``/``status``); exit 3 if not running."""
    if action == "stop":
        stopped = service.stop_background(state_dir)
        print(f"{label} stopped" if stopped else f"no {label} started by kindling is running")
        return 0
    info = service.status(state_dir)
    print(json.dumps(info, indent=2))
    return 0 if info.get("running") else 3


def _local_s3(args: argparse.Namespace) -> int:
    from kindling.local import s3

    state_dir = Path(args.state_dir)
    if args.action == "start":
        info = s3.start_background(port=args.port, state_dir=state_dir)
        print(f"S3 server running on {info['endpoint']} (pid {info['pid']}); access key {info['access_key']!r}, "
              f"secret key in {state_dir / 'identities.json'}")
        return 0
    return _stop_or_status(s3, "S3 server", args.action, state_dir)


def _local_database(args: argparse.Namespace) -> int:
    """``kindling local postgres|mysql start|stop|status``; start prints one line for scripts."""
    from kindling.local import mysql, postgres

    service, label = (postgres, "PostgreSQL server") if args.service == "postgres" else (mysql, "MariaDB server")
    state_dir = Path(args.state_dir)
    if args.action == "start":
        info = service.start_background(port=args.port, state_dir=state_dir)
        print(f"url={info['url']} user={info['user']} password={info['password']}")
        return 0
    return _stop_or_status(service, label, args.action, state_dir)


def _local_kinesis(args: argparse.Namespace) -> int:
    from kindling.local import kinesis

    state_dir = Path(args.state_dir)
    if args.action == "start":
        info = kinesis.start_background(port=args.port, state_dir=state_dir)
        print(f"url={info['url']}")  # exactly one line, for scripts
        return 0
    return _stop_or_status(kinesis, "Kinesis server", args.action, state_dir)


def _local_spark(args: argparse.Namespace) -> int:
    from kindling.local import spark

    state_dir = Path(args.state_dir)
    if args.action == "start":
        info = spark.start_background(args.workers, args.cores, args.memory, state_dir=state_dir)
        print(f"master={info['master']}")  # one line for scripts; the rest with `status`
        return 0
    return _stop_or_status(spark, "Spark cluster", args.action, state_dir)


def _local_schema_registry(args: argparse.Namespace) -> int:
    import os

    from kindling.local import schema_registry

    state_dir = Path(args.state_dir)
    if args.action == "start":
        user_info = None
        if args.basic_auth:
            user_info = os.environ.get("KINDLING_SCHEMA_REGISTRY_USER_INFO")
            if not user_info or ":" not in user_info:
                raise ValueError("--basic-auth reads 'user:password' from the environment variable "
                                 "KINDLING_SCHEMA_REGISTRY_USER_INFO, which is not set to that form")
        info = schema_registry.start_background(port=args.port, state_dir=state_dir, user_info=user_info)
        print(f"schema registry running on {info['url']} (pid {info['pid']})"
              + ("; basic auth on" if info["basic_auth"] else ""))
        return 0
    return _stop_or_status(schema_registry, "schema registry", args.action, state_dir)


def _local_search(args: argparse.Namespace) -> int:
    """``kindling local elasticsearch|opensearch start|stop|status``; ``start`` prints ``url=...`` for scripts."""
    import importlib

    service = importlib.import_module(f"kindling.local.{args.service}")
    state_dir = Path(args.state_dir)
    if args.action == "start":
        info = service.start_background(port=args.port, state_dir=state_dir)
        print(f"url={info['url']}")
        return 0
    return _stop_or_status(service, f"{service.SERVICE.label} server", args.action, state_dir)


def _demo(args: argparse.Namespace) -> int:
    if args.name == "spend-report":
        from kindling.playground.spend_report import run_spend_report_demo

        return run_spend_report_demo(duration=args.duration, rate=args.rate or 50.0, table_api=args.table_api)
    if args.name == "payments":
        from kindling.playground.payments import run_payments_demo

        return run_payments_demo(duration=args.duration, rate=args.rate if args.rate is not None else 20.0, table_api=args.table_api)
    from kindling.playground.demo import run_click_count_demo

    return run_click_count_demo(
        duration=args.duration, rate=args.rate or 1000.0, event_time=args.event_time, backpressure=args.backpressure,
        startup_timeout=args.startup_timeout,
    )


def _class_archive(args: argparse.Namespace) -> int:
    from kindling.runtime import jvm_classes

    return jvm_classes.main(force=args.force)


def _sql(args: argparse.Namespace) -> int:
    from kindling.sql.client import interactive, run_file

    defines = parse_defines(args.define)
    if args.file:
        return run_file(args.file, defines)
    return interactive(defines)


def _reconcile(args: argparse.Namespace) -> int:
    from kindling.reconciliation import reconcile, reconcile_program
    from kindling.reconciliation.report import dumps

    sql, program, program_args = args.sql, args.python, list(args.args or [])
    defines, target, jid = parse_defines(args.define), args.target, args.job
    if jid is None and target and re.fullmatch(r"[0-9a-f]{32}", target) and not Path(target).exists():
        jid, target = target, None  # a job manager's job id (Flink's 32 hex digits)
    if sql and program:
        raise ValueError("reconcile takes one pipeline: --sql FILE or --python FILE, not both")
    if jid:
        kind, file, submitted_args, submitted = _submitted_job(jid, Path(args.home))
        sql, program = (file, None) if kind == "sql" else (None, file)
        program_args = program_args or submitted_args
        defines = {**submitted, **defines}
    elif not sql and not program:
        raise ValueError("reconcile needs the job's SQL script (--sql FILE), its Table API program (--python FILE) or a job "
                         "manager's job id (--job JID)")
    if program:
        report = reconcile_program(program, program_args, target, defines, batch_id=args.batch, examples=args.examples)
    else:
        report = reconcile(sql, target, defines, batch_id=args.batch, examples=args.examples)
    print(report)
    if args.output:
        dumps(report, args.output)
    return report.exit_code


def _submitted_job(jid: str, home: Path) -> tuple[str, str, list[str], dict[str, str]]:
    """A job manager's job as it was submitted: its kind (sql, python), file, program arguments and the options its
    driver ran with."""
    from kindling.server.store import JobStore

    record = JobStore(home).get(jid)
    if record is None:
        raise ValueError(f"the job manager in {home} has no job {jid}")
    defines = dict(record.configuration)
    arguments = list(record.args)
    if record.kind == "sql":
        for flag, value in zip(arguments, arguments[1:]):
            if flag == "-D":
                defines.update(parse_defines([value]))
        arguments = []
    defines["state.checkpoints.dir"] = record.checkpoint_dir
    if record.parallelism:
        defines["parallelism.default"] = str(record.parallelism)
    file = Path(record.file)
    return record.kind, str(file if file.is_absolute() else Path(record.cwd) / file), arguments, defines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kindling", description="Flink-style stream processing on Apache Spark.")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run a playground end to end")
    demo.add_argument("name", choices=["click-count", "spend-report", "payments"], help="which playground")
    demo.add_argument("--duration", type=float, default=60.0, help="seconds to run from the first micro-batch (default 60)")
    demo.add_argument("--startup-timeout", type=float, default=300.0, help="seconds Spark may take to start the job (default 300)")
    demo.add_argument("--rate", type=float, default=None,
                      help="events per second (default 1000 clicks; 50 transactions for spend-report; 20 payments)")
    mode = demo.add_mutually_exclusive_group()
    mode.add_argument("--event-time", dest="event_time", action="store_true", default=True)
    mode.add_argument("--processing-time", dest="event_time", action="store_false")
    demo.add_argument("--backpressure", action="store_true", help="slow records down in even minutes")
    demo.add_argument("--table-api", dest="table_api", action="store_true",
                      help="spend-report, payments: run the job as the Table API program (examples/spend_report/spend_report.py, "
                           "examples/payments/payment_msg_processing.py) instead of the SQL file")
    demo.set_defaults(handler=_demo)

    sql = commands.add_parser("sql", help="run a Flink SQL script (-f) or the interactive SQL client")
    sql.add_argument("-f", "--file", help="SQL script to run; the command exits when its bounded jobs finish")
    sql.add_argument("-D", dest="define", action="append", metavar="key=value", help="a configuration option (repeatable)")
    sql.set_defaults(handler=_sql)

    reconcile = commands.add_parser(
        "reconcile", help="compare a streaming SQL or Table API job's committed output with a batch run of the same pipeline "
                          "(exit 0 on a match)")
    reconcile.add_argument("target", nargs="?", default=None,
                           help="a job manager's job id, or the job's name or checkpoint directory with --sql or --python "
                                "(default: where the pipeline puts each of its jobs)")
    reconcile.add_argument("--sql", help="the job's SQL script, as it was run")
    reconcile.add_argument("--python", "-py", metavar="FILE", help="the job's Table API program, as it was run (its arguments: --args)")
    reconcile.add_argument("--job", metavar="JID", help="a job of the job manager (its pipeline, arguments, options and checkpoints)")
    reconcile.add_argument("--home", default=".kindling/jobmanager", help="the job manager's home, for --job (default .kindling/jobmanager)")
    reconcile.add_argument("-D", dest="define", action="append", metavar="key=value", help="an option the job ran with (repeatable)")
    reconcile.add_argument("--batch", type=int, default=None, help="the committed micro-batch to compare up to (default: the last)")
    reconcile.add_argument("--examples", type=int, default=5, help="rows shown per category (default 5)")
    reconcile.add_argument("--output", default=None, help="also write the report as JSON to this file")
    reconcile.add_argument("--args", nargs=argparse.REMAINDER, default=None, metavar="ARG",
                           help="the program's arguments, as it was run (everything after --args; last on the line)")
    reconcile.set_defaults(handler=_reconcile)

    archive = commands.add_parser("class-archive", help="train the driver JVM's class-sharing archive (drivers start faster)")
    archive.add_argument("--force", action="store_true", help="train it again even if it exists")
    archive.set_defaults(handler=_class_archive)

    local = commands.add_parser("local", help="local services")
    services = local.add_subparsers(dest="service", required=True)
    kafka = services.add_parser("kafka", help="a local Kafka-protocol broker on 127.0.0.1")
    kafka.add_argument("action", choices=["start", "stop", "status"])
    kafka.add_argument("--port", type=int, default=9092)
    kafka.add_argument("--state-dir", default=".kindling/local/kafka")
    kafka.set_defaults(handler=_local)
    s3 = services.add_parser("s3", help="a local S3-compatible object store (SeaweedFS) on 127.0.0.1")
    s3.add_argument("action", choices=["start", "stop", "status"])
    s3.add_argument("--port", type=int, default=8333)
    s3.add_argument("--state-dir", default=".kindling/local/s3")
    s3.set_defaults(handler=_local_s3)
    for name, port, text in (("postgres", 5432, "a local PostgreSQL server on 127.0.0.1"),
                             ("mysql", 3306, "a local MariaDB server (MySQL protocol) on 127.0.0.1")):
        server = services.add_parser(name, help=text)
        server.add_argument("action", choices=["start", "stop", "status"])
        server.add_argument("--port", type=int, default=port)
        server.add_argument("--state-dir", default=f".kindling/local/{name}")
        server.set_defaults(handler=_local_database)
    kinesis = services.add_parser("kinesis", help="a local Kinesis Data Streams API server (kinesis-local) on 127.0.0.1")
    kinesis.add_argument("action", choices=["start", "stop", "status"])
    kinesis.add_argument("--port", type=int, default=4568)
    kinesis.add_argument("--state-dir", default=".kindling/local/kinesis")
    kinesis.set_defaults(handler=_local_kinesis)
    cluster = services.add_parser("spark", help="a Spark standalone master and workers on 127.0.0.1 (from the PySpark wheel)")
    cluster.add_argument("action", choices=["start", "stop", "status"])
    cluster.add_argument("--workers", type=int, default=2, help="number of workers (default 2)")
    cluster.add_argument("--cores", type=int, default=1, help="cores per worker (default 1)")
    cluster.add_argument("--memory", default="1g", help="memory per worker for executors (default 1g)")
    cluster.add_argument("--state-dir", default=".kindling/local/spark")
    cluster.set_defaults(handler=_local_spark)
    registry = services.add_parser("schema-registry", help="a local Confluent-compatible schema registry on 127.0.0.1")
    registry.add_argument("action", choices=["start", "stop", "status"])
    registry.add_argument("--port", type=int, default=8081)
    registry.add_argument("--state-dir", default=".kindling/local/schema-registry")
    registry.add_argument("--basic-auth", action="store_true",
                          help="require the credentials in $KINDLING_SCHEMA_REGISTRY_USER_INFO ('user:password')")
    registry.set_defaults(handler=_local_schema_registry)
    for name, label, port in (("elasticsearch", "an Elasticsearch 8 REST API (noida-db)", 9200),
                              ("opensearch", "an OpenSearch REST API (osmem-server)", 9201)):
        search = services.add_parser(name, help=f"{label} on 127.0.0.1")
        search.add_argument("action", choices=["start", "stop", "status"])
        search.add_argument("--port", type=int, default=port)
        search.add_argument("--state-dir", default=f".kindling/local/{name}")
        search.set_defaults(handler=_local_search)

    from kindling.server.cli import add_commands

    add_commands(commands)  # cluster, run, list, cancel, stop, savepoint, info
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (ValueError, RuntimeError, TimeoutError) as exc:
        print(f"kindling: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
