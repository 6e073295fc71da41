-- An endless SQL job for the job manager tests: datagen -> blackhole, a few rows per second.
CREATE TEMPORARY TABLE clicks (page STRING, n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');
CREATE TEMPORARY TABLE sink (page STRING, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT page, n FROM clicks;
