package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/crawlcheck/verifier/core/timefmt"
)

// SweepChangesOf reads one of the registry sweep's change events
// (internal/issuer/sweep) as the report's changes. A tools change (kind
// "tools" or "": its detail the core's diff answer and scan) is one change
// per tool: added or removed, or modified, named by the observation a check
// would record for the part that changed. An instructions change (kind
// "instructions": the core's instructions_diff answer) is one
// instructions_changed of no tool, with its word diff and the scan of the
// new text, as a record's is met.
func SweepChangesOf(kind, server string, seenAt time.Time, detail []byte) ([]SweepChange, error) {
	switch kind {
	case "instructions":
		return instructionsChangeOf(server, seenAt, detail)
	case "", "tools":
	default:
		return nil, fmt.Errorf("report: a sweep change of %s of an unknown kind %q", server, kind)
	}
	var d struct {
		Diff struct {
			Added    []string `json:"added"`
			Removed  []string `json:"removed"`
			Modified []struct {
				Name            string          `json:"name"`
				Parts           []string        `json:"parts"`
				DescriptionDiff json.RawMessage `json:"description_diff"`
			} `json:"modified"`
		} `json:"diff"`
		Scan struct {
			Findings []json.RawMessage `json:"findings"`
		} `json:"scan"`
	}
	if err := json.Unmarshal(detail, &d); err != nil {
		return nil, fmt.Errorf("report: a sweep change of %s: %w", server, err)
	}
	at := timefmt.Format(seenAt)
	scanOf := func(tool string) json.RawMessage {
		var mine []json.RawMessage
		for _, f := range d.Scan.Findings {
			var t struct{ Tool string }
			if json.Unmarshal(f, &t) == nil && t.Tool == tool {
				mine = append(mine, f)
			}
		}
		if mine == nil {
			return nil
		}
		b, _ := json.Marshal(map[string]any{"findings": mine})
		return b
	}
	var out []SweepChange
	for _, n := range d.Diff.Added {
		out = append(out, SweepChange{Server: server, Tool: n, Observation: "tool_added", SeenAt: at, Scan: scanOf(n)})
	}
	for _, n := range d.Diff.Removed {
		out = append(out, SweepChange{Server: server, Tool: n, Observation: "tool_removed", SeenAt: at})
	}
	for _, m := range d.Diff.Modified {
		c := SweepChange{Server: server, Tool: m.Name, Observation: "tool_changed", SeenAt: at, Scan: scanOf(m.Name)}
		switch {
		case slices.Contains(m.Parts, "description"):
			c.Observation, c.Diff = "description_changed", m.DescriptionDiff
		case slices.Contains(m.Parts, "inputSchema"):
			c.Observation = "schema_changed"
		case slices.Contains(m.Parts, "annotations"):
			c.Observation = "annotations_changed"
		}
		out = append(out, c)
	}
	return out, nil
}

// instructionsChangeOf reads an instructions change event.
func instructionsChangeOf(server string, seenAt time.Time, detail []byte) ([]SweepChange, error) {
	var d struct {
		Diff json.RawMessage `json:"diff"`
		Scan json.RawMessage `json:"scan"`
	}
	if err := json.Unmarshal(detail, &d); err != nil {
		return nil, fmt.Errorf("report: a sweep instructions change of %s: %w", server, err)
	}
	c := SweepChange{Server: server, Observation: "instructions_changed", SeenAt: timefmt.Format(seenAt)}
	if string(d.Diff) != "null" {
		c.Diff = d.Diff
	}
	if string(d.Scan) != "null" {
		c.Scan = d.Scan
	}
	return []SweepChange{c}, nil
}
