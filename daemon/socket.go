package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/vtcode/vtcode-ls/rpc"
)

// DirEnv names the environment variable that overrides the folder of the
// control socket (tests give each run its own).
const DirEnv = "VTCODE_DAEMON_DIR"

// Supported reports whether this platform runs a shared daemon; where it
// does not, the command serves in process.
const Supported = runtime.GOOS != "windows"

// SocketName is the file name of the control socket; it carries the
// protocol version.
var SocketName = "vtcode-ls-v" + strconv.Itoa(rpc.ProtocolVersion) + ".sock"

// SocketDir is the folder of the control socket: $VTCODE_DAEMON_DIR, else
// $XDG_RUNTIME_DIR/vtcode, else the user cache folder's vtcode/run.
func SocketDir(getenv func(string) string) (string, error) {
	if d := getenv(DirEnv); d != "" {
		return filepath.Abs(d)
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "vtcode"), nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("socket folder: %w", err)
	}
	return filepath.Join(cache, "vtcode", "run"), nil
}

// SocketPath is the control socket of the user's daemon.
func SocketPath(getenv func(string) string) (string, error) {
	dir, err := SocketDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, SocketName), nil
}

// privateDir creates dir (mode 0700) if needed and checks that it is a
// real folder of this user that nobody else may enter.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("socket folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket folder %s is not a folder", dir)
	}
	if err := checkOwner(fi); err != nil {
		return fmt.Errorf("socket folder %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("socket folder: %w", err)
		}
	}
	return nil
}

var errNotOwner = errors.New("owned by another user")

// LogPath is the log file of a started daemon: daemon.log in
// $VTCODE_DAEMON_DIR when set, else in the user cache folder's vtcode.
func LogPath(getenv func(string) string) (string, error) {
	if d := getenv(DirEnv); d != "" {
		return filepath.Abs(filepath.Join(d, "daemon.log"))
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("log folder: %w", err)
	}
	return filepath.Join(cache, "vtcode", "daemon.log"), nil
}

// RegistryPath is the per-user file of the workspaces the engine has
// served (store.RecordWorkspace), which `vtcode-ls report --all` reads:
// workspaces.jsonl in $VTCODE_DAEMON_DIR when set, else in the user cache
// folder's vtcode.
func RegistryPath(getenv func(string) string) (string, error) {
	if d := getenv(DirEnv); d != "" {
		return filepath.Abs(filepath.Join(d, "workspaces.jsonl"))
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("workspace registry: %w", err)
	}
	return filepath.Join(cache, "vtcode", "workspaces.jsonl"), nil
}
