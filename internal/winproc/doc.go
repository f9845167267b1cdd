// Package winproc holds what Windows needs to end a stdio server with
// everything it started, where Unix has process groups and signals to
// them: a job object the server runs in from its first instruction, and a
// walk of the process tree for a server started by code that is not ours
// (the MCP SDK's command transport). A client config that names a `.cmd`
// shim (npx.cmd, a wrapper script) makes the server a grandchild under
// cmd.exe: ending cmd.exe alone leaves the server running, an orphan that
// holds its files and ports (issue 31). On other systems the package is
// empty.
package winproc
