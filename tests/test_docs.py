"""Every `$ harness ...` example in README.md and docs/ is run, and its output must match.

An example is a 4-space-indented block whose first line is `    $ harness ...`; each `$ `
line in it is a command, the lines up to the next one its exact output (stdout and stderr
as a terminal shows them; trailing spaces and trailing blank lines are not compared). A
`; echo "exit $?"` suffix, or a following `$ echo $?` command, shows the exit status.
`harness` commands run in-process through click's CliRunner; any other command runs in
bash. A block is an example when one of its commands is a `harness` command.

A page is read as a reader follows it: its examples run top to bottom, in one fresh
folder holding a copy of the files the repository ships (`git ls-files`: a fresh clone),
so an example sees exactly what a reader has after the examples above it, and nothing
is written into the checkout. A file an example needs is made by a shown command above
it, or shipped at the path it uses; nothing prepares a block out of the reader's sight.

HTML comment lines right above a block (blank lines allowed between) say how it is run;
none of them changes what the reader must do. The convention is written down in
CONTRIBUTING.md:

    <!-- doc-test: live -->            needs the network or a key: skipped
    <!-- doc-test: skip REASON -->     skipped, with the reason
    <!-- doc-test: in DIR -->          run in a fresh copy of the repository's DIR (a
                                       project of its own, `examples/lenient_adapter`),
                                       apart from the page's folder
    <!-- doc-test: excerpt -->         the output shown is an excerpt (below); the block
                                       may start with any command (`$ pytest -q`)

An excerpt is compared line for line too, except that a line `...` stands for any number
of lines, `...` inside a line for any text, and a pytest run time (`in 6.25s`) for any
other: so a count or a listing shown from a real `pytest` run is checked, and cannot drift.
Examples that run `pytest` are marked slow.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness_cli.main import cli

#: the directives that prepared a block out of the reader's sight (no more: a reader
#: follows the page, so the page shows each step, or the repository ships the file)
HIDDEN = ("setup", "run")
DIRECTIVE = re.compile(r"^<!--\s*doc-test:\s*(?P<verb>\w+)\s*(?P<arg>.*?)\s*-->\s*$")
EXIT_SUFFIX = '; echo "exit $?"'
#: the environment of every example: no key, so nothing can reach the live API; and
#: not a CI job (pytest stops cutting its summary lines to the width under `CI` or
#: `BUILD_NUMBER`, and the docs show what a developer's terminal shows)
ENV: dict[str, str | None] = {
    "ANTHROPIC_API_KEY": None,
    "ANTHROPIC_BASE_URL": None,
    "CI": None,
    "BUILD_NUMBER": None,
}
#: where an excerpt skips: a line of its own, or inside a line
ELLIPSIS = "..."
#: a pytest run time in its summary line, compared as any other
RUN_TIME = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?")
#: a pytest rule around a title (`==== 1 failed in 4.88s ====`), padded to the width
RULE = re.compile(r"^(=+|_+) (.*?) (=+|_+)$")


@dataclass
class Command:
    line: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Example:
    path: Path
    lineno: int
    commands: list[Command]
    skip: str | None = None
    #: a folder of the repository to run in (a copy), instead of the cassettes' copy
    workdir: str | None = None
    excerpt: bool = False

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.lineno}"


def doc_files() -> list[Path]:
    """README.md and every Markdown file under docs/: a new docs file is picked up as it is."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _directives(lines: list[str], start: int, example: Example) -> set[int]:
    """Reads the doc-test comment lines directly above line `start` (blank lines allowed);
    returns their indexes."""
    used: set[int] = set()
    i = start - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    while i >= 0 and (match := DIRECTIVE.match(lines[i].strip())):
        verb, arg = match["verb"], match["arg"]
        if verb in HIDDEN:
            raise ValueError(
                f"{example.id}: doc-test: {verb} prepares the block out of the reader's "
                "sight: show the command that makes the file above it, or ship the file "
                "at the path the example uses (CONTRIBUTING.md)"
            )
        if verb == "live":
            example.skip = "live: needs the network or ANTHROPIC_API_KEY"
        elif verb == "skip":
            example.skip = arg
        elif verb == "in":
            example.workdir = arg
        elif verb == "excerpt":
            example.excerpt = True
        else:
            raise ValueError(f"{example.id}: unknown doc-test directive {verb!r}")
        used.add(i)
        i -= 1
    if i >= 0 and "doc-test" in lines[i]:
        raise ValueError(f"{example.id}: malformed doc-test comment: {lines[i]!r}")
    return used


def _commands(block: list[str]) -> list[Command]:
    """Splits a block (indent removed) into commands and their outputs."""
    commands: list[Command] = []
    continued = False
    for line in block:
        if continued:
            commands[-1].line = commands[-1].line[:-1] + " " + line.strip()
        elif line.startswith("$ "):
            commands.append(Command(line[2:]))
        else:
            commands[-1].expected.append(line.rstrip())
        continued = not commands[-1].expected and commands[-1].line.endswith("\\")
    for command in commands:
        while command.expected and not command.expected[-1]:
            command.expected.pop()
    return commands


def examples_in(path: Path) -> list[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    attached: set[int] = set()
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        previous_blank = i == 0 or not lines[i - 1].strip()
        if in_fence or not (line.startswith("    ") and previous_blank):
            i += 1
            continue
        start, block = i, []
        while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
            block.append(lines[i][4:])
            i += 1
        if block[0].startswith("$ "):
            example = Example(path, start + 1, _commands(block))
            used = _directives(lines, start, example)
            # a block with a `$ harness` command is always run; any other only when a
            # directive says so
            harness = any(command.line.startswith("harness ") for command in example.commands)
            if harness or example.excerpt or example.workdir:
                attached |= used
                found.append(example)
    for number, line in enumerate(lines):
        if "doc-test:" in line and number not in attached:
            # A directive above anything but a `$ harness` block would silently do nothing.
            raise ValueError(
                f"{path.relative_to(ROOT)}:{number + 1}: doc-test comment above no example"
            )
    return found


EXAMPLES = [example for path in doc_files() for example in examples_in(path)]


def _runs_pytest(example: Example) -> bool:
    return any(re.search(r"(^|[\s/&;])pytest\b", c.line) for c in example.commands)


def _normal(line: str) -> str:
    """A line as an excerpt compares it: any run time, and a rule's padding, alike."""
    return RULE.sub(
        lambda rule: f"{rule[1][0]} {rule[2]} {rule[1][0]}", RUN_TIME.sub(" in 0s", line)
    )


def _excerpt_matches(shown: list[str], actual: list[str]) -> bool:
    """Whether `actual` is `shown` with its `...` filled in, run times aside."""
    parts = []
    for line in map(_normal, shown):
        if line.strip() == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(piece) for piece in line.split(ELLIPSIS)) + "\n")
    text = "".join(_normal(line) + "\n" for line in actual)
    return re.fullmatch("".join(parts), text) is not None


def _shipped() -> list[str]:
    """The files a fresh clone holds, as paths from the repository root: what git tracks
    (and what it would, not yet committed), without what is deleted."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({name for name in listed.split("\0") if name and (ROOT / name).is_file()})


def _clone(folder: Path, under: str = "") -> None:
    """Copy into `folder` the shipped files (those under `under` alone, from there)."""
    prefix = f"{under.rstrip('/')}/" if under else ""
    for name in _shipped():
        if name.startswith(prefix):
            target = folder / name.removeprefix(prefix)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)


def _run(line: str) -> tuple[int, str]:
    """Runs one command line in the current folder: its exit status and its output."""
    if line.startswith("harness "):
        result = CliRunner().invoke(cli, shlex.split(line)[1:], env=ENV, catch_exceptions=False)
        return result.exit_code, result.output
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ENV and not key.startswith("PYTEST_")  # an inner pytest runs as a user's
    }
    env["COLUMNS"] = "80"  # pytest's lines are cut to the terminal's width
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-c", line], capture_output=True, text=True, env=env, check=False
    )
    return done.returncode, done.stdout + done.stderr


def _actual(example: Example) -> list[str]:
    """The example as the reader should see it, with each command's real output."""
    shown: list[str] = []
    status = 0
    for command in example.commands:
        shown.append(f"$ {command.line}")
        if command.line == "echo $?":
            output = f"{status}\n"
        elif command.line.endswith(EXIT_SUFFIX):
            status, output = _run(command.line.removesuffix(EXIT_SUFFIX))
            output += f"exit {status}\n"
        else:
            status, output = _run(command.line)
        lines = [line.rstrip() for line in output.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        shown.extend(lines)
    return shown


def test_the_docs_have_examples_to_run() -> None:
    """A parser that found nothing would pass every doc; the README alone has a dozen."""
    assert len([e for e in EXAMPLES if e.path.name == "README.md"]) >= 5
    assert len([e for e in EXAMPLES if e.skip is None]) >= 12


def _check(example: Example) -> None:
    """Run `example` in the current folder; its output must be the one shown."""
    expected = [line for c in example.commands for line in (f"$ {c.line}", *c.expected)]
    actual = _actual(example)
    if example.excerpt:
        assert _excerpt_matches(expected, actual), "\n".join(
            [f"{example.id}: the run printed:", *actual]
        )
    else:
        assert actual == expected, f"{example.id}: the output differs"


#: Each page's examples read in order (a project's own `in DIR` ones apart).
PAGES = {
    path: [e for e in EXAMPLES if e.path == path and e.workdir is None] for path in doc_files()
}
OWN_PROJECT = [example for example in EXAMPLES if example.workdir is not None]


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(path, marks=[pytest.mark.slow] if any(map(_runs_pytest, examples)) else [])
        for path, examples in PAGES.items()
        if examples
    ],
    ids=lambda path: str(path.relative_to(ROOT)),
)
@pytest.mark.slow
def test_a_page_runs_top_to_bottom_in_a_fresh_clone(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every example of the page, in order, in one folder: a reader following the page
    from a fresh clone sees the output shown, each example after the ones above it."""
    run = [example for example in PAGES[page] if example.skip is None]
    if not run:
        pytest.skip("; ".join(sorted({str(example.skip) for example in PAGES[page]})))
    _clone(tmp_path)
    monkeypatch.chdir(tmp_path)
    for example in run:
        _check(example)


@pytest.mark.parametrize(
    "example",
    [
        pytest.param(example, marks=[pytest.mark.slow] if _runs_pytest(example) else [])
        for example in OWN_PROJECT
    ],
    ids=[example.id for example in OWN_PROJECT],
)
def test_an_example_in_a_project_of_its_own_runs_in_a_fresh_copy_of_it(
    example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if example.skip is not None:
        pytest.skip(example.skip)
    assert example.workdir is not None
    _clone(tmp_path, example.workdir)
    monkeypatch.chdir(tmp_path)
    _check(example)


@pytest.mark.parametrize(
    "directive", [f"<!-- doc-test: {verb} something -->" for verb in HIDDEN], ids=HIDDEN
)
def test_a_step_out_of_the_readers_sight_is_refused(directive: str) -> None:
    lines = ["Text.", "", directive, "", "    $ harness replay a.jsonl", "    done"]
    with pytest.raises(ValueError, match="out of the reader's sight"):
        _directives(lines, 4, Example(ROOT / "docs" / "page.md", 5, []))


def test_a_block_with_a_harness_command_after_another_is_an_example() -> None:
    """So a shown `$ grep ... > file.jsonl` can make the file the next command reads."""
    page = ROOT / "docs" / "faults.md"
    assert any(
        example.commands[0].line.startswith("grep ")
        and any(command.line.startswith("harness ") for command in example.commands)
        for example in PAGES[page]
    )


@pytest.mark.parametrize(
    ("shown", "matches"),
    [
        (["$ pytest -q", "...", "FAILED a[x] - As...", "2 failed in 1.50s"], True),
        (["$ pytest -q", "FAILED a[x] - As...", "2 failed in 9s"], True),
        (["$ pytest -q", "...", "3 failed in 1.50s"], False),  # a count is compared
        (["$ pytest -q", "FAILED a[x] - As..."], False),  # the summary line is missing
        (["$ pytest -q", "...", "====== 2 failed in 10.50s ======"], True),
        (["$ pytest -q", "...", "====== 2 passed in 0.72s ======"], False),
    ],
)
def test_an_excerpt_skips_only_where_it_says(shown: list[str], matches: bool) -> None:
    actual = ["$ pytest -q", "FAILED a[x] - Assertion", "2 failed in 0.72s"]
    if shown[-1].startswith("="):
        actual[-1] = "======= 2 failed in 0.72s ======="
    assert _excerpt_matches(shown, actual) is matches


def test_api_doc_draws_the_error_hierarchy_of_the_exceptions_module() -> None:
    import harness._exceptions

    drawing = [line[4:] for line in (harness._exceptions.__doc__ or "").splitlines()[2:]]
    drawing = drawing[: drawing.index("")]
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").splitlines()
    start = api.index("    " + drawing[0])
    assert [line[4:] for line in api[start : start + len(drawing)]] == drawing


def test_api_doc_names_every_public_name() -> None:
    stub = (ROOT / "harness" / "__init__.pyi").read_text(encoding="utf-8")
    names = re.findall(r"\bas (\w+),", stub)
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert len(names) > 40
    missing = [n for n in names if f"`{n}`" not in api and f"`harness.{n}`" not in api]
    assert missing == []


def test_api_doc_lists_every_deprecated_name() -> None:
    from harness import _deprecated

    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    old = [f"harness.{name}" for name in (*_deprecated.MODULES, *_deprecated.NAMES)]
    assert [name for name in old if f"`{name}`" not in api] == []


def test_the_readme_stays_a_front_door_under_250_lines() -> None:
    """What it is, the quick start, one example a command, links: the rest is docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines"


def test_no_file_cites_a_design_document_the_repository_does_not_hold() -> None:
    """The design the project grew from is said in its own words (examples/typescript's
    README), never cited as a document a reader cannot open."""
    word = re.compile(r"chap[t]er", re.IGNORECASE)  # a class: the line is no hit itself
    skipped = {".git", ".venv", "node_modules", "dist", "build", ".node"}
    suffixes = {".md", ".py", ".pyi", ".ts", ".json", ".toml", ".cfg", ".txt", ".yaml", ""}
    hits = []
    for folder, folders, files in os.walk(ROOT):
        folders[:] = [
            name for name in folders
            if name not in skipped and not name.startswith(".venv")
            and not name.endswith(("_cache", ".egg-info"))
        ]  # fmt: skip
        for path in (Path(folder) / name for name in files):
            if path.suffix in suffixes and path.stat().st_size < 2_000_000:
                text = path.read_text(encoding="utf-8", errors="replace")
                hits += [f"{path.relative_to(ROOT)}: {line.strip()}" for line in text.splitlines()
                         if word.search(line)]  # fmt: skip
    assert hits == []


def test_the_wheel_check_derives_the_summaries_it_compares() -> None:
    """`.ci/wheel-check` compares each example's pytest summary from the wheel with the
    checkout's own run of it: a count written into the script would go stale."""
    script = (ROOT / ".ci" / "wheel-check").read_text(encoding="utf-8")
    assert re.findall(r"\b\d+ (?:failed|passed|skipped)\b", script) == []
    assert 'summary "$PWD/.venv"' in script and 'summary "$work/venv"' in script
