"""The job manager's metrics in Prometheus' text format (``/metrics``), with Flink's metric names."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from kindling.runtime.metrics import JOB_METRICS
from kindling.server.store import JOB_STATES

if TYPE_CHECKING:
    from kindling.server.jobmanager import JobManager

CONTENT_TYPE = CONTENT_TYPE_LATEST


def metric_name(flink_name: str) -> str:
    """``numRecordsInPerSecond`` becomes ``kindling_job_num_records_in_per_second``."""
    return "kindling_job_" + re.sub(r"(?<!^)(?=[A-Z])", "_", flink_name).lower()


class JobCollector(Collector):
    """One gauge per job metric, labelled with the job's id and name; job counts per state."""

    def __init__(self, manager: "JobManager") -> None:
        self.manager = manager

    def collect(self) -> Iterator[GaugeMetricFamily]:
        records = self.manager.store.all()
        states = GaugeMetricFamily("kindling_jobmanager_jobs", "Jobs known to the job manager, by state", labels=["state"])
        for state in JOB_STATES:
            states.add_metric([state], sum(r.state == state for r in records))
        yield states
        families = {name: GaugeMetricFamily(metric_name(name), f"Flink metric {name}", labels=["job_id", "job_name"]) for name in JOB_METRICS}
        users: dict[str, GaugeMetricFamily] = {}
        for record in records:
            if record.terminal:
                continue
            values = self.manager.metrics(record.jid)
            for name, value in values.items():
                if value is not None:
                    families[name].add_metric([record.jid, record.name], value)
            for identifier, value in self.manager.user_metrics(record.jid).items():
                name = "kindling_user_" + re.sub(r"[^A-Za-z0-9_]", "_", identifier)
                if name not in users:
                    users[name] = GaugeMetricFamily(name, f"user metric {identifier}", labels=["job_id", "job_name"])
                users[name].add_metric([record.jid, record.name], value)
        yield from families.values()
        yield from users.values()


def render(manager: "JobManager") -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(JobCollector(manager))
    return generate_latest(registry)
