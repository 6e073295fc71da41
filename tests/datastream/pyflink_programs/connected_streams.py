"""Connected streams keep each input's type: a typed tuple, a typed Row and an untyped (pickled) object."""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import CoFlatMapFunction, CoMapFunction, KeyedCoProcessFunction
from pyflink.datastream.state import ValueStateDescriptor


class Describe(CoMapFunction):
    def map1(self, value):
        return f"first {value!r} {type(value).__name__}"

    def map2(self, value):
        return f"second {value!r} {type(value).__name__}"


class Words(CoFlatMapFunction):
    def flat_map1(self, value):
        yield value[0]

    def flat_map2(self, value):
        for word in value["words"].split():
            yield word


class Totals(KeyedCoProcessFunction):
    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element1(self, value, ctx):
        total = (self.total.value() or 0) + value[1]
        self.total.update(total)
        yield ctx.get_current_key(), "order", total

    def process_element2(self, value, ctx):
        yield ctx.get_current_key(), "refund " + type(value).__name__, value.amount


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
orders = env.from_collection([("a", 10), ("b", 5), ("a", 7)], type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
refunds = env.from_collection([Row(user="a", amount=3), Row(user="b", amount=1)],
                              type_info=Types.ROW_NAMED(["user", "amount"], [Types.STRING(), Types.LONG()]))
notes = env.from_collection([{"words": "to be"}, {"words": "or not"}])
orders.connect(refunds).map(Describe()).print()
refunds.connect(notes).map(Describe(), Types.STRING()).print()
orders.connect(notes).flat_map(Words(), Types.STRING()).print()
(orders.connect(refunds).key_by(lambda o: o[0], lambda r: r.user)
 .process(Totals(), Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG()])).print())
env.execute()
