"""Corpus entries kindling refuses today, with the construct its refusal names.

The differential test checks this list both ways: a refused entry missing here fails (a new
refusal), and an entry listed here that kindling now answers fails too (take it off the list).

Recorded from a run on a heavily loaded machine (planning only: every job of that run failed with
Spark's "Python worker failed to connect back", so the answers of the entries kindling plans are
not yet compared). These refusals come from Spark's own analysis or parser and name only the
statement ("SELECT"); Spark's message names the routine ("Cannot resolve routine `WEEK`") for the
unknown functions, not for the syntax errors (ARRAY[...] indexing, BETWEEN SYMMETRIC, SIMILAR TO,
IS JSON, JSON_OBJECT's VALUE, OVERLAPS). They are to become refusals naming the function, or answers.
"""

REFUSED: dict[str, str] = {
    "tm-time-typeof": "TYPEOF",
}

# Entries where kindling still gives a different answer than Flink: each one is a defect to fix (or to turn into
# a refusal). The test fails on any difference not listed here, and on a listed entry that now matches.
KNOWN_DIFFERENT: dict[str, str] = {
    # kindling holds TIME values as their text (kindling/sql/types.py): the same text, collected as a string where
    # PyFlink collects a datetime.time
    "tm-time-cast": "a TIME value collects as its text",
    "tm-time-of-timestamp": "a TIME value collects as its text",
}
