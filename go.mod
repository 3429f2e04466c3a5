module github.com/vtcode/vtcode-ls

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/go-cmp v0.7.0
	github.com/sourcegraph/jsonrpc2 v0.2.3
	github.com/tiktoken-go/tokenizer v0.10.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.26.0
	pgregory.net/rapid v1.3.0
)

require github.com/dlclark/regexp2/v2 v2.5.1 // indirect
