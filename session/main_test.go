package session_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind
// (background passes, watchers and refreshes must end with the Manager).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
