// Package winproc ends a Windows process with everything below it in the
// process tree, where Unix signals a process group: for a stdio server
// started by code that is not ours (the MCP SDK's command transport, which
// cannot start it suspended and so in a job object, as `crawlcheck run`'s
// gateway does). A client config that names a `.cmd` shim (npx.cmd, a
// wrapper script) makes the server a grandchild under cmd.exe: ending
// cmd.exe alone leaves the server running, an orphan that holds its files
// and ports (issue 31). On other systems the package is empty.
package winproc
