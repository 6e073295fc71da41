from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kindling.runtime.python_workers import launcher, source_zips


def test_the_launcher_drops_only_pysparks_source_zips_and_runs_this_interpreter(tmp_path):
    zips = source_zips()
    assert [z.name for z in zips][0] == "pyspark.zip" and len(zips) == 2
    script = launcher(sys.executable, tmp_path)
    assert script is not None and launcher(sys.executable, tmp_path) == script  # one file per interpreter and zips
    path = os.pathsep.join([str(zips[0]), "/opt/a b", str(zips[1]), "/opt/*"])
    done = subprocess.run([script, "-c", "import os, sys; print(os.environ['PYTHONPATH']); print(sys.executable)"],
                          env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["/opt/a b:/opt/*", sys.executable]


def test_another_spark_home_keeps_its_own_zips(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert source_zips() == []
    assert launcher(sys.executable, tmp_path) is None


def test_spark_workers_import_pyspark_from_its_compiled_install(spark):
    def where(_):
        import sys

        import pyspark

        yield pyspark.__file__, [p for p in sys.path if p.endswith("pyspark.zip")]

    module, zips = spark.sparkContext.parallelize([0], 1).mapPartitions(where).collect()[0]
    assert zips == []
    assert Path(module).parent == Path(__import__("pyspark").__file__).parent
