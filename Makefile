# The build script is the documentation of how each artifact is made.
GO      ?= go
BUILD   ?= build
export CGO_ENABLED := 1

.PHONY: all test test-js test-web web demo bench bench-js wasm cshared lint fuzz-seeds golden clean

all: wasm cshared

## wasm: the core as a WASI reactor for wazero, Node and browsers.
wasm:
	@mkdir -p $(BUILD)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(BUILD)/crawlcheck.wasm ./wasm

## cshared: the core as a C shared library for ctypes and C hosts.
cshared:
	@mkdir -p $(BUILD)
	$(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(BUILD)/libcrawlcheck.so ./cshared

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

## demo: pin a live scenario server, rug-pull one description, catch it in
## enforce mode, re-approve, check again (scripts/demo.sh).
demo:
	GO=$(GO) BUILD=$(BUILD) scripts/demo.sh

## test: everything a clean checkout needs, then every test.
test: lint wasm cshared
	$(GO) test -count=1 ./...
	$(MAKE) fuzz-seeds
	$(MAKE) test-js
	$(MAKE) test-web

## test-js: @crawlcheck/sdk (bindings/js): its locked dependencies from the
## npm registry, the type check of its declarations, then its suites (every
## vector through the wasm, withPreflight and the adapters end to end
## against the scenario server and the test issuer, npm pack offline).
test-js: wasm
	cd bindings/js && npm ci --no-audit --no-fund && npm run typecheck && GO=$(GO) npm test

## web: the offline checker page (bindings/js/web, docs/web.md): build its one
## generated file (the SDK's browser loader and crawlcheck.wasm) and serve it
## on 127.0.0.1, printing the address (WEB_PORT, default 8377).
WEB_PORT ?= 8377
web: wasm
	cd bindings/js && node web/serve.mjs --port $(WEB_PORT)

## test-web: the page in real headless Chromium (Debian's, installed with apt
## when /usr/bin/chromium is absent) driven by playwright-core; screenshots
## go to build/web-test/ (CRAWLCHECK_DOCS_SCREENSHOT=1 also refreshes docs/web.png).
test-web: wasm
	@test -x /usr/bin/chromium || { echo "test-web: installing Debian's chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	cd bindings/js && { test -d node_modules/playwright-core || npm ci --no-audit --no-fund; } && \
	  node scripts/copy-wasm.js && node --test --test-concurrency=1 test/web/

## fuzz-seeds: a short coverage-guided run of every fuzz target.
fuzz-seeds:
	@for t in $$($(GO) test -list '^Fuzz' ./core/... | grep '^Fuzz'); do \
	  pkg=$$($(GO) list -f '{{.ImportPath}} {{.Dir}}' ./core/... | while read p d; do grep -l "func $$t(" $$d/*_test.go >/dev/null 2>&1 && echo $$p; done | head -1); \
	  echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime 5s -fuzzminimizetime 2s $$pkg || exit 1; \
	done

## bench: time native, wazero and the .so on the continuity check; write docs/benchmarks.md.
## It builds its own artifacts with the flags above (the builds are reproducible).
bench:
	$(GO) run ./hosttest/bench -o docs/benchmarks.md
	$(MAKE) bench-js

## bench-js: the SDK's rows (bindings/js/bench), appended to docs/benchmarks.md.
bench-js: wasm
	cd bindings/js && npm ci --no-audit --no-fund && GO=$(GO) node scripts/pretest.js && node --no-warnings bench/bench.js >> ../../docs/benchmarks.md

## golden: regenerate testdata/ deliberately; read the diff before committing.
golden:
	$(GO) test ./core/... -update

clean:
	rm -rf $(BUILD)
