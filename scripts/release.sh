#!/usr/bin/env bash
# make release: the CLI and the issuer for linux, darwin, windows x amd64,
# arm64 into $OUT (build/release), with SHA256SUMS, its signature and an SBOM
# per binary (docs/release.md, "Cutting a release").
#
#   scripts/release.sh                      the whole release (clean tree only)
#   scripts/release.sh build GOOS GOARCH DIR   one target's two binaries into DIR
#
# The second form is the one place the release's build flags live: the full
# release and the reproducibility test (scripts/release, make release-check)
# both build through it, so what is checked is what is shipped.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
OUT=${OUT:-build/release}
# cyclonedx-gomod, the CycloneDX project's generator for Go, from the module
# proxy at a pinned version (go run resolves it through go.sum-less module
# mode, checked against sum.golang.org).
CYCLONEDX=${CYCLONEDX:-github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0}

# The version is the CHANGELOG's top heading ("## 2.0.0 (unreleased)" gives
# 2.0.0): one version for the whole project (docs/decisions.md).
VERSION=$(sed -n 's/^## \([0-9][0-9A-Za-z.+-]*\).*/\1/p' CHANGELOG.md | head -n 1)
# COMMIT may be given: the reproducibility test builds from a copy of the
# tree without .git, stamped with the clone's commit.
COMMIT=${COMMIT:-$(git rev-parse HEAD)}
[ -n "$VERSION" ] || { echo "release: no version heading (## X.Y.Z) in CHANGELOG.md" >&2; exit 1; }

# build GOOS GOARCH DIR: crawlcheck and crawlcheck-issuer for one target.
# CGO_ENABLED=0: static binaries, no C toolchain. -trimpath: no build path
# in the bytes. -buildvcs=false: nothing from the clone's state (a modified
# file, the commit's time); the version and commit are stamped with -X instead.
# -buildid= : an empty build id, which otherwise hashes the inputs' ids.
build() {
	local goos=$1 goarch=$2 dir=$3 exe=""
	[ "$goos" = windows ] && exe=.exe
	mkdir -p "$dir"
	local ldflags="-buildid= -X main.releaseVersion=$VERSION -X main.releaseCommit=$COMMIT"
	for cmd in crawlcheck crawlcheck-issuer; do
		CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath -buildvcs=false \
			-ldflags="$ldflags" -o "$dir/${cmd}_${VERSION}_${goos}_${goarch}${exe}" "./cmd/$cmd"
	done
}

if [ "${1:-}" = build ]; then
	[ $# -eq 4 ] || { echo "usage: scripts/release.sh build GOOS GOARCH DIR" >&2; exit 2; }
	build "$2" "$3" "$4"
	exit 0
fi

# A release names a commit: its files must be that commit's.
if [ -n "$(git status --porcelain --untracked-files=no)" ] && [ "${RELEASE_DIRTY:-}" != 1 ]; then
	echo "release: the tree has uncommitted changes; the binaries would not be commit $COMMIT's (RELEASE_DIRTY=1 to build anyway, not to publish)" >&2
	exit 1
fi

rm -rf "$OUT" && mkdir -p "$OUT"
for goos in linux darwin windows; do
	for goarch in amd64 arm64; do
		echo "release: $goos/$goarch"
		build "$goos" "$goarch" "$OUT"
	done
done

# One SBOM per binary, from the module list the Go linker wrote into it
# (the same list `go version -m` prints): what is in that file, per platform,
# the standard library included; no serial number or time, so that the same
# binary gives the same SBOM.
for bin in "$OUT"/crawlcheck*_"$VERSION"_*; do
	"$GO" run "$CYCLONEDX" bin -json -noserial -notimestamp -std -version "v$VERSION" -output "$bin.cdx.json" "$bin"
done

cp LICENSE "$OUT/LICENSE"
cp notices/crawlcheck.txt "$OUT/NOTICES-crawlcheck.txt"
cp notices/crawlcheck-issuer.txt "$OUT/NOTICES-crawlcheck-issuer.txt"

(cd "$OUT" && LC_ALL=C sha256sum -- $(LC_ALL=C ls | grep -v '^SHA256SUMS') > SHA256SUMS)

# The signature: an SSH signature (ssh-keygen -Y sign, Ed25519) over
# SHA256SUMS, namespace crawlcheck-release (docs/decisions.md, issue 36).
if [ -n "${RELEASE_KEY:-}" ]; then
	ssh-keygen -Y sign -q -f "$RELEASE_KEY" -n crawlcheck-release "$OUT/SHA256SUMS"
	echo "release: signed $OUT/SHA256SUMS.sig"
else
	echo "release: SHA256SUMS NOT SIGNED (set RELEASE_KEY to the release key's file)" >&2
fi
echo "release: $VERSION ($COMMIT) in $OUT"
