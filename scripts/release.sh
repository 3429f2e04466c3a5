#!/usr/bin/env bash
# make release: the release archives of the daemon, built by this one command.
#   dist/vtcode-ls_<version>_<os>_<arch>.tar.gz   linux and darwin, amd64 and arm64
#   dist/vtcode-ls_<version>_windows_amd64.zip
#   dist/SHA256SUMS                                sha256sum -c SHA256SUMS checks them
# Each archive holds one folder vtcode-ls_<version>_<os>_<arch>/ with the binary (vtcode-ls, or
# vtcode-ls.exe), README.md and docs/design.md. The binaries are static (CGO_ENABLED=0), built with
# -trimpath, and carry the version and commit that `vtcode-ls version` prints. The archives are
# reproducible: file times are the commit's, owners are 0, entries are sorted.
#
# VERSION (default: git describe --tags --always --dirty), COMMIT (default: git rev-parse HEAD),
# RELEASE_DIR (default: dist) and RELEASE_PLATFORMS (default: the five above, as os/arch) can be
# set. Needs go, git, tar, gzip, zip and sha256sum (or shasum); nothing is downloaded.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
GO=${GO:-go}
say() { echo "release: $*" >&2; }

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
OUT=${RELEASE_DIR:-dist}
read -r -a platforms <<<"${RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"
case $VERSION in *[!A-Za-z0-9._+-]*) say "VERSION $VERSION: use letters, digits and . _ + - only"; exit 2 ;; esac
for tool in tar gzip zip; do
  command -v "$tool" >/dev/null || { say "needs $tool on PATH"; exit 1; }
done
if command -v sha256sum >/dev/null; then sum=(sha256sum); elif command -v shasum >/dev/null; then sum=(shasum -a 256); else
  say "needs sha256sum or shasum on PATH"; exit 1
fi
# File times of the archives: the commit's, so two builds of one commit give the same bytes.
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH=$epoch

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/vtcode-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
archives=()
for p in "${platforms[@]}"; do
  goos=${p%/*} goarch=${p#*/}
  name=vtcode-ls_${VERSION}_${goos}_${goarch}
  exe=vtcode-ls; [ "$goos" = windows ] && exe=vtcode-ls.exe
  dir=$stage/$name
  mkdir -p "$dir/docs"
  say "build $name"
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" -o "$dir/$exe" ./cmd/vtcode-ls
  cp README.md "$dir/"
  cp docs/design.md "$dir/docs/"
  find "$dir" -exec touch -h -d "@$epoch" {} +
  if [ "$goos" = windows ]; then
    archive=$name.zip
    rm -f "$OUT/$archive"
    (cd "$stage" && find "$name" -print | LC_ALL=C sort | TZ=UTC zip -q -X -D "$OUT/$archive" -@)
  else
    archive=$name.tar.gz
    tar -C "$stage" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - "$name" |
      gzip -9n >"$OUT/$archive"
  fi
  archives+=("$archive")
done
(cd "$OUT" && "${sum[@]}" "${archives[@]}" >SHA256SUMS)
say "wrote $OUT: ${archives[*]} SHA256SUMS"
