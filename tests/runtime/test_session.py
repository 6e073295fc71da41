"""The SparkSession kindling configures: credentials in connector options stay out of plans."""

from __future__ import annotations

import pytest

from kindling.connectors.base import spark_format

pytestmark = pytest.mark.integration


def test_explain_redacts_credentials_in_connector_options(spark):
    secrets = {"avro-confluent.basic-auth.user-info": "alice:s3cr3t-pass", "s3.secret-key": "wJalrXUtnFEMI-key",
               "properties.sasl.jaas.config": "org.Login required password='jaas-pw';"}
    rows = (spark.readStream.format(spark_format("datagen")).options(**{"number-of-rows": "1", **secrets})
            .schema("id BIGINT").load())
    plan = spark._jvm.PythonSQLUtils.explainString(rows._jdf.queryExecution(), "extended")
    assert "number-of-rows" in plan  # options are shown ...
    for value in secrets.values():  # ... but not the credentials
        assert value not in plan


def test_a_spark_connect_master_is_refused_naming_the_option_and_what_is_missing():
    from kindling.config import Configuration
    from kindling.options import OptionError
    from kindling.runtime.session import get_or_create_session

    with pytest.raises(OptionError, match=r"'kindling.spark.master' = 'sc://127.0.0.1:15002': Spark Connect is not supported.*_jdf"):
        get_or_create_session(Configuration({"kindling.spark.master": "sc://127.0.0.1:15002"}))
