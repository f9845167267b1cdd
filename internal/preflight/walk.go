package preflight

import "encoding/json"

// WalkStep is the core's next_page answer: the cursor to follow next (nil:
// the walk ends, Stop says why), the cursors followed so far, and whether
// it ended at the page cap.
type WalkStep = walkStep

// NextPage asks the core (next_page) whether a tools/list walk reads
// another page after page, and with which cursor: the page cap, a repeated
// cursor and an empty or non-string one are its rules, not a host's. pageCap
// 0 is the core's default. A host that walks the pages over a transport of
// its own (the gateway, crawlcheck run) steps by it as Observe does.
func NextPage(page []byte, followed []string, pageCap int) (WalkStep, error) {
	return nextPage(page, followed, pageCap)
}

// PageOf returns the page a captured tools/list answer frame carries: its
// result member's bytes when the frame is an object with exactly one
// "result" member, else the whole frame (which the core calls malformed).
func PageOf(frame []byte) []byte {
	return pageOf(frame, false)
}

// MembersOfValid returns the members of a JSON object known to be valid
// JSON (json.Valid), as verbatim bytes aliasing obj, in one pass with no
// decoding of the values; a member named twice is an error. The gateway
// (crawlcheck run) reads every frame's envelope with it.
func MembersOfValid(obj []byte) (map[string]json.RawMessage, error) {
	return membersOfValid(obj)
}
