"""The payments program's query (examples/payments/payment_msg_processing.py) over fixed payments, in batch mode.

Run by PyFlink 2.3 to record ``pyflink_reference/payments_province_totals.txt`` (``.venv/pyflink/bin/python
tests/playground/payments_province_totals.py``), and by kindling in test_payments_demo.py.
"""

import importlib.util
from pathlib import Path

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment

PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "payments" / "payment_msg_processing.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("payment_msg_processing", PROGRAM)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("python.fn-execution.memory.managed", "true")
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_system_function("province_id_to_name", program.province_id_to_name)
    payments = [(f"2024-01-01 00:00:{i % 60:02d}", i, i * 1.25 + (i % 3) * 0.1, i % 2, (i * 5) % 7) for i in range(1, 61)]
    schema = DataTypes.ROW([DataTypes.FIELD("createTime", DataTypes.STRING()), DataTypes.FIELD("orderId", DataTypes.BIGINT()),
                            DataTypes.FIELD("payAmount", DataTypes.DOUBLE()), DataTypes.FIELD("payPlatform", DataTypes.INT()),
                            DataTypes.FIELD("provinceId", DataTypes.INT())])
    program.province_totals(t_env.from_elements(payments, schema)).execute().print()


if __name__ == "__main__":
    main()
