"""A program's Python requirements (PyFlink's ``set_python_requirements``), checked against the interpreter that runs them.

PyFlink installs a requirements file into its Python workers' environment. kindling's Python workers run the
interpreter the program runs in (locally; a cluster's executors run the one Spark is configured with), so
instead of installing anything it checks that interpreter now: a requirement that is not met fails here,
naming the package and what is installed, rather than as an import error inside a running job.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Iterator

from packaging.requirements import InvalidRequirement, Requirement


def _requirement_lines(path: Path) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):  # pip options (-r, --index-url, ...) install nothing by themselves
            yield number, line


def unmet_requirements(requirements_file: str) -> list[str]:
    """Each requirement of the file this interpreter does not satisfy, with what is installed instead."""
    path = Path(requirements_file)
    if not path.is_file():
        raise FileNotFoundError(f"set_python_requirements: no requirements file at '{requirements_file}'")
    unmet = []
    for number, line in _requirement_lines(path):
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            raise ValueError(f"set_python_requirements: line {number} of '{requirements_file}' is not a requirement: {exc}") from None
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            version = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            unmet.append(f"{requirement} (not installed)")
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            unmet.append(f"{requirement} ({version} installed)")
    return unmet


def check_requirements(requirements_file: str) -> None:
    """Fail, naming each unmet requirement, unless this interpreter satisfies the requirements file.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("pyarrow>=1\\n# a comment\\n")
    >>> check_requirements(f.name); os.unlink(f.name)
    """
    unmet = unmet_requirements(requirements_file)
    if unmet:
        raise RuntimeError(f"set_python_requirements: kindling runs Python functions with this interpreter ({sys.executable}), "
                           f"which does not meet: {'; '.join(unmet)}. Install them into it: "
                           f"{sys.executable} -m pip install -r {requirements_file}")


__all__ = ["check_requirements", "unmet_requirements"]
