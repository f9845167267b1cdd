#!/bin/sh
# wheels.sh: the crawlcheck Python wheels for every platform (make wheels,
# docs/release.md). Each carries its platform's core library, the c-shared
# build of ./cshared cross-compiled with Zig (PyPI's `ziglang`, pinned in
# bindings/python/requirements/zig.txt) as cgo's C toolchain, and is tagged
# for that platform; the pure wheel (py3-none-any) carries crawlcheck.wasm
# for the platforms none of them fits. scripts/wheelcheck then reads every
# wheel's library (format, machine, ABI 2 exports, the system libraries it
# links, the glibc or macOS it needs; the module's exports and imports) and
# metadata (no runtime dependency), pip is asked which wheel it picks for
# each platform, the pure wheel and the wheel for this machine are installed
# in fresh venvs and called, and the linux-arm64 library answers every op
# vector under qemu-user as this machine's does, the Windows one under wine.
#
#   ZIGPY=build/py-zig/bin/python BUILDPY=build/py-mcp2/bin/python OUT=build/wheels scripts/wheels.sh
set -eu
: "${GO:=go}"
: "${ZIGPY:?the Python that has ziglang}"
: "${BUILDPY:?the Python that has build and hatchling}"
: "${OUT:=build/wheels}"
ROOT=$(pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK="$OUT/work"
rm -rf "$WORK" "$OUT"/*.whl
mkdir -p "$WORK"

# Reproducible wheels: every file's time is the commit's.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)
export SOURCE_DATE_EPOCH

# macOS: Go's runtime asks the linker for -lresolv (internal/syscall/unix) and,
# on arm64, -framework CoreFoundation (runtime/cgo). Zig ships libSystem's
# stub but not these two, which live in Apple's SDK; these text stubs name
# the libraries' install paths and the symbols Go may import from them, so
# the library links against the real ones on the user's Mac.
STUB="$WORK/macstub"
mkdir -p "$STUB/CoreFoundation.framework"
cat >"$STUB/libresolv.tbd" <<'TBD'
--- !tapi-tbd
tbd-version: 4
targets: [ x86_64-macos, arm64-macos ]
install-name: '/usr/lib/libresolv.9.dylib'
exports:
  - targets: [ x86_64-macos, arm64-macos ]
    symbols: [ _res_9_ninit, _res_9_nclose, _res_9_nsearch ]
...
TBD
cat >"$STUB/CoreFoundation.framework/CoreFoundation.tbd" <<'TBD'
--- !tapi-tbd
tbd-version: 4
targets: [ x86_64-macos, arm64-macos ]
install-name: '/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation'
exports:
  - targets: [ x86_64-macos, arm64-macos ]
    symbols: [ _CFRelease ]
...
TBD

case $ZIGPY in /*) ;; *) ZIGPY=$ROOT/$ZIGPY ;; esac
case $BUILDPY in /*) ;; *) BUILDPY=$ROOT/$BUILDPY ;; esac
ZIGDIR=$("$ZIGPY" -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))')
ZIGVER=$("$ZIGPY" -m ziglang version)

# platform tag, GOOS, GOARCH, Zig target, library file name.
# No musllinux: Zig builds the library for x86_64-linux-musl (and Debian's
# musl-gcc does too), but musl's dlopen refuses it ("initial-exec TLS resolves
# to dynamic definition"): Go's runtime uses initial-exec TLS, which musl
# loads only in the executable and the libraries it starts with, never in one
# loaded later, as ctypes does. A wheel whose library cannot load is not built.
while read -r PLAT GOOS_ GOARCH_ TARGET LIB; do
	echo "wheels: $PLAT ($TARGET)"
	D="$WORK/$PLAT"
	mkdir -p "$D/src/crawlcheck/lib"
	cp -R bindings/python/src/crawlcheck "$D/src/"
	rm -rf "$D/src/crawlcheck/lib" "$D/src/crawlcheck/__pycache__" && mkdir -p "$D/src/crawlcheck/lib"
	cp bindings/python/pyproject.toml bindings/python/hatch_build.py bindings/python/README.md LICENSE "$D/"
	LDF=""
	case $GOOS_ in darwin) LDF="-L$STUB -F$STUB" ;; esac
	CGO_ENABLED=1 GOOS=$GOOS_ GOARCH=$GOARCH_ CGO_CFLAGS="-O2" CGO_LDFLAGS="$LDF" \
		CC="$ZIGPY -m ziglang cc -target $TARGET" \
		"$GO" build -buildmode=c-shared -trimpath -ldflags='-s -w' -o "$D/src/crawlcheck/lib/$LIB" ./cshared
	rm -f "$D/src/crawlcheck/lib/"*.h
	# The notices: what the library compiles in (notices/libcrawlcheck.txt),
	# then Zig's own, whose compiler runtime and (Windows) MinGW-w64 CRT
	# start-up code are linked into it.
	{
		cat notices/libcrawlcheck.txt
		printf '================================================================================\n'
		printf 'Zig %s (PyPI ziglang), the C toolchain this library was linked with:\n' "$ZIGVER"
		printf 'its compiler runtime is linked in.\n\n--- LICENSE ---\n\n'
		cat "$ZIGDIR/LICENSE"
		if [ "$GOOS_" = windows ]; then
			printf '\n================================================================================\n'
			printf 'MinGW-w64 runtime (shipped with Zig): its CRT start-up code is linked in.\n\n--- COPYING ---\n\n'
			cat "$ZIGDIR/lib/libc/mingw/COPYING"
		fi
	} >"$D/NOTICES.txt"
	(cd "$D" && CRAWLCHECK_WHEEL_PLATFORM=$PLAT "$BUILDPY" -m build -q --no-isolation --wheel --outdir "$OUT" .)
done <<'TARGETS'
manylinux_2_17_x86_64 linux amd64 x86_64-linux-gnu.2.17 libcrawlcheck.so
manylinux_2_17_aarch64 linux arm64 aarch64-linux-gnu.2.17 libcrawlcheck.so
macosx_12_0_arm64 darwin arm64 aarch64-macos.12.0 libcrawlcheck.dylib
macosx_12_0_x86_64 darwin amd64 x86_64-macos.12.0 libcrawlcheck.dylib
win_amd64 windows amd64 x86_64-windows-gnu crawlcheck.dll
TARGETS

# The pure wheel (py3-none-any): crawlcheck.wasm instead of a library, run
# under wasmtime (the extra crawlcheck[wasm]); pip picks it where no wheel
# above fits, Linux on musl and Windows on arm64 above all (docs/release.md).
echo "wheels: any (crawlcheck.wasm)"
D="$WORK/any"
mkdir -p "$D/src"
cp -R bindings/python/src/crawlcheck "$D/src/"
rm -rf "$D/src/crawlcheck/lib" "$D/src/crawlcheck/__pycache__" && mkdir -p "$D/src/crawlcheck/lib"
cp bindings/python/pyproject.toml bindings/python/hatch_build.py bindings/python/README.md LICENSE "$D/"
make --no-print-directory wasm GO="$GO" BUILD="$D/src/crawlcheck/lib"
cp notices/crawlcheck.wasm.txt "$D/NOTICES.txt"
(cd "$D" && "$BUILDPY" -m build -q --no-isolation --wheel --outdir "$OUT" .)
PURE=$(ls "$OUT"/crawlcheck-*-py3-none-any.whl)

"$GO" run ./scripts/wheelcheck "$OUT"/*.whl

# What pip picks from these wheels for a platform (no index, these files
# only): the pure wheel where none has a library, the platform's own where
# one has (pip --platform takes the tag as given, without the older tags a
# real machine also accepts, so these are the wheels' own tags). No musl or Windows arm64 machine runs here; this is the choice
# pip makes there, and the wasmtime wheel it would install beside it.
PICK="$WORK/pick"
while read -r PLATFORM WANT; do
	rm -rf "$PICK"
	"$BUILDPY" -m pip download -q --no-index --find-links "$OUT" --only-binary=:all: --no-deps \
		--platform "$PLATFORM" --python-version 3.12 -d "$PICK" crawlcheck
	GOT=$(cd "$PICK" && ls)
	case $GOT in
	*"-py3-none-$WANT.whl") echo "wheels: pip on $PLATFORM picks $GOT" ;;
	*) echo "wheels: pip on $PLATFORM picks $GOT, want the py3-none-$WANT wheel" >&2; exit 1 ;;
	esac
	# Where the pure wheel is picked, its runtime must have a wheel there too:
	# the pinned wasmtime, resolved on PyPI for that platform (metadata only).
	if [ "$WANT" = any ]; then
		"$BUILDPY" -m pip install -q --dry-run --ignore-installed --no-deps --only-binary=:all: \
			--platform "$PLATFORM" --python-version 3.12 --target "$WORK/dry" --report "$WORK/dry.json" \
			-r bindings/python/requirements/wasm.txt
		"$BUILDPY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print("wheels:   and its runtime", *(i["download_info"]["url"].rsplit("/", 1)[-1] for i in r["install"]))' "$WORK/dry.json"
	fi
done <<'PICKS'
musllinux_1_2_x86_64 any
musllinux_1_2_aarch64 any
win_arm64 any
manylinux_2_17_x86_64 manylinux_2_17_x86_64
macosx_12_0_arm64 macosx_12_0_arm64
win_amd64 win_amd64
PICKS

# The pure wheel installed with its extra in a fresh venv (wasmtime from the
# version requirements/wasm.txt pins, fetched once into pip's cache) and
# called: the module answers, and the loader says it runs it.
rm -rf "$WORK/venv-any" && "$BUILDPY" -m venv "$WORK/venv-any"
"$BUILDPY" -m pip download -q --no-deps --only-binary=:all: -d "$WORK/deps" -r bindings/python/requirements/wasm.txt
"$WORK/venv-any/bin/pip" install -q --no-index --find-links "$WORK/deps" "$PURE[wasm]"
(cd / && "$WORK/venv-any/bin/python" -c 'import crawlcheck; i = crawlcheck.core_info(); v = crawlcheck.version(); assert i["core"] == "wasm" and v["abi"] == 2, (i, v); print("wheels: any installed and called:", v["engine"], "abi", v["abi"], "through", i["runtime"])')

# The wheel for this machine, installed from the files alone and called.
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) NATIVE=manylinux_2_17_x86_64 ;;
Linux-aarch64) NATIVE=manylinux_2_17_aarch64 ;;
*) NATIVE= ;;
esac
if [ -n "$NATIVE" ]; then
	rm -rf "$WORK/venv" && "$BUILDPY" -m venv "$WORK/venv"
	"$WORK/venv/bin/pip" install -q --no-index "$OUT"/crawlcheck-*-py3-none-$NATIVE.whl
	(cd / && "$WORK/venv/bin/python" -c 'import crawlcheck; v = crawlcheck.version(); assert v["abi"] == 2, v; print("wheels: '"$NATIVE"' installed and called:", v["engine"], "abi", v["abi"])')
fi
# The linux-arm64 wheel's library under qemu-user (Debian's qemu-user and
# libc6-arm64-cross, which make wheels installs): every op vector through it,
# by hosttest/c/harness.c cross-built with the same Zig, against this
# machine's library (NATIVE_HARNESS, NATIVE_LIB: make harness cshared).
if [ "$(uname -m)" = x86_64 ] && [ -n "${NATIVE_HARNESS:-}" ]; then
	A64="$WORK/arm64"
	mkdir -p "$A64"
	"$ZIGPY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("crawlcheck/lib/libcrawlcheck.so", sys.argv[2])' \
		"$OUT"/crawlcheck-*-py3-none-manylinux_2_17_aarch64.whl "$A64"
	"$ZIGPY" -m ziglang cc -target aarch64-linux-gnu.2.17 -O2 -std=c11 -pthread -Icshared \
		-o "$A64/harness" hosttest/c/harness.c -ldl
	"$BUILDPY" scripts/crossvectors.py "$NATIVE_HARNESS" "$NATIVE_LIB" -- \
		qemu-aarch64 -L /usr/aarch64-linux-gnu "$A64/harness" "$A64/crawlcheck/lib/libcrawlcheck.so"
fi
# The Windows wheel's library under wine (Debian's wine 8.0, which make wheels
# installs), with the prefix's bcryptprimitives.dll shim (scripts/wine: test
# scaffolding for what wine 8.0 lacks and Windows 10+ has): every op vector
# through it, by hosttest/c/harness.c cross-built for Windows (its serve
# mode, LoadLibrary as ctypes does), against this machine's library.
if [ "$(uname -m)" = x86_64 ] && [ -n "${NATIVE_HARNESS:-}" ]; then
	W64="$WORK/win64"
	mkdir -p "$W64"
	"$ZIGPY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("crawlcheck/lib/crawlcheck.dll", sys.argv[2])' \
		"$OUT"/crawlcheck-*-py3-none-win_amd64.whl "$W64"
	"$ZIGPY" -m ziglang cc -target x86_64-windows-gnu -O2 -std=c11 -Wall -Wextra -Werror -Icshared \
		-o "$W64/harness.exe" hosttest/c/harness.c
	ZIGPY=$ZIGPY scripts/wine/prefix.sh "$W64/prefix"
	WINEPREFIX="$W64/prefix" WINEDEBUG=-all WINEDLLOVERRIDES=bcryptprimitives=n \
		"$BUILDPY" scripts/crossvectors.py "$NATIVE_HARNESS" "$NATIVE_LIB" -- \
		wine "$W64/harness.exe" "Z:$(printf %s "$W64/crawlcheck/lib/crawlcheck.dll" | tr / '\\')"
	WINEPREFIX="$W64/prefix" wineserver -k || true
fi
rm -rf "$WORK"
