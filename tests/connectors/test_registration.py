"""Every connector's Data Source is registered with the session, safely shared between queries."""

from kindling.connectors import available, get_connector


def test_each_registration_keeps_its_environment_in_a_map_that_is_safe_to_change_while_serialized(spark):
    # Spark's driver-side Python runners add to this map while other queries' tasks are serialized.
    manager = spark._jsparkSession.sessionState().dataSourceManager()
    for name in available():
        source = get_connector(name).data_source.name()
        environment = manager.lookupDataSource(source).dataSourceCls().envVars()
        assert environment.getClass().getName() == "java.util.concurrent.ConcurrentHashMap", name
