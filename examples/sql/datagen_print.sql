-- Flink's documentation example for the datagen and print connectors, bounded so that it ends.
-- Run: kindling sql -f examples/sql/datagen_print.sql
SET 'execution.checkpointing.interval' = '1 s';

CREATE TEMPORARY TABLE Orders (
    order_number BIGINT,
    price        DECIMAL(10, 2),
    buyer        STRING,
    order_time   TIMESTAMP(3)
) WITH (
    'connector' = 'datagen',
    'number-of-rows' = '10',
    'fields.order_number.kind' = 'sequence',
    'fields.order_number.start' = '1',
    'fields.order_number.end' = '10',
    'fields.price.min' = '1',
    'fields.price.max' = '100',
    'fields.buyer.length' = '8'
);

-- The print table takes the columns of Orders and none of its options.
CREATE TEMPORARY TABLE print_table WITH ('connector' = 'print') LIKE Orders (EXCLUDING ALL);

INSERT INTO print_table SELECT * FROM Orders;
