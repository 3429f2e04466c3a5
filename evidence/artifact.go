package evidence

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// artifactVerbRE finds the verb of a tool that acts outside the files
// ("create_issue", "mcp__linear__update_issue", "github_close_pr").
var artifactVerbRE = regexp.MustCompile(`(?i)(?:^|[_\-.:]|__)(create|update|close|delete|cancel|comment|merge|open|add|post|publish|assign|transition|resolve)(?:[_\-.:A-Z]|$)`)

// idKeys and titleKeys are the result fields that identify what a tool made.
var (
	idKeys    = []string{"identifier", "key", "number", "iid", "shortId", "short_id", "id"}
	titleKeys = []string{"title", "name", "summary", "subject"}
	stateKeys = []string{"state", "status"}
	urlKeys   = []string{"url", "html_url", "web_url", "permalink"}
)

// artifact records what a non-shell, non-file tool created or changed, when
// its JSON result identifies it.
func (x *extractor) artifact(a *Action) {
	if isEditTool(a.Tool) && len(toolPaths(a)) > 0 {
		return
	}
	m := artifactVerbRE.FindStringSubmatch(a.Tool)
	if m == nil {
		return
	}
	t := strings.TrimSpace(a.Output)
	if !strings.HasPrefix(t, "{") || len(t) > 1<<20 {
		return
	}
	var v map[string]any
	if json.Unmarshal([]byte(t), &v) != nil {
		return
	}
	// Some tools wrap the object ({"issue": {...}}).
	if len(v) == 1 {
		for _, inner := range v {
			if o, ok := inner.(map[string]any); ok {
				v = o
			}
		}
	}
	art := Artifact{Tool: a.Tool, Op: strings.ToLower(m[1]), Index: a.Index}
	for _, k := range idKeys {
		if s := scalar(v[k]); s != "" {
			art.ID = s
			break
		}
	}
	if art.ID == "" {
		return
	}
	for _, k := range titleKeys {
		if s := scalar(v[k]); s != "" {
			art.Title = clip(s, detailChars)
			break
		}
	}
	for _, k := range stateKeys {
		switch st := v[k].(type) {
		case string:
			art.State = clip(st, 40)
		case map[string]any:
			art.State = clip(scalar(st["name"]), 40)
		}
		if art.State != "" {
			break
		}
	}
	for _, k := range urlKeys {
		if s := scalar(v[k]); s != "" {
			art.URL = clip(s, 200)
			break
		}
	}
	x.r.Artifacts = append(x.r.Artifacts, art)
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// forgeURLRE matches a pull request's or merge request's URL on a forge.
var forgeURLRE = regexp.MustCompile(`https?://[^\s/]+/[^\s]+/(?:pull|pulls|merge_requests|-/merge_requests)/\d+`)

// shellArtifact records a pull or merge request a command created (gh pr
// create, glab mr create, hub pull-request): the URL it printed.
func (x *extractor) shellArtifact(a *Action) {
	if !a.HasResult() || a.Flagged || a.HasExit && a.Exit != 0 {
		return
	}
	for _, seg := range segments(a.Command) {
		w := shellWords(seg)
		created := len(w) >= 3 && (w[0] == "gh" && w[1] == "pr" || w[0] == "glab" && w[1] == "mr") && w[2] == "create" ||
			len(w) >= 2 && w[0] == "hub" && w[1] == "pull-request"
		if !created {
			continue
		}
		if u := forgeURLRE.FindString(HeadBytes(a.Output, 64<<10)); u != "" {
			x.r.Artifacts = append(x.r.Artifacts, Artifact{Tool: w[0] + " " + w[1] + " create", Op: "create", ID: u, URL: u, Index: a.Index})
		}
		return
	}
}
