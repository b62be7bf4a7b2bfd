"""Replay: a cassette answered to the code under test, directly or through the SDK.

`direct` feeds the adapter the SDK's event objects (`construct` builds them fast); `plan`
turns a cassette into the HTTP answer any transport or server carries out; `replayer`
answers one request after another from a test's cassettes; `sdk` is the in-process
transport under real SDK clients; `clients` builds those clients. It may import the flat
core, the adapter and `harness._cassette`.
"""
