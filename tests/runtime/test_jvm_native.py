"""RocksDB's JNI library: extracted once into kindling's cache and loaded from there, not copied to /tmp per JVM."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from kindling.runtime import jvm_native


def test_the_library_is_extracted_once_whole_and_named_by_its_jar(tmp_path):
    directory = jvm_native.library_directory(tmp_path)
    if directory is None:
        pytest.skip("no RocksDB JNI library for this platform in PySpark's jars")
    (library,) = directory.glob("librocksdbjni-*.so")
    with zipfile.ZipFile(jvm_native._jar()) as jar:
        assert library.stat().st_size == jar.getinfo(library.name).file_size
    assert directory.name.startswith(jvm_native._jar().stem)
    written = library.stat().st_mtime_ns
    assert jvm_native.library_directory(tmp_path) == directory
    assert library.stat().st_mtime_ns == written  # found, not written again
    assert not list(directory.glob(".*"))  # no partial file left behind


def test_the_directory_goes_first_on_the_library_path_once(monkeypatch, tmp_path):
    monkeypatch.setattr(jvm_native, "library_directory", lambda cache=None: tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/other")
    jvm_native.use_extracted_library()
    jvm_native.use_extracted_library()
    assert os.environ["LD_LIBRARY_PATH"] == f"{tmp_path}:/opt/other"


def test_the_sessions_jvm_loads_rocksdb_from_the_cache(spark):
    directory = jvm_native.library_directory()
    if directory is None:
        pytest.skip("no RocksDB JNI library for this platform in PySpark's jars")
    jvm = spark._jvm
    jvm.org.rocksdb.RocksDB.loadLibrary()
    pid = jvm.java.lang.ProcessHandle.current().pid()
    mapped = {line.split()[-1] for line in Path(f"/proc/{pid}/maps").read_text().splitlines() if "rocksdbjni" in line}
    assert mapped and all(path.startswith(str(directory)) for path in mapped), mapped
