package ledger

import "github.com/vtcode/vtcode-ls/evidence"

// Contradictions returns the claims of summary that rec contradicts; see
// [evidence.Contradictions] for what counts as a claim.
func Contradictions(summary string, rec *evidence.Record) []string {
	return evidence.Contradictions(summary, rec)
}
