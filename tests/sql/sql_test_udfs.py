"""Python functions used by the SQL tests through CREATE TEMPORARY FUNCTION ... LANGUAGE PYTHON."""

from kindling.sql import udf

PROVINCES = ("beijing", "shanghai", "hangzhou", "shenzhen", "jiangxi", "chongqing", "xizang")


@udf(result_type="STRING")
def province_id_to_name(province_id):
    """The payment playground's function: a province id to its name."""
    return PROVINCES[province_id]


@udf(result_type="BIGINT", func_type="pandas")
def times_ten(values):
    """Vectorised: a pandas Series in, a Series out."""
    return values * 10


def undecorated(value):
    return value
