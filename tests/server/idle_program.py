"""A job program without Spark for the job manager's process-handling tests: it waits until its driver is ended."""

import signal

signal.pause()
