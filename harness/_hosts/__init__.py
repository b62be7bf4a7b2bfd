"""Hosts: where a dialect is served, and how its events travel there.

A provider (`harness._providers`) is a wire dialect: what its events mean. A host is
where those events are served, and it decides the framing they travel in:
- `bedrock`: Amazon Bedrock's `InvokeModelWithResponseStream`, each of the dialect's
  events the base64 `bytes` of a `chunk` event in AWS event-stream frames
  (`harness._providers.eventstream`);
- `vertex`: Google Vertex's `streamRawPredict`, server-sent events as the direct API
  sends them.
The direct API is no module: it is the dialect's own framing (`Framing`).

A cassette's lines stay its dialect's events wherever they were recorded, so one
cassette replays on any host its dialect is served on.
"""

from __future__ import annotations

__all__: list[str] = []
