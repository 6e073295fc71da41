"""PyFlink's ``pyflink.datastream.formats``: the record schemas of the JSON, CSV and Avro formats.

Each schema is one of kindling's shared formats (:mod:`kindling.formats`) with Flink's options; the
records keep PyFlink's representation (a ``Row`` of the schema's type information).
"""
