"""Spark's hash partitioning computed in Python: the same hashes as Spark's, and key groups spread evenly."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import functions as F

from kindling.runtime.hash_partitioning import balanced_values, spark_hash, spark_partition

VALUES = [0, 1, -1, 7, 127, 2**31 - 1, -(2**31), 123456789, -98765]


@pytest.mark.integration
def test_hashes_and_partitions_are_sparks(spark):
    rows = spark.createDataFrame([(a, b) for a in VALUES for b in VALUES[:4]], "a int, b int").select(
        "a", "b", F.hash("a").alias("h1"), F.hash("a", "b").alias("h2"), F.pmod(F.hash("a", "b"), F.lit(3)).alias("p")).collect()
    assert [(r.h1, r.h2, r.p) for r in rows] == [(spark_hash([r.a]), spark_hash([r.a, r.b]), spark_partition([r.a, r.b], 3))
                                                 for r in rows]


@pytest.mark.parametrize("prefix", [(), (2**31 - 1,)])
def test_balanced_key_groups_fill_every_power_of_two_partition_count_equally(prefix):
    values = balanced_values(128, prefix)
    assert len(set(values)) == 128 and min(values) >= 0
    for partitions in (1, 2, 4, 8, 16, 32, 64, 128):
        spread = Counter(spark_partition([*prefix, v], partitions) for v in values)
        assert spread == {p: 128 // partitions for p in range(partitions)}, partitions
    assert Counter(spark_partition([g], 2) for g in range(128)) != {0: 64, 1: 64}  # the numbers themselves are not


def test_a_key_group_count_other_than_a_power_of_two_is_balanced_up_to_its_largest_power_of_two():
    values = balanced_values(100)
    assert len(set(values)) == 100
    assert Counter(spark_partition([v], 4) for v in values) == {p: 25 for p in range(4)}
    assert balanced_values(100) == values  # a key group's value never changes: its state is kept under it
