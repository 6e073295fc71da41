"""Flink's table walkthrough ("real-time reporting with the Table API") as a PyFlink Table API program.

The same job as ``spend_report.sql``: transactions from Kafka -> hourly spend per account -> MySQL. ``report``
is the walkthrough's ``SpendReport.report`` written with PyFlink's Table API; the tables are created in SQL,
as the walkthrough does.

`kindling demo spend-report --table-api` runs it end to end. To run it by hand (with kindling: `kindling run`,
so that the pyflink imports resolve to kindling's Table API): start Kafka and MySQL as spend_report.sql says,
then

    KAFKA_BOOTSTRAP_SERVERS=... MYSQL_URL=... MYSQL_USER=... MYSQL_PASSWORD=... kindling run examples/spend_report/spend_report.py
"""

import os

from pyflink.table import EnvironmentSettings, Table, TableEnvironment
from pyflink.table.expressions import TimeIntervalUnit, col


def report(transactions: Table) -> Table:
    return (transactions
            .select(col("account_id"), col("transaction_time").floor(TimeIntervalUnit.HOUR).alias("log_ts"), col("amount"))
            .group_by(col("account_id"), col("log_ts"))
            .select(col("account_id"), col("log_ts"), col("amount").sum.alias("amount")))


def create_tables(t_env: TableEnvironment, bootstrap_servers: str, url: str, user: str, password: str) -> None:
    t_env.execute_sql(f"""
        CREATE TABLE transactions (
            account_id       BIGINT,
            amount           BIGINT,
            transaction_time TIMESTAMP(3),
            WATERMARK FOR transaction_time AS transaction_time - INTERVAL '5' SECOND
        ) WITH (
            'connector' = 'kafka',
            'topic' = 'transactions',
            'properties.bootstrap.servers' = '{bootstrap_servers}',
            'scan.startup.mode' = 'earliest-offset',
            'format' = 'csv'
        )""")
    t_env.execute_sql(f"""
        CREATE TABLE spend_report (
            account_id BIGINT,
            log_ts     TIMESTAMP(3),
            amount     BIGINT,
            PRIMARY KEY (account_id, log_ts) NOT ENFORCED
        ) WITH (
            'connector'  = 'jdbc',
            'url'        = '{url}',
            'table-name' = 'spend_report',
            'username'   = '{user}',
            'password'   = '{password}'
        )""")


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    create_tables(t_env, os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MYSQL_URL"], os.environ["MYSQL_USER"],
                  os.environ["MYSQL_PASSWORD"])
    report(t_env.from_path("transactions")).execute_insert("spend_report").wait()


if __name__ == "__main__":
    main()
