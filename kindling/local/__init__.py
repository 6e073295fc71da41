"""Embedded local services: the defaults for `make demo` and the servers tests run against."""
