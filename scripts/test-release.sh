#!/usr/bin/env bash
# make test-release: checks what a user installs, offline.
#  1. scripts/release.sh for this machine's platform and windows/amd64 (a .tar.gz and a .zip): the
#     checksums verify, each archive holds its folder with the binary, README.md and
#     docs/design.md, the Windows binary is a PE executable, the host's binary prints the version
#     and commit it was built with, and a second run gives the same bytes (reproducible).
#  2. `go install github.com/vtcode/vtcode-ls/cmd/vtcode-ls@latest` from a copy of the committed
#     tree served as that module path (git's url.insteadOf; GOSUMDB=off and the dependencies
#     from the module cache as a file proxy: no network): it installs, and the binary says which
#     commit it is.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
GO=${GO:-go}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtcode-test-release.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-release: FAIL: $*" >&2; exit 1; }

host=$("$GO" env GOOS)/$("$GO" env GOARCH)
version=v0.0.0-test
commit=$(git rev-parse HEAD)
for run in 1 2; do
  VERSION=$version COMMIT=$commit RELEASE_DIR=$tmp/dist$run RELEASE_PLATFORMS="$host windows/amd64" \
    GO=$GO bash scripts/release.sh
done
cmp -s "$tmp/dist1/SHA256SUMS" "$tmp/dist2/SHA256SUMS" || fail "two builds of one commit differ: $(diff "$tmp/dist1/SHA256SUMS" "$tmp/dist2/SHA256SUMS")"
(cd "$tmp/dist1" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not verify"

hostname=vtcode-ls_${version}_${host%/*}_${host#*/}
winname=vtcode-ls_${version}_windows_amd64
mkdir -p "$tmp/x"
tar -C "$tmp/x" -xzf "$tmp/dist1/$hostname.tar.gz"
unzip -q "$tmp/dist1/$winname.zip" -d "$tmp/x"
for f in "$hostname/vtcode-ls" "$hostname/README.md" "$hostname/docs/design.md" \
  "$winname/vtcode-ls.exe" "$winname/README.md" "$winname/docs/design.md"; do
  [ -f "$tmp/x/$f" ] || fail "archive lacks $f"
done
[ "$(head -c 2 "$tmp/x/$winname/vtcode-ls.exe")" = MZ ] || fail "$winname/vtcode-ls.exe is not a PE executable"
line=$("$tmp/x/$hostname/vtcode-ls" version)
case $line in
  "vtcode-ls $version (commit ${commit:0:12}, "*) ;;
  *) fail "the released binary says \"$line\", want vtcode-ls $version (commit ${commit:0:12}, ...)" ;;
esac
echo "test-release: archives ok: $line"

# go install ...@latest, the module served from a bare copy of HEAD (no tags: latest is HEAD).
git init -q --bare "$tmp/repo.git"
git push -q "$tmp/repo.git" HEAD:refs/heads/main
git -C "$tmp/repo.git" symbolic-ref HEAD refs/heads/main
printf '[url "file://%s"]\n\tinsteadOf = https://github.com/vtcode/vtcode-ls\n[protocol "file"]\n\tallow = always\n' \
  "$tmp/repo.git" >"$tmp/gitconfig"
# A module cache of its own (the dependencies served from the shared one as a file proxy), so
# the test version of the module never lands in the user's cache.
# The module itself always comes from the bare copy (GOPRIVATE: direct), never from an older
# version of it that the shared cache may hold.
(cd "$tmp" && GIT_CONFIG_GLOBAL=$tmp/gitconfig GOPROXY="file://$("$GO" env GOMODCACHE)/cache/download,direct" \
  GOMODCACHE=$tmp/mod GOSUMDB=off GOPRIVATE=github.com/vtcode/vtcode-ls GOFLAGS=-modcacherw GOBIN=$tmp/bin \
  "$GO" install github.com/vtcode/vtcode-ls/cmd/vtcode-ls@latest) || fail "go install github.com/vtcode/vtcode-ls/cmd/vtcode-ls@latest"
line=$("$tmp/bin/vtcode-ls" version)
case $line in
  "vtcode-ls v0.0.0-"*"-${commit:0:12} (commit ${commit:0:12}, "*) ;;
  *) fail "the go-installed binary says \"$line\", want the pseudo-version and commit of ${commit:0:12}" ;;
esac
echo "test-release: go install @latest ok: $line"
