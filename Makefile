# holdco — see README.md. `make run` serves the embedded default; `make test`
# runs every test on SQLite, then the packages that use a database again on
# Postgres when one answers locally.
SHELL := bash
GO ?= go
BIN := bin/holdco
# Tools the targets install at pinned versions, kept in an ignored folder.
TOOLS := $(CURDIR)/.cache/bin
WORKFLOWCHECK_VERSION := v0.6.0
STATICCHECK_VERSION := v0.8.2
# Stripe's API served from its OpenAPI document, for the payment tests.
STRIPE_MOCK_VERSION := v0.203.0
TEST_PG_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
# make bench's Postgres pass: a database made afresh for each run.
BENCH_PG_ADMIN_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
BENCH_PG_URL ?= postgres://postgres@127.0.0.1:5432/holdco_bench?sslmode=disable
# -race needs cgo.
export CGO_ENABLED := 1

.PHONY: run build test test-sqlite test-postgres check times flake lint bench bench-go wrk clean chromium e2e-deps fuzz faults soak scale-test outage

run:
	$(GO) run ./cmd/holdco serve

build:
	$(GO) build -o $(BIN) ./cmd/holdco

# The payment tests find stripe-mock through STRIPE_MOCK_BIN.
export STRIPE_MOCK_BIN := $(TOOLS)/stripe-mock

$(TOOLS)/stripe-mock:
	GOBIN=$(TOOLS) $(GO) install github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION)

# Debian packages the targets use, installed when missing where they can be
# (root or passwordless sudo): $(call apt_install,<command>,<package>,<what it is for>).
define apt_install
@if ! command -v $(1) >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then SUDO=""; \
		elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
		else echo "$(2) is missing and cannot be installed here: $(3)"; exit 0; fi; \
		$$SUDO apt-get install -y $(2) >/dev/null 2>&1 || { $$SUDO apt-get update >/dev/null 2>&1 && $$SUDO apt-get install -y $(2) >/dev/null 2>&1; } \
			|| echo "$(2) could not be installed: $(3)"; \
	fi
endef

# The consent page and the analytics loader run in Debian's Chromium,
# driven by playwright-core (never a downloaded browser).
chromium:
	$(call apt_install,chromium,chromium,the Chromium tests skip (and fail under CI=true))

# The Node end-to-end scripts (scripts/e2e/*: the official TypeScript MCP
# clients, oauth4webapi, posthog-js, playwright-core) get their packages
# here, once, from the committed lock files; the tests never run npm. A
# test whose packages are missing fails under CI=true and is skipped,
# saying so, otherwise (testenv.NodeScripts).
E2E_DIRS := $(patsubst %/package-lock.json,%,$(wildcard scripts/e2e/*/package-lock.json))
E2E_STAMPS := $(addsuffix /node_modules/.package-lock.json,$(E2E_DIRS))
e2e-deps: $(E2E_STAMPS)

scripts/e2e/%/node_modules/.package-lock.json: scripts/e2e/%/package-lock.json scripts/e2e/%/package.json
	@if command -v npm >/dev/null 2>&1; then cd scripts/e2e/$* && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.package-lock.json; \
	elif [ "$$CI" = true ]; then echo "npm is not installed: CI needs it for the Node end-to-end tests (apt-get install nodejs npm)"; exit 1; \
	else echo "npm is not installed: the Node end-to-end tests in scripts/e2e/$* will be skipped"; fi

# The tests' Temporal server (testenv.NewTemporal: one per test binary, in
# a process of its own), built with the suite's flags: -race, with the
# server's own packages uninstrumented (RACE_OFF). So the libraries it
# shares with the test binaries (gRPC, protobuf, Temporal's API and SDK,
# OpenTelemetry, pgx, the standard library: about 700 packages) compile
# once, for both; built without -race they compiled a second time (a cold
# run's CPU went from 37.4 to 29.9 minutes). Its race reports are not
# holdco's (the uninstrumented server's atomics order instrumented gRPC
# code, so the detector sees false races there): testenv starts it with
# GORACE=exitcode=0, its reports stay in its log. It costs the tests
# about 15 % more of the server's CPU than a build without -race (a fully
# instrumented server cost 70 %). `make temporaldev RACE=` builds it
# without -race (make bench-go). go build relinks it only when its code
# or flags changed.
export HOLDCO_TEMPORAL_DEV_BIN := $(TOOLS)/temporaldev
.PHONY: temporaldev
temporaldev:
	@$(RACE_ENV) $(GO) build $(RACE) -ldflags='-s -w' -o $(HOLDCO_TEMPORAL_DEV_BIN) ./testenv/temporaldev

TEST_DEPS := $(TOOLS)/stripe-mock chromium e2e-deps temporaldev
# go test's default limit (10 minutes per test binary) is a timeout a
# loaded machine reaches with the app package under -race; this one is a
# bound for a hung test, not an expectation.
TEST_TIMEOUT ?= 60m
# -ldflags=-w: test binaries without DWARF. Linking one takes about half
# the CPU without it (37 s -> 21 s for app's when it embedded Temporal's
# server). Stack traces and race reports do not use it (the runtime's own
# tables); a debugger does: build one test binary for it by hand.
#
# RACE_OFF: packages the test build compiles without the race detector's
# instrumentation (-gcflags=<pattern>=-race=false); holdco's code, the
# standard library and every library holdco's goroutines synchronise
# through keep it.
# - SQLite's C code translated to Go (modernc.org/sqlite/lib) and the C
#   library and allocator it runs on: their memory is SQLite's own heap,
#   used by one connection at a time under database/sql's locks
#   (instrumenting it, and its -race checkptr checks, cost about a sixth of
#   the api package's CPU). The driver (modernc.org/sqlite) stays
#   instrumented;
# - bcrypt and blowfish: arithmetic on their own buffers (the development
#   identity provider's password checks were 15% of app's CPU).
# Neither instantiates the standard library's generic types (whose code
# the linker would take from one package for all). The flags go in
# GOFLAGS, so that a go command a test starts
# (internal/layering's go list -export) compiles alike and finds the
# suite's packages in the build cache.
# - Temporal's server (go.temporal.io/server/...) and the libraries only
#   it links (SERVER_ONLY: Kubernetes' client, Google Cloud's and some of
#   AWS's SDKs, gRPC's xDS, Cassandra's and Elasticsearch's clients...),
#   which only the tests' server links (temporaldev, above; no -race test
#   binary links any of them: internal/layering reads this list), so
#   their generic instantiations blind no detector that is read (the
#   server's race reports are not). Their instrumentation was a sixteenth
#   of a cold compile of temporaldev's 1,800 packages (425 s of CPU
#   against 453 s).
SERVER_ONLY := go.temporal.io/server/... go.temporal.io/auto-scaled-workers/... k8s.io/... sigs.k8s.io/... \
	cloud.google.com/... google.golang.org/api/... github.com/googleapis/... github.com/GoogleCloudPlatform/... \
	github.com/google/s2a-go/... github.com/envoyproxy/... github.com/cncf/... google.golang.org/grpc/xds/... \
	google.golang.org/grpc/internal/xds/... google.golang.org/grpc/stats/opentelemetry/... \
	github.com/temporalio/... go.uber.org/... github.com/uber-go/... github.com/go-openapi/... github.com/lib/pq/... \
	github.com/spiffe/... github.com/labstack/... github.com/gocql/... github.com/olivere/... github.com/mailru/... \
	github.com/gomarkdown/... github.com/opentracing/... github.com/aws/aws-sdk-go-v2/service/ecs/... \
	github.com/aws/aws-sdk-go-v2/service/lambda/... github.com/aws/aws-sdk-go-v2/service/bedrockagentcore/... \
	github.com/aws/aws-sdk-go-v2/service/bedrockagentcorecontrol/...
RACE_OFF := modernc.org/sqlite/lib modernc.org/libc/... modernc.org/memory modernc.org/mathutil \
	golang.org/x/crypto/bcrypt golang.org/x/crypto/blowfish $(SERVER_ONLY)
RACE_ENV = GOFLAGS="$$($(GO) env GOFLAGS) $(foreach p,$(RACE_OFF),-gcflags=$(p)=-race=false)"
RACE := -race
# TEST_P: test binaries run (and packages build) this many at a time. The
# test binaries wait more than they compute (Temporal's timers, Postgres's
# fsyncs, Chromium, Node): at go test's default (one per core, 2 here) a
# warm run kept the 2 cores about half busy (its test binaries' CPU was
# 348 s of a 567 s run). The tests are made for a loaded machine (make
# flake runs them beside a CPU hog).
TEST_P ?= 4
TEST_GOFLAGS = $(RACE) -count=1 -p $(TEST_P) -ldflags=-w -timeout $(TEST_TIMEOUT)
# make test's -exec: runs a test binary on SQLite, then on HOLDCO_PG_URL
# when the package is one of PG_PKGS.
TESTEXEC := $(TOOLS)/testexec
$(TESTEXEC): $(wildcard scripts/testexec/*.go)
	$(GO) build -o $@ ./scripts/testexec
# PG_CONCURRENT=1: testexec runs a package's SQLite and Postgres runs side
# by side (its Postgres output held until the SQLite run ends). Off: with
# every package's two runs side by side, a warm run took 440 s against
# 391 s (the tests' waits grew with the load; the cores were still a
# third idle).
PG_CONCURRENT ?=
TESTEXEC_ENV = HOLDCO_PG_ROOT='$(CURDIR)' HOLDCO_PG_PKGS='$(PG_PKGS)' HOLDCO_PG_CONCURRENT='$(PG_CONCURRENT)'

# SERVER_PKGS: the packages whose tests link Temporal's server (devserver,
# and temporaldev, the tests' server). They are tested in a go test of
# their own without vet: go test's vet of devserver needed the analysis
# facts of all of Temporal's server (143 s of a cold run's build actions)
# for two small packages that make lint vets. The holdco command links
# the server only when built without -race (cmd/holdco/embedded.go), so
# make test tests it with -race like the rest: testing it without -race
# compiled holdco and its libraries (about 500 packages: stripe-go, the
# model SDKs, go-git...) a second time. The app's and the command's tests
# start the embedded server in a process of its own
# (app.UseEmbeddedTemporal, testenv/apptemporal); internal/layering keeps
# every other package, and every other test binary, from linking the
# server.
SERVER_PKGS := holdco/devserver holdco/testenv/temporaldev
# SLOW_PKGS: the packages whose test binaries run longest (make times),
# longest first. go test starts test binaries in the order its packages
# are named; named alphabetically, service/turns (2 minutes) started last
# and ended a warm run a minute after everything else. gotest names these
# first.
SLOW_PKGS := holdco/app holdco/api holdco/service/turns holdco/service/growth holdco/store \
	holdco/mcp holdco/testenv holdco/activities holdco/providers/companydb holdco/oauth \
	holdco/workflows holdco/service/agenttools holdco/console holdco/service/analytics
# $(call gotest,<environment>,<go test flags>,<packages>): go test of the
# packages but SERVER_PKGS with the flags, the slow ones first, then of
# those among them without vet; fails if either failed.
gotest = pkgs=$$($(1) $(GO) list $(3)) || exit 1; rc=0; \
	rest=$$(grep -vxF $(foreach p,$(SERVER_PKGS),-e $(p)) <<<"$$pkgs"); \
	rest=$$({ for p in $(SLOW_PKGS); do grep -xF "$$p" <<<"$$rest"; done; grep -vxF $(foreach p,$(SLOW_PKGS),-e $(p)) <<<"$$rest"; }); \
	server=$$(grep -xF $(foreach p,$(SERVER_PKGS),-e $(p)) <<<"$$pkgs"); \
	if [ -n "$$rest" ]; then $(1) $(GO) test $(2) $$rest || rc=1; fi; \
	if [ -n "$$server" ]; then $(1) $(GO) test $(2) -vet=off $$server || rc=1; fi; \
	exit $$rc

# make test's and make times' set-up, its steps side by side (make -j):
# stripe-mock's and the Node packages' downloads and Chromium's install
# wait on the network while the compilers run, and every package the
# suite and temporaldev need compiles in one go command (go list -export:
# each package compiled with the suite's flags into the build cache,
# nothing linked; one command, so that no package compiles twice at
# once). temporaldev is then linked from the cache. A package that does
# not compile fails later, in go test, with its errors.
.PHONY: test-setup test-precompile
test-setup:
	@$(MAKE) --no-print-directory -j8 $(filter-out temporaldev,$(TEST_DEPS)) $(TESTEXEC) test-precompile
	@$(MAKE) --no-print-directory temporaldev

test-precompile:
	@$(RACE_ENV) $(GO) list -e -export -deps -test $(RACE) ./... >/dev/null 2>&1 || true

# The complete suite, what CI runs (.ci/run): every package with -race on
# SQLite and, right after, the packages that can differ between the
# databases again on Postgres (PG_PKGS, below) when Postgres answers on
# 127.0.0.1:5432. One go test builds and links each test binary once and
# scripts/testexec runs it for both databases (docs/testing.md). `make check` is the quick
# loop beside it; `make times` is this with a timing table; `make flake`
# hunts tests that depend on the machine's speed; `make test-sqlite` and
# `make test-postgres` run one database.
test: test-setup
	@if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then pg='$(TEST_PG_URL)'; \
		echo "Postgres answers on 127.0.0.1:5432: the packages that use a database run again on it, each right after its SQLite run"; \
	else pg=""; echo "Postgres does not answer on 127.0.0.1:5432: SQLite only"; fi; \
	$(call gotest,HOLDCO_PG_URL="$$pg" $(TESTEXEC_ENV) $(RACE_ENV),$(TEST_GOFLAGS) -exec '$(TESTEXEC)' $(TESTFLAGS),./...)

# Every package, on SQLite, with -race (the race detector covers the
# concurrency the tests exercise: workers, parallel requests, the
# analytics writer...).
test-sqlite: $(TEST_DEPS)
	@$(call gotest,$(RACE_ENV),$(TEST_GOFLAGS) $(TESTFLAGS),./...)

# The Postgres pass runs what can differ between the databases: the
# packages whose tests open a database (testenv's stores and schemas,
# servicetest, an app under test) — the store and its migrations, the use
# cases' transactions, the workflows' activities, the end-to-end paths.
# Parsing, configuration, the providers' clients and other pure logic do
# the same on either database and run once, in the SQLite pass. The list
# is computed, so a new package that opens a database joins it.
PG_PATTERN := testenv\.(NewStore|DatabaseURL)|(^|[^/])servicetest\.|TEST_DATABASE_URL
PG_PKGS = ./testenv/ $(sort $(dir $(shell grep -rlE --include='*_test.go' '$(PG_PATTERN)' --exclude-dir=node_modules --exclude-dir=.cache .)))

# The Postgres pass alone; runs only when Postgres answers on
# 127.0.0.1:5432 (database `test`).
test-postgres: $(TEST_DEPS)
	@if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then \
		echo "Postgres answers on 127.0.0.1:5432: running the packages that use a database again on it"; \
		$(call gotest,TEST_DATABASE_URL='$(TEST_PG_URL)' $(RACE_ENV),$(TEST_GOFLAGS) $(TESTFLAGS),$(PG_PKGS)); \
	else \
		echo "Postgres does not answer on 127.0.0.1:5432: skipping the Postgres pass"; \
	fi

# The quick loop for developers: vet, then the SQLite pass without the
# end-to-end packages (whole apps, Node clients, Chromium). `make test`
# stays the complete suite.
E2E_PKGS := holdco/app
check: $(TOOLS)/stripe-mock temporaldev
	$(GO) vet ./...
	@$(call gotest,$(RACE_ENV),$(RACE) -count=1 -timeout $(TEST_TIMEOUT) $(TESTFLAGS),$$($(GO) list ./... | grep -vxF $(foreach p,$(E2E_PKGS),-e $(p))))

# Both passes with go test -json, then the per-package and per-test time
# table (scripts/testtimes) for docs/benchmarks.md.
times: test-setup
	@mkdir -p .cache
	@if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then pg='$(TEST_PG_URL)'; else pg=""; fi; \
		start=$$(date +%s); ($(call gotest,HOLDCO_PG_URL="$$pg" $(TESTEXEC_ENV) $(RACE_ENV),-json $(TEST_GOFLAGS) -exec '$(TESTEXEC)',./...)) > .cache/times.json; rc=$$?; \
		echo "make test's run: $$(( $$(date +%s) - start )) s (exit $$rc)"; \
		$(GO) run ./scripts/testtimes sqlite=.cache/times.json

# Tests that depend on the machine's speed fail here: the packages that
# run workflows or wait on timers, FLAKE_COUNT times each (-count), with
# -race, while stress-ng keeps every core busy. It reports every failure
# and exits non-zero if there was one. One package or test:
#   make flake FLAKE_PKGS=./service/turns/ FLAKE_RUN=TestRateLimited FLAKE_COUNT=20
# FLAKE_ROUNDS runs go test that many times in a row, FLAKE_COUNT each
# (the runs = rounds x count): a test binary keeps what its tests leave in
# its Temporal server, so many runs go in fresh processes, e.g.
#   make flake FLAKE_PKGS=./service/turns/ FLAKE_ROUNDS=20 FLAKE_COUNT=1
FLAKE_PATTERN := testenv\.(NewTemporal|Main)|Eventually|time\.(Sleep|After|NewTimer|NewTicker)
FLAKE_PKGS ?= $(sort $(dir $(shell grep -rlE --include='*_test.go' '$(FLAKE_PATTERN)' --exclude-dir=node_modules --exclude-dir=.cache .)))
FLAKE_COUNT ?= 5
FLAKE_ROUNDS ?= 1
FLAKE_RUN ?= .
FLAKE_DB ?=
flake: $(TEST_DEPS)
	$(call apt_install,stress-ng,stress-ng,make flake needs it)
	@command -v stress-ng >/dev/null 2>&1 || { echo "stress-ng is missing"; exit 1; }
	@mkdir -p .cache
	@echo "building the test binaries first (no load yet)"
	@($(call gotest,$(RACE_ENV),$(RACE) -count=1 -run '^$$',$(FLAKE_PKGS))) >/dev/null
	@stress-ng --cpu 0 --cpu-load 100 --quiet & hog=$$!; trap 'kill $$hog 2>/dev/null; wait $$hog 2>/dev/null' EXIT; \
		echo "stress-ng (pid $$hog) keeps every core busy; running $(FLAKE_PKGS) $(FLAKE_ROUNDS) x $(FLAKE_COUNT) times"; \
		start=$$(date +%s); rc=0; : > .cache/flake.json; \
		for round in $$(seq $(FLAKE_ROUNDS)); do \
			($(call gotest,TEST_DATABASE_URL='$(FLAKE_DB)' $(RACE_ENV),-json $(RACE) -timeout $(TEST_TIMEOUT) -count=$(FLAKE_COUNT) -run '$(FLAKE_RUN)',$(FLAKE_PKGS))) >> .cache/flake.json || { rc=1; echo "round $$round: go test failed"; }; \
			echo "round $$round of $(FLAKE_ROUNDS): $$(( $$(date +%s) - start )) s so far"; \
		done; \
		echo "under load: $$(( $$(date +%s) - start )) s"; \
		$(GO) run ./scripts/testtimes -top 15 -fails .cache/flake.json || rc=1; \
		exit $$rc

$(TOOLS)/workflowcheck:
	GOBIN=$(TOOLS) $(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(TOOLS)/workflowcheck $(TOOLS)/staticcheck
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(TOOLS)/staticcheck ./...
	$(TOOLS)/workflowcheck ./...

# wrk (Debian) drives the load benchmarks.
wrk:
	$(call apt_install,wrk,wrk,make bench needs it)

# One table of ratios from one run (scripts/bench.sh: /health, /auth/me,
# the dashboard, the connector, capture against a bare handler), on SQLite
# and, when one answers locally, again on Postgres; then capture's
# behaviour under a flood (scripts/bench_analytics.sh); then a scripted
# turn's overhead and send_message's p99 (scripts/bench_turns.sh, on the
# tests' Temporal server built without -race). `make bench-go` runs the
# in-process Go benchmarks.
bench: build wrk
	scripts/bench.sh $(BIN)
	@if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then \
		psql -q '$(BENCH_PG_ADMIN_URL)' -c 'DROP DATABASE IF EXISTS holdco_bench' -c 'CREATE DATABASE holdco_bench' && \
		BENCH_STARTS=0 DATABASE_URL='$(BENCH_PG_URL)' scripts/bench.sh $(BIN); \
	else echo "Postgres does not answer on 127.0.0.1:5432: the Postgres table is skipped"; fi
	scripts/bench_analytics.sh $(BIN)
	@$(MAKE) --no-print-directory temporaldev RACE=
	scripts/bench_turns.sh

# The benchmarks' Temporal server is built without -race (RACE=), like
# the binaries they measure.
bench-go:
	@$(MAKE) --no-print-directory temporaldev RACE=
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Hardening (docs/reliability.md). `make test` runs every fuzz target's
# seeds (testdata/fuzz and f.Add) as ordinary tests; `make fuzz` fuzzes
# each target for FUZZTIME (one worker: FUZZ_PARALLEL), `make faults`
# injects the faults of docs/reliability.md, `make soak` runs holdco serve
# under mixed traffic for SOAK_MINUTES and samples it.
FUZZTIME ?= 10m
FUZZ_PARALLEL ?= 1
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZ_PARALLEL=$(FUZZ_PARALLEL) scripts/fuzz.sh

faults:
	BIN=$(BIN) scripts/faults.sh

SOAK_MINUTES ?= 30
soak:
	BIN=$(BIN) SOAK_MINUTES=$(SOAK_MINUTES) scripts/soak.sh

# A cluster on this machine (scripts/scaletest, docs/scaling.md): the
# binary built once, a standalone Temporal, an S3-protocol store, a fresh
# Postgres database (skipped, saying so, when 127.0.0.1:5432 does not
# answer), 2 api, 2 worker and 2 sites processes behind round-robin
# proxies; kills -9 a worker and an api process mid-run. Not part of
# `make test` (minutes of CPU). Checks sign-in through the proxy, commits
# through the connector of the API processes, limits counted once and
# each sweep run once per cluster. SCALE_FLAGS: -companies N, -turns N,
# -files N, -keep, -bin PATH.
SCALE_FLAGS ?=
scale-test:
	$(GO) run ./scripts/scaletest $(SCALE_FLAGS)

# Kills and outages measured from outside (scripts/outage,
# docs/reliability.md): a private Postgres server (initdb into a temporary
# directory on a free port; skipped, saying so, without initdb/pg_ctl/
# postgres; never the shared server), holdco serve built once on it. Parts:
# kills (kill -9 during turns that call create_task: duplicated effects,
# double charges), balance (50 messages at once on 10 credits), postgres
# (Postgres stopped 40 s under capture and REST writes; kill -9 during
# capture), temporal (a standalone Temporal stopped). Minutes of CPU; not
# part of `make test`. OUTAGE_FLAGS: -parts kills,balance,postgres,temporal,
# -kills N, -kill-turns N, -pg-down D, -temporal-down D, -keep, -bin PATH.
OUTAGE_FLAGS ?=
outage:
	$(GO) run ./scripts/outage $(OUTAGE_FLAGS)

clean:
	rm -rf bin .cache $(addsuffix /node_modules,$(E2E_DIRS))
