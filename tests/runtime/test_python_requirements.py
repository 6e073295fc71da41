"""set_python_requirements: a requirements file checked against the interpreter that runs Python functions."""

import pytest

from kindling.runtime.python_requirements import check_requirements, unmet_requirements


def test_met_requirements_pass_and_pip_options_comments_and_other_platforms_are_skipped(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# what the job imports\n--index-url https://example.invalid/simple\npyarrow>=1  # columnar\n"
                            "\nnot-a-package-of-kindling==1.0; python_version < '3'\n")
    check_requirements(str(requirements))


def test_unmet_requirements_are_named_with_what_is_installed(tmp_path):
    import pyarrow

    requirements = tmp_path / "requirements.txt"
    requirements.write_text("pyarrow<1\nnot-a-package-of-kindling>=2\n")
    assert unmet_requirements(str(requirements)) == [f"pyarrow<1 ({pyarrow.__version__} installed)",
                                                     "not-a-package-of-kindling>=2 (not installed)"]
    with pytest.raises(RuntimeError, match=r"does not meet: pyarrow<1 .*; not-a-package-of-kindling>=2 \(not installed\)\. "
                                           r"Install them into it: .* -m pip install -r "):
        check_requirements(str(requirements))


def test_a_bad_line_or_a_missing_file_is_named(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("pyarrow\nthis is not a requirement\n")
    with pytest.raises(ValueError, match="line 2 of .* is not a requirement"):
        check_requirements(str(requirements))
    with pytest.raises(FileNotFoundError, match="no requirements file at"):
        check_requirements(str(tmp_path / "missing.txt"))
