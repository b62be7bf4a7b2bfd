"""The one build step beyond pyproject.toml: the cassette library ships inside the wheel.

`cassettes/` stays at the top of the checkout (its scripts write it there); the wheel gets
a copy of its cassettes (every provider's folder of them; data only) as
`harness/_library/`, which `harness conform` and `harness doctor` run by default
(`harness._testing.conform.library_path`), and the compatible servers' cassettes
(docs/profiles.md), which `cassettes/openai/generate.py` writes beside the tests, as its
`openai/chat/profiles/`: examples to copy for a user without the repository.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LIBRARY = Path("cassettes")
#: Every cassette of the library, whichever provider's folder it is in: each provider's
#: library (`Provider.library`) is a folder of it, so a provider added later ships with no
#: line here (Gemini's did not, when each folder was listed).
SHIPPED = ("**/*.jsonl",)

#: (folder of the checkout, its cassettes, where under `harness/_library/` they go)
PROFILES = ("tests/data/profiles", "*/*.jsonl", "openai/chat/profiles")


class BuildWithLibrary(build_py):
    """`build_py`, then the library's cassettes copied into the built `harness/_library/`."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib, "harness", "_library")
        copies = [
            (source, target / source.relative_to(LIBRARY))
            for pattern in SHIPPED
            for source in sorted(LIBRARY.glob(pattern))
        ]
        folder, pattern, under = PROFILES
        copies += [
            (source, target / under / source.relative_to(folder))
            for source in sorted(Path(folder).glob(pattern))
        ]
        for source, destination in copies:
            self.mkpath(str(destination.parent))
            self.copy_file(str(source), str(destination))


setup(cmdclass={"build_py": BuildWithLibrary})
