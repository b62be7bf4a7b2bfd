"""What the test-facing commands and the pytest plugin run: faults, conformance, coverage,
diffs, sessions.

`fault_runs` runs the fault catalogue against an adapter or the user's code; `conform`
runs it against a command in any language (`harness conform`), each process read with
caps and a deadline (`bounded`), one a case or case after case (`persistent`), each
provider's part said in `dialects`, an OpenAI provider's `--serve` cases answered by
`served_cases`, and `findings` classes and reports its disagreements; `coverage` files
cassettes under the outcomes they reach; `diff` compares two replays; `trace` draws a
replay row by row (the open tool blocks, what each line emitted); `client_session` is one
test's cassette clients; `record_once` is the lock and run marker every record route of
the plugin takes; `plugin_providers` is what the plugin's fixtures ask of each provider;
`drift` is the plugin's drift check (a run's cassettes recorded again, compared by shape);
`fault_report` is its `--harness-report` (a run's fault rows as a page, or as JSON);
`sdk_behaviour` is what the installed SDK readers do with each fault row (`harness doctor`);
`rules` is `harness validate`'s check that replay would not refuse a cassette unannounced.
It may import every other subpackage.
"""
