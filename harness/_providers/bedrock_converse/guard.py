"""What the guard knows of a ConverseStream call: which requests are its; no check yet.

`claims(method, path)` says whether a request is a `converse-stream` or `converse` call
(`POST /model/{modelId}/...`, under any base URL's path), so `harness.strict`,
`StrictTransport` and `proxy --strict` route it here and to no other provider.
`answer_check` returns None: the answer is handed on unchecked. boto3 sends through no
HTTP client the guard can wrap; guarding it (botocore's event hooks, the frames read by
`harness._providers.eventstream`, each event judged by `adapter.ConverseAdapter`) is the
seam left for that work.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from harness._providers.answers import AnswerCheck
from harness._providers.bedrock_converse.framing import PATHS

__all__ = ["answer_check", "claims"]


def claims(method: str, path: str) -> bool:
    """Whether a request is a Converse call: `POST .../model/{modelId}/converse[-stream]`."""
    return method.upper() == "POST" and PATHS.read(path) is not None


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> AnswerCheck | None:
    """None: a Converse answer is not checked yet (module docstring)."""
    return None
