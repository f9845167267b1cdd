// Package session is the state and the rules of the session engine
// (docs/abi.md, The session engine): what a session remembers between
// events, the pacing of re-checks a server's list_changed asks for, and the
// rewrites of a check the core could not judge as asked. It does no I/O and
// reads no clock: every time is an event's at_ms, every fact the host's.
//
// The state is a canonical JSON object the core writes and the host keeps
// as opaque bytes, handing it back with the next event. It holds the
// newest record (a refusal is worded from it), the handoff's session and
// calls, the keys of the prompts, resources and templates it hands over, the
// list_changed notifications seen and covered, the pace, and
// the tools said to be beyond a host's framework.
package session

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/sorting"
)

// Kind names a session state document.
const Kind = "crawlcheck-session-state"

// Version is the state's version: a state of another is refused, never
// guessed at (a host keeps it for one session, in memory).
const Version = 1

// The pacing of background re-checks (docs/decisions.md): the first starts
// at once, the next no sooner than the wait after the one before, with
// every list_changed in between coalesced into it; one that starts within
// twice the wait of the one before (a storm) doubles the wait up to
// RecheckMaxMS, and a quiet spell resets it to RecheckMinMS.
const (
	RecheckMinMS = 1_000
	RecheckMaxMS = 60_000
)

// State is what a session remembers between events.
type State struct {
	// Record is the newest record (null before the first check); Session
	// and Calls are its handoff's session and calls.
	Record   canon.Value
	Session  string
	Names    []string
	Unlisted bool
	// Items are the keys of the prompts, resources and resource templates
	// the newest handoff hands over, by list (ItemLists), each sorted: what
	// a prompts/get, resources/read or completion/complete is judged by. The keys only, not the objects: the
	// record in the state words a refusal.
	Items map[string][]string
	// Changes counts the list_changed events; Seen is how many of them the
	// newest record covers (the host's count when it began observing).
	Changes, Seen int64
	// Refresh: the next check is the one more a check_again asked for.
	Refresh bool
	// Unheld are the tools a host said its framework's type cannot hold,
	// sorted: each is said once a session.
	Unheld []string
	// Told is the canonical text of the observe-mode would last told ("":
	// none): a person is told once for each distinct would.
	Told string
	// HeldMS is how long the pace held back the re-check now due, for the
	// record's recheck; 0 for a check nothing held.
	HeldMS int64
	// LastMS is when the last paced re-check started (-1: none yet);
	// WaitMS the current wait; DueMS the wake asked for (-1: none), and
	// HoldMS how long it holds the re-check back.
	LastMS, WaitMS, DueMS, HoldMS int64
	// Walk is the observation in progress (walk.go); nil between walks.
	Walk *Walk
}

// New is the state of a session before any event.
func New() State {
	return State{Record: canon.NullValue(), LastMS: -1, WaitMS: RecheckMinMS, DueMS: -1}
}

// Stale reports whether a list_changed arrived that the newest record does
// not cover.
func (s *State) Stale() bool { return s.Changes > s.Seen }

// ListChanged notes a notifications/tools/list_changed at atMS and answers
// the pace's decision: recheck (at once, held 0), or a wake at due, or
// nothing when a wake is already asked for (the notification is coalesced
// into it).
func (s *State) ListChanged(atMS int64) (recheck bool, due int64) {
	s.Changes++
	if s.DueMS >= 0 {
		return false, -1
	}
	hold := int64(0)
	if s.LastMS >= 0 {
		hold = max(0, s.LastMS+s.WaitMS-atMS)
	}
	if hold == 0 {
		s.start(atMS, 0)
		return true, -1
	}
	s.DueMS, s.HoldMS = s.LastMS+s.WaitMS, hold
	return false, s.DueMS
}

// Timer is the wake asked for firing at atMS: the re-check it held back
// starts, unless a check since (a call's) covered every notification.
func (s *State) Timer(atMS int64) bool {
	if s.DueMS < 0 {
		return false
	}
	hold := s.HoldMS
	s.DueMS, s.HoldMS = -1, 0
	if !s.Stale() {
		return false
	}
	s.start(atMS, hold)
	return true
}

// start notes a paced re-check starting at atMS, held back hold ms.
func (s *State) start(atMS, hold int64) {
	if s.LastMS >= 0 && atMS-s.LastMS <= 2*s.WaitMS {
		s.WaitMS = min(2*s.WaitMS, RecheckMaxMS)
	} else {
		s.WaitMS = RecheckMinMS
	}
	s.LastMS, s.HeldMS = atMS, hold
}

// Recheck is the check request's recheck member for a check of the
// observation begun when the host had seen seen notifications, or null:
// the notifications since the record before (none before the first, none
// for the refreshed check) and how long the pace held it back.
func (s *State) Recheck(seen int64) canon.Value {
	if s.Record.IsNull() || s.Refresh || seen <= s.Seen {
		return canon.NullValue()
	}
	return Obj(canon.M("coalesced", canon.Int(seen-s.Seen)), canon.M("held_back_ms", canon.Int(s.HeldMS)))
}

// Checked takes in the handoff of a check of the observation begun at seen
// notifications, made as the refreshed one or not; it reports whether one
// more check is due: check_again asks for exactly one, and the refreshed
// check's own check_again asks for none.
func (s *State) Checked(handoff canon.Value, seen int64, refreshed bool) bool {
	s.Record, _ = handoff.Get("record")
	sess, _ := handoff.Get("session")
	s.Session, _ = sess.Str()
	calls, _ := handoff.Get("calls")
	names, _ := calls.Get("names")
	s.Names = s.Names[:0]
	for _, n := range names.Elems() {
		str, _ := n.Str()
		s.Names = append(s.Names, str)
	}
	unlisted, _ := calls.Get("unlisted")
	s.Unlisted, _ = unlisted.BoolValue()
	s.Items = nil
	features, _ := handoff.Get("features")
	for _, list := range ItemLists {
		h, _ := features.Get(list)
		items, _ := h.Get("items")
		var keys []string
		for _, it := range items.Elems() {
			k, _ := it.Get("key")
			if str, ok := k.Str(); ok {
				keys = append(keys, str)
			}
		}
		s.setItems(list, keys)
	}
	s.Seen, s.HeldMS = max(s.Seen, seen), 0
	s.Changes = max(s.Changes, s.Seen)
	s.Refresh = s.Session == "check_again" && !refreshed
	return s.Refresh
}

// Covers takes in seen, the notifications the host has seen now (its own
// count: a host may coalesce notifications before it tells the engine of
// them), and reports whether the newest record covers every one of them.
// Before the first check there is nothing to re-check: the session has no
// connection to observe, and every use is refused.
func (s *State) Covers(seen int64) bool {
	s.Changes = max(s.Changes, seen)
	return s.Record.IsNull() || !s.Stale()
}

// Tell takes in the would of a new record and reports whether it is one
// not told yet (a person is told once for each distinct would: a storm of
// re-checks that find the same change must not repeat it).
func (s *State) Tell(would canon.Value) bool {
	if would.IsNull() {
		return false
	}
	key := string(canon.Canonical(would))
	if key == s.Told {
		return false
	}
	s.Told = key
	return true
}

// NotHeld takes in the names of tools a host's framework could not hold
// and answers those not said before, sorted. Only tools the newest record
// lists are taken in, and only those are kept: a server renaming its tools
// at every re-check cannot grow the state past one record's tools (a tool
// that leaves and comes back is said again).
func (s *State) NotHeld(names []string) []string {
	tools, _ := s.Record.Get("tools")
	listed := func(n string) bool { return tools.Kind() == canon.Object && tools.Has(n) }
	kept := s.Unheld[:0:0]
	for _, n := range s.Unheld {
		if listed(n) {
			kept = append(kept, n)
		}
	}
	s.Unheld = kept
	var fresh []string
	for _, n := range names {
		if _, found := slices.BinarySearch(s.Unheld, n); !found && listed(n) && !slices.Contains(fresh, n) {
			fresh = append(fresh, n)
		}
	}
	// sorting.Strings, not slices.Sort: one copy of the sort code in the
	// wasm module for every shape (core/internal/sorting).
	sorting.Strings(fresh)
	s.Unheld = append(s.Unheld, fresh...)
	sorting.Strings(s.Unheld)
	return fresh
}

// CallAllowed reports whether a tools/call of name may reach the server:
// the newest handoff proceeds and lists it (observe mode: any name).
func (s *State) CallAllowed(name string) bool {
	return s.Session == "proceed" && (s.Unlisted || slices.Contains(s.Names, name))
}

// ItemLists are the lists of the handoff's features whose items a call
// reaches: prompts/get names a prompt, resources/read a resource's uri,
// and completion/complete a prompt (ref/prompt) or a resource template's
// uriTemplate or a resource's uri (ref/resource).
var ItemLists = []string{"prompts", "resources", "resource_templates"}

// setItems keeps the keys of list, sorted and without a repeat; a list
// with none is not kept (nothing of it may be read).
func (s *State) setItems(list string, keys []string) {
	if len(keys) == 0 {
		return
	}
	sorting.Strings(keys)
	if s.Items == nil {
		s.Items = map[string][]string{}
	}
	s.Items[list] = slices.Compact(keys)
}

// ItemAllowed reports whether a request reaching key of list (ItemLists)
// may reach the server: the newest handoff proceeds and hands that item
// over, by its exact key. A
// URI that only a handed resource template matches is not handed over: no
// host matched URIs to templates, and the core does not either
// (docs/decisions.md, Issue 33 (engine, item calls)). In observe mode
// (Unlisted: the handoff lets a tools/call of a name the list did not
// offer through) an item not handed over goes through too: observe
// withholds nothing, not a prompt the list did not offer nor a resource a
// template's URI reaches.
func (s *State) ItemAllowed(list, key string) bool {
	_, found := slices.BinarySearch(s.Items[list], key)
	return s.Session == "proceed" && (found || s.Unlisted)
}

// Value is the state as the canonical object the host keeps. items is
// written only when the handoff hands some prompt, resource or template
// over: a session without them keeps the state it had before items were
// kept.
func (s *State) Value() canon.Value {
	var items []canon.Member
	for _, list := range ItemLists {
		if keys := s.Items[list]; len(keys) > 0 {
			items = append(items, canon.M(list, canon.Strs(keys)))
		}
	}
	var opt []canon.Member
	if len(items) > 0 {
		opt = append(opt, canon.M("items", Obj(items...)))
	}
	v := Obj(append(opt,
		canon.M("kind", canon.Str(Kind)),
		canon.M("v", canon.Int(Version)),
		canon.M("record", s.Record),
		canon.M("session", canon.StrOrNull(s.Session, s.Session != "")),
		canon.M("calls", Obj(canon.M("names", canon.Strs(s.Names)), canon.M("unlisted", canon.BoolOf(s.Unlisted)))),
		canon.M("changes", canon.Int(s.Changes)),
		canon.M("seen", canon.Int(s.Seen)),
		canon.M("refresh", canon.BoolOf(s.Refresh)),
		canon.M("unheld", canon.Strs(s.Unheld)),
		canon.M("told", canon.StrOrNull(s.Told, s.Told != "")),
		canon.M("held_ms", canon.Int(s.HeldMS)),
		canon.M("pace", Obj(
			canon.M("last_ms", intOrNull(s.LastMS)),
			canon.M("wait_ms", canon.Int(s.WaitMS)),
			canon.M("due_ms", intOrNull(s.DueMS)),
			canon.M("hold_ms", canon.Int(s.HoldMS)),
		)),
	)...)
	if s.Walk != nil {
		v = With(v, nil, canon.M("walk", s.Walk.value()))
	}
	return v
}

func intOrNull(n int64) canon.Value {
	if n < 0 {
		return canon.NullValue()
	}
	return canon.Int(n)
}

// Parse reads a state the core wrote; path names it in errors. A state is
// the host's to keep, not to write: one that is not this version's, or
// misses a member, is a bad_request.
func Parse(v canon.Value, path string) (State, error) {
	bad := func(what string) (State, error) {
		return State{}, cerr.New(cerr.BadRequest, "%s is not a session state the core wrote: %s", path, what)
	}
	if v.Kind() != canon.Object {
		return bad("not an object")
	}
	if k, _ := member(v, "kind").Str(); k != Kind {
		return bad("kind")
	}
	if n, ok := Int(member(v, "v")); !ok || n != Version {
		return bad("v is not " + strconv.Itoa(Version))
	}
	s := State{Record: member(v, "record")}
	if !s.Record.IsNull() && s.Record.Kind() != canon.Object {
		return bad("record")
	}
	sess := member(v, "session")
	if !sess.IsNull() {
		var ok bool
		if s.Session, ok = sess.Str(); !ok {
			return bad("session")
		}
	}
	calls := member(v, "calls")
	for _, n := range member(calls, "names").Elems() {
		str, ok := n.Str()
		if !ok {
			return bad("calls.names")
		}
		s.Names = append(s.Names, str)
	}
	var ok bool
	if s.Unlisted, ok = member(calls, "unlisted").BoolValue(); !ok {
		return bad("calls.unlisted")
	}
	if items, has := v.Get("items"); has {
		if items.Kind() != canon.Object {
			return bad("items")
		}
		for _, m := range items.Members() {
			if !slices.Contains(ItemLists, m.Key) || m.Value.Kind() != canon.Array {
				return bad("items." + m.Key)
			}
			var keys []string
			for _, k := range m.Value.Elems() {
				str, ok := k.Str()
				if !ok {
					return bad("items." + m.Key)
				}
				keys = append(keys, str)
			}
			s.setItems(m.Key, keys)
		}
	}
	if s.Refresh, ok = member(v, "refresh").BoolValue(); !ok {
		return bad("refresh")
	}
	if told := member(v, "told"); !told.IsNull() {
		if s.Told, ok = told.Str(); !ok {
			return bad("told")
		}
	}
	for _, n := range member(v, "unheld").Elems() {
		str, ok := n.Str()
		if !ok {
			return bad("unheld")
		}
		s.Unheld = append(s.Unheld, str)
	}
	walk, err := parseWalk(member(v, "walk"))
	if err != nil {
		return State{}, err
	}
	s.Walk = walk
	pace := member(v, "pace")
	for _, f := range []struct {
		v        canon.Value
		into     *int64
		nullable bool
		name     string
	}{
		{member(v, "changes"), &s.Changes, false, "changes"},
		{member(v, "seen"), &s.Seen, false, "seen"},
		{member(v, "held_ms"), &s.HeldMS, false, "held_ms"},
		{member(pace, "last_ms"), &s.LastMS, true, "pace.last_ms"},
		{member(pace, "wait_ms"), &s.WaitMS, false, "pace.wait_ms"},
		{member(pace, "due_ms"), &s.DueMS, true, "pace.due_ms"},
		{member(pace, "hold_ms"), &s.HoldMS, false, "pace.hold_ms"},
	} {
		if f.nullable && f.v.IsNull() {
			*f.into = -1
			continue
		}
		n, ok := Int(f.v)
		if !ok {
			return bad(f.name)
		}
		*f.into = n
	}
	return s, nil
}

func member(v canon.Value, k string) canon.Value {
	m, _ := v.Get(k)
	return m
}

// Int reads a non-negative integer no larger than 2^53 (what every host's
// JSON numbers hold exactly).
func Int(v canon.Value) (int64, bool) {
	t, ok := v.NumberText()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	return n, err == nil && n >= 0 && n <= 1<<53
}

// Obj is canon.Obj with its members sorted as RFC 8785 writes them (the
// builders keep members in the order given).
func Obj(ms ...canon.Member) canon.Value {
	slices.SortFunc(ms, func(a, b canon.Member) int { return canon.CompareKeys(a.Key, b.Key) })
	return canon.Obj(ms...)
}

// With is object v with the members ms set (added or replaced) and the
// members named by drop removed.
func With(v canon.Value, drop []string, ms ...canon.Member) canon.Value {
	out := []canon.Member{}
next:
	for _, m := range v.Members() {
		if slices.Contains(drop, m.Key) {
			continue
		}
		for _, n := range ms {
			if n.Key == m.Key {
				continue next
			}
		}
		out = append(out, m)
	}
	return Obj(append(out, ms...)...)
}

// WithoutUnreadableDirectory is the check request again after the core
// refused the issuer's live key directory (issuer_keys_invalid): the
// directory is the issuer's garbage, not the deployment's mistake, so the
// check goes on without it, the pins alone judging the baseline, and the
// record says the issuer failed at the step key_directory with fault
// (keys_invalid, or response_malformed for one that is not a JSON object,
// in the core's words). ok is false when the request named no fetched
// directory or no issuer: the error is then the deployment's.
func WithoutUnreadableDirectory(check canon.Value, fault string) (canon.Value, bool) {
	issuer, hasIssuer := check.Get("issuer")
	dir, hasDir := check.Get("fetched_key_directory")
	if !hasIssuer || issuer.IsNull() || !hasDir || dir.IsNull() {
		return canon.Value{}, false
	}
	url, _ := issuer.Get("url")
	trace := Obj(canon.M("url", url), canon.M("step", canon.Str("key_directory")), canon.M("fault", canon.Str(fault)))
	return With(check, []string{"fetched_key_directory"}, canon.M("issuer", trace)), true
}

// failureMembers are the observed members that say why a capture failed;
// an observation rewritten as pages_over_cap keeps none of the old
// failure's but resource_metadata, as every host's over-cap rewrite did.
var failureMembers = []string{"pages", "page_cap_reached", "failure_detail", "timeout_ms", "failure_command", "exit_status", "stderr_tail"}

// OverCap is the observation of n pages no check can carry: the fault
// pages_over_cap at tools/list page n (the core words it), the pages
// dropped. A check always leaves a record: the server's pages being too
// large for one is the server's doing, recorded as nothing compared.
func OverCap(observed canon.Value, n int64) canon.Value {
	return With(observed, failureMembers,
		canon.M("failure", canon.Str("pages_over_cap")),
		canon.M("failure_at", canon.Str("tools/list")),
		canon.M("failure_page", canon.Int(n)))
}

// NoteSize reads the tree size of a checkpoint note (its second line),
// only to say which consistency proof to ask for: the core's log check
// verifies the checkpoint, the size and the proof. A size is decimal digits
// without a leading zero, at most 2^53 (every host's JSON numbers hold it
// exactly); another line is no size, and no proof is asked for.
func NoteSize(note string) (int64, bool) {
	lines := strings.SplitN(note, "\n", 3)
	if len(lines) < 3 || lines[1] == "" || len(lines[1]) > 16 || len(lines[1]) > 1 && lines[1][0] == '0' {
		return 0, false
	}
	for _, c := range lines[1] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	return n, err == nil && n <= 1<<53
}

// ProofSize is the tree size of the checkpoint a tlog-proof carries after
// its blank line.
func ProofSize(proof string) (int64, bool) {
	_, note, _ := strings.Cut(proof, "\n\n")
	return NoteSize(note)
}
