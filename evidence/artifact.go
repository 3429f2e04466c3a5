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
