"""What a keyed operator's map side costs: stateful.py's input through each step of kindling's packing, alone.

Each variant reads the same bounded datagen input (``--records`` rows, 100k keys) and writes to Spark's no-op sink:

* ``source``: the input alone;
* ``project``: the keyed operator's columns (key group, key, event time, fields), computed in the JVM;
* ``identity``: the same through a ``mapInArrow`` that hands its batches back unchanged (the passage JVM -> Arrow ->
  Python -> JVM alone);
* ``pack``: the same through kindling's packing (``key_group_batches.pack``: one Arrow IPC cell per key group);
* ``shuffle-raw``: the projected rows shuffled by key group, unpacked;
* ``pack+shuffle``: the packed cells shuffled by key group (what the keyed operator's map stage does).

Prints each variant's wall time (the faster of ``--rounds``, turns alternating) and its cost over ``project``.

    python benchmarks/map_side.py [--records 2000000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any, Callable, Dict, Iterator

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from stateful import source

from kindling import StreamEnvironment
from kindling.datastream import key_group_batches, operator
from kindling.datastream.operator_columns import OperatorColumns


def _identity(batches: Iterator[Any]) -> Iterator[Any]:
    yield from batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="kindling-map-side-")
    env = StreamEnvironment({"parallelism.default": 2, "kindling.log.level": "ERROR"})

    def read() -> DataFrame:
        return env.from_source(source(args.records, 100_000), source_name="datagen").to_dataframe()

    def project() -> DataFrame:
        # The keyed operator's own input columns (kindling.datastream.operator.run_operator's projection, one input)
        df = read().withColumn(operator.key_column(0), F.col("key"))
        record = StructType([f for f in df.schema.fields if f.name in ("id", "key", "value")])
        layout = OperatorColumns([record["key"].dataType], [record], False, operator.from_pandas)
        columns = layout.columns(lambda i: F.col(operator.key_column(i)), lambda i, name: F.col(name), F.lit(0),
                                 F.lit(None).cast("long"), F.lit(False), [record])
        return df.select(operator.key_group(1, 128, False).alias("group"), *columns)

    variants: Dict[str, Callable[[], DataFrame]] = {
        "source": read,
        "project": project,
        "identity": lambda: (lambda df: df.mapInArrow(_identity, df.schema))(project()),
        "pack": lambda: key_group_batches.pack(project(), ["group"]),
        "shuffle-raw": lambda: project().repartition(2, "group"),
        "pack+shuffle": lambda: key_group_batches.pack(project(), ["group"]).repartition(2, "group"),
    }
    best: Dict[str, float] = {}
    for round_ in range(args.rounds + 1):  # round 0 warms the JVM and the workers up
        for name in (list(variants) if round_ % 2 == 0 else list(variants)[::-1]):
            started = time.monotonic()
            query = (variants[name]().writeStream.format("noop").option("checkpointLocation", f"{root}/{name}{round_}")
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            if round_:
                best[name] = min(best.get(name, float("inf")), time.monotonic() - started)
    for name in variants:
        seconds = best[name]
        print(f"{name:>13}: {seconds:5.2f} s ({seconds - best['project']:+.2f} s over project)")


if __name__ == "__main__":
    main()
