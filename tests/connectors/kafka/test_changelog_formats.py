"""The changelog formats on Kafka: refused for now, naming the format (their row kinds do not yet travel through a
query end to end, and a CDC delete must never be read as an insert). The codecs are tested in tests/formats."""

from __future__ import annotations

import pytest

from kindling.connectors import Sink, Source
from kindling.options import OptionError


@pytest.mark.parametrize("fmt", ["debezium-json", "canal-json", "maxwell-json"])
def test_kafka_refuses_changelog_formats_naming_them(fmt):
    options = {"topic": "t", "properties.bootstrap.servers": "127.0.0.1:1", "format": fmt}
    with pytest.raises(OptionError, match=f"'format' = '{fmt}' is not supported yet"):
        Source("kafka", options, "id BIGINT")
    with pytest.raises(OptionError, match=f"'format' = '{fmt}' is not supported yet"):
        Sink("kafka", options)
