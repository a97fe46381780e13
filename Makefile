# The two commands of the README: `make report` (the main job) and `make test`.
# Each one runs the idempotent set-up first (scripts/setup.sh).
VENV ?= .venv
PY := $(VENV)/bin/python
SET ?= default

.PHONY: setup report test test-fast lab images clean-containers

setup:
	@bash scripts/setup.sh

## Run every notebook with papermill_params/<notebook>/$(SET).yaml and publish reports/<batch>/.
report: setup
	$(VENV)/bin/benchlib batch --set $(SET)

## The whole suite: unit, real-container engine and measurement tests, notebook smoke runs, nbval-lax.
test: setup
	$(PY) -m pytest --nbval-lax tests notebooks

## Unit tests only (no Docker needed).
test-fast: setup
	$(PY) -m pytest tests/unit

# Loopback only and no browser (a server or container has none); as root Jupyter refuses to start
# without --allow-root, and root is the set-up's own user on this project's machines.
LAB_FLAGS := --ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u)),--allow-root)

lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_FLAGS)

images: setup
	$(VENV)/bin/benchlib images

clean-containers: setup
	$(VENV)/bin/benchlib cleanup --all
