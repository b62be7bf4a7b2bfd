"""`--harness-cassette-dir`: where cassette names are found; fixture < marker < command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.builder import StreamBuilder

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

# Every folder holds `greeting.jsonl` saying where it lives; the tests assert which was read.
FOLDERS = ("tests/cassettes", "from_fixture", "tests/from_marker", "from_option")

INNER_TESTS = """
import pytest
from harness import TextEvent

@pytest.mark.cassette("greeting")
def test_by_default(harness_replay):
    assert harness_replay.events[0] == TextEvent(EXPECTED["default"])

@pytest.mark.cassette("greeting", dir="from_marker")
def test_marker_dir(harness_replay):
    assert harness_replay.events[0] == TextEvent(EXPECTED["marker"])
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    for folder in FOLDERS:
        path = pytester.path / folder
        path.mkdir(parents=True)
        StreamBuilder().text(0, folder).stop().write(path / "greeting.jsonl", f"in {folder}")
    return pytester


def write_tests(project: pytest.Pytester, default: str, marker: str) -> None:
    expected = f"EXPECTED = {{'default': {default!r}, 'marker': {marker!r}}}\n"
    (project.path / "tests" / "test_inner.py").write_text(expected + INNER_TESTS)


@pytest.mark.slow
def test_names_are_found_in_cassettes_beside_the_test_module(project: pytest.Pytester) -> None:
    write_tests(project, default="tests/cassettes", marker="tests/from_marker")
    project.runpytest("tests").assert_outcomes(passed=2)


@pytest.mark.slow
def test_fixture_sets_the_folder_and_the_marker_dir_beats_it(project: pytest.Pytester) -> None:
    (project.path / "tests" / "conftest.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture\n"
        "def harness_cassette_dir(request):\n"
        "    return request.config.rootpath / 'from_fixture'\n"
    )
    write_tests(project, default="from_fixture", marker="tests/from_marker")
    project.runpytest("tests").assert_outcomes(passed=2)


@pytest.mark.slow
def test_command_line_beats_marker_and_fixture(project: pytest.Pytester) -> None:
    (project.path / "tests" / "conftest.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture\n"
        "def harness_cassette_dir(request):\n"
        "    return request.config.rootpath / 'from_fixture'\n"
    )
    write_tests(project, default="from_option", marker="from_option")
    project.runpytest("tests", "--harness-cassette-dir", "from_option").assert_outcomes(passed=2)


@pytest.mark.slow
def test_command_line_folder_is_relative_to_where_pytest_runs(project: pytest.Pytester) -> None:
    write_tests(project, default="tests/from_marker", marker="tests/from_marker")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project.path / "tests")
        result = project.runpytest("--harness-cassette-dir=from_marker", "test_inner.py")
    result.assert_outcomes(passed=2)


@pytest.mark.slow
def test_missing_cassette_names_the_path_it_looked_for(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_missing="""
        import pytest

        @pytest.mark.cassette("absent")
        def test_absent(harness_replay):
            pass
        """
    )
    result = project.runpytest("--harness-cassette-dir", "from_option")
    result.assert_outcomes(errors=1)
    where = Path(project.path, "from_option", "absent.jsonl")
    result.stdout.fnmatch_lines(
        [f"cassette not found: {where} (record it with --harness-record=missing *)"]
    )
