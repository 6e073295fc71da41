"""The DataStream example programs shipped in the apache-flink 2.3 wheel, fetched at test time.

The examples are Apache Flink's, not kindling's: they are never copied into this repository.
``examples_dir()`` downloads the wheel once with ``pip download apache-flink==2.3.0 --no-deps``
into a cache directory (``$KINDLING_CACHE`` or ``~/.cache/kindling``) and unpacks
``pyflink/examples/datastream/**`` beside it (``examples_dir("table")``: the Table API's examples).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

PYFLINK_VERSION = "2.3.0"

# Example programs that run here (relative to the examples' datastream directory) and whether
# their output is compared record for record ("exact") or only by structure.
RUNNABLE = {
    "word_count.py": "exact",
    "basic_operations.py": "exact",
    "process_json_data.py": "exact",
    "state_access.py": "exact",
    "event_time_timer.py": "exact",
    "windowing/tumbling_time_window.py": "exact",
    "windowing/sliding_time_window.py": "exact",
    "windowing/session_with_gap_window.py": "exact",
    "windowing/session_with_dynamic_gap_window.py": "exact",
    "windowing/tumbling_count_window.py": "exact",
}

# Example programs that need systems kindling does not have here, and why.
NOT_RUNNABLE = {
    "streaming_word_count.py": "needs PyFlink's Table API (StreamTableEnvironment, TableDescriptor, to_data_stream); "
                               "kindling's DataStream<->Table bridge has other names",
    "asyncio/remote_model_inference.py": "calls a remote model-inference service over the internet",
    "connectors/kafka_avro_format.py": "needs a Kafka broker at localhost:9092 and Flink's Avro format jars",
    "connectors/kafka_csv_format.py": "needs a Kafka broker at localhost:9092 and runs unbounded",
    "connectors/kafka_json_format.py": "needs a Kafka broker at localhost:9092 and runs unbounded",
    "connectors/kafka_bytearray_format.py": "needs a Kafka broker at localhost:9092 and runs unbounded",
    "connectors/kafka_row_field_extractor_example.py": "needs a Kafka broker at localhost:9092 and runs unbounded",
    "connectors/elasticsearch.py": "needs an Elasticsearch cluster and Flink's Elasticsearch connector jar",
    "connectors/pulsar.py": "needs a Pulsar cluster and Flink's Pulsar connector jar",
}


def cache_dir() -> Path:
    return Path(os.environ.get("KINDLING_CACHE", Path.home() / ".cache" / "kindling")) / f"apache-flink-{PYFLINK_VERSION}"


def examples_dir(kind: str = "datastream") -> Path:
    """The unpacked ``pyflink/examples/<kind>`` directory of the apache-flink wheel (``datastream`` or ``table``)."""
    prefix = f"pyflink/examples/{kind}/"
    root = cache_dir()
    target = root / "examples"
    marker = target / (".complete" if kind == "datastream" else f".complete-{kind}")
    if marker.exists():
        return target / prefix
    root.mkdir(parents=True, exist_ok=True)
    wheels = sorted(root.glob("apache_flink-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", f"apache-flink=={PYFLINK_VERSION}", "--no-deps",
                        "-d", str(root)], check=True, timeout=600)
        wheels = sorted(root.glob("apache_flink-*.whl"))
    with zipfile.ZipFile(wheels[0]) as wheel:
        for name in wheel.namelist():
            if name.startswith(prefix) and name.endswith(".py"):
                wheel.extract(name, target)
    marker.touch()
    return target / prefix


def reference_dir() -> Path:
    return Path(__file__).parent / "pyflink_reference"


def reference_name(program: str) -> str:
    return program.replace("/", "__").removesuffix(".py") + ".txt"
