-- Flink's PyFlink playground "payment_msg_proccessing", adapted to a local Kafka broker:
-- payment_msg (JSON) -> Python UDF province id -> name -> SUM(payAmount) per province -> upsert-kafka
-- (the playground writes to Elasticsearch; upsert-kafka keeps the same keyed, updating result).
-- Run: kindling sql -f examples/sql/payment_msg.sql   (payment_udfs.py next to this file is importable)

CREATE TABLE payment_msg (
    createTime  VARCHAR,
    orderId     BIGINT,
    payAmount   DOUBLE,
    payPlatform INT,
    provinceId  INT
) WITH (
    'connector' = 'kafka',
    'topic' = 'payment_msg',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'properties.group.id' = 'payment',
    'scan.startup.mode' = 'earliest-offset',
    'scan.bounded.mode' = 'latest-offset',
    'format' = 'json'
);

CREATE TABLE province_pay (
    province   VARCHAR,
    pay_amount DOUBLE,
    PRIMARY KEY (province) NOT ENFORCED
) WITH (
    'connector' = 'upsert-kafka',
    'topic' = 'province_pay',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'key.format' = 'json',
    'value.format' = 'json'
);

CREATE TEMPORARY FUNCTION province_id_to_name AS 'payment_udfs.province_id_to_name' LANGUAGE PYTHON;

INSERT INTO province_pay
SELECT province_id_to_name(provinceId) AS province, SUM(payAmount) AS pay_amount
FROM payment_msg
GROUP BY province_id_to_name(provinceId);
