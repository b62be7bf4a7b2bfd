"""The one redaction (`harness._redact`): properties over generated requests and URIs."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit

import pytest
from hypothesis import given, settings, strategies as st

from harness._redact import (
    credentials,
    excerpt,
    is_secret_name,
    mask,
    mask_text,
    redact,
    redact_answer,
    redact_headers,
    redact_query,
    redact_request,
    redact_uri,
)

SECRET_WORDS = ["key", "token", "secret", "password", "passwd", "authorization", "cookie"]
COUNTS = ["max_tokens", "budget_tokens", "input_tokens", "output_tokens"]


def mixed_case(word: str) -> st.SearchStrategy[str]:
    return st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper, strict=True))
    )


secret_names = st.builds(
    lambda prefix, word, suffix: prefix + word + suffix,
    st.sampled_from(["", "x-", "client_", "api_", "aws_", "X-Api-"]),
    st.sampled_from(SECRET_WORDS).flatmap(mixed_case),
    st.sampled_from(["", "_id", "-value", "s"]),
).filter(lambda name: not name.lower().endswith("tokens"))
plain_names = st.sampled_from(["model", "name", "path", "items", "text", "x", *COUNTS])
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(plain_names | secret_names, children, max_size=4)
    ),
    max_leaves=20,
)


def keys_at_any_depth(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(key for item in value.values() for key in keys_at_any_depth(item))]
    if isinstance(value, list):
        return [key for item in value for key in keys_at_any_depth(item)]
    return []


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(json_values)
def test_no_credential_like_key_survives_at_any_depth(value: Any) -> None:
    assert not any(is_secret_name(key) for key in keys_at_any_depth(redact(value)))


plain_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(plain_names, children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(plain_values)
@pytest.mark.slow
def test_a_value_without_credential_like_keys_is_kept_whole(value: Any) -> None:
    assert redact(value) == value


@pytest.mark.parametrize("name", COUNTS)
def test_token_counts_are_not_credentials(name: str) -> None:
    assert redact_request({name: 5, "metadata": {name: 1}}) == {name: 5, "metadata": {name: 1}}


@settings(max_examples=200, deadline=None)
@given(
    user=st.text("abcXYZ019", min_size=1, max_size=8),
    password=st.text("abcXYZ019", min_size=1, max_size=8),
    secret_name=secret_names,
    plain=st.dictionaries(st.sampled_from(["q", "page", "model"]), st.text("ab1", max_size=4)),
)
@pytest.mark.slow
def test_uris_lose_userinfo_and_credential_parameters(
    user: str, password: str, secret_name: str, plain: dict[str, str]
) -> None:
    query = "&".join([*(f"{k}={v}" for k, v in plain.items()), f"{secret_name}=SECRET9"])
    uri = f"https://{user}:{password}@api.example.com/v1/messages?{query}"
    redacted = redact_uri(uri)
    parts = urlsplit(redacted)
    assert parts.netloc == "api.example.com"
    assert "SECRET9" not in redacted
    assert dict(parse_qsl(parts.query, keep_blank_values=True)) == plain


def test_headers_lose_credentials_whatever_their_case() -> None:
    headers = {"Authorization": "Bearer x", "X-API-KEY": "k", "Content-Type": "json", "Cookie": "c"}
    assert redact_headers(headers) == {"content-type": "json"}


# -- credentials by value (issue 37) -------------------------------------------------------------


def test_credentials_are_the_values_a_request_carries_longest_first() -> None:
    basic = "Basic " + base64.b64encode(b"someone:pass-word-1234").decode()
    found = credentials(
        {
            "Authorization": "Bearer sk-proj-0123456789",
            "x-proxy-authorization": basic,
            "cookie": "session=cookie-value-42; theme=dark",
            "content-type": "application/json",
        },
        "https://user:uri-password-99@host/v1?api-key=query-key-5678&model=gpt-4.1-mini",
        values=["sk-held-by-command", "short", None],
    )
    assert set(found) >= {
        "sk-proj-0123456789",
        "Bearer sk-proj-0123456789",
        "pass-word-1234",
        "cookie-value-42",
        "uri-password-99",
        "query-key-5678",
        "sk-held-by-command",
    }
    assert "short" not in found and "application/json" not in found  # too short; no secret
    assert "gpt-4.1-mini" not in found
    assert [len(value) for value in found] == sorted((len(value) for value in found), reverse=True)


def test_mask_replaces_each_credential_in_every_string_and_key() -> None:
    secrets = credentials(values=["sk-0123456789", "sk-0123456789-longer"])
    value = {"a": ["x sk-0123456789-longer y", {"sk-0123456789": "sk-0123456789!"}], "n": 3}
    assert mask(value, secrets) == {"a": ["x *** y", {"***": "***!"}], "n": 3}
    assert mask_text("key sk-0123456789.", secrets) == "key ***."
    assert mask(value, ()) is value


@pytest.mark.parametrize(
    "name", ["prompt_tokens_details", "completion_tokens_details", "input_tokens_details"]
)
def test_token_counts_details_are_no_credentials(name: str) -> None:
    assert not is_secret_name(name)


def test_an_answer_keeps_a_logprob_token_and_drops_a_token_elsewhere() -> None:
    entry = {"token": "Hello", "logprob": -0.1, "top_logprobs": [{"token": "Hi", "logprob": -2}]}
    event = {"choices": [{"logprobs": {"content": [entry]}}], "token": "sess-secret"}
    assert redact_answer(event) == {"choices": [{"logprobs": {"content": [entry]}}]}
    assert redact(entry) == {"logprob": -0.1, "top_logprobs": [{"logprob": -2}]}


def test_an_answer_keeps_a_reasoning_signature_under_its_key_and_drops_one_elsewhere() -> None:
    """Converse's reasoning delta has no `type`: its `signature` is known by the key the
    object sits under (`reasoningContent`), as Messages' is by the object's `type`."""
    delta = {"reasoningContent": {"signature": "Eu0CCkgIBxABGAIq"}}
    event = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": delta}}
    assert redact_answer(event) == event
    assert redact(event) == {
        "contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {}}}
    }
    elsewhere = {"metadata": {"signature": "AWS4-SIGNATURE-VALUE"}}
    assert redact_answer(elsewhere) == {"metadata": {}}


# -- query and body credentials, encoded forms, excerpts -------------------------------------------

#: Credentials a query carries: a presigned URL's (`X-Amz-Credential` holds the access key
#: id), Google's bearer token, Azure's and Gemini's keys.
QUERY_CREDENTIALS = {
    "X-Amz-Security-Token": "IQoJb3JpZ2luX2VjEXAMPLE+SESSION/TOKEN==",
    "X-Amz-Signature": "deadbeef0123456789abcdef",
    "X-Amz-Credential": "AKIAEXAMPLEKEY123/20250101/us-east-1/bedrock/aws4_request",
    "access_token": "ya29.GOOGLE-BEARER-TOKEN",
    "api-key": "AZURE-KEY-0123456789",
    "key": "AIza-test_key+with/odd=chars",
}


def test_a_query_keeps_no_credential_like_parameter() -> None:
    plain = {"alt": "sse", "X-Amz-Date": "20250101T000000Z", "X-Amz-Algorithm": "AWS4-HMAC-SHA256"}
    assert redact_query({**QUERY_CREDENTIALS, **plain}) == plain
    assert redact_query(list({**QUERY_CREDENTIALS, **plain}.items())) == plain


@pytest.mark.parametrize(
    "encode",
    [
        lambda query: urlencode(query),  # `/` as %2F, a space as `+`
        lambda query: urlencode(query, quote_via=quote),  # a space as %20
        lambda query: "&".join(f"{k}={quote(v, safe='/')}" for k, v in query.items()),  # httpx's
    ],
    ids=["form", "percent", "slash-kept"],
)
def test_a_query_credential_is_masked_as_sent_decoded_and_percent_encoded(
    encode: Any,
) -> None:
    """An upstream quoting the URL it received repeats each credential as the client
    encoded it; one quoting it decoded, as it read it."""
    given = {**QUERY_CREDENTIALS, "access_token": "ya29 GOOGLE BEARER TOKEN"}  # a space
    sent = f"/v1/models/m:streamGenerateContent?{encode({**given, 'alt': 'sse'})}"
    secrets = credentials(uri=f"https://host{sent}")
    for value in given.values():
        for form in (value, quote(value, safe=""), quote(value), quote_plus(value)):
            assert mask_text(f"bad URL: {form}.", secrets) == "bad URL: ***."
    assert mask_text(f"bad URL: {sent}", secrets).count("***") == len(given)
    assert mask_text("AKIAEXAMPLEKEY123 signed it", secrets) == "*** signed it"
    assert "alt=sse" in mask_text(sent, secrets)


def test_a_header_credential_is_masked_percent_encoded_too() -> None:
    secrets = credentials({"Authorization": "Bearer sk-with+plus/slash=and space"})
    for form in (quote("sk-with+plus/slash=and space"), quote_plus("sk-with+plus/slash=and space")):
        assert mask_text(f"?token={form}", secrets) == "?token=***"


def test_userinfo_is_masked_as_written_and_decoded() -> None:
    secrets = credentials(uri="http://admin:pass%40word-0123@upstream:8080")
    assert mask_text("pass@word-0123 pass%40word-0123", secrets) == "*** ***"


def test_the_strings_of_credential_like_body_fields_are_credentials_at_any_depth() -> None:
    """The values a request's body holds under a credential-like name (what `redact`
    removes from the kept request) are masked where upstream repeats them; an object
    under such a name is read field by field (a tool's schema names a `password`
    property, and holds none), a thinking block's `signature` is the protocol's, and a
    count no credential."""
    schema = {
        "type": "object",
        "properties": {"password": {"type": "string", "format": "password"}},
    }
    body = {
        "model": "claude-sonnet-5",
        "max_tokens": 4096,
        "metadata": {
            "user_id": "user-0123456789",
            "auth": {"api_key": "NESTED-API-KEY-1", "deep": [{"client_secret": "NESTED-SECRET-1"}]},
            "api_keys": ["KEY-IN-A-LIST-1", 7],
        },
        "tools": [{"name": "log_in", "description": "Log in", "input_schema": schema}],
        "messages": [
            {"role": "assistant", "content": [{"type": "thinking", "signature": "EuYBCkQYAiJA"}]}
        ],
    }
    found = set(credentials(body=body))
    assert {"NESTED-API-KEY-1", "NESTED-SECRET-1", "KEY-IN-A-LIST-1"} <= found
    assert not {"user-0123456789", "EuYBCkQYAiJA", "claude-sonnet-5", "password"} & found
    quoted = f"metadata.auth: {redact(body)} {body}"
    assert "NESTED" not in mask_text(quoted, credentials(body=body))


def test_an_excerpt_is_whole_or_only_its_length() -> None:
    """A value cut short could keep the start of a credential no masking by value finds:
    a message quotes a peer's value whole or says how long it is."""
    assert excerpt("chunk") == "chunk"
    assert excerpt("x" * 64) == "x" * 64
    assert excerpt("Cookie=" + "s" * 80) == "<87 characters>"
