# The build script is the documentation of how each artifact is made, and
# the one place its flags live: hosttest/artifact (the byte-identity tests,
# make bench) builds through these targets, with BUILD set to its own
# directory and TAGS to its build tags.
GO      ?= go
BUILD   ?= build
TAGS    ?=
export CGO_ENABLED := 1

# -trimpath makes the artifacts reproducible: the same source gives the same bytes.
ARTIFACT_FLAGS = -buildmode=c-shared -trimpath -ldflags='-s -w' $(if $(TAGS),-tags=$(TAGS))

.PHONY: all test test-js demo bench bench-js wasm cshared harness lint fuzz-seeds golden clean

all: wasm cshared

## wasm: the core as a WASI reactor for wazero, Node and browsers.
wasm:
	@mkdir -p $(BUILD)
	GOOS=wasip1 GOARCH=wasm $(GO) build $(ARTIFACT_FLAGS) -o $(BUILD)/crawlcheck.wasm ./wasm

## cshared: the core as a C shared library for ctypes and C hosts.
cshared:
	@mkdir -p $(BUILD)
	$(GO) build $(ARTIFACT_FLAGS) -o $(BUILD)/libcrawlcheck.so ./cshared

## harness: the C program hosttest drives libcrawlcheck.so with.
harness:
	@mkdir -p $(BUILD)
	gcc -O2 -std=c11 -Wall -Wextra -Werror -pthread -Icshared -o $(BUILD)/harness hosttest/c/harness.c -ldl

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

## test-js: @crawlcheck/sdk (bindings/js): its locked dependencies from the
## npm registry, the type check of its declarations, then its suites (every
## vector through the wasm, withPreflight and the adapters end to end
## against the scenario server and the test issuer, npm pack offline).
test-js: wasm
	cd bindings/js && npm ci --no-audit --no-fund && npm run typecheck && GO=$(GO) npm test

## fuzz-seeds: a short coverage-guided run of every fuzz target.
fuzz-seeds:
	@for t in $$($(GO) test -list '^Fuzz' ./core/... | grep '^Fuzz'); do \
	  pkg=$$($(GO) list -f '{{.ImportPath}} {{.Dir}}' ./core/... | while read p d; do grep -l "func $$t(" $$d/*_test.go >/dev/null 2>&1 && echo $$p; done | head -1); \
	  echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime 5s -fuzzminimizetime 2s $$pkg || exit 1; \
	done

## bench: time native, wazero, the .so from C, the wasm in Node against a plain-JS peer, and
## Python over the .so against plain Python, on the continuity check; write docs/benchmarks.md.
## It builds its own artifacts with the flags above (the builds are reproducible); it needs
## node (20+) and python3 on PATH.
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
