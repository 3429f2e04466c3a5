//go:build agents && linux

package agents_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/proxy/proxytest"
)

// codexConfig is a Codex config.toml pointing at base (…/v1): with
// topLevel, the simplest documented way (openai_base_url, which makes
// Codex try the Responses WebSocket first), else a [model_providers] table.
func codexConfig(base string, topLevel bool) string {
	common := "[features]\nplugins = false\n\n[analytics]\nenabled = false\n[feedback]\nenabled = false\n[otel]\nexporter = \"none\"\n"
	if topLevel {
		return fmt.Sprintf("model = \"gpt-5.1-codex\"\nopenai_base_url = %q\ncheck_for_update_on_startup = false\n\n%s", base, common)
	}
	return fmt.Sprintf("model = \"gpt-5.1-codex\"\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\n"+
		"[model_providers.fake]\nname = \"fake\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n\n%s", base, common)
}

// codexOnce runs a one-line codex exec against base and returns its wall
// time.
func codexOnce(t *testing.T, ws, base string, topLevel bool) time.Duration {
	codex := mustEnv(t, "VTCODE_CODEX")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codexConfig(base, topLevel)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, took := run(t, ws, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TERM=dumb", "OPENAI_API_KEY=sk-fake-key"},
		codex, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral", "Say hello.")
	if !strings.Contains(string(out), `"type":"turn.completed"`) || strings.Contains(string(out), `"type":"turn.failed"`) {
		t.Errorf("codex did not answer: %s", tailOf(string(out), 2000))
	}
	return took
}

// TestCodexWebsocketFallsBackAtOnce: with the top-level openai_base_url
// Codex asks for the Responses WebSocket first; the proxy refuses the
// upgrade with 426 and Codex goes on over HTTP at once, trying the
// upgrade once, not the seven times (6.5 s) any other answer costs. The
// session start through the proxy ÷ direct is logged for both
// configurations (make bench is where speed is judged).
func TestCodexWebsocketFallsBackAtOnce(t *testing.T) {
	mustEnv(t, "VTCODE_CODEX")
	offline(t)
	ws := workspace(t)
	oai := startUpstream(t, []proxytest.Turn{{Text: "unused"}}, proxytest.Options{})
	anth := startUpstream(t, []proxytest.Turn{{Text: "unused"}}, proxytest.Options{})
	configure(t, ws, anth.URL, oai.URL+"/v1", 64000, 2)
	_, proxyURL := daemon(t, ws)
	for _, topLevel := range []bool{true, false} {
		name := map[bool]string{true: "openai_base_url", false: "[model_providers]"}[topLevel]
		before := statsOf(t, proxyURL)
		viaProxy := codexOnce(t, ws, proxyURL+"/v1", topLevel)
		after := statsOf(t, proxyURL)
		refused, posts := 0, 0
		for _, r := range after.Recent[len(before.Recent):] {
			switch {
			case r.Disposition == "refused":
				refused++
			case strings.HasSuffix(r.Path, "/responses"):
				posts++
			}
		}
		direct := codexOnce(t, ws, oai.URL+"/v1", topLevel)
		t.Logf("%s: session start through the proxy %s, direct to the fake %s (÷ %.2f); %d upgrades refused, %d requests to /v1/responses",
			name, viaProxy.Round(time.Millisecond), direct.Round(time.Millisecond), viaProxy.Seconds()/direct.Seconds(), refused, posts)
		if posts == 0 {
			t.Errorf("%s: Codex sent no request over HTTP through the proxy", name)
		}
		if topLevel && refused != 1 {
			t.Errorf("%s: the proxy refused %d upgrades, want Codex to try once and fall back", name, refused)
		}
		if !topLevel && refused != 0 {
			t.Errorf("%s: %d upgrade attempts with a provider table", name, refused)
		}
	}
}
