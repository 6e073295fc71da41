"""key_by leaves records unchanged, get_current_key() has the selector's type, two execute() calls both print."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction


class KeyOf(KeyedProcessFunction):
    def process_element(self, value, ctx):
        key = ctx.get_current_key()
        yield value, key, type(key).__name__


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
ds = env.from_collection([(1, "a", 10), (2, "b", 20), (1, "c", 30)],
                         type_info=Types.TUPLE([Types.INT(), Types.STRING(), Types.LONG()]))
ds.key_by(lambda r: r[0]).process(KeyOf()).print()
env.execute()

untyped = env.from_collection([(1, "a", 10), (2, "b", 20), (1, "c", 30)])
untyped.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1], a[2] + b[2])).print()
untyped.key_by(lambda r: r[1]).map(lambda r: r[2] * 2).print()
env.execute()
