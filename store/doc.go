// Package store persists vtcode-ls sessions on disk (SPEC §11).
//
// A [Store] is a root directory, by default <workspace>/.vtcode/sessions.
// Each session lives in its own folder:
//
//	<root>/<sessionId>/lock                          advisory lock, holds the owner's pid
//	<root>/<sessionId>/events.jsonl                  append-only event log, one JSON event per line
//	<root>/<sessionId>/artifacts/<artifactId>.jsonl  full history at a compaction (Message JSONL)
//	<root>/<sessionId>/artifacts/<artifactId>.meta.json  its metadata (trigger, mode, counts)
//	<root>/@compact-prompt.md                        the workspace's custom compaction prompt
//
// Folders are created 0700 and files 0600, set explicitly whatever the umask.
// Session and artifact ids must match ^[A-Za-z0-9._-]{1,64}$ and not be "." or
// ".." ([ValidID]), so no id can name a path outside the root; files are opened
// without following symlinks and a session folder that is a symlink is refused.
// Names the store creates for itself (the prompt file, temporary files) start
// with '@', which no id can contain.
//
// # Durability
//
// [Log.Append] writes one complete line with a single write and fsyncs it before
// returning, so an event is acknowledged only once it is on disk. When a write or
// fsync fails the log is truncated back to its last complete line. Artifacts and
// the prompt file are written to a temporary file in the same folder, fsynced,
// renamed into place, and the folder is fsynced.
//
// # Recovery
//
// A process killed at any instant can leave at most one torn line: the last one.
// [Store.OpenSession] detects it (no trailing newline, or a final line that is not
// a valid event), logs one warning, and truncates the file back to the last
// complete event so later appends are clean. A corrupt line anywhere else is not
// something a crash can produce; rather than silently drop acknowledged events
// after it, OpenSession fails with a [*CorruptError] naming the file and line,
// and the session stays unopened until the file is repaired by hand.
//
// # Ownership
//
// A session is owned by one [Log] at a time: OpenSession takes an exclusive,
// non-blocking flock(2) on the session's lock file and writes its pid there. A
// second opener — another process, or the same process opening the session
// twice — gets a [*BusyError] naming the owner's pid. The kernel releases the
// lock when the owner closes the log or dies.
//
// # Message counts
//
// The store does not interpret event payloads. The session layer records in each
// [Event.Messages] the length of the live history after the event, and
// [Store.List] reports the value of the last complete event of each session
// (reading only the tail of the log), together with that event's time.
package store
