-- Flink's table walkthrough ("real-time reporting with the Table API", flink-playgrounds
-- table-walkthrough): transactions from Kafka -> hourly spend per account -> MySQL, with a primary key,
-- so the report is kept up to date row by row (an updating GROUP BY written as upserts).
--
-- `kindling demo spend-report` runs this file end to end (local Kafka and MariaDB, a generator, a
-- check). To run it by hand: `kindling local kafka start`, `kindling local mysql start` (it prints
-- url, user and password), create the MySQL table
--   CREATE TABLE spend_report (account_id BIGINT, log_ts DATETIME(3), amount BIGINT,
--                              PRIMARY KEY (account_id, log_ts));
-- replace the ${...} placeholders below, produce CSV lines "account_id,amount,yyyy-MM-dd HH:mm:ss.SSS"
-- to the topic `transactions`, and run `kindling sql -f examples/spend_report/spend_report.sql`.

CREATE TABLE transactions (
    account_id       BIGINT,
    amount           BIGINT,
    transaction_time TIMESTAMP(3),
    WATERMARK FOR transaction_time AS transaction_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka',
    'topic' = 'transactions',
    'properties.bootstrap.servers' = '${KAFKA_BOOTSTRAP_SERVERS}',
    'scan.startup.mode' = 'earliest-offset',
    'format' = 'csv'
);

CREATE TABLE spend_report (
    account_id BIGINT,
    log_ts     TIMESTAMP(3),
    amount     BIGINT,
    PRIMARY KEY (account_id, log_ts) NOT ENFORCED
) WITH (
    'connector'  = 'jdbc',
    'url'        = '${MYSQL_URL}',
    'table-name' = 'spend_report',
    'username'   = '${MYSQL_USER}',
    'password'   = '${MYSQL_PASSWORD}'
);

INSERT INTO spend_report
SELECT
    account_id,
    FLOOR(transaction_time TO HOUR) AS log_ts,
    SUM(amount) AS amount
FROM transactions
GROUP BY
    account_id,
    FLOOR(transaction_time TO HOUR);
