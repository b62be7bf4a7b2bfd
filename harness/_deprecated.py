"""Names of 0.1 that still work for one release, each with a `DeprecationWarning`.

Modules that became internal in 0.2 (`harness.replay` is now `harness._replay.direct`, ...) are
found under their old names by a meta path finder; top-level names that were renamed
are answered by the package's `__getattr__`; renamed keyword arguments call
`warn_keyword`. All say what to use instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Final

#: old module (under `harness.`) -> the module that holds its names now
MODULES: Final = {
    "adapter": "_providers.anthropic.adapter",
    "cassette": "_cassette.codec",
    "errors": "_exceptions",
    "events": "_events",
    "fault_check": "_testing.fault_runs",
    "record": "_record.live",
    "replay": "_replay.direct",
    "vcr_import": "_interop.importer",
    "wire": "_replay.sdk",
}
#: (old module, name) -> (the module that holds it now, its name there): the names of 0.1
#: that moved out of the module an old one became, handed to it when the old one is
#: imported, so `from harness.wire import RealtimePacer` works as in 0.1.
MOVED: Final = {
    ("cassette", "MAX_AT_MS"): ("_directives", "MAX_AT_MS"),
    ("record", "redact_request"): ("_redact", "redact_request"),
    ("vcr_import", "VcrImportError"): ("_exceptions", "CassetteImportError"),
    ("wire", "AT_DIRECTIVE"): ("_cassette.codec", "AT_DIRECTIVE"),
    ("wire", "RealtimePacer"): ("_replay.plan", "RealtimePacer"),
    ("wire", "encode_event"): ("_providers.anthropic.framing", "encode_event"),
}
#: old top-level name -> its new name
NAMES: Final = {"areplay": "areplay_events"}
#: (function, old keyword argument) -> what to use instead
KEYWORDS: Final = {("recording_client", "asynchronous"): "async_recording_client(...)"}


def _warn(old: str, new: str, stacklevel: int = 3) -> None:
    message = f"{old} is deprecated and will be removed in 0.3: use {new}"
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)


def warn_keyword(function: str, keyword: str) -> None:
    """Warn, at the caller of `function`, that its `keyword` argument is deprecated."""
    _warn(f"{function}({keyword}=...)", KEYWORDS[function, keyword], stacklevel=4)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `harness.<old>` and answers with the new module itself (so a monkeypatch
    through the old name reaches the code), given the old names that moved elsewhere."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package != "harness" or name not in MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        old = spec.name
        _warn(old, "the same names from `harness` (the module is internal now)")
        name = old.partition(".")[2]
        module = importlib.import_module(f"harness.{MODULES[name]}")
        for (alias, moved), (home, there) in MOVED.items():
            if alias == name and not hasattr(module, moved):
                setattr(module, moved, getattr(importlib.import_module(f"harness.{home}"), there))
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed under its new name already."""


def wrap(
    package: str,
    getattr_: Callable[[str], Any],
    dir_: Callable[[], list[str]],
    all_: list[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The package's `__getattr__`, answering the old names too; installs the finder."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())

    def __getattr__(name: str) -> Any:
        if name in NAMES:
            _warn(f"{package}.{name}", f"{package}.{NAMES[name]}")
            return getattr_(NAMES[name])
        return getattr_(name)

    return __getattr__, dir_, all_
