"""Job listeners: what follows a program's jobs from outside, without the runtime knowing who listens.

Flink's Java ``JobListener`` (``env.registerJobListener``; PyFlink has no Python form, kindling offers
``env.register_job_listener``) is told when a job is submitted and when it has executed. kindling's
listeners may also impose configuration on every environment the program creates (``configure``), and
ask that unnamed jobs get stable names (``stable_job_names``): that is how the job manager's driver
process follows a program it did not write (its ``-p``/``-s``/``-D`` settings, its control channel),
and how ``kindling run`` applies its options. Such process-wide listeners are registered once, before
the program runs (``register_process_listener``), as Flink's ``execution.job-listeners`` names
listeners every environment instantiates.

>>> from kindling.runtime.job_listeners import JobListener
>>> class Announce(JobListener):
...     def on_job_submitted(self, job_client, throwable):
...         print("submitted", job_client.get_job_id() if job_client else throwable)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from kindling.config import Configuration
    from kindling.runtime.job import JobClient


class JobListener:
    """Flink's JobListener (``on_job_submitted``, ``on_job_executed``) plus kindling's process-level hooks.

    Override what you need; every hook does nothing by default.
    """

    # Number unnamed jobs in the order the program starts them (so a restarted driver finds their checkpoints),
    # instead of giving each a fresh name of its own.
    stable_job_names: bool = False

    def configure(self, config: "Configuration") -> None:
        """Impose settings on an environment as it is created: they replace the configuration it was created with;
        what the program sets on it afterwards stands (as ``env.set_parallelism`` stands over Flink's ``-p``)."""

    def on_job_submitted(self, job_client: Optional["JobClient"], throwable: Optional[BaseException]) -> None:
        """The job's queries started (``job_client``), or starting it failed (``throwable``)."""

    def on_job_executed(self, job_execution_result: Any, throwable: Optional[BaseException]) -> None:
        """A job run with ``execute()`` ended (its client), or failed (``throwable``)."""


_PROCESS_LISTENERS: list[JobListener] = []


def register_process_listener(listener: JobListener) -> None:
    """Give every environment this process creates from now on ``listener``."""
    _PROCESS_LISTENERS.append(listener)


def process_listeners() -> list[JobListener]:
    """The listeners every new environment starts with, in registration order."""
    return list(_PROCESS_LISTENERS)


class ImposedSettings(JobListener):
    """Settings every environment of the program starts with (``kindling run``'s ``-p``, ``-s``, ``-n``, ``-D``)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = dict(values)

    def configure(self, config: "Configuration") -> None:
        config.update(self.values)
