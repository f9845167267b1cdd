package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// firstCheck runs the check the handshake's end starts.
func (g *Gateway) firstCheck() {
	g.mu.Lock()
	if g.started {
		g.mu.Unlock()
		return
	}
	g.started = true
	g.mu.Unlock()
	g.checkMu.Lock()
	g.subscribe(context.Background())
	g.recheck(context.Background())
	g.checkMu.Unlock()
	if g.cfg.Started != nil {
		g.cfg.Started()
	}
	close(g.checked)
}

// recheck observes the list through the session and checks it, with the
// one more check the session engine asks for after a refresh effect
// (check_again). Callers hold checkMu.
func (g *Gateway) recheck(ctx context.Context) {
	listed := time.Now()
	obs, seen := g.observe(ctx)
	if g.cutOffByEnding(obs) {
		return
	}
	rec, again, lock, err := g.check(obs, seen)
	if err == nil && again {
		listed = time.Now()
		obs, seen = g.observe(ctx)
		if g.cutOffByEnding(obs) {
			return
		}
		rec, _, lock, err = g.check(obs, seen)
	}
	var fresh time.Time
	if ttl := g.listTTL(obs); ttl > 0 {
		fresh = listed.Add(ttl)
	}
	g.adopt(rec, lock, err, seen, fresh)
}

// cutOffByEnding says whether a listing failed because the gateway is
// ending the server itself (the client left, or a signal came): that
// failure is the gateway's doing, not an observation of the server, so no
// record is made of it (a record would blame the server for an exit the
// gateway caused); stderr says so.
func (g *Gateway) cutOffByEnding(obs preflight.Observation) bool {
	if obs.Failure == "" || !g.ending.Load() {
		return false
	}
	g.say("the session ended while the server's tools were being listed: no record of that check (the gateway ended the server, not the server itself)")
	return true
}

// subscribe opens the gateway's own subscriptions/listen for list changes (tools,
// prompts, resources) on a 2026-07-28 session whose server announces them, and waits
// (within the check's deadline) for the server to acknowledge it before the
// first listing. Over that revision a server announces a change only on the
// subscriptions it holds: without one of its own the gateway would hear of
// a change only if the client subscribed, and only after it did, and keep
// judging calls by a list the server has changed. A server that answers the
// request with an error, or never acknowledges, is said on stderr, and the
// gateway goes on without (list_changed then comes only on the client's
// subscription; ttlMs still applies).
func (g *Gateway) subscribe(ctx context.Context) {
	g.mu.Lock()
	hs := g.hs
	g.mu.Unlock()
	listen := listenFor(hs.result)
	if hs.version < ttlVersion || len(listen) == 0 {
		return
	}
	id := g.idPrefix + "listen"
	params := map[string]any{"notifications": listen}
	if hs.meta != nil {
		params["_meta"] = hs.meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params})
	ch := make(chan []byte, 1)
	g.mu.Lock()
	g.listenID = id
	g.ours[id] = ch
	g.mu.Unlock()
	defer func() {
		// Its answer, when the server ends the subscription, is dropped.
		g.mu.Lock()
		delete(g.ours, id)
		g.mu.Unlock()
	}()
	if g.toServer(body) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	select {
	case <-g.listenAcked:
	case page := <-ch:
		g.say("the server did not open the gateway's subscriptions/listen (%s): its tool list changes reach the gateway only on the client's subscription", clip(page))
	case <-g.exitedCh:
	case <-ctx.Done():
		g.say("the server did not acknowledge the gateway's subscriptions/listen within %s", g.cfg.Timeout)
	}
}

// ownAck reports whether a notifications/subscriptions/acknowledged is for
// the gateway's own subscription, and notes it: its _meta names the
// gateway's request; or it names none and comes while the gateway waits
// for its own, before the first check has begun to list (the client has
// not had the handshake's answer then, so it cannot have subscribed).
func (g *Gateway) ownAck(params json.RawMessage) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.listenID == "" {
		return false
	}
	waiting := true
	select {
	case <-g.listenAcked:
		waiting = false
	default:
	}
	var named json.RawMessage
	if m, ok := strictMembers(params); ok {
		if meta, ok := strictMembers(m["_meta"]); ok {
			named = meta["io.modelcontextprotocol/subscriptionId"]
		}
	}
	if named != nil {
		if s, ok := jsonString(named); !ok || s != g.listenID {
			return false
		}
	} else if !waiting {
		return false
	}
	if waiting {
		close(g.listenAcked)
	}
	return true
}

// listenFor is the notifications member of the gateway's own
// subscriptions/listen: a change of each list a server/discover answer
// declares it announces (tools, prompts, resources: listChanged), since
// each is checked and handed over from the record. Empty when it declares
// none.
func listenFor(result json.RawMessage) map[string]any {
	type changes struct {
		ListChanged bool `json:"listChanged"`
	}
	var r struct {
		Capabilities struct {
			Tools, Prompts, Resources changes
		} `json:"capabilities"`
	}
	out := map[string]any{}
	if json.Unmarshal(result, &r) != nil {
		return out
	}
	for name, c := range map[string]changes{"toolsListChanged": r.Capabilities.Tools, "promptsListChanged": r.Capabilities.Prompts, "resourcesListChanged": r.Capabilities.Resources} {
		if c.ListChanged {
			out[name] = true
		}
	}
	return out
}

// ttlVersion is the first protocol revision whose list results carry
// ttlMs, the time the server says they stay fresh.
const ttlVersion = "2026-07-28"

// maxTTL bounds a ttlMs (a year): a larger one is a year.
const maxTTL = 365 * 24 * time.Hour

// listTTL is how long the listing obs stays fresh by the server's word, on
// a session of the 2026-07-28 revision or later: the shortest ttlMs of its
// pages (the revision's rule for a paged list). It is 0, no expiry, when
// the listing failed, when any page has no ttlMs or one that is not a
// non-negative integer, or when a page says 0 ("immediately stale"): the
// gateway does not list before every call, and learns of changes from the
// server's list_changed (docs/gateway.md, 2026-07-28 ttlMs).
func (g *Gateway) listTTL(obs preflight.Observation) time.Duration {
	if obs.Failure != "" || len(obs.Pages) == 0 || obs.ProtocolVersion < ttlVersion {
		return 0
	}
	least := maxTTL
	for _, page := range obs.Pages {
		var arr [8]member
		ms, ok := topMembers(page, arr[:0])
		if !ok {
			return 0
		}
		var ttl time.Duration = -1
		for _, m := range ms {
			if string(m.key) != "ttlMs" {
				continue
			}
			n, err := strconv.ParseInt(string(m.val), 10, 64)
			if err != nil || n < 0 {
				return 0
			}
			ttl = time.Duration(min(n, maxTTL.Milliseconds())) * time.Millisecond
		}
		if ttl <= 0 {
			return 0
		}
		least = min(least, ttl)
	}
	return least
}

// observe reads every tools/list page with the gateway's own requests,
// following nextCursor by the core's next_page rules, and resolves the
// package the server's command line launches, side by side within the
// check's deadline: the facts of preflight.Observation, from the bytes
// that came. A registry or index slow to answer costs the check no more
// than its deadline (it then resolves to nothing, and the core says what
// that means against the lockfile's pin), never a wait of its own before
// the listing, which the client's held handshake answer and calls await.
func (g *Gateway) observe(ctx context.Context) (preflight.Observation, int64) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	// The server has answered its handshake: npx has installed what it
	// runs (crawlcheck check reads it after its session too).
	resolved := make(chan json.RawMessage, 1)
	go func() { resolved <- g.launched(ctx) }()
	obs, seen := g.observeList(ctx)
	obs.Launched = <-resolved
	return obs, seen
}

// observeList is observe's listing.
func (g *Gateway) observeList(ctx context.Context) (preflight.Observation, int64) {
	seen := g.changes.Load()
	g.mu.Lock()
	hs := g.hs
	g.mu.Unlock()
	obs := preflight.Observation{Endpoint: g.endpoint, ClientCapabilities: hs.caps, StrayLines: int(g.skipped.Load())}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	obs.Timeout = g.cfg.Timeout
	// The session engine's walk (preflight.Walk): the handshake as the
	// client's session had it, then each page the engine asks for.
	w, err := preflight.BeginWalk(hs.method, hs.result, hs.version, g.cfg.PageCap, nil)
	for err == nil {
		cursor, more := w.Next()
		if !more {
			break
		}
		page, fault := g.ask(ctx, "tools/list", cursor, hs.meta)
		if fault != "" {
			f := preflight.Fault{Failure: fault, ResourceMetadata: g.metadataOf(fault)}
			if fault == preflight.FailureTooLarge {
				f.Detail = strconv.Itoa(g.cfg.MaxLine)
			}
			err = w.Fail(f)
			continue
		}
		if g.cfg.InputRead != nil && !g.isChecked() {
			// The first check's pages, read before Started is called; a
			// re-check runs only once checked is closed.
			g.cfg.InputRead(len(page))
		}
		err = w.Page(page)
	}
	if err != nil {
		// The core refused an event of the walk (a fault of this build):
		// recorded in its words, as the Go preflight records it.
		obs.Failure, obs.FailureDetail = preflight.FailureUnavailable, "the session engine refused the walk: "+err.Error()
		return obs, seen
	}
	w.Observe(&obs)
	// What the server offers beside its tools, read as the Go preflight
	// reads it (issue 35): the gateway answers these lists from the
	// handoff (features.go).
	if obs.Stop == preflight.StopListEnd {
		obs.Features = g.observeFeatures(ctx, hs, obs.Pages)
	}
	return obs, seen
}

// ask sends one request of the gateway's own to the server (an id the
// client cannot use) and waits for its answer: its page (the result's
// bytes, or the frame of an answer without one: preflight.PageOf's), or
// the fault that ended the wait (the Observation's codes).
func (g *Gateway) ask(ctx context.Context, method, cursor string, meta json.RawMessage) ([]byte, string) {
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	return g.askWith(ctx, method, params, meta)
}

// askWith is ask with the request's params (a resources/read's uri).
func (g *Gateway) askWith(ctx context.Context, method string, params map[string]any, meta json.RawMessage) ([]byte, string) {
	id := g.idPrefix + strconv.FormatInt(g.nextID.Add(1), 10)
	if meta != nil {
		// A 2026-07-28 session has no initialize: every request carries the
		// _meta the client's server/discover declared.
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	ch := make(chan []byte, 1)
	g.mu.Lock()
	exited := g.exited
	g.ours[id] = ch
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.ours, id)
		g.mu.Unlock()
	}()
	if exited || g.toServer(body) != nil {
		return nil, g.goneFault()
	}
	select {
	case frame := <-ch:
		if frame == nil {
			return nil, g.cutOff(id)
		}
		return frame, ""
	case <-g.exitedCh:
		return nil, g.goneFault()
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, preflight.FaultCancelled
		}
		return nil, preflight.FaultTimeout
	}
}

// check hands the session engine the check of obs (begun when seen
// notifications had arrived), chained to the log's newest record (under its
// file lock: another gateway may share the log) and appended; again is the
// engine's check_again; lock is the lockfile the record was checked
// against (a ui:// template is checked against its pin in it).
func (g *Gateway) check(obs preflight.Observation, seen int64) (preflight.Record, bool, []byte, error) {
	g.mu.Lock()
	req := preflight.Request{Settings: g.cfg.Settings, Lock: g.lock, Observation: obs, Now: g.cfg.Now(), PrevRecordSHA256: g.prev}
	g.mu.Unlock()
	var again bool
	step := func(prev string) (preflight.Record, error) {
		req.PrevRecordSHA256 = prev
		st, err := g.engine.Check(req, seen)
		if err != nil {
			return preflight.Record{}, err
		}
		again = st.CheckAgain
		return *st.Record, nil
	}
	if g.log == nil {
		rec, err := step(req.PrevRecordSHA256)
		if err == nil {
			g.mu.Lock()
			g.prev = rec.RecordSHA256
			g.mu.Unlock()
		}
		return rec, again, req.Lock, err
	}
	rec, err := g.log.AppendNext(step)
	return rec, again, req.Lock, err
}

// adopt makes rec the record the session follows, says its verdict, and
// tells the client when what it may see changed.
func (g *Gateway) adopt(rec preflight.Record, lock []byte, err error, seen int64, fresh time.Time) {
	g.mu.Lock()
	first := g.rec == nil && g.recErr == nil
	g.recErr = err
	if err == nil {
		g.rec, g.recLock, g.seen, g.fresh = &rec, lock, seen, fresh
	}
	vis := g.visibleLocked()
	changed := !first && vis != g.visible
	g.visible = vis
	featuresChanged := g.featuresVisibleLocked(first)
	level := g.logLevel
	g.mu.Unlock()
	if err != nil {
		line := "the check could not be made, every tool is withheld: " + textsafe.Escape(err.Error())
		g.say("%s", line)
		g.logNotify(level, "error", line)
	} else {
		line, severity := g.verdict(rec)
		g.say("%s", line)
		g.logNotify(level, severity, line)
		// Observe mode says once, in the core's words, what enforce would
		// have refused: the session engine's notice (again only when what
		// it would refuse changes).
		if rec.Handoff.Notice != "" {
			g.tell(rec.Handoff.Notice)
		}
	}
	if changed {
		g.toClient([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	}
	for _, n := range featuresChanged {
		g.toClient([]byte(`{"jsonrpc":"2.0","method":"` + n + `"}`))
	}
}

// visibleLocked is what the client may see and call, as one string.
func (g *Gateway) visibleLocked() string {
	if g.rec == nil || g.rec.Handoff == nil || g.rec.Handoff.Session != preflight.SessionProceed {
		return ""
	}
	var b strings.Builder
	for _, t := range g.rec.Handoff.Tools {
		b.WriteString(t.Tool)
		b.WriteByte(0)
	}
	return b.String()
}

// verdict is a record's one line: its effect, what was handed over, and
// the core's refusal for what was not.
func (g *Gateway) verdict(rec preflight.Record) (string, string) {
	h := rec.Handoff
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s mode): ", textsafe.Escape(rec.Effect), textsafe.Escape(rec.Mode))
	if h.Session != preflight.SessionProceed {
		b.WriteString("no tool handed over; " + (&preflight.RefusedError{Effect: rec.Effect, Record: rec}).Error())
		b.WriteString("; re-approve: " + g.approveCommand())
		return b.String(), "warning"
	}
	fmt.Fprintf(&b, "%d tools handed over", len(h.Tools))
	items := withheldItems(h)
	if len(h.Withheld) == 0 && len(items) == 0 {
		b.WriteString(" (record " + rec.RecordSHA256 + ")")
		return b.String(), "info"
	}
	for _, name := range h.Withheld {
		b.WriteString("; " + (&preflight.RefusedError{Tool: name, Effect: rec.Tools[name], Record: rec}).Error())
	}
	if len(h.Withheld) > 0 {
		b.WriteString("; re-approve: " + g.approveCommand())
	}
	if len(items) > 0 {
		b.WriteString("; " + g.itemsWithheld(rec, items))
	}
	return b.String(), "warning"
}

// withheldItems are the prompts, resources and resource templates the
// core's handoff withholds, each as its list and key ("prompts triage"),
// sorted.
func withheldItems(h *preflight.Handoff) []string {
	var out []string
	for list, l := range h.Features {
		for _, key := range l.Withheld {
			out = append(out, list+" "+key)
		}
	}
	slices.Sort(out)
	return out
}

// approveCommand is the command a person runs to re-approve.
func (g *Gateway) approveCommand() string {
	return "crawlcheck approve --lock " + shellWord(g.cfg.LockPath)
}

// shellWord quotes s for a POSIX shell when it needs it, escaped for
// showing.
func shellWord(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("@%+=:,./-_", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return textsafe.Escape("'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'")
}

// logLevels orders MCP's logging levels (RFC 5424's).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logNotify sends a verdict to the client as an MCP log message, when the
// client asked for messages at or below severity (logging/setLevel).
func (g *Gateway) logNotify(clientLevel, severity, line string) {
	if clientLevel == "" || slices.Index(logLevels, severity) < slices.Index(logLevels, clientLevel) {
		return
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
		"params": map[string]any{"level": severity, "logger": "crawlcheck", "data": "crawlcheck run: " + line}})
	g.toClient(body)
}

// current waits for the record the session is judged by: the first check
// (bounded by the check's deadline and a margin, from now), and a re-check
// at once when the server announced a change the record does not cover.
func (g *Gateway) current(ctx context.Context) (*preflight.Record, error) {
	if g.ready() {
		// Every call's path: no check due or running.
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.recErr != nil {
			return nil, g.recErr
		}
		return g.rec, nil
	}
	wait := time.NewTimer(g.cfg.Timeout + 5*time.Second)
	defer wait.Stop()
	select {
	case <-g.checked:
	case <-wait.C:
		return nil, fmt.Errorf("the check of the server's tools did not finish within %s (has the handshake been made?)", g.cfg.Timeout+5*time.Second)
	case <-g.exitedCh:
		return nil, errors.New("the server exited before its tools were checked")
	}
	g.checkMu.Lock()
	if g.stale() {
		g.recheck(ctx)
	}
	g.checkMu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.recErr != nil {
		return nil, g.recErr
	}
	return g.rec, nil
}

// stale reports whether the server announced a change the current record
// does not cover, or the listing it judged is past the freshness the
// server gave it (ttlMs).
func (g *Gateway) stale() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changes.Load() > g.seen || !g.fresh.IsZero() && time.Now().After(g.fresh)
}

// isChecked reports whether the first check is done.
func (g *Gateway) isChecked() bool {
	select {
	case <-g.checked:
		return true
	default:
		return false
	}
}

// ready reports, without waiting, whether a call can be judged now: the
// first check is done and no re-check is due or running.
func (g *Gateway) ready() bool {
	select {
	case <-g.checked:
	default:
		return false
	}
	if !g.checkMu.TryLock() {
		return false
	}
	defer g.checkMu.Unlock()
	return !g.stale()
}

// answerList answers the client's tools/list from the core's handoff: the
// tool objects the core wrote, whole, in one page; none when the session
// is paused or denied or the check could not be made.
func (g *Gateway) answerList(env envelope) {
	if m, ok := strictMembers(env.params); ok && m["cursor"] != nil && !bytes.Equal(m["cursor"], []byte("null")) {
		g.toClient(errorFrame(env.id, -32602, "crawlcheck run: unknown cursor: the gateway answers tools/list in one page", nil))
		return
	}
	rec, err := g.current(context.Background())
	var b bytes.Buffer
	if err == nil && rec.Handoff.Session == preflight.SessionProceed {
		n := 64 + len(env.id)
		for _, t := range rec.Handoff.Tools {
			n += len(t.Tool) + 1
		}
		b.Grow(n) // one allocation for a 1,000-tool answer
	}
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(env.id)
	b.WriteString(`,"result":{"tools":[`)
	if err == nil && rec.Handoff.Session == preflight.SessionProceed {
		for i, t := range rec.Handoff.Tools {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(t.Tool)
		}
	}
	b.WriteByte(']')
	g.cacheHints(&b)
	b.WriteString(`}}`)
	g.toClient(b.Bytes())
}

// gateCall passes a tools/call the handoff allows on, as it came, and
// answers any other with RefusedCode. While a check is due or running the
// call is held (in its own goroutine, so the session's other traffic goes
// on) until the record covers the newest announced change.
func (g *Gateway) gateCall(frame []byte, env envelope) {
	if g.ready() {
		g.judgeCall(frame, env, false)
		return
	}
	g.mu.Lock()
	g.held[idKey(env.id)] = false
	g.mu.Unlock()
	go g.judgeCall(frame, env, true)
}

// release ends the hold of a request held for a check (gateCall,
// gateItem), answered or not, and reports whether the client cancelled it
// meanwhile (then no answer is due). Every path of a held request's judge
// releases it: an entry left behind is never removed.
func (g *Gateway) release(id json.RawMessage) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	cancelled := g.held[idKey(id)]
	delete(g.held, idKey(id))
	return cancelled
}

func (g *Gateway) judgeCall(frame []byte, env envelope, held bool) {
	name, ok := toolName(env.params)
	if !ok {
		if held && g.release(env.id) {
			return
		}
		g.toClient(errorFrame(env.id, -32602, "crawlcheck run: a tools/call whose params.name is not one string is not passed on", nil))
		return
	}
	rec, err := g.current(context.Background())
	if held && g.release(env.id) {
		return // the client cancelled it while it was held: no answer is due
	}
	if err != nil {
		msg := "crawlcheck run: " + textsafe.Escape(err.Error()) + "; every call is refused until a check is made"
		g.toClient(errorFrame(env.id, RefusedCode, msg, map[string]any{"tool": name}))
		return
	}
	// The session engine allows or refuses, in the refusal's words, by the
	// newest record it answered (a re-check since current may have made a
	// newer one: the call is judged by that, and the error names it).
	st, err := g.engine.Call(name)
	if err != nil || st.Record == nil {
		msg := "crawlcheck run: the session engine could not judge the call; every call is refused until a check is made"
		if err != nil {
			msg = "crawlcheck run: " + textsafe.Escape(err.Error()) + "; every call is refused until a check is made"
		}
		g.toClient(errorFrame(env.id, RefusedCode, msg, map[string]any{"tool": name}))
		return
	}
	if st.Allowed {
		g.toServer(frame)
		return
	}
	rec = st.Record
	refused := &preflight.RefusedError{Effect: rec.Effect, Record: *rec}
	if rec.Handoff.Session == preflight.SessionProceed {
		refused.Tool, refused.Effect = name, rec.Tools[name]
	}
	msg := st.Refusal
	if _, listed := rec.Tools[name]; listed || refused.Tool == "" {
		// Not for a name the server did not offer: no approval brings it.
		msg += "; to re-approve after reading what changed: " + g.approveCommand()
	}
	g.toClient(errorFrame(env.id, RefusedCode, msg, map[string]any{"record_sha256": rec.RecordSHA256, "effect": refused.Effect, "tool": name}))
}

// toolName reads a tools/call's params.name strictly: params an object
// with no member named twice, name a string. params lies in a frame
// parseEnvelope validated, so it is walked once, as the envelope was.
func toolName(params json.RawMessage) (string, bool) {
	var arr [4]member
	ms, ok := topMembers(params, arr[:0])
	if !ok {
		return "", false
	}
	for _, m := range ms {
		if string(m.key) == "name" {
			return jsonString(m.val)
		}
	}
	return "", false
}

// watchChanges re-checks in the background on the server's list_changed,
// paced by the session engine (preflight.Engine): the notifications in
// between are coalesced into one check, and a storm's record says so. A
// call does not wait out the pace: it re-checks at once (current).
func (g *Gateway) watchChanges(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.changed:
		}
		select {
		case <-g.checked:
		case <-ctx.Done():
			return
		}
		st, err := g.engine.ListChanged(g.changes.Load())
		if err == nil && !st.Wake.IsZero() {
			t := time.NewTimer(time.Until(st.Wake))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			st, err = g.engine.Timer()
		}
		if err != nil || !st.Recheck {
			continue // a call re-checks what this did not (current)
		}
		g.checkMu.Lock()
		if g.stale() {
			g.recheck(ctx)
		}
		g.checkMu.Unlock()
	}
}

// watchLock polls the lockfile (its size, modification time and then its
// bytes) and checks the session again against a rewritten one, so that a
// tool re-approved with crawlcheck approve comes back without restarting
// the client. A lockfile that cannot be read is said on stderr, and the
// one read before stays in force.
func (g *Gateway) watchLock(ctx context.Context) {
	var lastSize int64 = -1
	var lastMod time.Time
	if fi, err := os.Stat(g.cfg.LockPath); err == nil {
		lastSize, lastMod = fi.Size(), fi.ModTime()
	}
	tick := time.NewTicker(g.cfg.LockPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		fi, err := os.Stat(g.cfg.LockPath)
		if err != nil || (fi.Size() == lastSize && fi.ModTime().Equal(lastMod)) {
			continue
		}
		lastSize, lastMod = fi.Size(), fi.ModTime()
		b, err := readLock(g.cfg.LockPath, g.cfg.Now(), g.cfg.Settings, nil)
		if err != nil {
			g.say("the rewritten lockfile cannot be used; the one read before stays in force: %s", textsafe.Escape(err.Error()))
			continue
		}
		g.mu.Lock()
		same := bytes.Equal(b, g.lock)
		g.lock = b
		g.mu.Unlock()
		if same {
			continue
		}
		select {
		case <-g.checked:
		default:
			continue // the first check has not begun or is running: it reads the new bytes
		}
		g.say("the lockfile was rewritten; checking again")
		g.checkMu.Lock()
		g.recheck(ctx)
		g.checkMu.Unlock()
	}
}

// recordUnstarted records a server that could not be started: the record
// says so (connect_refused at the handshake), as crawlcheck check's does.
func (g *Gateway) recordUnstarted() {
	obs := preflight.Observation{Endpoint: g.endpoint, Failure: preflight.FaultConnectRefused, FailureAt: preflight.AtHandshake}
	rec, _, _, err := g.check(obs, 0)
	if err != nil {
		g.say("the check could not be made: %s", textsafe.Escape(err.Error()))
		return
	}
	line, _ := g.verdict(rec)
	g.say("%s", line)
}
