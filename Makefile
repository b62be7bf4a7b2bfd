# Everything a fresh machine with only python3 needs: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test quick lint unit coverage wheel-check bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/harness replay cassettes/interleaved.jsonl

lint: $(STAMP)
	$(BIN)/ruff check harness cli tests cassettes bench examples
	$(BIN)/ruff format --check harness cli tests cassettes bench examples
	$(BIN)/mypy

# Both cores (pytest-xdist): the whole suite, slow tests included.
unit: $(STAMP)
	$(BIN)/pytest -n 2

# The inner loop: everything but the slow tests, in under a minute.
quick: $(STAMP)
	$(BIN)/pytest -m "not slow"

bench: $(STAMP)
	$(BIN)/python -m bench

coverage: $(STAMP)
	$(BIN)/harness coverage cassettes/

wheel-check: $(STAMP)
	./.ci/wheel-check

# The suite runs last, so that its summary is the run's closing line.
test: lint coverage wheel-check unit

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .pytest_cache .ruff_cache
