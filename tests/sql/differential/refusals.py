"""Corpus entries kindling refuses today, with the construct its refusal names.

The differential test checks this list both ways: a refused entry missing here fails (a new
refusal), and an entry listed here that kindling now answers fails too (take it off the list).
"""

REFUSED: dict[str, str] = {
}
