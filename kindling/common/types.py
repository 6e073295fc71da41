"""pyflink.common.types: Row and RowKind."""

from kindling.common.row import Row, RowKind

__all__ = ["Row", "RowKind"]
