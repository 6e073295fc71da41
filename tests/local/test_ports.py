"""Free loopback ports for local servers that listen on several."""

from kindling.local.ports import free_port, free_ports


def test_free_ports_are_distinct_and_avoid_the_ports_asked_to():
    wanted = free_port()  # free now, as a server's own port is before the server binds it
    ports = free_ports(40, avoid=[wanted])
    assert len(ports) == 40 and len(set(ports)) == 40
    assert wanted not in ports
    assert free_ports(0) == []
