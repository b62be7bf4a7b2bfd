"""Anthropic Messages (`message_start` ... `message_stop` events).

`faults` is its fault catalogue (the rows `harness.faults.CATALOGUE` holds). Its adapter
is still `harness._adapter`. May import the flat core and the provider-neutral modules
of `harness._providers`; never the SDK.
"""
