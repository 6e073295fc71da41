"""The internal columns kindling adds to users' rows, defined once for every layer.

Sources, formats, operators, SQL and sinks agree on these names; sinks never write a column whose
name starts with :data:`INTERNAL_PREFIX`.
"""

# Sinks never write columns whose names start with this prefix.
INTERNAL_PREFIX = "__kindling_"
# A bounded source ends its data with one marker row whose EOS column is true and whose
# event time is the far future: it pushes Spark's watermark to "+infinity", which fires
# every pending window and timer, as Flink's final watermark does. kindling filters the
# marker out right after the watermark is applied; users never see it.
EOS_COLUMN = INTERNAL_PREFIX + "eos"
# Updating results (unbounded GROUP BY, rolling aggregations, changelog formats) carry Flink's RowKind
# in this column: '+I' insert, '-U' update-before, '+U' update-after, '-D' delete. Sinks that
# understand changelogs read it; when absent every row is an insert.
ROWKIND_COLUMN = INTERNAL_PREFIX + "rowkind"
# A reconciliation's batch re-run of a streaming job (kindling.reconciliation) tags every source row with the
# watermark, in epoch milliseconds, below which the streaming job treated it as late: the watermark of the
# micro-batch before the one that read it (Spark's threshold for late rows). Window TVFs drop and report
# the rows whose window had closed by then, as the streaming job dropped them.
LATE_WATERMARK_COLUMN = INTERNAL_PREFIX + "late_watermark"
