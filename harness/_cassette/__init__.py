"""Cassettes as data: the JSONL codec (`codec`), session folders (`sessions`), the
schema (`schema`), SSE bytes read as the SDKs read them (`sse`), and a request as
captured, credentials removed (`request`). The directive lines are the core's
(`harness._directives`): providers write them too.

Everything here reads or writes what a cassette holds and nothing else: no replay, no
HTTP, no SDK. It may import the flat core (`harness._json`, `_files`, `_exceptions`,
`_terminal`, `_redact`) and `harness._providers` (what a provider decides), nothing of
the other subpackages (tests/test_layout.py checks each subpackage's imports against
its docstring).
"""
