"""``import pyflink...`` resolves to kindling's modules; unsupported names fail where they are used (no Spark)."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_pyflink_imports_are_kindling_names():
    result = _run("""
        import kindling.pyflink_compat
        from pyflink.common import Types, Row, Time, Duration, WatermarkStrategy, Encoder, Configuration
        from pyflink.common.typeinfo import Types as T2
        from pyflink.common.watermark_strategy import TimestampAssigner
        from pyflink.datastream import StreamExecutionEnvironment, RuntimeExecutionMode, ProcessWindowFunction
        from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext, MapFunction
        from pyflink.datastream.state import ValueStateDescriptor, StateTtlConfig
        from pyflink.datastream.window import EventTimeSessionWindows, SessionWindowTimeGapExtractor, TimeWindow, CountWindow
        from pyflink.datastream.connectors.file_system import FileSink, OutputFileConfig, RollingPolicy
        import kindling, kindling.common, kindling.datastream
        assert StreamExecutionEnvironment is kindling.StreamEnvironment
        assert Types is T2 is kindling.common.Types
        assert KeyedProcessFunction is kindling.datastream.KeyedProcessFunction
        assert WatermarkStrategy is kindling.datastream.WatermarkStrategy
        class F(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
            def process(self, key, context: ProcessWindowFunction.Context[TimeWindow], elements):
                return []
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_unsupported_names_fail_at_use_with_advice():
    result = _run("""
        import kindling.pyflink_compat
        from pyflink.table import StreamTableEnvironment, TableDescriptor
        from pyflink.table.udf import TableFunction
        print("imported")
        TableFunction()
    """)
    assert "imported" in result.stdout
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: pyflink.table.udf.TableFunction is a PyFlink API that kindling does not support")
    assert "execute_sql" in last
