// Package store persists vtcode-ls sessions on disk (docs/design.md §11).
//
// A [Store] is a root folder, by default <workspace>/.vtcode/sessions.
// Each session lives in its own folder:
//
//	<root>/<sessionId>/lock                          exclusive lock, holds the owner's pid
//	<root>/<sessionId>/events.jsonl                  append-only event log, one JSON event per line
//	<root>/<sessionId>/artifacts/<artifactId>.jsonl  a full history at a compaction (Message JSONL)
//	<root>/<sessionId>/@damaged-N-events.jsonl       the copy of a log saved before a repair
//	<root>/@compact-prompt.md                        the workspace's custom compaction prompt
//
// Folders are created 0700 and files 0600, set explicitly whatever the umask
// (on Unix; on Windows they inherit the ACL of their parent). Session and
// artifact ids must match ^[A-Za-z0-9._-]{1,64}$ and not be "." or ".."
// ([ValidID]). Names the store creates for itself start with '@', which no
// id can contain.
//
// # Containment
//
// The root is opened as an [os.Root] and every path is resolved inside it:
// a symlink that leads out of the store is never followed, whenever it was
// swapped in. On top of that, no file or folder the store keeps may be a
// symlink at all ([ErrSymlink]). An open session ([Log]) holds its folder
// open, so moving the folder and putting a link in its place does not move
// the writes. [OpenIn] creates the root inside a trusted base folder
// (the workspace) from an untrusted relative path: it must stay inside the
// base and none of its folders may be a symlink, so a ".vtcode" link
// committed in a repository cannot move the store. [Open] takes a trusted
// path (the user's own configuration).
//
// # Durability
//
// [Log.Append] writes one complete line with a single write and fsyncs it before
// returning, so an event is acknowledged only once it is on disk. When a write or
// fsync fails the log is truncated back to its last complete line: a failed
// Append changed nothing. Artifacts and the prompt file are written to a
// temporary file in the same folder, fsynced, renamed into place, and the
// folder is fsynced (not on Windows, which cannot fsync a folder; its rename
// replaces the target atomically). A failed artifact write leaves no file.
// [Options.Faults] injects errors into these operations for tests.
//
// # Integrity
//
// Each line ends with a CRC-32C of the rest of it ("sum"), and events are
// numbered from 1 without gaps. [Store.OpenSession] checks every line:
//
//   - a last line without its newline is a write a crash interrupted (never
//     acknowledged): it is logged and truncated away;
//   - anything else that is not the valid next event (invalid JSON, a
//     checksum mismatch, a missing checksum after checksummed lines, a
//     duplicated, reordered or missing sequence number, a complete but
//     invalid last line) is damage a crash cannot produce: the whole file is
//     first saved as @damaged-N-events.jsonl in the session folder,
//     then the log is cut back to the valid events before the damaged line,
//     and [Log.Repaired] describes what was done so the caller can tell the
//     user. No acknowledged event is silently lost: those after the damage
//     are in the saved copy.
//
// Lines written before checksums existed are accepted until the first line
// that has one.
//
// An artifact is referenced by the event that made it, which records its
// [ArtifactRef]: message count, size and SHA-256. [Log.ReadArtifact] checks
// all of them and [Log.CheckArtifact] the size, so a truncated or changed
// artifact is a [*DamagedError], never a silently shorter history.
//
// # Checkpoints
//
// An event marked [Event.Checkpoint] holds the whole live history after it.
// [Log.LastCheckpoint] names the last one, so a replay need not decode the
// messages of the events before it.
//
// # Ownership
//
// A session is owned by one [Log] at a time: OpenSession takes an exclusive,
// non-blocking lock on the session's lock file (flock(2) on Unix, LockFileEx
// on Windows) and writes its pid there. A second opener — another process, or
// the same process opening the session twice — gets a [*BusyError] naming the
// owner: on Linux the process /proc/locks names, elsewhere the recorded pid
// if that process is alive, else none. The system releases the lock when the
// owner closes the log or dies, so a stale lock is simply taken over.
//
// # Message counts
//
// The store does not interpret event payloads. The session layer records in each
// [Event.Messages] the length of the live history after the event, and
// [Store.List] reports the value of the last complete event of each session
// (reading only the tail of the log), together with that event's time.
package store
