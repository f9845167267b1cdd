// Package report builds the weekly report of a record log (issue 20, docs/report.md):
// checks per day by effect, observations by class, the changes the agents
// met against what the issuer's registry sweep saw on their servers, the
// changed tools with their diffs and the scan of their new text, the
// policy exceptions and their expiry, and how many records an operator
// would call actionable.
//
// The report is computed once, here, as a Report (its JSON is what
// `GET /api/v1/pilot/{id}/report` answers with Accept: application/json),
// and the HTML is drawn from that value alone (HTML), so the issuer and
// `crawlcheck report` show the same numbers from the same rule. Every
// decision about a record (its chain, the rules' classes, the scan) is the
// core's; this package counts.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/timefmt"
	"github.com/crawlcheck/verifier/internal/corecall"
)

// Kind and Version name the JSON report's format.
const (
	Kind    = "crawlcheck-weekly-report"
	Version = 1
)

// MaxChanges bounds the changes listed (each with its diff and scan): a
// report is read by a person, and a server that changes every tool every
// hour would otherwise make it unbounded. The counts stay whole.
const MaxChanges = 200

// Input is what a report is built from.
type Input struct {
	// Week is an ISO week, "2026-W48"; "" is the week of the newest record.
	Week string
	// Records is a record log: JSON lines, each a continuity record.
	Records []byte
	// Parts, instead of Records, gives the log in parts, each whole lines,
	// to each in turn, and may be called more than once (Build reads the
	// log twice without a Week): a log read from a store a page at a time,
	// so that only a part of it is held at once (issue 37, F4/F5).
	Parts func(each func(part []byte) error) error
	// After, when set, is the record_sha256 the first record follows: the
	// log is the tail of a longer chain (a pilot's records since a date).
	After string
	// Tail says the log is the tail of a chain whose first record was
	// verified where it was received: its chain is checked from the record
	// the first record names (After read from the log itself).
	Tail bool
	// Pilot is the pilot's id on the issuer; "" for a report built offline.
	Pilot string
	// Sweep is what the issuer's registry sweep saw change on the pilot's
	// servers that week; Swept false (offline) means there was no sweep to
	// ask, which the report says rather than showing none.
	Sweep []SweepChange
	Swept bool
	// Cut says the log is the first part of what there was: the issuer read
	// at most its bound of a pilot's records and more were stored. The
	// report says so (records_cut) rather than counting a part as the week.
	Cut bool
}

// SweepChange is one change the registry sweep recorded on a server.
type SweepChange struct {
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Observation string          `json:"observation"`
	SeenAt      string          `json:"seen_at"`
	Diff        json.RawMessage `json:"diff,omitempty"`
	Scan        json.RawMessage `json:"scan,omitempty"`
}

// Report is the weekly report.
type Report struct {
	Kind         string          `json:"kind"`
	V            int             `json:"v"`
	Week         string          `json:"week"`
	From         string          `json:"from"`
	To           string          `json:"to"`
	Pilot        *string         `json:"pilot"`
	Chain        Chain           `json:"chain"`
	Records      int             `json:"records"`
	RecordsCut   bool            `json:"records_cut"`
	Unreadable   int             `json:"unreadable"`
	Actionable   int             `json:"actionable"`
	Effects      []string        `json:"effects"`
	Days         []Day           `json:"days"`
	Observations []ObsCount      `json:"observations"`
	Servers      []Server        `json:"servers"`
	Changes      []Change        `json:"changes"`
	ChangesCut   int             `json:"changes_cut"`
	Sweep        *Sweep          `json:"sweep"`
	Exceptions   []ExceptionSeen `json:"exceptions"`
	RulesSHA256  string          `json:"rules_sha256"`

	// met is each server and tool a change was met on (tool "": the
	// server's instructions), all of them, where Changes is cut: what Join
	// reads.
	met map[[2]string]bool
}

// Chain is the core's verify_chain answer on the whole log, asked of it
// in parts (Chain.verify).
type Chain struct {
	Valid    bool   `json:"valid"`
	Count    int    `json:"count"`
	BrokenAt *int   `json:"broken_at"`
	Reason   string `json:"reason"`
	Head     string `json:"head"`
	TornTail bool   `json:"torn_tail"`
}

// chainChunkBytes is about how many of the log's bytes one verify_chain
// request carries when Build is given the log whole (Records): whole
// lines, at least one.
var chainChunkBytes = 256 << 10

// partsOf hands log to each in parts of about chainChunkBytes, whole lines.
func partsOf(log []byte, each func([]byte) error) error {
	for len(log) > 0 {
		n := min(chainChunkBytes, len(log))
		if i := bytes.IndexByte(log[n-1:], '\n'); i >= 0 {
			n += i
		} else {
			n = len(log)
		}
		if err := each(log[:n]); err != nil {
			return err
		}
		log = log[n:]
	}
	return nil
}

// chainCheck asks the core's verify_chain of a log a part at a time, every
// part anchored after the head the part before it ended on (after, for
// the first), and sums the answers into c: the chain of the whole log, as
// one request over all of it would have it. One request needed the whole
// log at once; a part is let go before the next is asked (issue 37,
// F4/F5). A part that breaks ends the check: broken_at counts from the
// log's first record, and the reason's "line N" names the log's line. Only
// the last part can end without its newline, so a torn tail is still only
// ever the log's last line.
type chainCheck struct {
	c     *Chain
	after string
	tail  bool
	done  bool
}

func (k *chainCheck) part(part []byte) error {
	if k.done || len(part) == 0 {
		return nil
	}
	if k.tail && k.c.Count == 0 && k.after == "" {
		first, _, _ := bytes.Cut(part, []byte("\n"))
		var rec struct {
			Prev *string `json:"prev_record_sha256"`
		}
		if json.Unmarshal(first, &rec) == nil && rec.Prev != nil {
			k.after = *rec.Prev
		}
	}
	k.tail = false
	req := map[string]any{"records": corecall.Text(part)}
	if k.after != "" {
		req["after"] = k.after
	}
	var p Chain
	if err := corecall.Into("verify_chain", req, &p); err != nil {
		return fmt.Errorf("report: verifying the record log's chain: %w", err)
	}
	c := k.c
	c.Head, k.after = p.Head, p.Head
	c.TornTail = p.TornTail
	if !p.Valid {
		at := c.Count + *p.BrokenAt
		c.Valid, c.BrokenAt, c.Reason = false, &at, renumber(p.Reason, c.Count)
		k.done = true
	}
	c.Count += p.Count
	return nil
}

// renumber moves the core's "line N: " at the start of a part's reason by
// the lines of the log before the part, so that it names the log's line.
func renumber(reason string, before int) string {
	num, rest, ok := strings.Cut(strings.TrimPrefix(reason, "line "), ": ")
	n, err := strconv.Atoi(num)
	if !strings.HasPrefix(reason, "line ") || !ok || err != nil {
		return reason
	}
	return "line " + strconv.Itoa(n+before) + ": " + rest
}

// Day is one day's checks by the effect enforce gives them.
type Day struct {
	Date    string         `json:"date"`
	Checks  int            `json:"checks"`
	Effects map[string]int `json:"effects"`
}

// ObsCount is how often one observation was recorded that week.
type ObsCount struct {
	Observation string `json:"observation"`
	Class       string `json:"class"`
	Count       int    `json:"count"`
}

// Server is one endpoint the agents checked.
type Server struct {
	URL        string `json:"url"`
	Checks     int    `json:"checks"`
	Actionable int    `json:"actionable"`
}

// Change is one change the agents met: a tool observation other than
// unchanged, or the server's instructions rewritten (instructions_changed,
// Tool ""), grouped by server, tool, observation and part.
type Change struct {
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Observation string          `json:"observation"`
	Part        string          `json:"part"`
	Effect      string          `json:"effect"`
	FirstMet    string          `json:"first_met"`
	LastMet     string          `json:"last_met"`
	Records     int             `json:"records"`
	Record      string          `json:"record_sha256"`
	Diff        json.RawMessage `json:"diff"`
	// Scanned says what Scan covers: "description" or "instructions", the
	// new side of Diff; "" when the record carries no text to scan.
	Scanned string          `json:"scanned"`
	Scan    json.RawMessage `json:"scan"`
	// SeenBySweep is whether the sweep saw this change too (for an
	// instructions change, an instructions change on that server); nil
	// offline.
	SeenBySweep *bool `json:"seen_by_sweep"`
}

// Sweep is the sweep's side of the join.
type Sweep struct {
	Changes int `json:"changes"`
	// Unchecked are the changes the sweep saw on the agents' servers that
	// no agent's check met that week (at most MaxChanges; UncheckedCut
	// says how many more).
	Unchecked    []SweepChange `json:"unchecked"`
	UncheckedCut int           `json:"unchecked_cut"`
}

// ExceptionSeen is one policy exception the week's records named.
type ExceptionSeen struct {
	Observation string `json:"observation"`
	Tool        string `json:"tool"`
	SHA256      string `json:"sha256"`
	Until       string `json:"until"`
	ApprovedBy  string `json:"approved_by"`
	Reason      string `json:"reason"`
	Applied     int    `json:"applied"`
	Expired     int    `json:"expired"`
	// ExpiresInDays is from the end of the week to until (negative: gone).
	ExpiresInDays int `json:"expires_in_days"`
}

// record is what the report reads of a continuity record.
type record struct {
	SHA256    string `json:"record_sha256"`
	CheckedAt string `json:"checked_at"`
	Mode      string `json:"mode"`
	Effect    string `json:"effect"`
	Would     *struct {
		Effect string `json:"effect"`
	} `json:"would"`
	Server struct {
		ApprovedURL *string `json:"approved_url"`
		ObservedURL *string `json:"observed_url"`
	} `json:"server"`
	Observations []struct {
		Observation string `json:"observation"`
		Tool        string `json:"tool"`
		Part        string `json:"part"`
		Effect      string `json:"effect"`
		Would       string `json:"would"`
		Detail      struct {
			DescriptionDiff  json.RawMessage `json:"description_diff"`
			InstructionsDiff json.RawMessage `json:"instructions_diff"`
		} `json:"detail"`
	} `json:"observations"`
	Exceptions struct {
		Applied []exception `json:"applied"`
		Expired []exception `json:"expired"`
	} `json:"exceptions"`
	Engine struct {
		RulesSHA256 string `json:"rules_sha256"`
	} `json:"engine"`
}

type exception struct {
	Observation string `json:"observation"`
	Tool        string `json:"tool"`
	SHA256      string `json:"sha256"`
	Until       string `json:"until"`
	ApprovedBy  string `json:"approved_by"`
	Reason      string `json:"reason"`
}

// ParseWeek reads an ISO 8601 week, "2026-W48", and answers its Monday at
// 00:00 UTC.
func ParseWeek(s string) (time.Time, error) {
	y, w, ok := strings.Cut(s, "-W")
	year, err1 := strconv.Atoi(y)
	week, err2 := strconv.Atoi(w)
	if !ok || err1 != nil || err2 != nil || len(y) != 4 || len(w) != 2 || week < 1 || week > 53 {
		return time.Time{}, fmt.Errorf("week %q: want an ISO week, YYYY-Www (2026-W48)", s)
	}
	// January 4th is always in week 1.
	jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	start := monday.AddDate(0, 0, 7*(week-1))
	if gy, gw := start.ISOWeek(); gy != year || gw != week {
		return time.Time{}, fmt.Errorf("week %q: %d has no week %d", s, year, week)
	}
	return start, nil
}

// WeekOf is the ISO week of t, "2026-W48".
func WeekOf(t time.Time) string {
	y, w := t.UTC().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

// enforceEffect is the effect a record's check has under enforce: what it
// did, or in observe mode what it would have done.
func enforceEffect(effect string, would string) string {
	if would != "" {
		return would
	}
	return effect
}

// actionable says whether an operator has something to do about a record:
// enforce withholds a tool or stops the session. A refresh is not, by
// itself: its re-check is the record that says.
func actionable(effect string) bool {
	return effect == "pause_tool" || effect == "pause" || effect == "deny"
}

// Build computes the report.
func Build(in Input) (*Report, error) {
	var rules struct {
		Rules struct {
			Effects      []string `json:"effects"`
			Observations []struct {
				Observation string `json:"observation"`
				Class       string `json:"class"`
			} `json:"observations"`
		} `json:"rules"`
		RulesSHA256 string `json:"rules_sha256"`
	}
	if err := corecall.Into("rules", map[string]any{}, &rules); err != nil {
		return nil, fmt.Errorf("report: the core's rules: %w", err)
	}
	class := map[string]string{}
	for _, o := range rules.Rules.Observations {
		class[o.Observation] = o.Class
	}

	r := &Report{Kind: Kind, V: Version, Effects: rules.Rules.Effects, RulesSHA256: rules.RulesSHA256,
		Days: []Day{}, Observations: []ObsCount{}, Servers: []Server{}, Changes: []Change{}, Exceptions: []ExceptionSeen{}}
	if in.Pilot != "" {
		r.Pilot = &in.Pilot
	}
	r.RecordsCut = in.Cut
	parts := in.Parts
	if parts == nil {
		parts = func(each func([]byte) error) error { return partsOf(in.Records, each) }
	}
	// The records are read one at a time, each aggregated into the week's
	// counts and let go before the next is decoded, and the log a part at a
	// time, each part's chain checked before its records are read (issue
	// 37, F4/F5: the issuer's reports decoded all of a pilot's records at
	// once, and held them all). Without a week the log is read twice: once
	// for its newest record's week.
	records := func(chain *chainCheck, take func(record)) (int, error) {
		unreadable := 0
		err := parts(func(part []byte) error {
			if chain != nil {
				if err := chain.part(part); err != nil {
					return err
				}
			}
			for line := range bytes.Lines(part) {
				line = bytes.TrimRight(line, "\r\n")
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				var rec record
				if err := json.Unmarshal(line, &rec); err != nil {
					unreadable++
					continue
				}
				if _, err := timefmt.Parse(rec.CheckedAt); err != nil {
					unreadable++
					continue
				}
				take(rec)
			}
			return nil
		})
		return unreadable, err
	}

	week := in.Week
	if week == "" {
		var newest time.Time
		if _, err := records(nil, func(rec record) {
			if t, _ := timefmt.Parse(rec.CheckedAt); t.After(newest) {
				newest = t
			}
		}); err != nil {
			return nil, err
		}
		if newest.IsZero() {
			return nil, errors.New("report: the log holds no record to name a week by: give the week")
		}
		week = WeekOf(newest)
	}
	from, err := ParseWeek(week)
	if err != nil {
		return nil, err
	}
	to := from.AddDate(0, 0, 7)
	r.Week, r.From, r.To = week, timefmt.Format(from), timefmt.Format(to)

	for d := range 7 {
		r.Days = append(r.Days, Day{Date: from.AddDate(0, 0, d).Format("2006-01-02"), Effects: map[string]int{}})
	}
	obs := map[string]int{}
	servers := map[string]*Server{}
	type changeKey struct{ server, tool, observation, part string }
	changes := map[changeKey]*Change{}
	type excKey struct{ observation, tool, sha256, until string }
	excs := map[excKey]*ExceptionSeen{}
	met := map[[2]string]bool{} // server, tool: a change met
	chain := &chainCheck{c: &r.Chain, after: in.After, tail: in.Tail}
	*chain.c = Chain{Valid: true}
	r.Unreadable, err = records(chain, func(rec record) {
		t, _ := timefmt.Parse(rec.CheckedAt)
		if t.Before(from) || !t.Before(to) {
			return
		}
		r.Records++
		would := ""
		if rec.Would != nil {
			would = rec.Would.Effect
		}
		eff := enforceEffect(rec.Effect, would)
		day := &r.Days[int(t.Sub(from)/(24*time.Hour))]
		day.Checks++
		day.Effects[eff]++
		url := serverOf(rec)
		s := servers[url]
		if s == nil {
			s = &Server{URL: url}
			servers[url] = s
		}
		s.Checks++
		if actionable(eff) {
			r.Actionable++
			s.Actionable++
		}
		for _, o := range rec.Observations {
			obs[o.Observation]++
			// The one change not of a tool: the server's instructions,
			// which the model reads beside every tool.
			instructions := o.Observation == "instructions_changed"
			if o.Tool == "" && !instructions || o.Observation == "unchanged" {
				continue
			}
			k := changeKey{url, o.Tool, o.Observation, o.Part}
			c := changes[k]
			if c == nil {
				c = &Change{Server: url, Tool: o.Tool, Observation: o.Observation, Part: o.Part, FirstMet: rec.CheckedAt, Record: rec.SHA256}
				switch {
				case instructions && len(o.Detail.InstructionsDiff) > 0:
					c.Diff, c.Scanned = o.Detail.InstructionsDiff, "instructions"
				case !instructions && len(o.Detail.DescriptionDiff) > 0:
					c.Diff, c.Scanned = o.Detail.DescriptionDiff, "description"
				}
				changes[k] = c
			}
			c.Records++
			c.LastMet = rec.CheckedAt
			c.Effect = strongest(rules.Rules.Effects, c.Effect, enforceEffect(o.Effect, o.Would))
			// Keyed by tool: "" is the server's instructions.
			met[[2]string{url, o.Tool}] = true
		}
		for _, list := range []struct {
			es      []exception
			applied bool
		}{{rec.Exceptions.Applied, true}, {rec.Exceptions.Expired, false}} {
			for _, e := range list.es {
				k := excKey{e.Observation, e.Tool, e.SHA256, e.Until}
				x := excs[k]
				if x == nil {
					x = &ExceptionSeen{Observation: e.Observation, Tool: e.Tool, SHA256: e.SHA256, Until: e.Until, ApprovedBy: e.ApprovedBy, Reason: e.Reason}
					if u, err := timefmt.Parse(e.Until); err == nil {
						x.ExpiresInDays = int(u.Sub(to).Hours() / 24)
						if u.Before(to) && u.Sub(to)%(24*time.Hour) != 0 {
							x.ExpiresInDays-- // rounded down: a day not whole is gone
						}
					}
					excs[k] = x
				}
				if list.applied {
					x.Applied++
				} else {
					x.Expired++
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}

	for name, n := range obs {
		r.Observations = append(r.Observations, ObsCount{Observation: name, Class: class[name], Count: n})
	}
	sort.Slice(r.Observations, func(i, j int) bool {
		a, b := r.Observations[i], r.Observations[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Observation < b.Observation
	})
	for _, s := range servers {
		r.Servers = append(r.Servers, *s)
	}
	sort.Slice(r.Servers, func(i, j int) bool { return r.Servers[i].URL < r.Servers[j].URL })
	for _, c := range changes {
		r.Changes = append(r.Changes, *c)
	}
	sort.Slice(r.Changes, func(i, j int) bool {
		a, b := r.Changes[i], r.Changes[j]
		if a.FirstMet != b.FirstMet {
			return a.FirstMet < b.FirstMet
		}
		return a.Server+"\x00"+a.Tool+"\x00"+a.Observation+"\x00"+a.Part < b.Server+"\x00"+b.Tool+"\x00"+b.Observation+"\x00"+b.Part
	})
	if len(r.Changes) > MaxChanges {
		r.ChangesCut = len(r.Changes) - MaxChanges
		r.Changes = r.Changes[:MaxChanges]
	}
	for i := range r.Changes {
		if err := r.Changes[i].scan(); err != nil {
			return nil, err
		}
	}
	for _, x := range excs {
		r.Exceptions = append(r.Exceptions, *x)
	}
	sort.Slice(r.Exceptions, func(i, j int) bool {
		a, b := r.Exceptions[i], r.Exceptions[j]
		if a.Until != b.Until {
			return a.Until < b.Until
		}
		return a.Tool+"\x00"+a.Observation+"\x00"+a.SHA256 < b.Tool+"\x00"+b.Observation+"\x00"+b.SHA256
	})
	r.met = met
	if in.Swept {
		r.Join(in.Sweep)
	}
	return r, nil
}

// Join puts the sweep beside the agents' checks: each change met says
// whether the sweep saw it, and the sweep's changes on the agents' servers
// (Servers: those the week's records name) that no check met are listed.
// The issuer joins after Build, reading the sweep of the servers the
// report names alone, one at a time.
func (r *Report) Join(sweep []SweepChange) {
	met := r.met
	seen := map[[2]string]bool{}
	sw := &Sweep{Unchecked: []SweepChange{}}
	for _, c := range sweep {
		if _, ours := slices.BinarySearchFunc(r.Servers, c.Server, func(s Server, u string) int { return strings.Compare(s.URL, u) }); !ours {
			continue
		}
		sw.Changes++
		seen[[2]string{c.Server, c.Tool}] = true
		switch {
		case met[[2]string{c.Server, c.Tool}]:
		case len(sw.Unchecked) < MaxChanges:
			sw.Unchecked = append(sw.Unchecked, c)
		default:
			sw.UncheckedCut++
		}
	}
	for i := range r.Changes {
		v := seen[[2]string{r.Changes[i].Server, r.Changes[i].Tool}]
		r.Changes[i].SeenBySweep = &v
	}
	r.Sweep = sw
}

// serverOf names the endpoint a record is about: the approved one, else the
// one that answered.
func serverOf(rec record) string {
	switch {
	case rec.Server.ApprovedURL != nil && *rec.Server.ApprovedURL != "":
		return *rec.Server.ApprovedURL
	case rec.Server.ObservedURL != nil:
		return *rec.Server.ObservedURL
	}
	return ""
}

// strongest is the stronger of two effects in the rules' order.
func strongest(order []string, a, b string) string {
	if slices.Index(order, b) > slices.Index(order, a) {
		return b
	}
	return a
}

// scan runs the core's approval scan on the new side of the change's diff
// (its kept and inserted words): the description or the instructions as
// the model was about to read them. A change without a diff has no new text
// in the record to scan.
func (c *Change) scan() error {
	if c.Scanned == "" {
		return nil
	}
	var ops []struct {
		Op   string `json:"op"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c.Diff, &ops); err != nil {
		return fmt.Errorf("report: the %s diff of %q in record %s: %w", c.Scanned, c.Tool, c.Record, err)
	}
	var words []string
	for _, o := range ops {
		if o.Op != "delete" {
			words = append(words, o.Text)
		}
	}
	text := strings.Join(words, " ")
	req := map[string]any{"tools": []any{}, "instructions": text}
	if c.Scanned == "description" {
		req = map[string]any{"tools": []any{map[string]any{"name": c.Tool, "description": text, "inputSchema": map[string]any{"type": "object"}}}}
	}
	res, err := corecall.Call("scan", req)
	if err != nil {
		return fmt.Errorf("report: scanning the new %s of %q in record %s: %w", c.Scanned, c.Tool, c.Record, err)
	}
	c.Scan = res
	return nil
}

// JSON is the report as the issuer answers it: indented for a person, one
// trailing newline.
func (r *Report) JSON() []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic("report: " + err.Error()) // every member is a plain value
	}
	return append(b, '\n')
}
