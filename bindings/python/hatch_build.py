"""Wheel build hook: the wheel carries libcrawlcheck.so, a native library
loaded by ctypes (no Python extension), so it is tagged py3-none-<platform>
and refuses to build without the library."""

from __future__ import annotations

import os
import sysconfig
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        lib = os.path.join(self.root, "src", "crawlcheck", "lib", "libcrawlcheck.so")
        if not os.path.exists(lib):
            raise RuntimeError(f"{lib} is missing: run `make python-wheel` (it builds the library first)")
        build_data["pure_python"] = False
        plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["tag"] = f"py3-none-{plat}"
