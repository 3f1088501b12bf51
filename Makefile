# One-command entry points (see README.md).
VENV ?= .venv
PY := $(VENV)/bin/python
CORES ?= 2

.PHONY: install pipeline test test-fast lint clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test]"
	touch $@

install: $(VENV)/.installed

pipeline: install  ## install, then run the default pipeline (config.yaml)
	$(VENV)/bin/snakemake --cores $(CORES)

test: install  ## install, then run the whole test suite
	$(PY) -m pytest -q

test-fast: install  ## skip the end-to-end Snakemake runs
	$(PY) -m pytest -q -m "not slow"

lint: install  ## snakemake --lint and snakefmt --check (also run by make test)
	$(VENV)/bin/snakemake --lint
	$(VENV)/bin/snakefmt --check Snakefile workflow/

clean:
	rm -rf results logs .snakemake
