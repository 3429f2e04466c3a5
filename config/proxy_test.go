package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestProxyTable(t *testing.T) {
	user := filepath.Join(t.TempDir(), "user.toml")
	os.WriteFile(user, []byte("[proxy]\nlisten = \"127.0.0.1:9000\"\nsecret_env = \"VT_SECRET\"\n"), 0o600)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[proxy]\nlisten = \" 127.0.0.1:8787 \"\nallow_remote = true\n"), 0o600)
	c, err := Load(user, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Proxy, Proxy{Listen: "127.0.0.1:8787", AllowRemote: true, SecretEnv: "VT_SECRET"}) {
		t.Errorf("merged [proxy] = %+v", c.Proxy)
	}
	for _, bad := range []struct{ toml, msg string }{
		{"[proxy]\nlisten = 8787\n", "proxy.listen: must be a string"},
		{"[proxy]\nallow_remote = \"yes\"\n", "proxy.allow_remote"},
		{"[proxy]\nport = 1\n", "proxy.port: unknown key"},
	} {
		os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte(bad.toml), 0o600)
		_, err := Load("", ws)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, bad.msg) || fe.Line == 0 {
			t.Errorf("%q: error %v, want a line and %q", bad.toml, err, bad.msg)
		}
	}
}

func TestProxyFromJSON(t *testing.T) {
	base := Proxy{Listen: "127.0.0.1:1", SecretEnv: "S"}
	p, ok, err := ProxyFromJSON(json.RawMessage(`{"context":{"maxContextTokens":5},"proxy":{"listen":"127.0.0.1:8787","allowRemote":true}}`), base)
	if err != nil || !ok || !reflect.DeepEqual(p, Proxy{Listen: "127.0.0.1:8787", AllowRemote: true, SecretEnv: "S"}) {
		t.Errorf("ProxyFromJSON = %+v %v %v", p, ok, err)
	}
	if p, ok, err := ProxyFromJSON(json.RawMessage(`{"context":{}}`), base); ok || err != nil || !reflect.DeepEqual(p, base) {
		t.Errorf("without proxy: %+v %v %v", p, ok, err)
	}
	if _, _, err := ProxyFromJSON(json.RawMessage(`{"proxy":{"listen":true}}`), base); err == nil {
		t.Error("a non-string listen was accepted")
	}
	// The policy ignores the proxy member, but checks it.
	pol, err := ApplyJSON(Default(), json.RawMessage(`{"proxy":{"listen":"127.0.0.1:0"},"toolResultClearing":{"keepToolUses":4}}`))
	if err != nil || pol.ToolResultClearing.KeepToolUses != 4 {
		t.Errorf("ApplyJSON with proxy: %v %v", pol.ToolResultClearing, err)
	}
	var fe *FieldError
	if _, err := ApplyJSON(Default(), json.RawMessage(`{"proxy":{"secretEnv":1}}`)); !errors.As(err, &fe) || fe.Path != "proxy.secretEnv" {
		t.Errorf("bad proxy member: %v", err)
	}
}

func TestProxyAllowedOrigins(t *testing.T) {
	user := filepath.Join(t.TempDir(), "user.toml")
	os.WriteFile(user, []byte("[proxy]\nallowed_origins = [\" https://app.example/ \", \"http://localhost:3000\"]\n"), 0o600)
	c, err := Load(user, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://app.example", "http://localhost:3000"}; !reflect.DeepEqual(c.Proxy.AllowedOrigins, want) {
		t.Errorf("allowed_origins = %q, want %q", c.Proxy.AllowedOrigins, want)
	}
	for _, bad := range []struct{ toml, msg string }{
		{"[proxy]\nallowed_origins = \"https://a.example\"\n", "proxy.allowed_origins: must be an array"},
		{"[proxy]\nallowed_origins = [\"https://a.example/page\"]\n", "is not an origin"},
	} {
		bu := filepath.Join(t.TempDir(), "user.toml")
		os.WriteFile(bu, []byte(bad.toml), 0o600)
		_, err := Load(bu, "")
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, bad.msg) || fe.Line == 0 {
			t.Errorf("%q: error %v, want a line and %q", bad.toml, err, bad.msg)
		}
	}
	// A workspace file may not open the proxy to a web page.
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "vtcode.toml"), []byte("[proxy]\nallowed_origins = [\"https://evil.example\"]\n"), 0o600)
	c, err = Load(user, ws)
	if err != nil || !reflect.DeepEqual(c.Proxy.AllowedOrigins, []string{"https://app.example", "http://localhost:3000"}) ||
		len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Msg, "proxy.allowed_origins: ignored") {
		t.Errorf("a workspace allowed_origins: %q, warnings %v, %v", c.Proxy.AllowedOrigins, c.Warnings, err)
	}
	p, _, err := ProxyFromJSON(json.RawMessage(`{"proxy":{"allowedOrigins":["https://b.example"]}}`), Proxy{})
	if err != nil || !reflect.DeepEqual(p.AllowedOrigins, []string{"https://b.example"}) {
		t.Errorf("allowedOrigins = %q, %v", p.AllowedOrigins, err)
	}
	var fe *FieldError
	if _, _, err := ProxyFromJSON(json.RawMessage(`{"proxy":{"allowedOrigins":[1]}}`), Proxy{}); !errors.As(err, &fe) || fe.Path != "proxy.allowedOrigins" {
		t.Errorf("allowedOrigins [1]: %v", err)
	}
}
