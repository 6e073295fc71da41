"""The keyed operator's results gathered across key groups reach Spark at the partition's end, around the expired
timers' results, and never otherwise; Spark's other calls pass through PySpark's own dispatch."""

from pyspark.sql.streaming.stateful_processor_util import TransformWithStateInPandasFuncMode as Mode

from kindling.runtime.transform_with_state import _HandOver


class Client:
    """What PySpark's dispatch reads of Spark's state-server client in these calls (time mode None: no timers)."""

    def __init__(self):
        self.handle_state = None
        self.keys = []

    def set_handle_state(self, state):
        self.handle_state = state

    def set_implicit_key(self, key):
        self.keys.append(key)

    def get_timestamps(self, time_mode):
        return -1, -1

    def remove_implicit_key(self):
        self.keys.append(None)


class Processor:
    def __init__(self):
        self.held = []
        self.closed = False

    def init(self, handle):
        pass

    def handleInputRows(self, key, rows, timer_values):
        self.held.append(f"{key}:{sum(rows)}")
        yield from ()

    def gathered(self):
        held, self.held = self.held, []
        if held:
            yield held

    def close(self):
        self.closed = True


def test_gathered_results_come_out_at_the_partitions_end_and_only_there():
    processor = Processor()
    dispatch = _HandOver(processor, "None")
    client = Client()
    assert list(dispatch.transformWithStateUDF(client, Mode.PROCESS_DATA, ("a",), iter([1, 2]))) == []
    assert list(dispatch.transformWithStateUDF(client, Mode.PROCESS_DATA, ("b",), iter([5]))) == []
    assert client.keys == [("a",), ("b",)]  # PySpark's dispatch set each group's key, as it does for any processor
    assert list(dispatch.transformWithStateUDF(client, Mode.PROCESS_TIMER, None, iter([]))) == [["('a',):3", "('b',):5"]]
    assert list(dispatch.transformWithStateUDF(client, Mode.COMPLETE, None, iter([]))) == []
    assert processor.closed


def test_nothing_gathered_hands_over_nothing():
    dispatch = _HandOver(Processor(), "None")
    assert list(dispatch.transformWithStateUDF(Client(), Mode.PROCESS_TIMER, None, iter([]))) == []
