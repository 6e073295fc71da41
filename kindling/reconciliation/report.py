"""The reconciliation report: for a person (``str(report)``) and for machines (``report.to_json()``)."""

from __future__ import annotations

import datetime as _dt
import decimal
import json
from dataclasses import dataclass, field
from typing import Any, Optional

from kindling.reconciliation.compare import Comparison, Row


@dataclass
class SinkReport:
    """One INSERT's reconciliation: its sink, the input range and checkpoint compared, and the outcome."""

    sink: str
    connector: str
    checkpoint: str
    batch_id: int
    watermark_ms: int
    input_range: dict[str, Any]
    comparison: Comparison
    open_windows: int = 0  # batch rows of windows the checkpoint's watermark had not closed: not compared
    late_rows: int = 0
    late_examples: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def full_match(self) -> bool:
        return self.comparison.full_match


@dataclass
class Report:
    job: str
    sinks: list[SinkReport]
    seconds: float
    examples: int = 5

    @property
    def full_match(self) -> bool:
        return all(s.full_match for s in self.sinks)

    @property
    def exit_code(self) -> int:
        """0 on a full match, 1 otherwise (the command line's exit code)."""
        return 0 if self.full_match else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "result": "MATCH" if self.full_match else "MISMATCH",
            "seconds": round(self.seconds, 3),
            "sinks": [_sink_json(s) for s in self.sinks],
        }

    def __str__(self) -> str:
        lines = [f"Reconciliation of job '{self.job}': {'MATCH' if self.full_match else 'MISMATCH'} ({self.seconds:.1f} s)"]
        for sink in self.sinks:
            c = sink.comparison
            lines += [
                "",
                f"Sink {sink.sink} (connector '{sink.connector}'), checkpoint {sink.checkpoint}",
                f"  compared up to micro-batch {sink.batch_id} (watermark {_instant(sink.watermark_ms)})",
                "  input: " + "; ".join(f"{name} {text}" for name, text in sink.input_range.items()),
                f"  key: {', '.join(c.key) if c.key else '(none: rows compared whole)'}",
                f"  matched rows:   {c.matched}",
                f"  missing rows:   {len(c.missing)}   (the batch run has them, the sink does not)",
                f"  extra rows:     {len(c.extra)}   (the sink has them, the batch run does not)",
                f"  differing rows: {len(c.differing)}   (same key, other values)",
                f"  dropped late:   {sink.late_rows}   (rows the streaming job dropped as late; not a mismatch)",
            ]
            if sink.open_windows:
                lines.append(f"  not compared:   {sink.open_windows} rows of windows still open at the checkpoint's watermark")
            lines += _examples("missing", c.columns, c.missing, self.examples)
            lines += _examples("extra", c.columns, c.extra, self.examples)
            for stream_row, batch_row in c.differing[: self.examples]:
                key = ", ".join(f"{k}={_text(stream_row[c.columns.index(k)])}" for k in (c.key or []))
                changed = [f"{name}: stream {_text(s)} / batch {_text(b)}" for name, s, b in zip(c.columns, stream_row, batch_row) if s != b]
                lines.append(f"    differing [{key}] " + "; ".join(changed))
            for example in sink.late_examples[: self.examples]:
                lines.append("    dropped late " + ", ".join(f"{k}={_text(v)}" for k, v in example.items()))
            lines += [f"  note: {note}" for note in sink.notes]
        return "\n".join(lines)


def _examples(label: str, columns: list[str], rows: list[Row], limit: int) -> list[str]:
    out = [f"    {label} " + ", ".join(f"{c}={_text(v)}" for c, v in zip(columns, row)) for row in rows[:limit]]
    if len(rows) > limit:
        out.append(f"    ... and {len(rows) - limit} more {label} rows")
    return out


def _instant(ms: int) -> str:
    if ms <= 0:
        return "none"
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, _dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def _row(columns: list[str], row: Row) -> dict[str, Any]:
    return {c: _plain(v) for c, v in zip(columns, row)}


def _sink_json(sink: SinkReport) -> dict[str, Any]:
    c = sink.comparison
    return {
        "sink": sink.sink,
        "connector": sink.connector,
        "checkpoint": sink.checkpoint,
        "batch_id": sink.batch_id,
        "watermark_ms": sink.watermark_ms,
        "input_range": sink.input_range,
        "key": c.key,
        "result": "MATCH" if sink.full_match else "MISMATCH",
        "matched": c.matched,
        "missing": [_row(c.columns, r) for r in c.missing],
        "extra": [_row(c.columns, r) for r in c.extra],
        "differing": [{"stream": _row(c.columns, s), "batch": _row(c.columns, b)} for s, b in c.differing],
        "dropped_late": {"count": sink.late_rows, "examples": [{k: _plain(v) for k, v in e.items()} for e in sink.late_examples]},
        "open_windows": sink.open_windows,
        "notes": sink.notes,
    }


def dumps(report: Report, path: Optional[str] = None) -> str:
    text = json.dumps(report.to_json(), indent=2)
    if path:
        with open(path, "w") as handle:
            handle.write(text + "\n")
    return text
