"""The layout of `harness/` keeps the promises docs/api.md and each subpackage make.

Each subpackage's docstring says what it may import; the imports of its modules (read
with `ast`, lazy and type-only ones included: a dependency is a dependency) are held to
that list here, so a module that reaches across a line fails a test instead of quietly
turning the drawing false. No folder holds two modules whose names differ by a suffix,
each subpackage's docstring names each of its modules, and the names of 0.1 still
import, each with its `DeprecationWarning`.

A provider is one folder (docs/providers.md): its name, its dialect's event names and
its SDK's variables are spelt in its own folder and the registry alone, never in the
code of `harness/` or `cli/` elsewhere (`PROVIDER_WORDS_ELSEWHERE` lists the
exceptions, each with its reason).
"""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from conftest import not_installed

from harness._deprecated import MODULES, MOVED, NAMES

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "harness"

#: What each subpackage may import besides the flat core (`harness._json`, `_adapter`,
#: ...), as its docstring and docs/api.md's drawing say. The public modules
#: (`harness.faults`, `harness.builder`, ...) and `harness` itself count as subpackages.
MAY_IMPORT: dict[str, set[str]] = {
    "_providers": set(),
    "_hosts": {"_providers"},
    "_cassette": {"_providers"},
    "_interop": {"_cassette", "_hosts", "_providers"},
    "_record": {"_cassette", "_hosts", "_providers"},
    "_replay": {"_cassette", "_hosts", "_providers", "_record"},
    "_strict": {"_cassette", "_hosts", "_providers", "_replay"},
    "_http": {"_cassette", "_hosts", "_providers", "_replay", "_record", "_strict"},
    "_testing": {"*"},  # everything: what the commands and the plugin run
    "_view": {"_cassette", "_providers", "_replay", "_testing"},  # draws what _testing computes
    "agent": {"_cassette", "_providers", "_replay", "builder"},
    "builder": {"_cassette"},
}
CORE = {path.stem for path in HARNESS.glob("_*.py") if path.stem != "__init__"}
SUBPACKAGES = sorted(path.parent.name for path in HARNESS.glob("*/__init__.py"))


def _imported(path: Path) -> set[str]:
    """The top-level parts of `harness` a module imports (`_cassette`, `_json`, `harness`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
            if node.module == "harness":
                names = [f"harness.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "harness":
                found.add(parts[1] if len(parts) > 1 else "harness")
    return found


def test_every_subpackage_has_its_import_rule() -> None:
    assert sorted(MAY_IMPORT) == SUBPACKAGES


@pytest.mark.parametrize("package", [name for name in SUBPACKAGES if MAY_IMPORT[name] != {"*"}])
def test_a_subpackage_imports_only_the_core_and_what_its_docstring_allows(package: str) -> None:
    allowed = {package} | CORE | MAY_IMPORT[package]
    crossing = {
        f"{path.relative_to(HARNESS)} imports harness.{name}"
        for path in (HARNESS / package).glob("*.py")
        for name in _imported(path) - allowed
    }
    assert not crossing


@pytest.mark.slow
def test_the_flat_core_imports_no_subpackage_but_for_types() -> None:
    """The core is below every subpackage: `_exceptions` reads the default provider's
    error table, which is pure data (`_providers.anthropic.errors`, importing nothing),
    and names nothing of the agent's, not even for a type (`AgentFailed.messages`), so
    no circle runs through the agent package; `_deprecated` finds the 0.1 modules by
    name, importing none itself."""
    crossing = {
        f"{name}.py imports harness.{target}"
        for name in CORE
        for target in _imported(HARNESS / f"{name}.py") - CORE
    }
    assert crossing == {"_exceptions.py imports harness._providers"}
    data = HARNESS / "_providers" / "anthropic" / "errors.py"
    assert _imported(data) == set()


def _modules(folder: Path) -> list[str]:
    return sorted(path.stem.lstrip("_") for path in folder.glob("*.py") if path.stem != "__init__")


@pytest.mark.parametrize("folder", [".", *SUBPACKAGES, "../cli/harness_cli"])
def test_no_two_modules_of_a_folder_differ_by_a_suffix(folder: str) -> None:
    names = _modules(HARNESS / folder)
    assert not [(a, b) for a in names for b in names if a != b and b.startswith(a)]


@pytest.mark.parametrize("package", [name for name in SUBPACKAGES if name.startswith("_")])
def test_a_subpackage_docstring_names_each_of_its_modules(package: str) -> None:
    docstring = ast.get_docstring(ast.parse((HARNESS / package / "__init__.py").read_text()))
    assert docstring is not None
    assert [name for name in _modules(HARNESS / package) if f"`{name}`" not in docstring] == []


def test_the_api_doc_draws_every_module_of_the_flat_core_and_every_subpackage() -> None:
    drawing = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").split("## The layout")[1]
    drawing = drawing.split("\n## ")[0]
    public = sorted(path.name for path in HARNESS.glob("[a-z]*.py"))
    missing = [
        name
        for name in [*(f"{stem}.py" for stem in CORE), *(f"{p}/" for p in SUBPACKAGES), *public]
        if name not in drawing and name.removesuffix("/") + " " not in drawing
    ]
    assert missing == []


def _fresh(name: str) -> None:
    """Forget `name` (and the module it aliases), so importing it warns again."""
    sys.modules.pop(name, None)


@pytest.mark.parametrize("old", sorted(MODULES))
def test_each_module_of_0_1_imports_with_a_deprecation_warning(old: str) -> None:
    _fresh(f"harness.{old}")
    with pytest.deprecated_call(match=rf"harness\.{old} is deprecated .* 0\.3"):
        module = importlib.import_module(f"harness.{old}")
    assert module is importlib.import_module(f"harness.{MODULES[old]}")


@pytest.mark.parametrize(("old", "name"), sorted(MOVED))
def test_a_name_of_an_0_1_module_that_moved_elsewhere_still_imports_from_it(
    old: str, name: str
) -> None:
    home, moved = MOVED[old, name]
    _fresh(f"harness.{old}")
    with pytest.deprecated_call():
        found = getattr(importlib.import_module(f"harness.{old}"), name)
    assert found is getattr(importlib.import_module(f"harness.{home}"), moved)


def test_the_0_1_modules_answer_the_names_they_held_in_0_1() -> None:
    """`from harness.wire import RealtimePacer` as in 0.1; the few names of 0.1 gone
    since are listed (each was internal in all but name)."""
    held = {  # each module's __all__ in 0.1 (git show 2bd708e^:harness/<name>.py)
        "adapter": ["StreamAdapter", "ato_model_events", "to_model_events", "tool_input"],
        "cassette": [
            *("FORMAT_VERSION", "Cassette", "CassetteLine", "expand_paths"),
            *("read_cassette", "write_cassette"),
        ],
        "errors": ["StreamProtocolError", "CassetteError"],
        "events": ["ToolCall", "TextEvent", "ToolCallEvent", "DoneEvent", "event_to_json"],
        "fault_check": ["Adapter", "FaultCase", "run_fault"],
        "record": [
            *("RecordError", "api_key_from_environment", "build_request"),
            *("is_secret_header", "record", "redact_request"),
        ],
        "replay": [
            *("Outcome", "acollect", "areplay", "collect", "failure_code", "failure_to_json"),
            *("is_stream_failure", "replay", "replay_outcome", "sdk_events"),
        ],
        "vcr_import": ["ImportReport", "VcrImportError", "import_vcr", "vcr_files"],
        "wire": [
            *("AT_DIRECTIVE", "Chunking", "RealtimePacer", "aoutcome_via_sdk"),
            *("areplay_via_sdk", "async_sdk_stream", "encode_event", "outcome_via_sdk"),
            *("replay_events", "replay_via_sdk", "sdk_stream", "sse_bytes"),
        ],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        missing = [
            f"harness.{old}.{name}"
            for old, names in held.items()
            for name in names
            if not hasattr(importlib.import_module(f"harness.{old}"), name)
        ]
    # gone in the 0.2 layout (2bd708e), before this list was kept: internal helpers
    assert missing == [
        "harness.record.is_secret_header",
        "harness.vcr_import.vcr_files",
        "harness.wire.sse_bytes",
    ]


def test_a_monkeypatch_through_an_0_1_module_reaches_the_module_that_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import harness._replay.direct as direct

    _fresh("harness.replay")
    with pytest.deprecated_call():
        old = importlib.import_module("harness.replay")
    marker = object()
    monkeypatch.setattr(old, "replay_outcome", marker)
    assert direct.replay_outcome is marker


@pytest.mark.parametrize("old", sorted(NAMES))
def test_each_renamed_name_of_0_1_works_with_a_deprecation_warning(old: str) -> None:
    import harness

    with pytest.deprecated_call(match=rf"harness\.{old} is deprecated"):
        value = getattr(harness, old)
    assert value is getattr(harness, NAMES[old])


#: The public names whose module imports a package the harness does not depend on.
OPTIONAL: dict[str, tuple[str, ...]] = {"HTTPXReplayTransport": ("httpx",)}


def test_every_public_name_imports_without_a_warning() -> None:
    import harness

    stub = ast.parse((HARNESS / "__init__.pyi").read_text(encoding="utf-8"))
    names = [
        alias.asname or alias.name
        for node in stub.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    assert sorted(names) == sorted(dir(harness))
    importable = [name for name in names if not_installed(*OPTIONAL.get(name, ())) is None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [name for name in importable if getattr(harness, name, None) is None] == []
    for name in set(names) - set(importable):  # a clear error, naming what to install
        with pytest.raises(ModuleNotFoundError, match=f"No module named '{OPTIONAL[name][0]}'"):
            getattr(harness, name)


def test_the_wheel_packages_every_subpackage() -> None:
    """A subpackage missing from pyproject.toml's list would be missing from the wheel."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = project["tool"]["setuptools"]["packages"]
    nested = [
        ".".join(path.parent.relative_to(ROOT).parts)
        for name in SUBPACKAGES
        for path in (HARNESS / name).glob("*/__init__.py")
    ]
    expected = ["harness", *(f"harness.{name}" for name in SUBPACKAGES), *nested, "harness_cli"]
    assert sorted(packages) == sorted(expected)


def _setup_constant(name: str) -> Any:
    """A constant of setup.py, read without running it (it calls `setup()`)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and node.value is not None
        and any(
            isinstance(target, ast.Name) and target.id == name
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    return ast.literal_eval(value)


def test_the_wheel_ships_every_openai_cassette_and_every_profile_cassette() -> None:
    """What a user without the repository copies (docs/openai.md): setup.py's globs take
    every cassette of the OpenAI library and every compatible server's cassette, to the
    paths `harness/_library/` gives them (.ci/wheel-check replays them from the wheel)."""
    library = ROOT / "cassettes"
    shipped = {path for pattern in _setup_constant("SHIPPED") for path in library.glob(pattern)}
    assert sorted(set((library / "openai").rglob("*.jsonl")) - shipped) == []
    folder, pattern, under = _setup_constant("PROFILES")
    profiles = sorted((ROOT / folder).glob(pattern))
    assert profiles == sorted((ROOT / folder).rglob("*.jsonl"))
    from harness._providers.openai_chat.profiles import PROFILES

    assert len(profiles) == sum(len(found.deviations) for found in PROFILES.values())
    assert under == "openai/chat/profiles"


#: Where a provider's words may be spelt outside its folder, and why. Read as code: string
#: constants (`ast`), not docstrings (prose may name a provider as an example), nor types
#: (`Literal["openai"]`: what a type checker reads of the public API cannot ask the
#: registry).
PROVIDER_WORDS_ELSEWHERE: dict[str, str] = {
    # the public builders, one a dialect: their job is to write that dialect's lines by
    # name for a user's cassettes (docs/api.md); a provider needs none, and the builder
    # package lies below the registry (it may import `_cassette` alone)
    "harness/builder/chat.py": "openai-chat",
    "harness/builder/messages.py": "anthropic",
    "harness/builder/responses.py": "openai-responses",
    # the one SSE decoder reads a body as the Anthropic SDK does, which skips `ping` by
    # name; separating the framing from the vocabulary (issue 38) moves the name home
    "harness/_providers/sse.py": "anthropic",
    # the one redaction every path shares keeps a thinking block's `signature`, a field
    # named like a credential that the Messages protocol owns; it is the flat core, below
    # the registry
    "harness/_redact.py": "anthropic",
    # the Chat profile of Gemini's OpenAI-compatible endpoint is named after the server,
    # and reads Chat Completions chunks, not the native dialect
    "harness/_providers/openai_chat/profiles.py": "gemini",
}


def _vocabulary() -> dict[str, str]:
    """Each word that names one provider alone -> that provider: its name, the event
    names its cassettes in the library hold (an event's `type` or `object`, a delta's
    `type`) that no other provider's hold, its SDK's variables."""
    from harness._cassette.codec import Cassette
    from harness._providers import providers

    seen: dict[str, set[str]] = {}
    for path in (ROOT / "cassettes").rglob("*.jsonl"):
        cassette = Cassette(path)
        for data in cassette.events():
            delta = data.get("delta")
            kinds = [data.get("type"), data.get("object")]
            kinds.append(delta.get("type") if isinstance(delta, dict) else None)
            for kind in kinds:
                if isinstance(kind, str):
                    seen.setdefault(kind, set()).add(cassette.provider)
    words = {word: next(iter(owners)) for word, owners in seen.items() if len(owners) == 1}
    for found in providers():
        words[found.name] = found.name
        env = found.client_env
        words[env.key_variable] = words[env.base_url_variable] = found.name
    return words


def _prose_and_types(tree: ast.AST) -> set[int]:
    """The ids of a module's docstrings' and annotations' nodes (`Literal[...]` too)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        annotations: list[ast.AST] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            annotations = [a.annotation for a in arguments if a.annotation is not None]
            annotations += [node.returns] if node.returns is not None else []
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal":
            annotations = [node]
        skipped |= {id(part) for annotation in annotations for part in ast.walk(annotation)}
    return skipped


@pytest.mark.slow
def test_a_providers_words_are_spelt_in_its_own_folder_and_the_registry_alone() -> None:
    from harness._providers import __file__ as registry, providers

    words = _vocabulary()
    folders = {
        found.name: HARNESS / "_providers" / found.package.rpartition(".")[2]
        for found in providers()
    }
    variables = {word for word, owner in words.items() if word.isupper()}
    spelt = []
    for path in sorted([*HARNESS.rglob("*.py"), *(ROOT / "cli").rglob("*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _prose_and_types(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or id(node) in skipped:
                continue
            owner = words.get(node.value) if isinstance(node.value, str) else None
            if owner is None or path.is_relative_to(folders[owner]):
                continue
            if path == Path(registry) and node.value == owner:
                continue  # the registry's own line
            if node.value in variables and path.is_relative_to(HARNESS / "_providers"):
                continue  # an SDK two dialects share (`openai_shared`)
            if PROVIDER_WORDS_ELSEWHERE.get(relative) == owner:
                continue
            spelt.append(f"{relative}:{node.lineno}: {node.value!r} ({owner}'s)")
    assert spelt == []


def test_the_words_checked_are_the_dialects_own() -> None:
    """The check above knows what it looks for: each provider's name, its event names, its
    SDK's variables; and a word two dialects share (`error`) is no one's."""
    words = _vocabulary()
    assert {
        words[word]
        for word in ("content_block_delta", "chat.completion.chunk", "response.output_text.delta")
    } == {"anthropic", "openai-chat", "openai-responses"}
    assert (
        words["OPENAI_BASE_URL"] == "openai-responses" or words["OPENAI_BASE_URL"] == "openai-chat"
    )
    assert words["ANTHROPIC_API_KEY"] == "anthropic"
    assert "error" not in words
