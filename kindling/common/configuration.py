"""pyflink.common.configuration."""

from kindling.config import Configuration

__all__ = ["Configuration"]
