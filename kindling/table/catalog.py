"""PyFlink's ``pyflink.table.catalog`` names: the full name of a table or view in kindling's one catalog.

>>> from kindling.table.catalog import ObjectIdentifier
>>> str(ObjectIdentifier.of("default_catalog", "default_database", "orders"))
'`default_catalog`.`default_database`.`orders`'
"""

from kindling.sql.object_identifier import ObjectIdentifier, ObjectPath

__all__ = ["ObjectIdentifier", "ObjectPath"]
