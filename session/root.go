package session

// WorkspaceRoot resolves a workspace folder (a path or a file:// URI) the way
// [Manager.AddWorkspace] does: the clean absolute path of an existing folder,
// symbolic links resolved. Events and listings name workspaces by this path,
// so a transport serving several clients from one Manager tells with it
// which client a workspace belongs to.
func WorkspaceRoot(root string) (string, error) { return workspacePath(root) }
