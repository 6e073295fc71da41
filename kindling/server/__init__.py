"""kindling's job manager: runs submitted jobs in their own driver processes, with Flink's REST API, CLI and a dashboard."""
