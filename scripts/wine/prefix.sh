#!/usr/bin/env bash
# A throwaway wine prefix that runs Go programs for Windows (test
# scaffolding: docs/release.md, "Windows under wine").
#
#   ZIGPY=build/py-zig/bin/python scripts/wine/prefix.sh PREFIX
#
# Makes PREFIX with wineboot, then builds scripts/wine/bcryptprimitives.c
# with Zig (PyPI's ziglang, the wheels' C toolchain) and puts it in the
# prefix's system32: Debian's wine 8.0 has no bcryptprimitives.dll, and every
# Go 1.22+ program for Windows stops at start without it. Run programs with
#
#   WINEPREFIX=PREFIX WINEDEBUG=-all WINEDLLOVERRIDES=bcryptprimitives=n wine PROGRAM.exe
#
# (=n: the native DLL, this one). Stop the prefix's wineserver with
# `WINEPREFIX=PREFIX wineserver -k` before removing it.
set -euo pipefail
PREFIX=${1:?usage: prefix.sh PREFIX}
: "${ZIGPY:?ZIGPY: a python with ziglang (make wheels builds build/py-zig)}"
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
# No Mono or Gecko: nothing here needs .NET or a browser engine, and wine
# would otherwise offer to download them.
WINEPREFIX=$PREFIX WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' wineboot -i >/dev/null 2>&1
SYS32=$PREFIX/drive_c/windows/system32
test -d "$SYS32" || { echo "prefix.sh: wineboot made no $SYS32" >&2; exit 1; }
"$ZIGPY" -m ziglang cc -target x86_64-windows-gnu -shared -nostdlib -O2 \
	-o "$SYS32/bcryptprimitives.dll" "$HERE/bcryptprimitives.c" "$HERE/bcryptprimitives.def" -ladvapi32
rm -f "$SYS32/bcryptprimitives.lib" "$SYS32/bcryptprimitives.pdb"
