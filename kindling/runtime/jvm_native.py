"""RocksDB's JNI library for the driver JVM, extracted once instead of by every JVM.

Spark's RocksDB state store (the one ``transformWithState``, and so every keyed operator, runs on) loads
RocksDB's native library through ``RocksDB.loadLibrary()``: it first asks the JVM's library path for
``librocksdbjni-<platform>.so`` and, not finding it, copies the 15 MB file out of the rocksdbjni jar into
a new temporary file per JVM, deleted only when that JVM exits normally. A job that is killed, crashes
or is cancelled by a signal leaves its copy in the temp directory: a test run that kills jobs on
purpose left gigabytes there. kindling extracts the library once per rocksdbjni jar into its cache
(``~/.cache/kindling/jvm``) and puts that directory first on ``LD_LIBRARY_PATH``, which the JVM's
library path starts with: RocksDB then loads it in place.

Only where the file's platform is certain (glibc Linux on x86-64 or aarch64); elsewhere the JVM does
as it did.
"""

from __future__ import annotations

import os
import platform
import sys
import zipfile
from pathlib import Path
from typing import Optional

_LIBRARIES = {"x86_64": "librocksdbjni-linux64.so", "aarch64": "librocksdbjni-linux-aarch64.so"}


def _jar() -> Optional[Path]:
    import pyspark

    jars = sorted((Path(pyspark.__file__).resolve().parent / "jars").glob("rocksdbjni-*.jar"))
    return jars[-1] if jars else None


def library_directory(cache: Optional[Path] = None) -> Optional[Path]:
    """The directory holding this PySpark's RocksDB JNI library, extracting it the first time; None where the
    platform's file is not known or the jar is absent.

    >>> directory = library_directory()
    >>> directory is None or any(directory.glob("librocksdbjni-*.so"))
    True
    """
    name = _LIBRARIES.get(platform.machine())
    jar = _jar()
    if not sys.platform.startswith("linux") or name is None or jar is None or platform.libc_ver()[0] != "glibc":
        return None
    stat = jar.stat()
    base = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kindling" / "jvm"
    directory = base / f"{jar.stem}-{stat.st_size}"  # a new jar (another RocksDB) names a new directory
    target = directory / name
    if target.is_file():
        return directory
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{name}.{os.getpid()}"
        with zipfile.ZipFile(jar) as archive, archive.open(name) as source, open(partial, "wb") as out:
            while chunk := source.read(1 << 20):
                out.write(chunk)
        os.replace(partial, target)  # atomic: a JVM starting meanwhile sees the whole file or none
    except (OSError, KeyError, zipfile.BadZipFile):
        return None  # no cache to write to, or no such file in the jar: RocksDB extracts its own copy as before
    return directory


def use_extracted_library() -> None:
    """Put the extracted library's directory first on ``LD_LIBRARY_PATH`` for the JVMs this process starts."""
    directory = library_directory()
    if directory is None:
        return
    current = os.environ.get("LD_LIBRARY_PATH", "")
    if str(directory) in current.split(os.pathsep):
        return
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(directory), current) if p)
