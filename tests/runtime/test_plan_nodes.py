from __future__ import annotations

from pyspark.sql import functions as F

from kindling.runtime.plan_nodes import always_null


def test_a_column_defined_as_null_is_always_null_through_filters_and_renaming_projections(spark):
    rows = spark.readStream.format("rate").load().select("value", F.lit(None).cast("timestamp").alias("rowtime"))
    later = rows.where(F.col("value") > 3).select(F.col("rowtime").alias("rowtime"), "value").select("*")
    assert always_null(rows, "rowtime") and always_null(later, "rowtime")
    assert not always_null(rows, "value") and not always_null(rows, "missing")


def test_a_column_that_may_hold_a_value_is_not(spark):
    rows = spark.readStream.format("rate").load().select("value", F.lit(None).cast("timestamp").alias("rowtime"))
    stamped = spark.readStream.format("rate").load().select("value", F.col("timestamp").alias("rowtime"))
    assert not always_null(rows.withColumn("rowtime", F.current_timestamp()), "rowtime")
    assert not always_null(stamped, "rowtime")
    # a union's output column carries its first input's id: the second input's values are not in that definition
    assert not always_null(rows.unionByName(stamped), "rowtime")
    assert not always_null(rows.select("value", F.coalesce("rowtime", F.current_timestamp()).alias("rowtime")), "rowtime")
    # a column a Python function computes (its output has new ids)
    assert not always_null(rows.mapInArrow(lambda batches: batches, rows.schema), "rowtime")
