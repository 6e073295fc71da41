"""The Python function of Flink's PyFlink playground "payment_msg_proccessing": province id -> name."""

from kindling.sql import udf

PROVINCES = ("beijing", "shanghai", "hangzhou", "shenzhen", "jiangxi", "chongqing", "xizang")


@udf(result_type="STRING")
def province_id_to_name(province_id: int) -> str:
    return PROVINCES[province_id]
