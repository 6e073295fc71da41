"""Functions the Nexmark suite ships with its source: ``count_char`` (q14's ``CountChar``).

``CREATE FUNCTION count_char AS 'kindling.connectors.nexmark.functions.count_char' LANGUAGE PYTHON``
"""

from __future__ import annotations

import re

import pandas as pd

from kindling.sql.functions import udf


@udf(result_type="BIGINT", func_type="pandas")
def count_char(s: pd.Series, character: pd.Series) -> pd.Series:
    """How often the first character of ``character`` occurs in ``s`` (0 for a null ``s``), vectorised."""
    if len(s) == 0:
        return pd.Series([], dtype="int64")
    first = character.iloc[0]
    if isinstance(first, str) and first and (character.to_numpy() == first).all():  # a literal, as in the suite's q14
        return s.fillna("").str.count(re.escape(first[0])).astype("int64")
    chars = character.astype(str).str[:1]
    return pd.Series([str(v).count(c) if v is not None and c else 0 for v, c in zip(s, chars)], dtype="int64")
