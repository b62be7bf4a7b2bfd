"""Cassettes as data: the JSONL codec, the directive registry, session folders, the schema,
SSE bytes, and the `Message` fold.

Everything here reads or writes what a cassette holds and nothing else: no replay, no
HTTP, no SDK. It may import the flat core (`harness._json`, `_files`, `_exceptions`,
`_terminal`, `_redact`) and nothing of the other subpackages.
"""
