"""Flink's PyFlink walkthrough (flink-playgrounds pyflink-walkthrough) as a PyFlink 2.3 Table API program.

payment_msg (JSON in Kafka) -> ``province_id_to_name`` (a Python UDF) -> SUM(payAmount) per province ->
an ``elasticsearch-7`` index, the same job as ``payments.sql``. It is the walkthrough's
``payment_msg_proccessing.py`` with the two lines PyFlink 2.x no longer accepts changed
(``TimeCharacteristic`` is gone, and ``register_function`` became ``create_temporary_system_function``),
the servers taken from the environment, and the job's TableResult returned so a caller can watch it.

`kindling demo payments --table-api` runs it end to end. By hand, with a local broker and Elasticsearch
(`kindling local kafka start`; `kindling local elasticsearch start`):

    KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:9092 ELASTICSEARCH_HOSTS=http://127.0.0.1:9200 \
        kindling run examples/payments/payment_msg_processing.py

or submitted to a job manager (`kindling run -d -m 127.0.0.1:8081 ...`), whose dashboard then charts the
index's totals on the job's page, as Kibana does in the walkthrough.
"""

import os

from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, StreamTableEnvironment, Table
from pyflink.table.expressions import call, col
from pyflink.table.udf import udf

KAFKA_BOOTSTRAP_SERVERS = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
ELASTICSEARCH_HOSTS = os.environ.get("ELASTICSEARCH_HOSTS", "http://127.0.0.1:9200")

provinces = ("beijing", "shanghai", "hangzhou", "shenzhen", "jiangxi", "chongqing", "xizang")


@udf(input_types=[DataTypes.INT()], result_type=DataTypes.STRING())
def province_id_to_name(id):
    return provinces[id]


def province_totals(payments: Table) -> Table:
    """The walkthrough's query: the amount paid per province, the province named by the UDF."""
    return payments \
        .select(call('province_id_to_name', col('provinceId')).alias("province"), col('payAmount')) \
        .group_by(col('province')) \
        .select(col('province'), call('sum', col('payAmount')).alias("pay_amount"))


def log_processing(env=None, kafka_servers=KAFKA_BOOTSTRAP_SERVERS, es_hosts=ELASTICSEARCH_HOSTS):
    env = env or StreamExecutionEnvironment.get_execution_environment()
    t_env = StreamTableEnvironment.create(stream_execution_environment=env)
    t_env.get_config().set("python.fn-execution.memory.managed", "true")

    create_kafka_source_ddl = f"""
            CREATE TABLE payment_msg(
                createTime VARCHAR,
                orderId BIGINT,
                payAmount DOUBLE,
                payPlatform INT,
                provinceId INT
            ) WITH (
              'connector' = 'kafka',
              'topic' = 'payment_msg',
              'properties.bootstrap.servers' = '{kafka_servers}',
              'properties.group.id' = 'test_3',
              'scan.startup.mode' = 'earliest-offset',
              'format' = 'json'
            )
            """

    create_es_sink_ddl = f"""
            CREATE TABLE es_sink(
                province VARCHAR PRIMARY KEY NOT ENFORCED,
                pay_amount DOUBLE
            ) with (
                'connector' = 'elasticsearch-7',
                'hosts' = '{es_hosts}',
                'index' = 'platform_pay_amount_1',
                'document-id.key-delimiter' = '$',
                'sink.bulk-flush.max-size' = '42mb',
                'sink.bulk-flush.max-actions' = '32',
                'sink.bulk-flush.interval' = '1000',
                'sink.bulk-flush.backoff.delay' = '1000',
                'format' = 'json'
            )
    """

    t_env.execute_sql(create_kafka_source_ddl)
    t_env.execute_sql(create_es_sink_ddl)
    t_env.create_temporary_system_function('province_id_to_name', province_id_to_name)

    return province_totals(t_env.from_path("payment_msg")).execute_insert("es_sink")


if __name__ == '__main__':
    log_processing()
