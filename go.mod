module github.com/vtcode/vtcode-ls

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/sourcegraph/jsonrpc2 v0.2.3 // indirect
	github.com/tiktoken-go/tokenizer v0.10.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.26.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
