# One-command entry points (see README.md).
VENV ?= .venv
PY := $(VENV)/bin/python
CORES ?= 2

.PHONY: install pipeline test test-fast lint docs clean container

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,prompts,docs]"
	# the Lipschitz family's numba functions into numba's cache (about 50 s, once per machine)
	$(PY) -m banditbench precompile
	touch $@

install: $(VENV)/.installed

pipeline: install  ## install, then run the default pipeline (config.yaml); print the paired tables and the claims
	$(VENV)/bin/snakemake --cores $(CORES)
	@for f in results/default/paired/*.md; do sed -n '1p;3p;/^Self-duel lock-in/p;/at T = /,/by horizon/{/by horizon/!p;}' $$f; done
	@$(VENV)/bin/banditbench claims config.yaml --brief

# the tests spread over up to 4 worker processes (pytest-xdist; each end-to-end run starts Snakemake on 2 cores)
XDIST = -n auto --maxprocesses 4

test: install  ## install, then run the whole test suite
	$(PY) -m pytest -q $(XDIST)

test-fast: install  ## skip the end-to-end Snakemake runs
	$(PY) -m pytest -q $(XDIST) -m "not slow"

docs: install  ## the documentation site into site/ (offline; reference pages generated from the code)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

lint: install  ## snakemake --lint, snakefmt --check, ruff check and ruff format --check (also run by make test)
	$(VENV)/bin/snakemake --lint
	$(VENV)/bin/snakefmt --check Snakefile workflow/
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# the jobs' container recipe, generated from envs/banditbench.yaml (needs conda on PATH; a test
# checks that the committed Dockerfile is what this prints)
Dockerfile: envs/banditbench.yaml
	$(VENV)/bin/snakemake --containerize > $@.tmp && mv $@.tmp $@

container: Dockerfile  ## build the jobs' image (docs/running-grids.md, "Containers")
	docker build -t banditbench:0.1.0 .

clean:
	rm -rf results logs .snakemake site
