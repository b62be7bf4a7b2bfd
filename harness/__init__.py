"""stream-harness: a strict adapter for Anthropic stream events, and a record/replay harness.

The public API is the list in `__init__.pyi` beside this file (types and names in one
place), plus the public modules `harness.agent`, `harness.builder`, `harness.faults`,
`harness.snapshot` and `harness.pytest_plugin`; every module whose name starts with `_`
is internal. `import harness` is cheap: each name is loaded on first use
(`lazy_loader`), and the Anthropic SDK only when something needs its objects.

PYTEST_DONT_REWRITE: the library's asserts are its own; pytest, which would rewrite the
package of its `pytest11` plugin, warns when a test suite has imported it first.
"""

import lazy_loader

from harness import _deprecated

__getattr__, __dir__, __all__ = _deprecated.wrap(
    __name__, *lazy_loader.attach_stub(__name__, __file__)
)
