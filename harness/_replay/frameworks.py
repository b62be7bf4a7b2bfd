"""A client of ours for a framework that takes none: `with_client(chat, client)`.

pydantic-ai (`AnthropicProvider(anthropic_client=...)`), the SDK's tool runner and litellm
(`client=`, over `HTTPXReplayTransport`) take a client or a transport as a parameter.
langchain-anthropic's `ChatAnthropic` builds its SDK clients itself, from its own fields,
and caches them (`_client`, `_async_client`): `with_client` is the one place that knows
it, so that a test never sets the private attribute itself (docs/clients.md).
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any, TypeVar

from harness._exceptions import InputError

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic

__all__ = ["with_client"]

Chat = TypeVar("Chat")


def with_client(chat: Chat, client: Anthropic | AsyncAnthropic) -> Chat:
    """A copy of a langchain-anthropic `ChatAnthropic` that sends through `client`: an
    `Anthropic` serves `invoke` and `stream`, an `AsyncAnthropic` `ainvoke` and `astream`
    (give it both by calling it twice). `InputError` for anything else."""
    from anthropic import Anthropic, AsyncAnthropic

    # A ChatAnthropic exists only once langchain_anthropic is imported: no import here.
    module = sys.modules.get("langchain_anthropic")
    chat_class: Any = getattr(module, "ChatAnthropic", None)
    if chat_class is None or not isinstance(chat, chat_class):
        raise InputError(
            f"with_client takes a langchain_anthropic ChatAnthropic, not {type(chat).__name__}"
        )
    if isinstance(client, AsyncAnthropic):
        slot = "_async_client"
    elif isinstance(client, Anthropic):
        slot = "_client"
    else:
        raise InputError(
            f"with_client sends through an anthropic.Anthropic or AsyncAnthropic, "
            f"not {type(client).__name__}"
        )
    if not isinstance(getattr(chat_class, slot, None), functools.cached_property):
        raise InputError(
            f"with_client: this langchain_anthropic's ChatAnthropic does not cache its "
            f"client as {slot}, as the 1.x releases do"
        )
    original: Any = chat
    copy: Chat = original.model_copy()  # a pydantic model: the fields, the other caches kept
    vars(copy)[slot] = client
    return copy
