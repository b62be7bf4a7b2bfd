"""`harness.strict(profile=)` on the real openai SDK, built as its docs build it, against a
real socket, guards the variants of a compatible server's good stream
(tests/test_profile_faults.py derives them): every broken variant is still refused under
the profile, with the code the row expects; the good stream and the rows that stay good
are accepted, handed on in OpenAI's form; the row the profile reads as good is accepted
under it and refused by the default."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import not_installed

openai = pytest.importorskip("openai", reason=not_installed("openai"))

from test_profile_faults import CHAT, SHAPED, TOLERATED, _variants  # noqa: E402

import harness  # noqa: E402
from harness._cassette.codec import write_cassette  # noqa: E402
from harness._http.hosting import ServerThread  # noqa: E402
from harness._http.server import CASSETTE_HEADER, CassetteServer  # noqa: E402
from harness.faults import DONE, Variant, catalogue, stream_lines  # noqa: E402

KEY = "sk-harness-test"
ASK = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "weather?"}]}


def _strict_rows(profile: str) -> list[Variant]:
    """The variants a strict client reads as a stream: the wire rows are the transport's,
    which the SDK answers before any guard reads a chunk."""
    return [variant for variant in _variants(SHAPED[profile], profile) if not variant.fault.wire]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of every server-shaped stream, its variants and its tolerated rows'
    variants, each named `<profile>-<row>` (`<profile>-good` for the stream itself)."""
    folder = tmp_path_factory.mktemp("served")
    header = {"cassette": 1, "provider": CHAT}
    for profile, path in SHAPED.items():
        (folder / f"{profile}-good.jsonl").write_bytes(path.read_bytes())
        events = stream_lines(path)
        for fault in catalogue(CHAT):
            broken = None if fault.wire else fault.derive(events)
            if broken is not None:
                write_cassette(folder / f"{profile}-{fault.name}.jsonl", broken, header=header)
    with ServerThread(CassetteServer([str(folder)], match_on=None).app()) as address:
        yield address


def _final(client: Any, name: str) -> Any:
    """The user's code: the SDK's stream helper read to its final completion."""
    headers = {CASSETTE_HEADER: name}
    with client.chat.completions.stream(**ASK, extra_headers=headers) as stream:
        return stream.get_final_completion()


def _codes(error: BaseException) -> set[str]:
    """The codes in a raised error's chain: the guard's, or the SDK's API error's type."""
    chain = [error, error.__cause__, error.__context__]
    codes = {getattr(link, "code", None) for link in chain}
    codes |= {f"api_error:{link.type}" for link in chain if isinstance(link, openai.APIError)}
    return {code for code in codes if isinstance(code, str)}


@pytest.mark.parametrize("profile", list(SHAPED))
def test_strict_under_the_profile_accepts_the_good_stream_in_openais_form(
    profile: str, served: str
) -> None:
    client = harness.strict(openai.OpenAI(api_key=KEY, base_url=f"{served}/v1"), profile=profile)
    completion = _final(client, f"{profile}-good")
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"  # vLLM's and Ollama's `stop`, handed on so
    calls = [
        (call.function.name, json.loads(call.function.arguments))
        for call in choice.message.tool_calls
    ]
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    with pytest.raises(harness.StreamProtocolError) as caught:
        _final(
            harness.strict(openai.OpenAI(api_key=KEY, base_url=f"{served}/v1")), f"{profile}-good"
        )
    assert caught.value.code == "stop_with_tool_calls"


@pytest.mark.parametrize(
    ("profile", "row"),
    [(profile, variant) for profile in SHAPED for variant in _strict_rows(profile)],
    ids=lambda value: value if isinstance(value, str) else value.fault.name,
)
def test_strict_under_the_profile_refuses_each_broken_variant(
    profile: str, row: Variant, served: str
) -> None:
    client = harness.strict(openai.OpenAI(api_key=KEY, base_url=f"{served}/v1"), profile=profile)
    name = f"{profile}-{row.fault.name}"
    if row.expected_code == DONE:
        assert _final(client, name).choices[0].finish_reason == "tool_calls"
        return
    with pytest.raises(Exception) as caught:
        _final(client, name)
    assert row.expected_code in _codes(caught.value)


@pytest.mark.parametrize("profile", list(SHAPED))
def test_strict_reads_the_tolerated_rows_as_the_profile_does(profile: str, served: str) -> None:
    """The variant the profile reads as good: accepted under it, refused by the default."""
    for name in TOLERATED:
        guarded = harness.strict(
            openai.OpenAI(api_key=KEY, base_url=f"{served}/v1"), profile=profile
        )
        assert _final(guarded, f"{profile}-{name}").choices[0].finish_reason == "tool_calls"
        default = harness.strict(openai.OpenAI(api_key=KEY, base_url=f"{served}/v1"))
        with pytest.raises(harness.StreamProtocolError) as caught:
            _final(default, f"{profile}-{name}")
        assert caught.value.code == "stop_with_tool_calls"
