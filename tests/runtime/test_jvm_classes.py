from __future__ import annotations

from kindling.runtime import jvm_classes
from kindling.runtime.session import _driver_java_options


def test_the_archive_is_offered_only_once_trained_and_never_over_the_users_own_sharing_flags(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = jvm_classes.archive_path()
    assert path is not None and path.is_relative_to(tmp_path / "kindling" / "jvm")
    assert jvm_classes.driver_java_options() == ""
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    assert jvm_classes.driver_java_options("-Dx=1") == f"-XX:SharedArchiveFile={path} -Xlog:cds=off -Xlog:cds+dynamic=off"
    for own in ("-Xshare:off", f"-XX:SharedArchiveFile={tmp_path}/other.jsa", "-XX:ArchiveClassesAtExit=/tmp/a.jsa"):
        assert jvm_classes.driver_java_options(f"-Dx=1 {own}") == ""


def test_the_users_java_options_come_after_kindlings_so_theirs_win(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    options = _driver_java_options("-Dlog4j2.configurationFile=/etc/mine.properties -Xss4m")
    assert options.startswith("-Dlog4j2.configurationFile=") and "log4j2.properties" in options.split()[0]
    assert options.endswith("-Dlog4j2.configurationFile=/etc/mine.properties -Xss4m")


def test_the_session_driver_maps_the_trained_archive(spark):
    path = jvm_classes.archive_path()
    assert path is not None and path.is_file(), "no JVM class archive: `make setup` (or `kindling class-archive`) trains it"
    jvm = spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert f"-XX:SharedArchiveFile={path}" in arguments
    assert "sharing" in jvm.java.lang.System.getProperty("java.vm.info")


def test_archives_of_removed_installs_are_pruned(tmp_path):
    kept, gone = tmp_path / "spark-a.jsa", tmp_path / "spark-b.jsa"
    for archive, jars in ((kept, tmp_path), (gone, tmp_path / "removed-venv" / "jars")):
        archive.write_bytes(b"archive")
        archive.with_suffix(".jars").write_text(str(jars))
    assert sorted(p.name for p in jvm_classes.prune(tmp_path)) == ["spark-b.jars", "spark-b.jsa"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spark-a.jars", "spark-a.jsa"]
