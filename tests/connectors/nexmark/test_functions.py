"""The functions the Nexmark suite ships with its source, called as Spark calls a pandas UDF (a Series per argument)."""

import pandas as pd

from kindling.connectors.nexmark.functions import count_char


def test_count_char_counts_the_first_character_of_its_second_argument():
    count = count_char.func
    # a literal character (q14's 'c'): every row's count, 0 for a null text
    assert count(pd.Series(["acc", None, "c", ""]), pd.Series(["c"] * 4)).tolist() == [2, 0, 1, 0]
    # only the first character counts, as in the suite's CountChar
    assert count(pd.Series(["acc", "xcx"]), pd.Series(["cx", "cx"])).tolist() == [2, 1]
    # a character per row
    assert count(pd.Series(["acc", "bb", None]), pd.Series(["c", "b", "a"])).tolist() == [2, 2, 0]
    assert count(pd.Series([], dtype=object), pd.Series([], dtype=object)).tolist() == []
