package preflight

import (
	"github.com/crawlcheck/verifier/internal/corecall"
)

// StdioEndpoint is the endpoint string a record carries for a stdio server,
// as the core's endpoint op writes it: "stdio:" followed by the command
// line, each arg quoted as Python's shlex.quote does, args[0] as typed (not
// resolved on PATH), so that the same configuration names the same server
// on every machine and in every language binding.
func StdioEndpoint(args []string) (string, error) {
	return endpointOf(map[string]any{"command": args})
}

// URLEndpoint is the endpoint string a record carries for an HTTP server:
// the URL as given, once the core's endpoint op has found it an http or
// https URL with a host.
func URLEndpoint(url string) (string, error) {
	return endpointOf(map[string]any{"url": url})
}

func endpointOf(req map[string]any) (string, error) {
	var ep struct {
		Endpoint string `json:"endpoint"`
	}
	err := corecall.Into("endpoint", req, &ep)
	return ep.Endpoint, err
}
