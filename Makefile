# Everything a fresh machine with only python3 needs: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# uv (docs/dependencies.md) installs the locked set, uv.lock, into .venv, and the latest and
# oldest lanes into venvs of their own. Pinned here; bootstrapped with pip into a small venv of
# its own (a fresh machine has only python3), again when the pin changes.
UV_VERSION := 0.13.9
TOOLS := .venv-tools
UV := $(TOOLS)/bin/uv
UV_STAMP := $(TOOLS)/.uv-$(UV_VERSION)
LATEST := .venv-latest
OLDEST := .venv-oldest
EXTRAS := test,pytest,openai,frameworks
EXTRAS_BUT_FRAMEWORKS := test,pytest,openai
# The SDKs and frameworks whose versions a lane prints before its run.
TRACKED := anthropic|openai|httpx2|httpx|boto3|botocore|google-genai|pydantic-ai-slim|langchain-anthropic|langchain-openai|langchain-aws|langchain-google-genai|openai-agents|litellm

.PHONY: demo test quick lint unit coverage wheel-check conform-ts bench node chromium screenshots clean lock test-latest test-oldest tables

# The official TypeScript SDKs, for the TypeScript client checks (tests/test_server_typescript.py,
# tests/test_server_typescript_openai.py).
# Pinned, as uv.lock pins the Python side: a new release is taken on purpose (then `make tables`).
TS_ANTHROPIC := 1.17.0
TS_OPENAI_SDK := 6.49.0
NODE_SDK := .node/node_modules/@anthropic-ai/sdk/package.json
NODE_OPENAI := .node/node_modules/openai/package.json

$(UV_STAMP):
	rm -rf $(TOOLS)
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION)
	touch $@

# The locked set, every extra, exactly (what uv.lock does not list is removed), and the project
# itself editable. --locked: a uv.lock that no longer matches pyproject.toml is an error.
$(STAMP): pyproject.toml uv.lock $(UV_STAMP)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --locked --all-extras --python $(PYTHON) \
	|| { echo "if uv.lock no longer matches pyproject.toml: $(UV) lock (what the change needs)" \
	"or make lock (everything to its newest), then review its diff"; exit 1; }
	touch $(STAMP)

# Refreshes uv.lock to the newest releases pyproject.toml allows; review its diff like code.
# (`$(UV) lock` alone adds what a change to pyproject.toml needs and moves nothing else.)
lock: $(UV_STAMP)
	$(UV) lock --upgrade --python $(PYTHON)

# A lane: a fresh venv $(1), the project editable with the extras $(3) resolved by uv with the
# options $(2), no lock; it prints the versions it got, then runs the non-slow suite.
define lane
	$(UV) venv --quiet --clear --python $(PYTHON) $(1)
	$(UV) pip install --quiet --python $(1)/bin/python $(2) -e '.[$(3)]'
	@$(UV) pip freeze --python $(1)/bin/python | grep -iE '^($(TRACKED))=='
	$(1)/bin/pytest -m "not slow" -n 2
endef

# The newest release of every dependency, direct or not, in two runs: without the frameworks
# first, as a user of the SDK extras installs them (the frameworks hold some SDKs back: google-genai
# below 3), then with every extra.
test-latest: $(UV_STAMP)
	$(call lane,$(LATEST),,$(EXTRAS_BUT_FRAMEWORKS))
	$(call lane,$(LATEST),,$(EXTRAS))

# The lowest versions pyproject.toml allows (its direct dependencies at their lower bounds), in
# two runs: without the frameworks first, since their own requirements lift some runtime bounds
# (litellm needs a newer aiohttp than the harness does), then with every extra.
test-oldest: $(UV_STAMP)
	$(call lane,$(OLDEST),--resolution lowest-direct,$(EXTRAS_BUT_FRAMEWORKS))
	$(call lane,$(OLDEST),--resolution lowest-direct,$(EXTRAS))

demo: $(STAMP)
	$(BIN)/harness replay cassettes/interleaved.jsonl

lint: $(STAMP)
	$(BIN)/ruff check harness cli tests cassettes bench examples
	$(BIN)/ruff format --check harness cli tests cassettes bench examples
	$(BIN)/mypy

# The whole suite, slow tests included, on three workers for the two cores: many slow
# tests wait (on a child process, a server's stall, a client's retry back-off), and a
# third worker fills those waits (17 min -> 10.5 on the idle machine). `worksteal`: a
# worker that runs out takes tests queued for the other, so no long test ends the run alone.
unit: $(STAMP) node chromium
	$(BIN)/pytest -n 3 --dist worksteal

# The inner loop: everything but the slow tests, on both cores, in under a minute. A test
# file's tests run on one worker (`--dist loadfile`): its module fixtures start once, and
# the worker is sent a file, not a test, at a time.
quick: $(STAMP)
	$(BIN)/pytest -m "not slow" -n 2 --dist loadfile

# A few minutes: the floors (issue 21's four ratios), the adapter and replay up to 10^5
# deltas, the serve load, the loop's stall under a hostile body. `python -m bench` alone runs
# the sizes up to 10^6.
bench: $(STAMP)
	$(BIN)/python -m bench.floors
	$(BIN)/python -m bench --sizes 1e3,1e4,1e5
	$(BIN)/python -m bench.serve_load
	$(BIN)/python -m bench.stall
	$(BIN)/python -m bench.openai_adapters

# Installed once into an ignored folder; without node the TypeScript check is skipped.
$(NODE_SDK):
	@if command -v npm >/dev/null; then npm install --silent --prefix .node @anthropic-ai/sdk@$(TS_ANTHROPIC) \
	|| echo "npm install failed: tests/test_server_typescript.py will try again and report"; \
	else echo "npm not found: the TypeScript client check will be skipped"; fi

$(NODE_OPENAI):
	@if command -v npm >/dev/null; then npm install --silent --prefix .node openai@$(TS_OPENAI_SDK) \
	|| echo "npm install failed: tests/test_server_typescript_openai.py will try again and report"; \
	else echo "npm not found: the TypeScript openai check will be skipped"; fi

node: $(NODE_SDK) $(NODE_OPENAI)

# Headless Chromium, for the pages' tests in a real browser (tests/test_browser.py), from the
# machine's package manager where it can be: Debian's apt-get, as root. Elsewhere a note, and
# those tests skip saying why; never a failed build.
CHROMIUM_NAMES := chromium chromium-browser google-chrome google-chrome-stable
chromium:
	@for name in $(CHROMIUM_NAMES) $$CHROMIUM; do command -v $$name >/dev/null && exit 0; done; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	echo "installing chromium (apt-get) for tests/test_browser.py"; \
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 \
	|| echo "apt-get install chromium failed: tests/test_browser.py will be skipped"; \
	else echo "no chromium, and no apt-get as root to install it: tests/test_browser.py will be skipped"; fi

# The screenshots docs/view.md shows, taken in headless Chromium (tests/browser.py) from the
# pages the harness writes: harness view's pages of a broken variant of interleaved.jsonl (run
# in $(SHOTS), so the pages name the paths the doc does), of a Chat session, of the two
# side by side; examples/your_app's fault run, harness conform's report.
SHOTS := .screenshots
screenshots: $(STAMP) chromium
	rm -rf $(SHOTS) && mkdir -p $(SHOTS)/cassettes && cp -R examples/your_app $(SHOTS)/your_app
	cp cassettes/interleaved.jsonl $(SHOTS)/cassettes/
	cd $(SHOTS) && ../$(BIN)/harness faults cassettes/interleaved.jsonl --out broken/ >/dev/null \
	&& ../$(BIN)/harness view broken/interleaved.drop_tool_stop.jsonl --out stream.html \
	&& ../$(BIN)/harness view cassettes/interleaved.jsonl broken/interleaved.drop_tool_stop.jsonl \
	--out diff.html
	$(BIN)/harness view cassettes/openai/chat/sessions/weather/ --out $(SHOTS)/session.html
	$(BIN)/python -m tests.browser $(SHOTS)/stream.html docs/view-stream.png --width 1200 --full
	$(BIN)/python -m tests.browser $(SHOTS)/session.html docs/view-session.png --width 1200 --height 1600
	$(BIN)/python -m tests.browser $(SHOTS)/diff.html docs/view-diff.png --width 1200 --height 1080
	cd $(SHOTS)/your_app && { ../../$(BIN)/pytest -q -p no:cacheprovider -k notices \
	--harness-variants-dir=../variants --harness-report=../report.html >/dev/null; \
	test -f ../report.html; }
	$(BIN)/harness conform --format html cassettes/text_only.jsonl -- echo '{"type": "done"}' \
	> $(SHOTS)/conform.html; test -s $(SHOTS)/conform.html
	$(BIN)/python -m tests.browser $(SHOTS)/report.html docs/view-report.png --width 1200 --height 760
	$(BIN)/python -m tests.browser $(SHOTS)/conform.html docs/view-conform.png --width 1200 --height 760

# What each SDK reader and framework does with each fault row, measured on the installed
# releases and written into the docs (docs/sdk-readers.md, harness/sdk_behaviour.json,
# docs/strict.md's and docs/server.md's tables): run after `make lock`, review the diff.
tables: $(STAMP) node
	$(BIN)/python -m harness._testing.sdk_behaviour
	HARNESS_WRITE_TABLES=1 $(BIN)/pytest -p no:cacheprovider -k doc_table \
		tests/test_strict_frameworks.py tests/test_strict_openai_frameworks.py \
		tests/test_server_typescript_openai.py

# toModelEvents in TypeScript to the original design (examples/typescript), judged by
# `harness conform` on every default case, one node process a job (--persistent), for
# Anthropic and for each OpenAI API (conform-openai.js: both dialects' toModelEvents). Its npm
# packages (package-lock.json) go into the example's own node_modules/ and its build into
# dist/, both ignored; without node the run is skipped.
TS_EXAMPLE := examples/typescript
TS_MODULES := $(TS_EXAMPLE)/node_modules/.package-lock.json
TS_BUILT := $(TS_EXAMPLE)/dist/conform-stdin.js
TS_OPENAI := $(TS_EXAMPLE)/dist/conform-openai.js

$(TS_MODULES): $(TS_EXAMPLE)/package-lock.json
	cd $(TS_EXAMPLE) && npm ci --silent --no-audit --no-fund

$(TS_BUILT): $(TS_MODULES) $(TS_EXAMPLE)/tsconfig.json $(wildcard $(TS_EXAMPLE)/src/*.ts)
	cd $(TS_EXAMPLE) && node_modules/.bin/tsc -p .

conform-ts: $(STAMP)
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
	$(MAKE) --no-print-directory $(TS_BUILT) && $(BIN)/harness conform --persistent -j 2 -- node $(TS_BUILT) \
	&& for provider in openai-chat openai-responses; do \
	$(BIN)/harness conform --provider $$provider --persistent -j 2 -- node $(TS_OPENAI) || exit 1; done; \
	else echo "node or npm not found: the TypeScript conformance run (examples/typescript) is skipped"; fi

# Every provider's table, a report each: Anthropic's, openai-chat's, openai-responses'.
coverage: $(STAMP)
	$(BIN)/harness coverage cassettes/

wheel-check: $(STAMP)
	./.ci/wheel-check

# The checks run beside the suite: the suite keeps both cores busy but for its waits, and
# mypy holds one core, the wheel check mostly waits on its installs and children, so
# beside it they cost the run about half their time alone. Their output is kept
# (each target's together) and printed after the suite's, then one line on both. The
# TypeScript conformance runs (`conform-ts`) are the suite's:
# tests/test_conform_typescript.py runs the commands docs/conform.md shows.
CHECKS_LOG := $(VENV)/checks.log
test: $(STAMP) node chromium
	@$(MAKE) --no-print-directory -j 3 --output-sync=target lint coverage wheel-check \
	> $(CHECKS_LOG) 2>&1 & checks=$$!; \
	$(MAKE) --no-print-directory unit; suite=$$?; \
	wait $$checks; status=$$?; cat $(CHECKS_LOG); \
	if [ $$status -ne 0 ]; then echo "make test: the checks failed (above)"; exit $$status; fi; \
	if [ $$suite -ne 0 ]; then echo "make test: the checks passed, the suite failed"; exit $$suite; fi; \
	echo "make test: the checks and the suite passed"

clean:
	rm -rf $(VENV) $(TOOLS) $(LATEST) $(OLDEST) .node build dist *.egg-info .mypy_cache .pytest_cache .ruff_cache $(SHOTS)
	rm -rf $(TS_EXAMPLE)/node_modules $(TS_EXAMPLE)/dist
