"""Cassettes as data: the JSONL codec (`codec`), the directive registry (`directives`),
session folders (`sessions`), the schema (`schema`), SSE bytes (`sse`), and a request
as captured, credentials removed (`request`).

Everything here reads or writes what a cassette holds and nothing else: no replay, no
HTTP, no SDK. It may import the flat core (`harness._json`, `_files`, `_exceptions`,
`_terminal`, `_redact`) and `harness._providers` (what a provider decides), nothing of
the other subpackages (tests/test_layout.py checks each subpackage's imports against
its docstring).
"""
