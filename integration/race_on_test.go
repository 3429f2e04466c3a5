//go:build linux && race

package integration_test

// raceEnabled reports whether this test binary was built with -race; the
// daemon under test is then built with -race too.
const raceEnabled = true
