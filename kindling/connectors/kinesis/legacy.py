"""``'connector' = 'kinesis-legacy'``: the Kinesis connector with the 4.x option dialect only."""

from kindling.connectors.kinesis import KinesisLegacyConnector

CONNECTOR = KinesisLegacyConnector
