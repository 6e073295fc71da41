from __future__ import annotations

import json

import pytest

from kindling.runtime.state_layout import MARKER, StateLayoutError, check_and_record


def _committed(checkpoint):
    (checkpoint / "commits").mkdir(parents=True)
    (checkpoint / "commits" / "0").write_text("v1")
    (checkpoint / "state" / "0").mkdir(parents=True)


def test_a_new_checkpoint_is_marked_with_the_layout_and_key_group_count(tmp_path):
    check_and_record(tmp_path / "sink", "job", "sink", ["Totals"], 128)
    assert json.loads((tmp_path / "sink" / MARKER).read_text()) == {"layout": "balanced-key-groups", "maxParallelism": 128}
    check_and_record(tmp_path / "sink", "job", "sink", ["Totals"], 128)  # resuming its own checkpoint is fine


def test_a_sink_without_keyed_state_is_left_alone(tmp_path):
    check_and_record(tmp_path / "sink", "job", "sink", [], 128)
    assert not (tmp_path / "sink").exists()


def test_a_per_key_checkpoint_from_before_key_groups_is_refused_naming_job_sink_and_operator(tmp_path):
    _committed(tmp_path / "sink")
    with pytest.raises(StateLayoutError) as refused:
        check_and_record(tmp_path / "sink", "clicks", "sink", ["CountPerPage"], 128)
    message = str(refused.value)
    assert "job 'clicks'" in message and "sink 'sink'" in message and "'CountPerPage'" in message
    assert "per-key layout" in message and "another name" in message
    assert not (tmp_path / "sink" / MARKER).exists()


def test_a_changed_key_group_count_is_refused(tmp_path):
    check_and_record(tmp_path / "sink", "job", "sink", ["Totals"], 128)
    with pytest.raises(StateLayoutError, match="pipeline.max-parallelism=128 and this run has 256.*= 128"):
        check_and_record(tmp_path / "sink", "job", "sink", ["Totals"], 256)


def test_key_groups_kept_under_their_numbers_are_refused_naming_the_layout(tmp_path):
    _committed(tmp_path / "sink")
    (tmp_path / "sink" / MARKER).write_text(json.dumps({"layout": "key-groups", "maxParallelism": 128}))
    with pytest.raises(StateLayoutError) as refused:
        check_and_record(tmp_path / "sink", "clicks", "sink", ["CountPerPage"], 128)
    message = str(refused.value)
    assert "job 'clicks'" in message and "'CountPerPage'" in message and "under key-group numbers" in message
    assert "another name" in message and "kindling version that wrote it" in message


def test_an_unknown_layout_is_refused_as_written_by_a_newer_kindling(tmp_path):
    _committed(tmp_path / "sink")
    (tmp_path / "sink" / MARKER).write_text(json.dumps({"layout": "key-groups-v9", "maxParallelism": 128}))
    with pytest.raises(StateLayoutError, match="'key-groups-v9'.*newer kindling"):
        check_and_record(tmp_path / "sink", "clicks", "sink", ["CountPerPage"], 128)
