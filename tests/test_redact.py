"""The one redaction (`harness._redact`): properties over generated requests and URIs."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings, strategies as st

from harness._redact import is_secret_name, redact, redact_headers, redact_request, redact_uri

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
