"""A class-data sharing archive for the driver JVM: Spark's classes mapped ready-parsed instead of loaded.

A Spark driver loads some 15,000 classes before its first query runs; on a 2-core machine parsing and
verifying them is a third of the time a driver takes to start (15–19 s measured here for a small SQL
job, more while other JVMs compete for the cores). Java 13+ can dump the classes a run loaded into a
*dynamic CDS archive* (``-XX:ArchiveClassesAtExit``) that later JVMs map (``-XX:SharedArchiveFile``):
the same job then takes 10–12 s. kindling trains one archive per (PySpark install, Java runtime) by
running a small SQL job, and every driver started on that pair uses it.

The archive is an optimisation only: a JVM that cannot use it (another Java build, a changed class
path) starts as it would without, and no archive means no flag. ``make setup`` trains it, as does
``kindling class-archive``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

# Quiet: a JVM that finds the archive unusable says so at warning level on every start.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
_OWN_FLAGS = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare")


def _java() -> Optional[Path]:
    """The java binary Spark's launcher runs: $JAVA_HOME/bin/java, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home, "bin", "java") if home else None
    if candidate is None or not candidate.exists():
        found = shutil.which("java")
        candidate = Path(found) if found else None
    return candidate.resolve() if candidate else None


def _jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def archive_path() -> Optional[Path]:
    """Where the archive for this PySpark install and Java runtime lives (whether or not it exists yet).

    The name hashes the Spark jars directory and the Java binary (path, size, mtime), so an upgrade of
    either names a new archive instead of offering a stale one.

    >>> path = archive_path()
    >>> path is None or path.suffix == ".jsa"
    True
    """
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = _jars()
    stat = java.stat()
    key = f"{pyspark.__version__}|{jars}|{java}|{stat.st_size}|{stat.st_mtime_ns}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kindling" / "jvm"
    return cache / f"spark-{pyspark.__version__}-{digest}.jsa"


def driver_java_options(configured: str = "") -> str:
    """The class-sharing flags to add to a driver's java options that already hold ``configured``.

    Nothing when there is no archive or when ``configured`` already decides class sharing itself.
    """
    if any(flag in configured for flag in _OWN_FLAGS):
        return ""
    path = archive_path()
    if path is None or not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} {_QUIET}"


_TRAINING_JOB = """
SET 'execution.checkpointing.interval' = '1 s';
SET 'table.local-time-zone' = 'UTC';
CREATE TEMPORARY TABLE clicks (
    user_id BIGINT,
    url STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
    'connector' = 'datagen',
    'number-of-rows' = '200',
    'fields.user_id.min' = '1',
    'fields.user_id.max' = '5',
    'fields.url.length' = '4'
);
CREATE TEMPORARY TABLE counts (user_id BIGINT, window_start TIMESTAMP(3), clicks BIGINT)
WITH ('connector' = 'blackhole');
INSERT INTO counts
SELECT user_id, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY user_id, window_start, window_end;
"""


def train(timeout: float = 600.0) -> Optional[Path]:
    """Run a small SQL job in a fresh driver that dumps the classes it loaded; return the archive's path.

    The dump goes to a temporary file renamed into place once that driver has exited, so a driver
    starting meanwhile never maps a half-written archive. Returns None when no Java runtime is found.
    """
    target = archive_path()
    if target is None:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    with tempfile.TemporaryDirectory(prefix="kindling-jvm-classes-") as work:
        script = Path(work, "training.sql")
        script.write_text(_TRAINING_JOB)
        command = [
            sys.executable, "-m", "kindling", "sql", "-f", str(script),
            "-D", f"spark.driver.extraJavaOptions=-XX:ArchiveClassesAtExit={partial} {_QUIET}",
            "-D", f"state.checkpoints.dir={Path(work, 'checkpoints')}",
        ]
        try:
            done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            partial.unlink(missing_ok=True)
            raise RuntimeError(f"training the JVM class archive took over {timeout:.0f} s") from None
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"training the JVM class archive failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    # A truncated archive (a full disk during the dump) crashes the JVM that maps it: try it first.
    check = subprocess.run([str(_java()), f"-XX:SharedArchiveFile={partial}", *_QUIET.split(), "-version"],
                           capture_output=True, timeout=120)
    if check.returncode != 0:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"the trained JVM class archive does not load (java exit {check.returncode}); none kept")
    os.replace(partial, target)
    target.with_suffix(".jars").write_text(str(_jars()))
    prune(target.parent)
    return target


def prune(directory: Path) -> list[Path]:
    """Delete the archives of PySpark installs that are gone (a removed virtualenv); return what went."""
    removed = []
    for record in directory.glob("*.jars"):
        if not Path(record.read_text().strip()).is_dir():
            for stale in (record.with_suffix(".jsa"), record):
                stale.unlink(missing_ok=True)
                removed.append(stale)
    return removed


def main(force: bool = False) -> int:
    """``kindling class-archive``: train the archive unless it exists (``force``: train it again)."""
    target = archive_path()
    if target is None:
        print("no Java runtime found: nothing to train", file=sys.stderr)
        return 1
    if target.is_file() and not force:
        target.with_suffix(".jars").write_text(str(_jars()))  # archives trained before the records were kept
        print(f"JVM class archive: {target} (exists)")
        return 0
    path = train()
    print(f"JVM class archive: {path} ({path.stat().st_size // 2**20} MiB)")
    return 0
