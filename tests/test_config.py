from datetime import timedelta

import pytest

from kindling import config as cfg
from kindling.config import Configuration
from kindling.options import OptionError


def test_defaults_follow_flink_names():
    conf = Configuration()
    assert conf.get(cfg.CHECKPOINTING_INTERVAL) == timedelta(seconds=1)
    assert conf.get("restart-strategy.type") == "none"
    assert conf.get(cfg.PARALLELISM) is None
    assert conf.get(cfg.STATE_BACKEND) == "rocksdb"


def test_typed_values_are_parsed():
    conf = Configuration({"execution.checkpointing.interval": "200 ms", "parallelism.default": "4", "pipeline.name": "clicks"})
    assert conf.get(cfg.CHECKPOINTING_INTERVAL) == timedelta(milliseconds=200)
    assert conf.get(cfg.PARALLELISM) == 4
    assert conf.get(cfg.PIPELINE_NAME) == "clicks"


def test_unknown_key_names_the_nearest_valid_one():
    with pytest.raises(OptionError) as err:
        Configuration({"execution.checkpointing.intervall": "1 s"})
    message = str(err.value)
    assert "'execution.checkpointing.intervall'" in message
    assert "did you mean 'execution.checkpointing.interval'" in message


def test_bad_values_name_the_key_and_what_is_allowed():
    with pytest.raises(OptionError) as err:
        Configuration({"restart-strategy.type": "sometimes"})
    assert "restart-strategy.type" in str(err.value) and "fixed-delay" in str(err.value)
    with pytest.raises(OptionError) as err:
        Configuration({"parallelism.default": "zero"})
    assert "parallelism.default" in str(err.value) and "integer" in str(err.value)
    with pytest.raises(OptionError) as err:
        Configuration({"parallelism.default": 0})
    assert "at least 1" in str(err.value)


def test_spark_keys_pass_through():
    conf = Configuration({"spark.sql.shuffle.partitions": "3", "spark.executor.memory": "2g"})
    assert conf.spark_conf() == {"spark.sql.shuffle.partitions": "3", "spark.executor.memory": "2g"}


def test_a_failed_update_leaves_the_configuration_unchanged():
    conf = Configuration({"pipeline.name": "a"})
    with pytest.raises(OptionError):
        conf.set("pipeline.nmae", "b")
    assert conf.to_dict() == {"pipeline.name": "a"}
