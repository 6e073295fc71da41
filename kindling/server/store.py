"""Job records of the job manager, kept as one JSON file per job so that they survive a restart."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

from kindling.runtime.json_files import read_json, write_json

JOB_STATES = ("CREATED", "RUNNING", "FAILING", "CANCELLING", "RESTARTING", "CANCELED", "FINISHED", "FAILED")
TERMINAL = ("CANCELED", "FINISHED", "FAILED")
RECORD_FILE = "job.json"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class JobRecord:
    """What the job manager knows about one submitted job."""

    jid: str
    name: str
    kind: str  # "python" or "sql"
    file: str
    args: list[str]
    cwd: str
    directory: str
    state: str = "CREATED"
    start_time: int = field(default_factory=now_ms)
    end_time: int = -1
    timestamps: dict[str, int] = field(default_factory=dict)
    parallelism: Optional[int] = None
    savepoint_path: Optional[str] = None
    allow_non_restored_state: bool = False
    configuration: dict[str, str] = field(default_factory=dict)
    driver_pid: Optional[int] = None
    attempt: int = 0
    restarts: int = 0
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    savepoints: list[dict[str, Any]] = field(default_factory=list)
    last_savepoint: Optional[str] = None

    @property
    def checkpoint_dir(self) -> str:
        return str(Path(self.directory) / "checkpoints")

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    def duration(self) -> int:
        end = self.end_time if self.end_time > 0 else now_ms()
        return max(0, end - self.start_time)

    def set_state(self, state: str) -> None:
        if state == self.state and state in self.timestamps:
            return
        self.state = state
        self.timestamps[state] = now_ms()
        if state in TERMINAL:
            self.end_time = now_ms()


class JobStore:
    """Job records under ``<home>/jobs/<job id>/job.json``, written atomically on every change."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.jobs_dir = home / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._records: dict[str, JobRecord] = {}
        for path in sorted(self.jobs_dir.glob(f"*/{RECORD_FILE}")):
            data = read_json(path)
            if data:
                record = JobRecord(**data)
                self._records[record.jid] = record

    def job_dir(self, jid: str) -> Path:
        return self.jobs_dir / jid

    def add(self, record: JobRecord) -> None:
        with self._lock:
            self._records[record.jid] = record
        self.save(record)

    def save(self, record: JobRecord) -> None:
        with self._lock:
            write_json(Path(record.directory) / RECORD_FILE, asdict(record))

    def get(self, jid: str) -> Optional[JobRecord]:
        return self._records.get(jid)

    def all(self) -> list[JobRecord]:
        return sorted(self._records.values(), key=lambda r: r.start_time, reverse=True)
