"""The jdbc tests' database: each test that takes ``db`` runs against PostgreSQL and against MariaDB."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["postgres", "mysql"])
def db(request):
    return request.getfixturevalue(request.param)
