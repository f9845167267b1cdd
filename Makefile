# The build script is the documentation of how each artifact is made, and
# the one place its flags live: hosttest/artifact (the byte-identity tests,
# make bench) builds through these targets, with BUILD set to its own
# directory and TAGS to its build tags.
GO      ?= go
BUILD   ?= build
TAGS    ?=
export CGO_ENABLED := 1

# -trimpath makes the artifacts reproducible: the same source gives the same bytes.
BASE_FLAGS     = -buildmode=c-shared -trimpath -ldflags='-s -w'
ARTIFACT_FLAGS = $(BASE_FLAGS) $(if $(TAGS),-tags=$(TAGS))
comma := ,

.PHONY: all race postgres zopfli js-deps oauth-deps fastmcp-deps load test test-interop interop-doc test-js test-python python-wheel bench-python bench-js bench-detail test-web web demo bench wasm cshared harness lint fuzz-seeds golden clean attack attack-issuer test-registry launched-deps test-launched wheels release release-check test-wine wine test-qemu qemu

all: wasm cshared

## wasm: the core as a WASI reactor for wazero, Node and browsers, then its
## data section as one segment (wasm/mergedata: Go's linker splits it at every
## run of zeros, which costs the gzipped module 82 KB; issue 36, the npm size).
## WASM_NOINLINE: core packages compiled without inlining, in them and of
## their functions into their callers (wasm only; native builds unchanged).
## Round 1 (docs/decisions.md, npm size): the ones no session runs in its
## loop (the gateway's decisions, the transparency log, key directories,
## endpoints, the feature lists, the policy table, the session engine, the
## error values' construction, the log's Merkle trees): 50 KB less gzipped.
## Round 2 (npm size, round 2): the change classifier and the word diff (run
## for a changed tool only), the time format, escape_text, the sort helpers,
## the digest wrapper, and the check's and the request reader's packages
## (continuity, req): 52 KB less. Each round measured no slower in Node: a
## warm check, handoff, verify_lock and make_lock at 1,000 tools, and a fresh
## process's load and first check. The op layer (core) and lock are not among
## them: without inlining a fresh process took about 85 ms more CPU (core)
## and the warm check 1.05x longer (lock).
WASM_NOINLINE = internal/guard internal/tlog internal/sig internal/endpoint internal/features internal/policy internal/session cerr merkle \
                internal/classify internal/diff timefmt textsafe internal/sorting digest internal/continuity internal/req
## WASM_TAGS: crawlcheck_nodoc leaves out the ops' field types and words
## (core/spec_nodoc.go), which only the native tests read to write the docs.
WASM_TAGS     = crawlcheck_nodoc$(if $(TAGS),$(comma)$(TAGS))
WASM_GCFLAGS  = $(foreach p,$(WASM_NOINLINE),-gcflags=github.com/crawlcheck/verifier/core/$(p)=-l)
wasm:
	@mkdir -p $(BUILD)
	GOOS=wasip1 GOARCH=wasm $(GO) build $(BASE_FLAGS) -tags=$(WASM_TAGS) $(WASM_GCFLAGS) -o $(BUILD)/crawlcheck.wasm ./wasm
	$(GO) run ./wasm/mergedata $(BUILD)/crawlcheck.wasm

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

## demo: pin a live scenario server, rug-pull one description, see observe
## mode let it through and say so once, catch it in
## enforce mode, re-approve, check again (scripts/demo.sh).
demo:
	GO=$(GO) BUILD=$(BUILD) scripts/demo.sh

## postgres: PostgreSQL 15, which the issuer's store suite starts a
## throwaway instance of (internal/issuer/store/pgtest); Debian's package,
## installed with apt when missing.
postgres:
	@test -x /usr/lib/postgresql/15/bin/initdb || { echo "postgres: installing Debian's postgresql-15"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15; }

## zopfli: the gzip encoder that writes the npm package's crawlcheck.wasm.gz
## (bindings/js/scripts/copy-wasm.js: 5% smaller than zlib's best, which the
## 1.5 MB target needs); Debian's package, installed with apt when missing.
zopfli:
	@command -v zopfli >/dev/null || { echo "zopfli: installing Debian's zopfli"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zopfli; }

## test: everything a clean checkout needs, then every test.
test: lint wasm cshared postgres js-deps oauth-deps fastmcp-deps launched-deps
	CRAWLCHECK_NEED_SERVERS=1 CRAWLCHECK_LAUNCHED_DEPS=$(LAUNCHED) CRAWLCHECK_OAUTH_PYTHON=$(ABUILD)/py-oauth/bin/python CRAWLCHECK_FASTMCP_PYTHON=$(ABUILD)/py-fastmcp/bin/python $(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v '/internal/preflight$$')
	$(MAKE) race
	$(MAKE) fuzz-seeds
	$(MAKE) test-js
	$(MAKE) test-python
	$(MAKE) test-web
	$(MAKE) test-interop
	$(MAKE) test-registry
	$(MAKE) test-wine
	$(MAKE) test-qemu

## race: the code that runs at once, under the race detector: the core's
## concurrent calls (its memos are read without a lock while others evict:
## TestCallsConcurrent) and the Go preflight's tests (sessions, re-checks,
## the recorder), which make test runs here instead of in the plain run.
## Measured on a shared 2-core machine at load 12-15: 20 s for the core
## (most of it the race build) and 1-2.5 min for the preflight, whose tests
## mostly wait on the servers they start (19 s of CPU under -race).
race: oauth-deps
	$(GO) test -race -count=1 -run 'TestCallsConcurrent' ./core
	CRAWLCHECK_NEED_SERVERS=1 CRAWLCHECK_OAUTH_PYTHON=$(ABUILD)/py-oauth/bin/python $(GO) test -race -count=1 -timeout 15m ./internal/preflight/...

## js-deps: bindings/js's locked npm packages, installed again whenever the
## lockfile is newer than what npm ci last wrote: the Go tests run the
## reference servers, the official TypeScript clients and the SDK's example
## OAuth server from there (internal/gateway, cmd/crawlcheck, docs/remote.md).
js-deps: bindings/js/node_modules/.package-lock.json
bindings/js/node_modules/.package-lock.json: bindings/js/package-lock.json
	cd bindings/js && npm ci --no-audit --no-fund

## Python (bindings/python): two virtual environments under $(BUILD)/, made
## once from the pinned requirements (the first run needs PyPI; later runs are
## offline): mcp 2.x with openai-agents, mypy and the wheel build; mcp 1.x
## with langchain-mcp-adapters and crewai-tools[mcp]. The first also has
## wasmtime ($(PYREQ)/wasm.txt), which runs the pure wheel's core.
PYTHON  ?= python3
PY      := bindings/python
PYREQ   := $(PY)/requirements
ABUILD  := $(abspath $(BUILD))
VENV2   := $(ABUILD)/py-mcp2
VENV1   := $(ABUILD)/py-mcp1
VENVS   := $(ABUILD)/py-servers
WHEELS  := $(ABUILD)/dist

$(VENV2)/.installed: $(PYREQ)/mcp2.txt $(PYREQ)/wasm.txt
	$(PYTHON) -m venv $(VENV2)
	$(VENV2)/bin/pip install -q -r $(PYREQ)/mcp2.txt -r $(PYREQ)/wasm.txt
	touch $@

$(VENV1)/.installed: $(PYREQ)/mcp1.txt
	$(PYTHON) -m venv $(VENV1)
	$(VENV1)/bin/pip install -q -r $(PYREQ)/mcp1.txt
	touch $@

## fastmcp-deps: the FastMCP server behind a bearer-token verifier that the
## login tests lock with and without its token (hosttest/fastmcpauth).
fastmcp-deps: $(ABUILD)/py-fastmcp/.installed
$(ABUILD)/py-fastmcp/.installed: hosttest/fastmcpauth/requirements.txt
	$(PYTHON) -m venv $(ABUILD)/py-fastmcp
	$(ABUILD)/py-fastmcp/bin/pip install -q -r hosttest/fastmcpauth/requirements.txt
	touch $@

## oauth-deps: the Authlib authorization server the login tests refresh
## and step up against (hosttest/oauthserver), in a venv of its own.
oauth-deps: $(ABUILD)/py-oauth/.installed
$(ABUILD)/py-oauth/.installed: hosttest/oauthserver/requirements.txt
	$(PYTHON) -m venv $(ABUILD)/py-oauth
	$(ABUILD)/py-oauth/bin/pip install -q -r hosttest/oauthserver/requirements.txt
	touch $@

## The interop matrix's Python reference servers (mcp-server-time,
## mcp-server-git), in a venv of their own: they need mcp 2.x.
$(VENVS)/.installed: $(PYREQ)/servers.txt
	$(PYTHON) -m venv $(VENVS)
	$(VENVS)/bin/pip install -q -r $(PYREQ)/servers.txt
	touch $@

## python-wheel: the crawlcheck wheel with the library built above inside it.
## The wheel carries the project's LICENSE and the library's notices
## (notices/, scripts/notices).
python-wheel: cshared $(VENV2)/.installed
	rm -rf $(PY)/src/crawlcheck/lib && mkdir -p $(PY)/src/crawlcheck/lib
	cp $(BUILD)/libcrawlcheck.so $(PY)/src/crawlcheck/lib/libcrawlcheck.so
	cp LICENSE $(PY)/LICENSE && cp notices/libcrawlcheck.txt $(PY)/NOTICES.txt
	rm -rf $(WHEELS) && mkdir -p $(WHEELS)
	cd $(PY) && $(VENV2)/bin/python -m build -q --no-isolation --wheel --outdir $(WHEELS) .

## wheels: the crawlcheck wheels for manylinux x86_64 and aarch64, macOS
## arm64 and x86_64 and Windows amd64 into $(BUILD)/wheels/, each with its
## platform's library cross-built with Zig (PyPI ziglang, in a venv of its
## own), and the pure wheel (py3-none-any) with crawlcheck.wasm for the rest
## (musl, Windows arm64); then checked by scripts/wheelcheck, pip asked which
## it picks for each platform, the pure wheel and this machine's installed and
## called, and the linux-arm64 library run on every op vector under qemu-user,
## the Windows one under wine (scripts/wheels.sh, docs/release.md). A few
## minutes: not part of make test.
VENVZ := $(ABUILD)/py-zig
$(VENVZ)/.installed: $(PYREQ)/zig.txt
	$(PYTHON) -m venv $(VENVZ)
	$(VENVZ)/bin/pip install -q -r $(PYREQ)/zig.txt
	touch $@

wheels: cshared harness wine $(VENV2)/.installed $(VENVZ)/.installed
	@test -x /usr/bin/qemu-aarch64 -a -d /usr/aarch64-linux-gnu/lib || { echo "wheels: installing Debian's qemu-user and libc6-arm64-cross"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user libc6-arm64-cross; }
	GO=$(GO) ZIGPY=$(VENVZ)/bin/python BUILDPY=$(VENV2)/bin/python OUT=$(ABUILD)/wheels \
	  NATIVE_HARNESS=$(ABUILD)/harness NATIVE_LIB=$(ABUILD)/libcrawlcheck.so scripts/wheels.sh

## wine: Debian's wine (8.0 on bookworm), installed with apt when missing:
## test-wine and wheels run the Windows builds under it, in throwaway
## prefixes that scripts/wine/prefix.sh makes.
wine:
	@test -x /usr/bin/wine -a -x /usr/lib/wine/wine64 -a -x /usr/bin/wineserver || { echo "wine: installing Debian's wine and wine64"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine wine64; }

## test-wine: the Windows CLI and the scenario server, cross-built, under
## wine (hosttest/wine, docs/release.md): lock, check, a .cmd shim, run driven
## over stdio leaving no process behind, two runs on one --log. About 20 s
## with Go's build cache warm (3 min empty); part of make test.
test-wine: wine $(VENVZ)/.installed
	CRAWLCHECK_WINE=1 ZIGPY=$(VENVZ)/bin/python $(GO) test -count=1 -timeout 10m ./hosttest/wine

## qemu: Debian's qemu-user, installed with apt when missing: test-qemu runs
## the linux-arm64 CLI under qemu-aarch64 (static binaries: no arm64 libc).
qemu:
	@test -x /usr/bin/qemu-aarch64 || { echo "qemu: installing Debian's qemu-user"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user; }

## test-qemu: the linux-arm64 CLI and the scenario server, cross-built
## static, under qemu-aarch64 (hosttest/qemu, docs/release.md): lock, check,
## run driven over stdio leaving no process behind (stdin closed, and
## killed), two runs on one --log. The server is started as `qemu-aarch64
## mcpserver`, binfmt_misc not being needed. About 6 s with Go's build cache
## warm; part of make test.
test-qemu: qemu
	CRAWLCHECK_QEMU=1 $(GO) test -count=1 -timeout 5m ./hosttest/qemu

## release: the CLI and the issuer for linux, darwin, windows x amd64, arm64
## (CGO_ENABLED=0, -trimpath, -buildvcs=false, empty build id, version and
## commit stamped with -X) into $(BUILD)/release/, an SBOM per binary
## (cyclonedx-gomod, pinned, from the module proxy), LICENSE, the notices,
## SHA256SUMS and, with RELEASE_KEY=<ssh ed25519 key>, SHA256SUMS.sig
## (scripts/release.sh, docs/release.md). Refuses a tree with uncommitted
## changes.
release:
	GO=$(GO) OUT=$(ABUILD)/release scripts/release.sh

## release-check: what a release is checked for beyond make test, as far as
## this machine can run it: the wheels (make wheels: the linux-arm64 library
## under qemu-user and the Windows one under wine on every op vector), the
## notices (scripts/notices -check) and the release binaries built twice, the
## second time elsewhere from an empty build cache, byte for byte
## (scripts/release). Slow; .ci/run calls it after make test.
release-check: wheels
	$(GO) run ./scripts/notices -check
	CRAWLCHECK_RELEASE_CHECK=1 $(GO) test -count=1 -timeout 20m -v ./scripts/release

## bench-python: the .so through Python against a plain-Python json+hashlib
## pass, 10 to 10,000 tools (a Markdown table on stdout; docs/python.md).
bench-python: python-wheel
	$(VENV2)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
	$(VENV2)/bin/python $(PY)/bench.py

## test-python: build the wheel, install it into a fresh venv (offline) and
## into both test venvs, then pytest in each and mypy (js-deps: test_auth.py
## runs the TypeScript SDK's example server with --oauth).
## The last run is the pure wheel's core: every vector of testdata/ and
## the library's op-level tests through crawlcheck.wasm under wasmtime
## (about 15 s; docs/release.md).
WASM_LIBRARY_TESTS := test_call_and_core_error test_answer_with_nul_is_read_whole test_threads_give_identical_answers \
  test_attachments_carry_bytes_that_are_not_utf8 test_one_function_per_op_the_core_answers
test-python: python-wheel wasm $(VENV1)/.installed js-deps
	$(GO) build -o $(BUILD)/mcpserver ./hosttest/mcpserver
	$(GO) build -o $(BUILD)/issuer ./hosttest/issuer
	$(GO) build -o $(BUILD)/crawlcheck-issuer ./cmd/crawlcheck-issuer
	$(GO) build -o $(BUILD)/crawlcheck ./cmd/crawlcheck
	$(GO) build -o $(BUILD)/attacker ./hosttest/attacker
	rm -rf $(ABUILD)/py-fresh && $(PYTHON) -m venv $(ABUILD)/py-fresh
	$(ABUILD)/py-fresh/bin/pip install -q --no-index $(WHEELS)/crawlcheck-*.whl
	cd / && $(ABUILD)/py-fresh/bin/python -c 'import crawlcheck; v = crawlcheck.version(); print("fresh venv:", crawlcheck.__version__, v["engine"], "abi", v["abi"])'
	$(VENV2)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
	$(VENV1)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
	cd $(PY) && $(VENV2)/bin/mypy
	cd $(PY) && BUILD=$(ABUILD) $(VENV2)/bin/python -m pytest -q -p no:cacheprovider
	cd $(PY) && BUILD=$(ABUILD) $(VENV1)/bin/python -m pytest -q -p no:cacheprovider
	cd $(PY) && CRAWLCHECK_CORE=wasm CRAWLCHECK_WASM=$(ABUILD)/crawlcheck.wasm BUILD=$(ABUILD) $(VENV2)/bin/python -m pytest -q -p no:cacheprovider \
	  tests/test_vectors.py tests/test_wasm.py $(addprefix tests/test_library.py::,$(WASM_LIBRARY_TESTS))

## test-js: @crawlcheck/sdk (bindings/js): its locked dependencies from the
## npm registry, the type check of its declarations, then its suites (every
## vector through the wasm, withPreflight and the adapters end to end
## against the scenario server and the test issuer, npm pack offline).
test-js: wasm zopfli
	cd bindings/js && npm ci --no-audit --no-fund && npm run typecheck && GO=$(GO) npm test

## test-interop: the interop matrix (hosttest/interop, docs/interop.md):
## every host entry point against the reference servers nobody here wrote,
## at the versions bindings/js/package.json and $(PYREQ)/servers.txt pin
## (npm ci when missing), over each transport they serve, the Python rows
## in the test venvs with the wheel; two cells at a time.
INTEROP = CRAWLCHECK_INTEROP=1 $(GO) test -count=1 -timeout 50m -parallel 2 ./hosttest/interop
INTEROP_DEPS = cd bindings/js && { test -d node_modules/@modelcontextprotocol/server-everything || npm ci --no-audit --no-fund; } && node scripts/copy-wasm.js
INTEROP_PY = $(VENV2)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl && \
  $(VENV1)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
test-interop: wasm python-wheel $(VENV1)/.installed $(VENVS)/.installed
	$(INTEROP_DEPS)
	$(INTEROP_PY)
	$(INTEROP)

## interop-doc: run the matrix and write docs/interop.md from its results.
interop-doc: wasm python-wheel $(VENV1)/.installed $(VENVS)/.installed
	$(INTEROP_DEPS)
	$(INTEROP_PY)
	$(INTEROP) -run 'TestMatrix' -interop.doc=$(abspath docs/interop.md)

## web: the offline checker page (bindings/js/web, docs/web.md): build its one
## generated file (the SDK's browser loader and crawlcheck.wasm) and serve it
## on 127.0.0.1, printing the address (WEB_PORT, default 8377).
WEB_PORT ?= 8377
web: wasm
	cd bindings/js && node web/serve.mjs --port $(WEB_PORT)

## test-web: the page in real headless Chromium (Debian's, installed with apt
## when /usr/bin/chromium is absent) driven by playwright-core; screenshots
## go to build/web-test/ (CRAWLCHECK_DOCS_SCREENSHOT=1 also refreshes docs/web.png
## and docs/report.png). The weekly report's test writes its log with the CLI.
test-web: wasm
	$(GO) build -o $(BUILD)/crawlcheck ./cmd/crawlcheck
	@test -x /usr/bin/chromium || { echo "test-web: installing Debian's chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	cd bindings/js && { test -d node_modules/playwright-core || npm ci --no-audit --no-fund; } && \
	  node scripts/copy-wasm.js && node --test --test-concurrency=1 test/web/

## fuzz-seeds: a short coverage-guided run of every fuzz target.
fuzz-seeds:
	GO=$(GO) scripts/fuzz-seeds.sh

## attack: the attacker's tools at length (make test runs them briefly):
## mutated and generated requests through native, wazero and C (the same
## bytes from each, never internal), every bit of signed lockfiles
## flipped (none may verify as another document), and the hostile MCP
## server (hosttest/attacker) against the JS and Python SDKs, 30 s per
## attack (every check a record, no tainted call reaching the server).
attack: wasm python-wheel $(VENV1)/.installed attack-issuer
	$(GO) test -count=1 -timeout 60m -run 'TestABIFuzz|TestDifferential' ./hosttest -abifuzz.n=200 -diff.n=200000
	$(GO) test -count=1 -timeout 30m -run 'TestLockfileBitFlips' ./core -attack.long -v
	$(GO) build -o $(BUILD)/attacker ./hosttest/attacker
	cd bindings/js && npm ci --no-audit --no-fund && GO=$(GO) node scripts/pretest.js && CRAWLCHECK_ATTACK_LONG=1 node --test test/attack.test.js
	$(VENV2)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
	$(VENV1)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
	cd $(PY) && BUILD=$(ABUILD) CRAWLCHECK_ATTACK_LONG=1 $(VENV2)/bin/python -m pytest -q -p no:cacheprovider tests/test_attack.py
	cd $(PY) && BUILD=$(ABUILD) CRAWLCHECK_ATTACK_LONG=1 $(VENV1)/bin/python -m pytest -q -p no:cacheprovider tests/test_attack.py

## attack-issuer: crawlcheck-issuer beside issue 37's load-shaped attacks
## (hosttest/issuerattack): honest lock checks alone, then beside 40
## slow-body connections, POST lock of 40,000 tools and live readings of a
## server whose pages never end; fails unless the honest throughput stays
## within 20% of the quiet run's and the issuer's peak RSS under 512 MiB.
## make test runs the quick versions (internal/issuer/service, fetch).
attack-issuer:
	@mkdir -p $(BUILD)
	$(GO) build -o $(BUILD)/crawlcheck-issuer ./cmd/crawlcheck-issuer
	$(GO) run ./hosttest/issuerattack -bin $(BUILD)/crawlcheck-issuer -duration 20s

## bench: issue 23's table, one run of a few minutes (BENCH_QUICK=1: fewer pairs): each row
## of what a user waits for, ours interleaved with its contender (the official SDKs' plain
## clients against the scenario server and server-everything, the plain-Go peer, native Go),
## the ratios, the targets and the load average; writes its section of docs/benchmarks.md.
## BENCH_ROWS=cli (or node, python, wazero, size, memory, comma-separated) measures those rows
## alone and replaces them in the table, saying when and at what load (a shared machine).
## It needs node (20+); the Python rows use build/py-mcp2 (make python-wheel).
bench: wasm python-wheel zopfli
	$(VENV2)/bin/pip install -q --no-index --no-deps --force-reinstall $(WHEELS)/crawlcheck-*.whl
	cd bindings/js && npm ci --no-audit --no-fund && node scripts/copy-wasm.js
	BENCH_PYTHON=$(VENV2)/bin/python $(GO) run ./hosttest/bench -table -o docs/benchmarks.md

## bench-detail: time native, wazero, the .so from C, the wasm in Node against a plain-JS peer,
## and Python over the .so against plain Python, on the continuity check, and measure peak memory
## per input byte (1, 10 and 50 MB lists, realistic and small values); rewrite docs/benchmarks.md
## (keeping make bench's and make load's sections and the notes written by hand). It builds its
## own artifacts with the flags above (the builds are reproducible); it needs node (20+) and
## python3 on PATH.
bench-detail:
	$(GO) run ./hosttest/bench -o docs/benchmarks.md
	$(MAKE) bench-js

## bench-js: the SDK's rows (bindings/js/bench), appended to docs/benchmarks.md.
bench-js: wasm
	cd bindings/js && npm ci --no-audit --no-fund && GO=$(GO) node scripts/pretest.js && node --no-warnings bench/bench.js >> ../../docs/benchmarks.md

## load: crawlcheck-issuer under 64 clients for 60 s of POST lock/check on a
## 100-tool list, one instance on SQLite and two on one PostgreSQL 15, then
## kill -9 of one of the two mid-load (hosttest/issuerload); writes the issuer
## section of docs/benchmarks.md; then the same service under attack beside
## honest traffic (attack-issuer: 40 slow bodies, 40,000-tool lockfiles,
## endless pages). Not part of make test.
load: postgres
	@mkdir -p $(BUILD)
	$(GO) build -o $(BUILD)/crawlcheck-issuer ./cmd/crawlcheck-issuer
	$(GO) run ./hosttest/issuerload -bin $(BUILD)/crawlcheck-issuer -o docs/benchmarks.md
	$(MAKE) attack-issuer

## golden: regenerate testdata/ deliberately; read the diff before committing.
golden:
	$(GO) test ./core/... -update

clean:
	rm -rf $(BUILD)

## test-registry: real servers from the registries a new user tried (issue
## 34): from npm @azure/mcp (which prints a stray line before its answer),
## Context7, Playwright and GitHub at the versions
## hosttest/registry/package-lock.json pins; from PyPI DuckDuckGo in a venv
## of its own (hosttest/registry/requirements.txt pins every package). Each
## is locked live, its list written by crawlcheck tools, and re-checked live
## and offline with the same tools_sha256 (TestRegistryServers).
REGISTRY := $(ABUILD)/registry-servers
$(REGISTRY)/venv/.installed: hosttest/registry/requirements.txt
	rm -rf $(REGISTRY)/venv && mkdir -p $(REGISTRY)
	$(PYTHON) -m venv $(REGISTRY)/venv
	$(REGISTRY)/venv/bin/pip install -q -r hosttest/registry/requirements.txt
	touch $@
## launched-deps: what the launched-package tests run against local
## registries they start on loopback (issue 35, cmd/crawlcheck
## TestLaunched*): verdaccio from npm, at the version
## hosttest/launched/package-lock.json pins (npm ci into $(BUILD)/launched),
## republishes a package under one version; uv from PyPI
## (hosttest/launched/requirements.txt, a venv of its own) runs uvx against
## a simple index python's http.server serves.
LAUNCHED := $(ABUILD)/launched
$(LAUNCHED)/node_modules/.package-lock.json: hosttest/launched/package-lock.json
	mkdir -p $(LAUNCHED) && cp hosttest/launched/package.json hosttest/launched/package-lock.json $(LAUNCHED)/
	cd $(LAUNCHED) && npm ci --no-audit --no-fund
$(LAUNCHED)/venv/.installed: hosttest/launched/requirements.txt
	rm -rf $(LAUNCHED)/venv && mkdir -p $(LAUNCHED)
	$(PYTHON) -m venv $(LAUNCHED)/venv
	$(LAUNCHED)/venv/bin/pip install -q -r hosttest/launched/requirements.txt
	touch $@
launched-deps: $(LAUNCHED)/node_modules/.package-lock.json $(LAUNCHED)/venv/.installed
## test-launched: those tests alone (make test runs them with the rest).
test-launched: launched-deps
	CRAWLCHECK_NEED_SERVERS=1 CRAWLCHECK_LAUNCHED_DEPS=$(LAUNCHED) $(GO) test -count=1 -run 'TestLaunched' ./cmd/crawlcheck

test-registry: $(REGISTRY)/venv/.installed
	mkdir -p $(REGISTRY) && cp hosttest/registry/package.json hosttest/registry/package-lock.json $(REGISTRY)/
	cd $(REGISTRY) && npm ci --no-audit --no-fund
	CRAWLCHECK_REGISTRY_SERVERS=$(REGISTRY) $(GO) test -count=1 -run TestRegistryServers ./cmd/crawlcheck
