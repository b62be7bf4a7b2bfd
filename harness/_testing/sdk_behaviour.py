"""What the installed SDK releases do with each broken stream: measured, documented, compared.

Each provider's SDK has two readers a user's code calls: the raw iteration of
`create(stream=True)` and the SDK's stream helper read to its final object
(`messages.stream()` / `get_final_message()`, `chat.completions.stream()` /
`get_final_completion()`, `responses.stream()` / `get_final_response()`). `measure`
serves each reader, through a cassette client, every row of the provider's fault
catalogue that applies to two of the library's good cassettes (a text answer, an answer
with tool calls), and words what the reader did: `returns` (it took the broken stream
as an answer) or `raises <name>` (a stream failure by its name, as `failure_code` names
it, so the SDK release that wrapped a connection error does not matter; anything else
by its class).

`make tables` writes what the installed releases do into `BEHAVIOUR_FILE` (shipped in
the package, with the versions measured), the table of docs/sdk-readers.md, and the
short form of a provider's rows (`summary`: its faults grouped by what its readers did)
into any page of docs/ that marks a place for it (`<!-- sdk-readers-summary NAME -->`,
a provider's own page).
`changed_rows` compares a new measurement with the file: `harness doctor` and
`tests/test_sdk_behaviour.py` report each row that differs, by name.

The SDKs are imported only when a reader runs.
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from harness._exceptions import InputError
from harness._providers import provider as registered, providers, sdks

__all__ = [
    "BEHAVIOUR_FILE",
    "PROVIDERS",
    "READERS",
    "Change",
    "changed_rows",
    "documented",
    "host_unusable",
    "hosts",
    "measure",
    "measured_with",
    "sdk_of",
]

#: What the installed releases were measured to do (`make tables` writes it).
BEHAVIOUR_FILE: Final = Path(__file__).resolve().parent.parent / "sdk_behaviour.json"

#: provider -> the good library cassettes (under the library) whose variants are served:
#: each provider's whose `reading` says how a user's code reads its streams
#: (`USER_READERS`), its `SAMPLES`, in the registry's order
SOURCES: Final[Mapping[str, tuple[str, ...]]] = {
    found.name: tuple(found.reading.SAMPLES)
    for found in providers()
    if found.has("reading") and hasattr(found.reading, "USER_READERS")
}
PROVIDERS: Final = tuple(SOURCES)
#: Rows served at once (each waits on its own in-process client, mostly for back-off).
_THREADS: Final = 8

Reader = Callable[[Any], None]

#: provider -> reader name -> how a user's code reads the stream with that client
READERS: Final[Mapping[str, Mapping[str, Reader]]] = {
    name: registered(name).reading.USER_READERS for name in PROVIDERS
}


def sdk_of(name: str) -> str:
    """The package whose reader a provider's rows are served to."""
    return registered(name).sdk.package


def _outcome(reader: Reader, served: list[Path], options: dict[str, Any]) -> str:
    from harness._replay.clients import cassette_client
    from harness._replay.direct import failure_code

    client = cassette_client(served, match_on=None, **options)
    try:
        reader(client)
    except Exception as error:
        return f"raises {failure_code(error) or type(error).__name__}"
    finally:
        client.close()
    return "returns"


def _cases(provider: str, folder: Path) -> Iterator[tuple[str, Any]]:
    """Each applicable row of `provider`'s catalogue, as `<good cassette>/<row>` and its case."""
    from harness._testing.dialects import library_path
    from harness._testing.fault_runs import run_fault
    from harness.faults import catalogue

    for source in SOURCES[provider]:
        good = library_path() / source
        stem = Path(source).stem
        (folder / stem).mkdir()
        for fault in catalogue(provider):
            case = run_fault(_no_adapter, good, fault, folder / stem)
            if case is not None:
                yield f"{stem}/{fault.name}", case


def _no_adapter(events: Iterable[Any]) -> Iterator[Any]:
    return iter(())  # the rows are served to the SDK's readers, not to an adapter


def measure(provider: str, host: str | None = None) -> dict[str, dict[str, str]]:
    """Row -> reader -> what the installed SDK's reader does with that broken stream
    (through the client of the provider's dialect on `host`, `AnthropicBedrock` or
    `AnthropicVertex`, when given: `hosts(provider)`; else the direct API's).

    The rows run on a few threads: most of the time is the SDK's retry back-off on the
    rows it retries (`http_429_then_ok`, `http_529`), spent waiting. A warning the SDK
    gives on the way (pydantic's, about a field's type) is not an outcome: the table reads
    the same under pytest's `filterwarnings = error` as under `make tables`."""
    readers = READERS[provider]
    on = {} if host is None else {"host": host}
    with (
        warnings.catch_warnings(),
        tempfile.TemporaryDirectory(prefix="harness-doctor-") as folder,
    ):
        warnings.simplefilter("ignore")
        cases = list(_cases(provider, Path(folder)))
        runs = [(row, name, case) for row, case in cases for name in readers]
        with ThreadPoolExecutor(max_workers=_THREADS) as pool:
            outcomes = pool.map(
                lambda run: _outcome(
                    readers[run[1]], run[2].turn_served, {**run[2].client_options, **on}
                ),
                runs,
            )
            table: dict[str, dict[str, str]] = {row: {} for row, _ in cases}
            for (row, name, _), outcome in zip(runs, outcomes, strict=True):
                table[row][name] = outcome
    return table


def hosts(provider: str) -> tuple[str, ...]:
    """The hosts besides the direct API a provider's dialect is served on
    (`Provider.hosted`), whose clients `harness doctor` serves the same rows to."""
    return tuple(registered(provider).hosted)


def host_unusable(provider: str, host: str) -> str | None:
    """Why the client of `provider`'s dialect on `host` cannot be built here (what it
    needs not installed: `AnthropicBedrock` reads its frames with botocore), else None."""
    try:
        registered(provider).hosted[host].module()
    except InputError as error:
        return str(error)
    return None


def installed_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def documented(path: Path | None = None) -> dict[str, Any]:
    """The measurement `make tables` wrote (`BEHAVIOUR_FILE`): `tested` (every package's
    version, the locked set; `measured_with` names the SDKs' among them) and `rows`
    (provider -> row -> reader -> outcome)."""
    loaded: dict[str, Any] = json.loads((path or BEHAVIOUR_FILE).read_text(encoding="utf-8"))
    return loaded


@dataclass(frozen=True, slots=True)
class Change:
    """One row whose reader does something else on the installed release."""

    provider: str
    row: str
    reader: str
    documented: str | None  # None: a row or reader the documentation has not
    now: str | None  # None: a row the installed catalogue no longer derives

    def __str__(self) -> str:
        return (
            f"{self.provider} {self.row} via {self.reader}: documented "
            f"{self.documented or '(not measured)'}, now {self.now or '(not derived)'}"
        )


def changed_rows(
    provider: str, now: Mapping[str, Mapping[str, str]], then: Mapping[str, Mapping[str, str]]
) -> list[Change]:
    """Every (row, reader) whose outcome differs between two measurements, by name."""
    changes = []
    for row in sorted(set(now) | set(then)):
        readers = set(now.get(row, {})) | set(then.get(row, {}))
        for reader in sorted(readers):
            before, after = then.get(row, {}).get(reader), now.get(row, {}).get(reader)
            if before != after:
                changes.append(Change(provider, row, reader, before, after))
    return changes


#: The packages `harness doctor` reports: the SDKs the readers run, their HTTP client,
#: and the frameworks the strict tests serve (docs/strict.md).
PACKAGES: Final = (
    *(sdk.package for sdk in sdks()),
    "httpx2",
    "httpx",
    "pydantic-ai-slim",
    "langchain-anthropic",
    "langchain-openai",
    "openai-agents",
    "litellm",
)
#: The packages whose versions decide what the readers do (named with the measurement).
MEASURED_WITH: Final = (*(sdk.package for sdk in sdks()), "httpx2")
#: Where docs/sdk-readers.md's table is written (in a checkout).
DOC: Final = BEHAVIOUR_FILE.parent.parent / "docs" / "sdk-readers.md"
_BLOCK: Final = ("<!-- sdk-readers-table -->\n", "<!-- /sdk-readers-table -->")
#: A provider page's block for its `summary` (the provider's name after the first marker).
SUMMARY_BLOCK: Final = re.compile(
    r"(<!-- sdk-readers-summary (?P<provider>[\w.-]+) -->\n)(?P<text>.*?)"
    r"(<!-- /sdk-readers-summary -->)",
    re.DOTALL,
)


def measure_all() -> dict[str, Any]:
    """What `BEHAVIOUR_FILE` holds, measured now: the versions, and every provider's rows."""
    return {
        "tested": {package: installed_version(package) for package in PACKAGES},
        "rows": {provider: measure(provider) for provider in PROVIDERS},
    }


def measured_with(measured: Mapping[str, Any]) -> str:
    """The releases a measurement's readers ran on, in words (`anthropic 2.17.0, ...`)."""
    return ", ".join(f"{name} {measured['tested'][name]}" for name in MEASURED_WITH)


def table(measured: Mapping[str, Any]) -> str:
    """The Markdown of docs/sdk-readers.md's block: the versions, then a table a provider."""
    parts = [f"Measured with {measured_with(measured)} (`make tables`).\n"]
    for provider, rows in measured["rows"].items():
        readers = list(READERS[provider])
        parts.append(f"\n**{provider}**\n\n| row | " + " | ".join(f"`{r}`" for r in readers))
        parts.append(" |\n|---|" + "---|" * len(readers) + "\n")
        for row, outcomes in rows.items():
            parts.append(f"| {row} | " + " | ".join(outcomes[r] for r in readers) + " |\n")
    return "".join(parts)


def summary(measured: Mapping[str, Any], provider: str) -> str:
    """The Markdown of a provider page's block: its SDK's release, then its faults grouped
    by what the readers did with them. A fault is named alone where every good cassette
    it breaks reads alike, else as `<good cassette>/<fault>`."""
    readers = list(READERS[provider])
    sdk = sdk_of(provider)
    outcomes: dict[str, dict[str, tuple[str, ...]]] = {}
    for row, found in measured["rows"][provider].items():
        source, _, fault = row.partition("/")
        outcomes.setdefault(fault, {})[source] = tuple(found[r] for r in readers)
    groups: dict[tuple[str, ...], list[str]] = {}
    for fault, by_source in outcomes.items():
        if len(set(by_source.values())) == 1:
            groups.setdefault(next(iter(by_source.values())), []).append(f"`{fault}`")
            continue
        for source, outcome in by_source.items():
            groups.setdefault(outcome, []).append(f"`{source}/{fault}`")
    parts = [
        f"Measured with {sdk} {measured['tested'].get(sdk)} (`make tables`; every row in "
        f"[sdk-readers.md](sdk-readers.md)).\n\n| "
        + " | ".join(f"`{r}`" for r in readers)
        + " | rows |\n|"
        + "---|" * (len(readers) + 1)
        + "\n"
    ]
    for outcome, faults in groups.items():
        parts.append("| " + " | ".join(outcome) + f" | {', '.join(faults)} |\n")
    return "".join(parts)


def summary_pages(docs: Path | None = None) -> dict[Path, list[str]]:
    """The pages of docs/ that mark a place for a provider's `summary`, each with the
    providers it names."""
    found: dict[Path, list[str]] = {}
    for page in sorted((docs or DOC.parent).glob("*.md")):
        named = [m["provider"] for m in SUMMARY_BLOCK.finditer(page.read_text(encoding="utf-8"))]
        if named:
            found[page] = named
    return found


def with_summaries(text: str, measured: Mapping[str, Any]) -> str:
    """A page's text with each of its summary blocks written from `measured`."""
    return SUMMARY_BLOCK.sub(lambda m: m[1] + summary(measured, m["provider"]) + m[4], text)


def write(measured: Mapping[str, Any], data: Path = BEHAVIOUR_FILE, doc: Path = DOC) -> None:
    """Write a measurement into the package's data file, the doc's marked block and the
    provider pages' summaries."""
    text = doc.read_text(encoding="utf-8")
    start, end = text.index(_BLOCK[0]) + len(_BLOCK[0]), text.index(_BLOCK[1])
    _write_text(data, json.dumps(measured, indent=1) + "\n")
    _write_text(doc, text[:start] + table(measured) + text[end:])
    for page in summary_pages(doc.parent):
        _write_text(page, with_summaries(page.read_text(encoding="utf-8"), measured))


def _write_text(path: Path, text: str) -> None:
    from harness._files import atomic_write

    with atomic_write(path) as handle:
        handle.write(text.encode("utf-8"))


def main() -> None:
    """`python -m harness._testing.sdk_behaviour`: measure, then write both (`make tables`)."""
    measured = measure_all()
    write(measured)
    counted = sum(len(rows) for rows in measured["rows"].values())
    print(f"{counted} rows measured with the installed SDKs: {BEHAVIOUR_FILE.name}, {DOC.name}")


if __name__ == "__main__":
    main()


def _release(version: str) -> tuple[int, ...]:
    """A version's release numbers (`2.17.0rc1` -> (2, 17, 0)), enough to order releases."""
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(numbers)


#: A requirement's name and its `>=` bound (`openai>=3.57; extra == "openai"`).
_LOWER_BOUND: Final = re.compile(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)")


def project_name(name: str) -> str:
    """A package's name as PyPI compares names: `google.genai`, `Google_GenAI` and
    `google-genai` are one (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lower_bounds() -> dict[str, str]:
    """Each dependency's lowest release this package allows (its `>=` in pyproject.toml,
    read from the installed package's metadata), by `project_name`."""
    bounds = {}
    for requirement in metadata.requires("stream-harness") or ():
        found = _LOWER_BOUND.match(requirement)
        if found:
            bounds[project_name(found.group(1))] = found.group(2)
    return bounds


def version_status(installed: str | None, tested: str | None, lowest: str | None) -> str:
    """How `installed` stands against the tested range (`lowest` to `tested`)."""
    if installed is None:
        return "not installed"
    if lowest is not None and _release(installed) < _release(lowest):
        return f"older than the lowest release supported ({lowest})"
    if tested is not None and _release(installed) > _release(tested):
        return f"newer than tested ({tested}): the rows below say whether it behaves the same"
    span = f"{lowest or 'any'} to {tested}" if tested else f"from {lowest}"
    return f"tested ({span})"
