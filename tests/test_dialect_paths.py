"""A cassette answers at its own dialect's paths alone, one rule for every provider.

Driven by the registry (every built-in provider, and `thin`, registered by its entry
point): `harness serve`'s routes say whose path each is (`post_routes`, and a host's
paths, `host_routes`, its dialect's: Bedrock's invoke path and Vertex's rawPredict are
Anthropic's). Each provider's cassette, named by `x-harness-cassette` at another
provider's path, is refused with the 404 that path's clients read, the same over the
socket and from the in-process transport under every cassette client; at each path of
its own it is answered, over the socket and in-process alike.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from functools import cache
from itertools import permutations
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import LIBRARY, THIN, THIRD_PARTY

from harness._cassette.codec import Cassette, expand_paths
from harness._exceptions import ReplayError
from harness._http.dialects import error_json, host_routes, post_routes
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers import PACKAGES, Provider, provider
from harness._replay.replayer import Replayer
from harness._replay.sdk import ReplayTransport

#: Every provider the rule is held for: the built-in ones, and one from outside.
CONTRACT = [*sorted(PACKAGES), THIN]
BODY: Any = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


@cache
def _good_cassette(name: str) -> str:
    """A cassette of provider `name` answered with a 200: its first outside `errors/` and
    `sessions/` (the library's, the third party's)."""
    paths = expand_paths([str(LIBRARY), str(THIRD_PARTY / "cassettes")])
    kept = [path for path in paths if not {"errors", "sessions"} & set(Path(path).parts)]
    return str(Path(next(path for path in kept if Cassette(path).provider == name)).resolve())


def _paths(found: Provider) -> list[str]:
    """Each route `harness serve` gives `found`'s requests, as a path a client sends (each
    part it names, `{model}` say, filled in)."""
    routes = {**post_routes(), **host_routes()}
    return [re.sub(r"\{[^}]*\}", "m", route) for route, whose in routes.items() if whose == found]


def _registered(request: pytest.FixtureRequest, *names: str) -> list[Provider]:
    """The providers `names`, `thin` registered by its entry point first where named."""
    if THIN in names:
        request.getfixturevalue("thin_provider")
    return [provider(name) for name in names]


def _post(url: str, path: str, cassette: str) -> tuple[int, bytes]:
    """The status and body `harness serve` at `url` answers a POST to `path` with, asking
    for `cassette` by its file name."""
    sent = urllib.request.Request(
        url + path,
        data=json.dumps(BODY).encode(),
        headers={"content-type": "application/json", "x-harness-cassette": Path(cassette).name},
    )
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _in_process(cassette: str, path: str, method: str = "POST") -> httpx2.Response:
    """The in-process transport's answer (every cassette client's) to a request to `path`."""
    transport = ReplayTransport(Replayer([cassette], match_on=None))
    with httpx2.Client(transport=transport, base_url="http://replay") as client:
        sent = client.build_request(method, path, json=BODY if method == "POST" else None)
        response = client.send(sent)
        response.read()
        return response


@pytest.mark.parametrize(("ours", "theirs"), list(permutations(CONTRACT, 2)))
def test_a_cassette_at_another_providers_path_gets_the_404_that_paths_clients_read(
    request: pytest.FixtureRequest, ours: str, theirs: str
) -> None:
    mine, other = _registered(request, ours, theirs)
    cassette = _good_cassette(ours)
    paths = _paths(other)
    assert paths
    replayer = Replayer([cassette] * len(paths), match_on=None)  # numbered as serve's
    with ServerThread(CassetteServer([cassette], match_on=None).app()) as url:
        for path in paths:
            with pytest.raises(ReplayError) as refused:
                replayer.respond("POST", path, {}, json.dumps(BODY).encode())
            said = str(refused.value)
            assert f"is POST {path}, but {cassette} is a cassette of {mine.name}," in said
            refusal = error_json(other, 404, f"stream-harness: {said}", path)
            status, body = _post(url, path, cassette)
            assert (status, json.loads(body)) == (404, refusal), path
            # in-process too, in the error shape of the path's provider (at a Bedrock
            # path, Bedrock's: boto3 reads a message only where Bedrock puts one),
            # google-genai a status where Google does
            answered = _in_process(cassette, path)  # its first request
            first = re.sub(r"^request \d+ ", "request 1 ", said)
            refusal = error_json(other, 404, f"stream-harness: {first}", path)
            assert (answered.status_code, answered.json()) == (404, refusal), path


@pytest.mark.parametrize("ours", CONTRACT)
def test_a_cassette_is_answered_at_each_path_of_its_own_dialect(
    request: pytest.FixtureRequest, ours: str
) -> None:
    """Its endpoints, and the paths of the hosts its dialect is served on (Anthropic's at
    Bedrock's and Vertex's), streamed and not."""
    [mine] = _registered(request, ours)
    cassette = _good_cassette(ours)
    with ServerThread(CassetteServer([cassette], match_on=None).app()) as url:
        for path in _paths(mine):
            status, body = _post(url, path, cassette)
            assert status == 200, (path, body[:300])
            answered = _in_process(cassette, path)
            assert answered.status_code == 200, (path, answered.text[:300])


#: Calls an SDK makes besides the streamed one, at paths no provider's cassettes answer.
OTHER_CALLS = [
    ("POST", "/v1/messages/count_tokens"),
    ("GET", "/v1/models"),
    # AnthropicVertex's count_tokens (it was answered as a Message at Vertex's rawPredict)
    ("POST", "/v1/projects/p/locations/l/publishers/anthropic/models/count-tokens:rawPredict"),
    ("POST", "/model/m/count-tokens"),  # boto3's count_tokens
]


@pytest.mark.parametrize("ours", CONTRACT)
def test_a_cassette_client_refuses_a_call_at_a_path_of_no_dialect(
    request: pytest.FixtureRequest, ours: str
) -> None:
    """Not answered from the stream's cassette (a `count_tokens` read its `Message` as a
    count with no `input_tokens`), but refused, as serve refuses it."""
    [mine] = _registered(request, ours)
    cassette = _good_cassette(ours)
    for method, path in OTHER_CALLS:
        answered = _in_process(cassette, path, method)
        assert answered.status_code == 404, (path, answered.text[:300])
        assert f"is {method} {path}, but {cassette} is a cassette of {mine.name}," in answered.text
