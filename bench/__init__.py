"""The benchmarks of stream-harness: kept beside the package, not shipped in it (as h11 does).

Run from a checkout: `make bench`, `python -m bench`, or `harness bench`.
"""
