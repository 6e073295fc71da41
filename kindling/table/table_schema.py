"""PyFlink's ``pyflink.table.table_schema``: ``TableSchema`` and ``ResolvedSchema`` (kept in ``kindling.sql.table_schema``,
beside the ``TableResult`` whose schema they are too).

>>> from kindling.table.table_schema import TableSchema   # a table's columns with Flink's types, printed as Flink does
"""

from kindling.sql.table_schema import Declaration, ResolvedSchema, TableSchema, declaration_of

__all__ = ["Declaration", "ResolvedSchema", "TableSchema", "declaration_of"]
