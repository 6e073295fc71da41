-- Flink's table walkthrough / playground "spend report", adapted to a local Kafka broker:
-- transactions (CSV) with a 5-second watermark -> hourly spend per account -> print.
-- Start a broker with `kindling local kafka start`, produce CSV lines
-- "account_id,amount,yyyy-MM-dd HH:mm:ss.SSS" to the topic `transactions`, then run
--   kindling sql -f examples/sql/spend_report.sql
-- The source is bounded (it reads up to the offsets present at start), so the command exits.

CREATE TABLE transactions (
    account_id       BIGINT,
    amount           BIGINT,
    transaction_time TIMESTAMP(3),
    WATERMARK FOR transaction_time AS transaction_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka',
    'topic' = 'transactions',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'scan.startup.mode' = 'earliest-offset',
    'scan.bounded.mode' = 'latest-offset',
    'format' = 'csv'
);

CREATE TABLE spend_report (
    account_id BIGINT,
    log_ts     TIMESTAMP(3),
    amount     BIGINT,
    PRIMARY KEY (account_id, log_ts) NOT ENFORCED
) WITH (
    'connector' = 'print'
);

INSERT INTO spend_report
SELECT
    account_id,
    TUMBLE_START(transaction_time, INTERVAL '1' HOUR) AS log_ts,
    SUM(amount) AS amount
FROM transactions
GROUP BY
    account_id,
    TUMBLE(transaction_time, INTERVAL '1' HOUR);
