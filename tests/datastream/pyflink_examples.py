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

# Example programs that run here (relative to the examples' datastream directory) and how their output is compared:
# "exact": record for record with PyFlink's, the program run to its end (test_pyflink_examples.py);
# "kafka": record for record, and the topic's messages byte for byte, against a broker at localhost:9092 (what the
#          programs hardcode), stopped once the records are printed as their reads never end
#          (test_pyflink_kafka_examples.py); PyFlink cannot run them here (no Kafka connector jar), so the reference
#          is PyFlink's output of a stand-in (pyflink_stand_ins/: the same records through Flink's own schemas);
# "structure": random or unbounded output, whose shape is compared (test_pyflink_kafka_examples.py);
# "avro": as "kafka", but PyFlink has no Avro jar here, so nothing can be recorded: the topic is compared with the
#         Avro specification's binary encoding of the records, the printed lines with what PyFlink printed for the
#         same Rows read through its JSON schema (test_pyflink_kafka_examples.py).
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
    "connectors/kafka_json_format.py": "kafka",
    "connectors/kafka_csv_format.py": "kafka",
    "connectors/kafka_bytearray_format.py": "kafka",
    "connectors/kafka_row_field_extractor_example.py": "kafka",
    "connectors/kafka_avro_format.py": "avro",
    "streaming_word_count.py": "structure",
}

# Example programs that need systems kindling does not have here, and why.
NOT_RUNNABLE = {
    "asyncio/remote_model_inference.py": "calls a remote model-inference service over the internet",
    "connectors/elasticsearch.py": "writes to an Elasticsearch 6 cluster on localhost:9200 first, with a mapping type ('bar'), "
                                   "which the local servers (Elasticsearch 8, OpenSearch 2) refuse; and kindling has no "
                                   "DataStream Elasticsearch sink builders yet (its Elasticsearch sink is Flink SQL's)",
    "connectors/pulsar.py": "needs a Pulsar cluster and Flink's Pulsar connector jar",
}

STAND_INS = Path(__file__).parent / "pyflink_stand_ins"


def stand_in(program: str) -> Path:
    """The program PyFlink runs to record a "kafka" example's reference (the example with Kafka taken out)."""
    return STAND_INS / Path(program).name


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


def messages_reference_name(program: str) -> str:
    """The file of a "kafka" example's topic messages as Flink's schemas make them (JSON: topic, keys and values)."""
    return program.replace("/", "__").removesuffix(".py") + ".messages.json"
