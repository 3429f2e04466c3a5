# vtcode-ls — every target is a thin alias; everything also works with plain go commands.
SHELL := /bin/bash
BIN   := bin/vtcode-ls
CACHE ?= $(CURDIR)/.cache
export VTCODE_CACHE := $(CACHE)
GO    ?= go
FUZZTIME ?= 8s

.PHONY: build run test test-go test-race test-fuzz test-editors test-vscode test-e2e test-neovim vet cross test-windows bench golden clean vsix test-vsix

build:
	$(GO) build -o $(BIN) ./cmd/vtcode-ls

# The main job: replay a recorded debugging session through the pipeline and
# compact it, offline, on the embedded default provider.
run: build
	$(BIN) replay examples/debugging-session.jsonl --context-window 32000
	$(BIN) compact examples/debugging-session.jsonl --context-window 32000 -o $(CACHE)/compacted.jsonl
	@echo "compacted history written to $(CACHE)/compacted.jsonl"

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

test: vet cross test-windows test-go test-race test-fuzz test-editors

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
	$(GO) test -race -count=1 ./rpc/... ./session/... ./store/... ./compaction/... ./providers/... ./config/...

# Each fuzz target for a short fixed time, from its committed corpus.
test-fuzz:
	@grep -rn --include='*_test.go' --exclude-dir=.cache --exclude-dir=node_modules '^func Fuzz' . \
	  | sed -E 's#^\./(.*)/[^/]+_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u \
	  | while read -r pkg fn; do \
	      echo "fuzz ./$$pkg $$fn for $(FUZZTIME)"; \
	      $(GO) test -run='^$$' -fuzz="^$$fn\$$" -fuzztime=$(FUZZTIME) ./$$pkg || exit 1; \
	    done

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

bench:
	$(GO) run ./cmd/vtcode-bench

golden:
	$(GO) test ./rpc/ ./rpc/rpctest/ ./providers/offline/ -update

clean:
	rm -rf bin
