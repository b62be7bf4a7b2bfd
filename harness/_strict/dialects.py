"""Which answers the guard checks, and by which provider's rules: a loop over the registry.

`provider_of` finds the provider a request is a call of, asking each registered one
that has a `guard` module in turn (`guard.claims(method, path)`, by the path its SDK
builds: Messages' `POST .../v1/messages`, Chat's `POST .../chat/completions`, Responses'
`POST .../responses` and `GET .../responses/{id}`); `answer_check` asks that provider
how its answer is checked (`guard.answer_check`: an `AnswerCheck`, whether the SDK reads
it as a stream, the `AnswerReader` for a stream, the check of a non-streaming value), or
gives None for an answer the guard passes untouched. `check_whole` reads a non-streaming
body as the SDKs do and checks it so. What each provider reads of the request, and what
completes its answers, is its own; this module only routes, and spells no provider.

A call at a host's path (`harness._hosts`: Bedrock's `/model/{id}/invoke-with-response-
stream`, Vertex's `...:streamRawPredict`) is claimed for the first provider served there
(`Provider.hosted`), and asked of it as the direct API's call (`Hosted.direct_request`:
the model and `stream` the path carries put back in the body, at the provider's own
endpoint); a stream there is read in the host's framing (`Host.reader`: Bedrock's
frames, each event judged by the provider's reader, the bytes handed on as they came).
Other models' calls share a host's paths: a provider whose guard has `hosted_call(body)`
tells its own by the request's body, and another's call passes unchecked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

import orjson

from harness._hosts import Hosted, hosted_at
from harness._json import sdk_json
from harness._providers import Provider, providers, registry_cache
from harness._providers.answers import AnswerCheck, AnswerReader, request_json
from harness._strict.guard import check_answer

__all__ = [
    "AnswerCheck",
    "answer_check",
    "check_whole",
    "claimed",
    "host_call",
    "hosted_provider",
    "provider_of",
]


@registry_cache
def _guarded() -> tuple[Provider, ...]:
    """The registered providers whose answers the guard reads (those with a `guard`)."""
    return tuple(found for found in providers() if found.has("guard"))


def host_call(method: str, path: str) -> Hosted | None:
    """The host call (Bedrock's, Vertex's) a request is, else None."""
    return hosted_at(path) if method.upper() == "POST" else None


def claimed(found: Provider, method: str, path: str) -> bool:
    """Whether a request is a call of `found`'s: at its own endpoint (`guard.claims`), or
    at a host's path where it is served."""
    if found.guard.claims(method, path):
        return True
    hosted = host_call(method, path)
    return hosted is not None and hosted.host.name in found.hosted


def provider_of(method: str, path: str) -> Provider | None:
    """The provider whose answers a request to `path` gets, if the guard checks them."""
    for found in _guarded():
        if found.guard.claims(method, path):
            return found
    for found in _guarded():
        if claimed(found, method, path):
            return found
    return None


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    status: int,
    allowed: Collection[str],
    *,
    profile: str | None = None,
    dialect: Provider | None = None,
) -> AnswerCheck | None:
    """How to check the answer (of `status`) to a request, or None: see the module.
    `allowed` are the stop (finish, incomplete) reasons the caller accepts besides the
    provider's own; `profile` the compatible server a Chat answer is read under;
    `dialect` the request's provider when the caller has found it (`provider_of`)."""
    if not 200 <= status < 300:
        return None
    found = dialect or provider_of(method, path)
    if found is None:
        return None
    hosted = None if found.guard.claims(method, path) else host_call(method, path)
    if hosted is not None:  # asked as the direct API's call (module docstring)
        request = request_json(content)
        if not _hosted_call(found, request):
            return None  # another model's call at the host's shared path
        path = found.framing.endpoints[0]
        content = orjson.dumps(hosted.direct_request(request))
    check: AnswerCheck | None = found.guard.answer_check(
        method, path, params, content, allowed, profile
    )
    framed = hosted.host.reader if hosted is not None else None
    if check is None or framed is None:
        return check
    inner = check.reader

    def reader() -> AnswerReader:
        return framed(inner())

    return dataclasses.replace(check, reader=reader)


def _hosted_call(found: Provider, request: object) -> bool:
    """Whether a request at a host's path is `found`'s call, as its guard tells by the body
    (`guard.hosted_call`, where the host's path is shared with other models' calls)."""
    tells = getattr(found.guard, "hosted_call", None) if found.has("guard") else None
    return tells is None or bool(tells(request))


def hosted_provider(hosted: Hosted, request: object) -> Provider | None:
    """The provider a request at a host's path (its JSON body `request`) is a call of: the
    first served there whose call it is (module docstring); None for another model's."""
    for found in providers():
        if hosted.host.name in found.hosted and _hosted_call(found, request):
            return found
    return None


def check_whole(check: AnswerCheck, answer: bytes | bytearray, content_type: str) -> None:
    """A non-streaming answer read as the SDK reads it (JSON, leniently) and checked by
    its provider (`check.check_value`); a body that is not JSON under a type that is not
    JSON is read as the stream it would be (`check_answer`). Raises at a violation."""
    try:
        value = sdk_json(answer)
    except ValueError:
        check_answer(answer, content_type, reader=check.reader())
        return
    check.check_value(value)
