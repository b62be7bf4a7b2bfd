"""Fuzzing `harness import`: damaged recordings and odd documents give only documented outcomes.

Documented: exit 0, 1 or 2; never a traceback; every cassette written replays or
validates (what was written is a cassette); no stderr line without a path.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import ROOT
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import Cassette
from harness_cli.main import cli

RECORDINGS = sorted((ROOT / "tests" / "data" / "recordings").iterdir())
SAMPLES = [path for path in RECORDINGS if path.suffix != ".md"]


def _check_import(name: str, content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / name
        source.write_bytes(content)
        out = Path(folder) / "out"
        result = CliRunner().invoke(cli, ["import", str(source), "--out", str(out)])
        assert result.exit_code in (0, 1, 2), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(
            result.exception
        )
        assert "Traceback" not in result.output
        for line in result.stderr.splitlines():
            assert line.startswith(
                (str(source), str(out), "no Messages, Chat Completions, Responses or Gemini generateContent call")
            ), line
        for written in out.glob("*.jsonl") if out.exists() else []:
            assert Cassette(written).validate() > 0


@st.composite
def _damaged(draw: st.DrawFn) -> tuple[str, bytes]:
    sample = draw(st.sampled_from(SAMPLES))
    data = bytearray(sample.read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["cut", "flip", "insert", "delete"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if action == "cut":
            del data[at:]
        elif action == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif data:
            del data[at : at + draw(st.integers(1, 64))]
    return sample.name, bytes(data)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged())
def test_a_damaged_recording_gives_a_documented_outcome(case: tuple[str, bytes]) -> None:
    _check_import(*case)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["POST", "https://api.anthropic.com/v1/messages", "http://[::1", "{"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def _interaction(draw: st.DrawFn) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": draw(st.sampled_from(["POST", "GET", 7, None])),
        "uri": draw(st.sampled_from(["https://api.anthropic.com/v1/messages", "http://[::1", 3])),
        "headers": draw(_VALUES),
        "body": draw(_VALUES),
    }
    response: dict[str, Any] = {
        "status": draw(st.sampled_from([{"code": 200}, 200, {"code": "x"}, None, [200]])),
        "headers": draw(_VALUES),
        "body": draw(
            st.one_of(
                _VALUES,
                st.builds(
                    lambda text: {"string": text},
                    st.sampled_from(
                        [
                            'event: ping\ndata: {"type": "ping"}\n\n',
                            "data: [DONE]\n\n",
                            '{"type": "message"}',
                        ]
                    ),
                ),
            )
        ),
    }
    if draw(st.booleans()):
        response["parsed_body"] = draw(_VALUES)
    return {"request": draw(st.sampled_from([request, None, []])), "response": response}


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_interaction(), max_size=3), st.sampled_from(["yaml", "json"]))
def test_an_odd_document_gives_a_documented_outcome(
    interactions: list[dict[str, Any]], form: str
) -> None:
    document = {"interactions": interactions, "version": 1}
    if form == "json":
        _check_import("odd.json", json.dumps(document).encode())
    else:
        _check_import("odd.yaml", yaml.safe_dump(document).encode())
