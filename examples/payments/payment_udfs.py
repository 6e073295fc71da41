"""The walkthrough's Python function: a province id (0-6) to its name."""

from kindling.sql import udf

PROVINCES = ("beijing", "shanghai", "hangzhou", "shenzhen", "jiangxi", "chongqing", "xizang")


@udf(result_type="STRING")
def province_id_to_name(province_id: int) -> str:
    return PROVINCES[province_id]
