"""Wheel build hook: the wheel carries the core library (libcrawlcheck.so,
libcrawlcheck.dylib or crawlcheck.dll), a native library loaded by ctypes (no
Python extension), so it is tagged py3-none-<platform> and refuses to build
without exactly one library. Or it carries crawlcheck.wasm alone, which runs
under wasmtime on any platform wasmtime has a wheel for: the pure wheel,
tagged py3-none-any, the one pip picks where no platform wheel fits
(docs/release.md).

The platform is this machine's (sysconfig: ``linux_x86_64`` for ``make
python-wheel``) unless CRAWLCHECK_WHEEL_PLATFORM names the one the library
was cross-built for (``make wheels``: manylinux_2_17_x86_64, macosx_12_0_arm64,
win_amd64, ...); scripts/wheelcheck then checks the library against it."""

from __future__ import annotations

import os
import sysconfig
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

LIB_NAMES = ("libcrawlcheck.so", "libcrawlcheck.dylib", "crawlcheck.dll", "crawlcheck.wasm")


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        lib_dir = os.path.join(self.root, "src", "crawlcheck", "lib")
        found = [n for n in LIB_NAMES if os.path.exists(os.path.join(lib_dir, n))]
        if len(found) != 1:
            raise RuntimeError(
                f"{lib_dir} must hold exactly one of {', '.join(LIB_NAMES)}, holds {found or 'none'}: "
                "run `make python-wheel` or `make wheels` (they build the library first)"
            )
        if found == ["crawlcheck.wasm"]:
            build_data["pure_python"] = True
            build_data["tag"] = "py3-none-any"
            return
        build_data["pure_python"] = False
        plat = os.environ.get("CRAWLCHECK_WHEEL_PLATFORM") or sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["tag"] = f"py3-none-{plat}"
