package preflight

import (
	"github.com/crawlcheck/verifier/internal/coreops"
)

// StdioEndpoint is the endpoint string a record carries for a stdio server,
// as the core's endpoint op writes it: "stdio:" followed by the command
// line, each arg quoted as Python's shlex.quote does, args[0] as typed (not
// resolved on PATH), so that the same configuration names the same server
// on every machine and in every language binding.
func StdioEndpoint(args []string) (string, error) {
	return endpointOf(coreops.EndpointRequest{Command: args})
}

// URLEndpoint is the endpoint string a record carries for an HTTP server:
// the URL as given, once the core's endpoint op has found it an http or
// https URL with a host.
func URLEndpoint(url string) (string, error) {
	return endpointOf(coreops.EndpointRequest{URL: url})
}

func endpointOf(req coreops.EndpointRequest) (string, error) {
	ep, err := coreops.Endpoint(req)
	return ep.Endpoint, err
}
