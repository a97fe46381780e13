# The two commands of the README: `make report` (the main job) and `make test`.
# Each one runs the idempotent set-up first (scripts/setup.sh).
VENV ?= .venv
PY := $(VENV)/bin/python
SET ?= default

# Python caches each module's bytecode as it first imports it. Where PYTHONDONTWRITEBYTECODE is set
# (this project's machines set it) nothing was cached, and every interpreter these targets start
# (each notebook kernel, CLI and Dask worker) compiled plotly, pandas and Jupyter from source again:
# ~3 s each. Compiling the whole virtualenv at install instead took 55 s, most of it never imported.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup report test test-fast test-engines test-notebooks lab images clean-containers

setup:
	@bash scripts/setup.sh

## Run every notebook with papermill_params/<notebook>/$(SET).yaml and publish reports/<batch>/.
## CLUSTER=tcp://host:8786 STORE=s3://bucket/prefix: on the Dask workers of that scheduler, every run in
## that bucket; STORE alone: here, and each notebook's runs published to the bucket.
report: setup
	$(VENV)/bin/benchlib batch --set $(SET)$(if $(CLUSTER), --cluster $(CLUSTER))$(if $(STORE), --store $(STORE))

## The whole suite: unit, real-container engine, measurement and valgrind tests, notebook smoke runs.
## No nbval over notebooks/: it ran each notebook a second time at its stored values, which are the
## tiny set the smoke runs execute (tests/unit/test_packaging.py holds them to it).
test: setup
	$(PY) -m pytest --durations=25 tests

## The tiers, by marker: no container, perf window, notebook or browser (seconds to a minute).
test-fast: setup
	$(PY) -m pytest -m "not docker and not perf and not valgrind and not notebook and not browser" tests

## Real containers and perf, without notebooks.
test-engines: setup
	$(PY) -m pytest -m "(docker or perf or valgrind) and not notebook" tests

## Notebook smoke runs at tiny scale (papermill).
test-notebooks: setup
	$(PY) -m pytest -m notebook tests

# Loopback only and no browser (a server or container has none); as root Jupyter refuses to start
# without --allow-root, and root is the set-up's own user on this project's machines.
LAB_FLAGS := --ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u)),--allow-root)

lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(LAB_FLAGS)

images: setup
	$(VENV)/bin/benchlib images

clean-containers: setup
	$(VENV)/bin/benchlib cleanup --all
