"""What every connector shares: the changes an upsert sink makes of a changelog batch."""

from __future__ import annotations

import pyarrow as pa

from kindling.connectors.base import upsert_kinds


def test_update_before_deletes_unless_the_same_key_changes_later_in_the_batch():
    kinds = pa.array(["+I", "-U", "+U", "-U", "+I", "-U", "-D", "-U", "-U"])
    keys = pa.array(["a", "b", "b", "c", "d", "a", "e", None, None])
    assert upsert_kinds(kinds, lambda: keys).to_pylist() == ["+I", None, "+U", "-D", "+I", "-D", "-D", None, "-D"]


def test_a_batch_without_update_before_is_unchanged():
    kinds = pa.array(["+I", "+U", "-D"])
    assert upsert_kinds(kinds, lambda: pa.array([b"k", b"k", b"j"])) is kinds
