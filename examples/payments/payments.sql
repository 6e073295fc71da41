-- Flink's PyFlink walkthrough (flink-playgrounds pyflink-walkthrough, payment_msg_proccessing.py) in SQL:
-- payment_msg (JSON in Kafka) -> Python UDF province id -> name -> SUM(payAmount) per province -> Elasticsearch.
-- Run with a local broker and Elasticsearch (kindling local kafka start; kindling local elasticsearch start):
--   kindling sql -f examples/payments/payments.sql
-- or everything at once, with a generator and a check of the index: kindling demo payments

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
    'properties.group.id' = 'test_3',
    'scan.startup.mode' = 'earliest-offset',
    'format' = 'json'
);

CREATE TABLE es_sink (
    province   VARCHAR,
    pay_amount DOUBLE,
    PRIMARY KEY (province) NOT ENFORCED
) WITH (
    'connector' = 'elasticsearch-7',
    'hosts' = 'http://127.0.0.1:9200',
    'index' = 'platform_pay_amount_1',
    'document-id.key-delimiter' = '$',
    'sink.bulk-flush.max-size' = '42mb',
    'sink.bulk-flush.max-actions' = '32',
    'sink.bulk-flush.interval' = '1000',
    'sink.bulk-flush.backoff.delay' = '1000',
    'format' = 'json'
);

CREATE TEMPORARY FUNCTION province_id_to_name AS 'payment_udfs.province_id_to_name' LANGUAGE PYTHON;

INSERT INTO es_sink
SELECT province_id_to_name(provinceId) AS province, SUM(payAmount) AS pay_amount
FROM payment_msg
GROUP BY province_id_to_name(provinceId);
