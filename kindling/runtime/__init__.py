"""Running pipelines: the Spark session, query supervision, progress and metrics."""
