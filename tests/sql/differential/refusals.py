"""Corpus entries kindling refuses today, with the construct its refusal names, and entries it answers differently.

The differential test checks both lists both ways: a refused entry missing from REFUSED fails (a new refusal), and an
entry listed here that kindling now answers fails too (take it off the list); likewise for KNOWN_DIFFERENT.
"""

REFUSED: dict[str, str] = {}

# Entries where kindling still gives a different answer than Flink: each one is a defect to fix (or to turn into
# a refusal). The test fails on any difference not listed here, and on a listed entry that now matches.
KNOWN_DIFFERENT: dict[str, str] = {}
