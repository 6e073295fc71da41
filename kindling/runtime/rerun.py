"""A batch re-run of a streaming program whose INSERT jobs are handed over instead of started (reconciliation).

``kindling reconcile --python prog.py`` runs a Table API program again to learn what its sinks should hold.
While a :class:`Rerun` is active (``with Rerun(take, settings):``), every environment the program creates
starts with ``settings`` and runs in batch mode whatever the program asks, and each INSERT job the program
starts (``execute_insert``, a statement set, ``execute_sql("INSERT ...")``) calls ``take(session, inserts,
job_name)`` instead of writing its sink. A re-run must never write a sink, and kindling can re-read a
streaming job's input only through its catalog tables: a DataStream source or job is refused by name.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

TakeInserts = Callable[[Any, list[Any], str], None]  # (SqlSession, [ddl.Insert], job name)


class RerunRefused(ValueError):
    """The program does something a re-run cannot do without writing a sink or reading past its input range."""


class Rerun:
    """The active re-run of a program (at most one in a process; see the module docstring)."""

    def __init__(self, take: TakeInserts, settings: Optional[Mapping[str, Any]] = None, purpose: str = "reconciliation") -> None:
        self.take = take
        self.settings = {**(settings or {}), "execution.runtime-mode": "batch"}
        self.purpose = purpose

    def __enter__(self) -> "Rerun":
        global _ACTIVE
        if _ACTIVE is not None:
            raise RuntimeError("a program is already being re-run in this process")
        _ACTIVE = self
        return self

    def __exit__(self, *exc: object) -> None:
        global _ACTIVE
        _ACTIVE = None

    def refuse_datastream(self, construct: str) -> None:
        raise RerunRefused(
            f"{construct}: a DataStream pipeline cannot be re-run for {self.purpose} (its sources are read again only "
            "through catalog tables, and its sinks must not be written); reconcile takes SQL scripts and Table API "
            "programs whose jobs are INSERTs into catalog tables")


_ACTIVE: Optional[Rerun] = None


def active() -> Optional[Rerun]:
    """The re-run under way in this process, if any."""
    return _ACTIVE


def refuse_datastream(construct: str) -> None:
    """Refuse ``construct`` (a DataStream source or job) while a program is re-run; nothing otherwise."""
    if _ACTIVE is not None:
        _ACTIVE.refuse_datastream(construct)
