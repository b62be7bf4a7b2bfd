"""Without the extra a provider's SDK (or its client on a host) comes in, what needs that
SDK says so in one line naming the extra, exit 2: never a bare `ModuleNotFoundError`.
Registry-driven: each provider's `Sdk`, and each `Sdk` of its dialect on another host,
that names an extra; a library cassette of that provider is replayed `--via sdk`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, library_cassettes

from harness._exceptions import InputError
from harness._providers import providers
from harness._providers.sdk import Sdk
from harness_cli.main import cli

CASES = [
    pytest.param(found.name, host, sdk, id=f"{found.name}-{host or 'direct'}")
    for found in providers()
    if found.has("client")
    for host, sdk in [(None, found.sdk), *found.hosted.items()]
    if sdk.extra is not None
]


def _hidden(sdk: Sdk) -> list[str]:
    """The modules whose absence stands for an environment without the extra: the
    package and its parents (`google` for `google.genai`), or what its client requires."""
    if sdk.requires:
        return list(sdk.requires)
    parts = sdk.package.split(".")
    return [".".join(parts[: end + 1]) for end in range(len(parts))]


@pytest.mark.parametrize(("name", "host", "sdk"), CASES)
def test_without_the_extra_replay_via_sdk_names_it_in_one_line(
    name: str, host: str | None, sdk: Sdk, monkeypatch: pytest.MonkeyPatch
) -> None:
    path: Path = library_cassettes(name, LIBRARY)[0]
    for module in _hidden(sdk):
        monkeypatch.setitem(sys.modules, module, None)
    hosted = ["--host", host] if host else []
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", *hosted, str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert f'pip install "stream-harness[{sdk.extra}]"' in result.output
    assert "Error" not in result.output and "internal error" not in result.output


@pytest.mark.parametrize(
    ("name", "sdk"),
    [
        pytest.param(found.name, found.sdk, id=found.name)
        for found in providers()
        if found.has("client") and found.sdk.extra is not None
    ],
)
def test_without_the_extra_doctor_says_what_every_command_says(
    name: str, sdk: Sdk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pip install "stream-harness[EXTRA]"`, never the SDK's own package name alone."""
    for module in _hidden(sdk):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(InputError) as raised:
        sdk.module()
    result = CliRunner().invoke(cli, ["doctor", "--provider", name])
    assert (result.exit_code, result.output) == (
        2,
        f"harness doctor: {raised.value}; --provider names the providers to check without it\n",
    )
    assert f'pip install "stream-harness[{sdk.extra}]"' in result.output


def test_the_cases_cover_a_parent_package_and_a_hosts_requirement() -> None:
    """What the old check missed: `google` missing for `google.genai`, and `botocore`
    for `AnthropicBedrock` (the `anthropic` package itself installed)."""
    sdks = [case.values[2] for case in CASES]
    assert any("." in sdk.package for sdk in sdks if isinstance(sdk, Sdk))
    assert any(sdk.requires for sdk in sdks if isinstance(sdk, Sdk))


def test_a_module_the_sdk_itself_misses_is_raised_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dependency missing inside an installed SDK is that SDK's failure, not the extra's
    absence: it is raised as it is, not hidden behind a wrong instruction."""
    (tmp_path / "harness_fake_sdk.py").write_text("import harness_fake_sdk_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sdk = Sdk("harness_fake_sdk", ("A", "B"), "", providers()[0].sdk.env, extra="fake")
    with pytest.raises(ModuleNotFoundError, match="harness_fake_sdk_dependency"):
        sdk.module()
    monkeypatch.setitem(sys.modules, "harness_fake_sdk", None)
    with pytest.raises(InputError, match=r'^harness_fake_sdk: .*"stream-harness\[fake\]"$'):
        sdk.module()


@pytest.mark.parametrize(
    ("live", "module"),
    [("live_bedrock", "botocore"), ("live_vertex", "google.auth")],
)
def test_a_live_recording_on_a_host_names_the_extra_as_the_rest_do(
    live: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the SDK's own extra (`anthropic[bedrock]`), which a user of ours has no cause
    to know: ours, which installs it."""
    from harness._providers.anthropic import client

    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    top = module.partition(".")[0]  # and each module of it already imported, which an
    # import finds before its parent (`from botocore.session import ...`)
    hidden = {top, module, *(name for name in sys.modules if name.startswith(f"{top}."))}
    for name in hidden:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(InputError, match=r'pip install "stream-harness\[bedrock\]"$'):
        getattr(client, live)()
