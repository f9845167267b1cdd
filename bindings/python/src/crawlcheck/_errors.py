"""CrawlcheckError, the base class of every error the package raises.

One class to catch: a core refusal (CoreError), a refused call
(ContinuityRefused), a check that could not be made (PreflightError), the
library, the record log, a file, the issuer's configuration. Each keeps the
standard class it was before as a second base (PreflightError is still a
RuntimeError, FileRefused an OSError), so code that caught those goes on
working.
"""

from __future__ import annotations

from typing import Optional


class CrawlcheckError(Exception):
    """An error of the crawlcheck package. ``code`` is the core's error code
    (one of ``ERROR_CODES``, docs/abi.md) when an answer of the core is the
    cause, this error's or the one it was raised from; otherwise None (a
    transport, a file, a refused call)."""

    _code: Optional[str] = None

    @property
    def code(self) -> Optional[str]:
        if self._code is not None:
            return self._code
        cause = self.__cause__
        return cause.code if isinstance(cause, CrawlcheckError) else None

    @code.setter
    def code(self, code: Optional[str]) -> None:
        self._code = code
