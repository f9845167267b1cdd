package service

import (
	"context"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// What a pilot may see of the registry sweep (docs/issuer.md, Trust
// model; issue 37, F7). A pilot's records are what its hosts said, and
// anybody may make a pilot: a record naming an endpoint proves nothing
// about who may read it. So a report shows the sweep's changes only on the
// endpoints the pilot itself registered and owns, never on one another
// owner (the operator, another pilot) registered, whatever its records
// name; and a registration of an endpoint another owner holds answers
// nothing of that owner's row.

// ownEndpoints is the set of sweep endpoints the pilot owns: a report
// reads the sweep's changes only of those.
func ownEndpoints(ctx context.Context, ss store.SweepStore, pilotID string) (map[string]bool, error) {
	mine, err := ss.SweepEndpoints(ctx, pilotOwner(pilotID))
	if err != nil {
		return nil, err
	}
	own := make(map[string]bool, len(mine))
	for _, e := range mine {
		own[e.URL] = true
	}
	return own, nil
}

// pilotOwner is the owner name of a pilot's endpoints in the sweep.
func pilotOwner(id string) string { return "pilot:" + id }
