"""The preflight options every adapter takes, passed on to McpPreflight."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, TypedDict, Union

from ._issuer import Issuer


class Options(TypedDict, total=False):
    policy: Union[bytes, str, None]
    expected_policy_version: Optional[str]
    operator_keys: Optional[Sequence[str]]
    key_directory: Union[bytes, str, None]
    require_signed_baseline: Optional[bool]
    server_name: Optional[str]
    issuer: Union[Issuer, str, None]
    on_record: Optional[Callable[[Dict[str, Any], bytes], None]]
    log_path: Optional[str]
    page_cap: int
    max_answer_bytes: int
    timeout: float
    signing_key: Optional[str]
    now: Optional[Callable[[], Any]]
