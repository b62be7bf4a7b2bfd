"""Recording: a live Messages answer written as a cassette, opt-in, never with a credential.

It may import the flat core, `harness._cassette` and `harness._replay` (a recording
client answers like a cassette client once it has recorded).
"""
