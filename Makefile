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

.PHONY: run build test test-sqlite test-postgres lint bench clean e2e-deps

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
# headless Chromium (playwright-core on Debian's chromium, never a
# downloaded browser). Installs what is missing; a machine where chromium
# cannot be installed skips that test with a message.
E2E_ANALYTICS := scripts/e2e/analytics
e2e-deps:
	@if command -v npm >/dev/null && [ ! -d $(E2E_ANALYTICS)/node_modules ]; then \
		(cd $(E2E_ANALYTICS) && npm ci --no-audit --no-fund) || echo "npm ci failed: the analytics end-to-end tests will skip"; fi
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) || echo "chromium could not be installed: the loader test will skip"; \
		else echo "chromium is missing and cannot be installed here (needs root and apt-get): the loader test will skip"; fi; fi

test-sqlite: $(TOOLS)/stripe-mock e2e-deps
	$(GO) test -race -count=1 ./...

# Runs only when Postgres answers on 127.0.0.1:5432 (database `test`).
test-postgres: $(TOOLS)/stripe-mock e2e-deps
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
	rm -rf bin .cache
