// Package wine runs the Windows builds under wine, as far as this machine
// can run Windows (issue 36 item 4, issue 31's Windows parts): the CLI
// (crawlcheck.exe, cross-built with CGO_ENABLED=0) locking and checking the
// scenario server (hosttest/mcpserver, built for Windows too) over stdio,
// directly and through a `.cmd` shim as a client config names one; `run`
// between a client driven over its stdin and stdout and that shim, leaving
// no process behind when the client closes stdin or when the gateway
// itself is killed; two `run` instances appending to one --log, whose
// chain then verifies.
//
// It needs wine (Debian's wine and wine64) and ZIGPY, a python with PyPI's
// ziglang: the prefix it makes (scripts/wine/prefix.sh) gets a
// bcryptprimitives.dll shim without which no Go 1.22+ program starts under
// Debian's wine 8.0 (docs/release.md). The tests run when CRAWLCHECK_WINE=1
// (`make test-wine`, part of `make test`) and are skipped otherwise.
package wine
