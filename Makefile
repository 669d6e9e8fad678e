# holdco — see README.md. `make run` serves the embedded default; `make test`
# runs every test on SQLite, then again on Postgres when one answers locally.
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
# -race needs cgo.
export CGO_ENABLED := 1

.PHONY: run build test test-sqlite test-postgres lint bench clean chromium e2e-deps

run:
	$(GO) run ./cmd/holdco serve

build:
	$(GO) build -o $(BIN) ./cmd/holdco

test: test-sqlite test-postgres

# The payment tests find stripe-mock through STRIPE_MOCK_BIN.
export STRIPE_MOCK_BIN := $(TOOLS)/stripe-mock

$(TOOLS)/stripe-mock:
	GOBIN=$(TOOLS) $(GO) install github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION)

# The analytics end-to-end tests run posthog-js (jsdom) and the loader in
# headless Chromium (playwright-core on Debian's chromium, installed by the
# chromium target; never a downloaded browser).
E2E_ANALYTICS := scripts/e2e/analytics
$(E2E_ANALYTICS)/node_modules/.package-lock.json: $(E2E_ANALYTICS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd $(E2E_ANALYTICS) && npm ci --no-audit --no-fund; \
	else echo "npm is not installed: the analytics end-to-end tests will be skipped"; fi

# The consent page test (app/oauth_e2e_test.go) drives Debian's chromium
# with playwright-core; installed here when missing, where it can be (the
# test skips with a message otherwise). Its Node packages come from the
# committed lock file (npm ci, run by the test).
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then SUDO=""; \
		elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
		else echo "chromium is missing and cannot be installed here: the consent page test will skip"; exit 0; fi; \
		$$SUDO apt-get install -y chromium >/dev/null 2>&1 || { $$SUDO apt-get update >/dev/null 2>&1 && $$SUDO apt-get install -y chromium >/dev/null 2>&1; } \
			|| echo "chromium could not be installed: the consent page test will skip"; \
	fi

# The connector's end-to-end scripts run the official TypeScript MCP
# clients at pinned versions (package-lock.json); mcp's tests drive them and
# skip, saying so, when Node is missing.
E2E_CONNECTOR := scripts/e2e/connector
e2e-deps: $(E2E_CONNECTOR)/node_modules/.package-lock.json $(E2E_ANALYTICS)/node_modules/.package-lock.json

$(E2E_CONNECTOR)/node_modules/.package-lock.json: $(E2E_CONNECTOR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd $(E2E_CONNECTOR) && npm ci --no-audit --no-fund; \
	else echo "npm is not installed: the connector's Node end-to-end tests will be skipped"; fi

test-sqlite: $(TOOLS)/stripe-mock chromium e2e-deps
	$(GO) test -race -count=1 ./...

# Runs only when Postgres answers on 127.0.0.1:5432 (database `test`).
test-postgres: $(TOOLS)/stripe-mock chromium e2e-deps
	@if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then \
		echo "Postgres answers on 127.0.0.1:5432: running the tests again on it"; \
		TEST_DATABASE_URL='$(TEST_PG_URL)' $(GO) test -race -count=1 ./...; \
	else \
		echo "Postgres does not answer on 127.0.0.1:5432: skipping the Postgres pass"; \
	fi

$(TOOLS)/workflowcheck:
	GOBIN=$(TOOLS) $(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(TOOLS)/workflowcheck $(TOOLS)/staticcheck
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(TOOLS)/staticcheck ./...
	$(TOOLS)/workflowcheck ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	scripts/bench.sh $(BIN)
	scripts/bench_analytics.sh $(BIN)

clean:
	rm -rf bin .cache $(E2E_CONNECTOR)/node_modules
