package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// What a server offers beside its tools (issue 35): its prompts, resources
// and resource templates, and the MCP Apps ui:// templates its tools name.
// The gateway reads them in each check with requests of its own, as the Go
// preflight reads them (the same lists, pages, faults and caps, so that its
// record is the one crawlcheck check --json writes), and the client gets
// only what the record covers:
//
//   - prompts/list, resources/list and resources/templates/list are
//     answered from the core's handoff (the objects the core wrote from
//     what it hashed, whole, in one page), empty when the session does not
//     proceed or the lockfile pins none of that list;
//   - prompts/get, resources/read and completion/complete (of a prompt or
//     a resource template) are judged by the session engine, as a
//     tools/call is: one it refuses is refused with RefusedCode in the
//     engine's words and advice a person can act on; one it allows is
//     passed on as it came (its answer is data, like a tool call's result,
//     and is not pinned);
//   - a resources/read of a ui:// template is read by the gateway itself,
//     checked by the core against the lockfile's pin (ui_template_check),
//     and the client gets the bytes the core compared, or a refusal.
//
// Everything else of these features (resources/subscribe, updates)
// passes through as it arrived.

// featureList is one list the gateway answers from the handoff.
type featureList struct {
	name   string // the handoff's and the record's name of the list
	method string // the client's request
	member string // the result member holding the items
	notify string // the notification telling the client the list changed
}

var featureLists = []featureList{
	{"prompts", "prompts/list", "prompts", "notifications/prompts/list_changed"},
	{"resources", "resources/list", "resources", "notifications/resources/list_changed"},
	{"resource_templates", "resources/templates/list", "resourceTemplates", "notifications/resources/list_changed"},
}

// featureListMethod reports whether method is one of the lists the gateway
// answers from the handoff.
func featureListMethod(method string) bool {
	return method == "prompts/list" || method == "resources/list" || method == "resources/templates/list"
}

// observeFeatures reads, after a whole tool list, the lists the server's
// handshake declares and the ui:// templates the core names from the tool
// pages, within the check's deadline (ctx). A fault ends the reading as it
// does in the Go preflight: the list it hit says so, and what was not read
// is left nil (not compared, and said so on the record). nil when the
// handshake's result cannot be read.
func (g *Gateway) observeFeatures(ctx context.Context, hs handshake, toolPages [][]byte) *preflight.ObservedFeatures {
	var r struct {
		Capabilities *struct {
			Prompts   json.RawMessage `json:"prompts"`
			Resources json.RawMessage `json:"resources"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(hs.result, &r) != nil {
		return nil
	}
	// Declared as the SDK reads a capability: a member that is not null.
	declared := func(v json.RawMessage) bool { return v != nil && !bytes.Equal(v, []byte("null")) }
	prompts := r.Capabilities != nil && declared(r.Capabilities.Prompts)
	resources := r.Capabilities != nil && declared(r.Capabilities.Resources)
	f := &preflight.ObservedFeatures{}
	walks := []struct {
		dst      **preflight.FeatureList
		declared bool
		method   string
	}{
		{&f.Prompts, prompts, preflight.MethodPrompts},
		{&f.Resources, resources, preflight.MethodResources},
		{&f.Templates, resources, preflight.MethodTemplates},
	}
	for _, w := range walks {
		if !w.declared {
			*w.dst = &preflight.FeatureList{Undeclared: true}
			continue
		}
		l := g.walkFeature(ctx, w.method, hs.meta)
		*w.dst = l
		if l.Failure != "" {
			return f
		}
	}
	pages := make([]any, len(toolPages))
	for i, p := range toolPages {
		pages[i] = corecall.Page(p)
	}
	var named struct {
		URIs []string `json:"uris"`
	}
	if corecall.Into("ui_templates", map[string]any{"pages": pages}, &named) != nil {
		// The core refuses the tool list, which the check records: no
		// template is read.
		return f
	}
	f.UI = []preflight.UITemplate{}
	for _, u := range named.URIs {
		answer, fault := g.askWith(ctx, preflight.MethodRead, map[string]any{"uri": u}, hs.meta)
		f.UI = append(f.UI, preflight.UITemplate{URI: u, Result: answer, Failure: fault})
		if fault != "" {
			return f // the rest is not read, and the check withholds the tools naming them
		}
	}
	return f
}

// walkFeature reads every page of one list, following nextCursor by the
// core's next_page (the same cap, repeated-cursor and cursor rules as for
// tools), within preflight.MaxListBytes.
func (g *Gateway) walkFeature(ctx context.Context, method string, meta json.RawMessage) *preflight.FeatureList {
	l := &preflight.FeatureList{}
	followed := []string{}
	cursor, total := "", 0
	for {
		page, fault := g.ask(ctx, method, cursor, meta)
		if fault != "" {
			l.Failure = fault
			return l
		}
		if total += len(page); total > preflight.MaxListBytes {
			l.Failure, l.Pages = preflight.FaultPagesOverCap, nil
			return l
		}
		l.Pages = append(l.Pages, page)
		req := map[string]any{"list": method, "page": corecall.Page(page), "followed": followed}
		if g.cfg.PageCap > 0 {
			req["page_cap"] = g.cfg.PageCap
		}
		var step preflight.WalkStep
		if err := corecall.Into("next_page", req, &step); err != nil || step.Cursor == nil {
			// The walk ends; the check reads why from the pages themselves.
			l.PageCapReached = err == nil && step.PageCapReached
			return l
		}
		followed, cursor = step.Followed, *step.Cursor
	}
}

// answerFeatureList answers the client's prompts/list, resources/list or
// resources/templates/list from the core's handoff, in one page as
// tools/list is answered: the items the record hands over, none when the
// session does not proceed, the check could not be made, or the lockfile
// pins none of the list (said on stderr).
func (g *Gateway) answerFeatureList(env envelope) {
	var fl featureList
	for _, l := range featureLists {
		if l.method == env.method {
			fl = l
		}
	}
	if m, ok := strictMembers(env.params); ok && m["cursor"] != nil && !bytes.Equal(m["cursor"], []byte("null")) {
		g.toClient(errorFrame(env.id, -32602, "crawlcheck run: unknown cursor: the gateway answers "+fl.method+" in one page", nil))
		return
	}
	rec, err := g.current(context.Background())
	var items []preflight.HandedItem
	if err == nil && rec.Handoff.Session == preflight.SessionProceed {
		h, compared := rec.Handoff.Features[fl.name]
		if !compared {
			g.say("%s answered empty: the check compared no %s (the lockfile pins none; %s pins them)", fl.method, strings.ReplaceAll(fl.name, "_", " "), g.lockCommand())
		}
		items = h.Items
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(env.id)
	b.WriteString(`,"result":{"` + fl.member + `":[`)
	n := 0
	for _, it := range items {
		if it.Item == "" {
			continue // a handoff without texts: never one the gateway asks for
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it.Item)
		n++
	}
	b.WriteByte(']')
	g.cacheHints(&b)
	b.WriteString(`}}`)
	g.toClient(b.Bytes())
}

// gateItem passes a prompts/get, resources/read or completion/complete the
// session engine allows on, as it came, and refuses any other with
// RefusedCode. While
// a check is due or running it is held, as a tools/call is.
func (g *Gateway) gateItem(frame []byte, env envelope) {
	if g.ready() {
		g.judgeItem(frame, env, false)
		return
	}
	g.mu.Lock()
	g.held[idKey(env.id)] = false
	g.mu.Unlock()
	go g.judgeItem(frame, env, true)
}

func (g *Gateway) judgeItem(frame []byte, env envelope, held bool) {
	list, param, key, ok := itemOf(env.method, env.params)
	if !ok {
		if held && g.release(env.id) {
			return
		}
		g.toClient(errorFrame(env.id, -32602, "crawlcheck run: a "+env.method+" whose params."+param+" is not one string is not passed on", nil))
		return
	}
	rec, err := g.current(context.Background())
	if held && g.release(env.id) {
		return // the client cancelled it while it was held: no answer is due
	}
	data := map[string]any{param: key}
	if err != nil {
		msg := "crawlcheck run: " + textsafe.Escape(err.Error()) + "; every " + env.method + " is refused until a check is made"
		g.toClient(errorFrame(env.id, RefusedCode, msg, data))
		return
	}
	data["record_sha256"] = rec.RecordSHA256
	if list == "resources" && strings.HasPrefix(key, "ui://") {
		if rec.Handoff.Session != preflight.SessionProceed {
			data["effect"] = rec.Effect
			msg := (&preflight.RefusedError{Effect: rec.Effect, Record: *rec}).Error() + "; to re-approve after reading what changed: " + g.approveCommand()
			g.toClient(errorFrame(env.id, RefusedCode, msg, data))
			return
		}
		g.mu.Lock()
		lock := g.recLock
		g.mu.Unlock()
		// The gateway reads the template itself, which waits on the
		// server: not on the client's loop.
		go g.readUITemplate(env, key, rec, lock, data)
		return
	}
	// The session engine allows or refuses, in the refusal's words, by the
	// newest record it answered, as it judges a tools/call.
	st, err := g.engine.Item(env.method, param, key)
	if err != nil || st.Record == nil {
		g.toClient(errorFrame(env.id, RefusedCode, "crawlcheck run: the session engine could not judge the "+env.method+"; every "+env.method+" is refused until a check is made", data))
		return
	}
	if st.Allowed {
		g.toServer(frame)
		return
	}
	rec = st.Record
	// The advice follows the item the engine's words are of (a
	// completion's ref/resource may name a withheld resource, not a
	// template): none when the refusal is the session's.
	items, compared := rec.Features[st.RefusedList]
	data["record_sha256"] = rec.RecordSHA256
	msg, advice := st.Refusal, ""
	switch {
	case st.RefusedList == "":
		// The session's refusal (it does not proceed), not an item's.
		data["effect"] = rec.Effect
		advice = "to re-approve after reading what changed: " + g.approveCommand()
	case !compared:
		// The lockfile pins none of the list: nothing changed to show, so
		// approve would not ask; a new lock pins it.
		advice = "to pin it after reading it: " + g.lockCommand()
	case items[key] != "":
		// Only an item this list withholds has parts that changed: one
		// it does not list may share its key with another list's item
		// that did (a prompt and a URI of one name), whose parts are not
		// this item's.
		data["effect"] = items[key]
		if why := itemDiffered(*rec, key); why != "" {
			msg += "; " + why
		}
		advice = g.approveItemsAdvice()
	}
	if advice != "" {
		msg += "; " + advice
	}
	g.toClient(errorFrame(env.id, RefusedCode, msg, data))
}

// readUITemplate answers a resources/read of a ui:// template: read by the
// gateway with a request of its own, and handed to the client only when
// the core finds it the template the lockfile pins for a tool the record
// hands over (ui_template_check), as the core writes it; a
// swapped template is refused, never passed to a renderer.
func (g *Gateway) readUITemplate(env envelope, uri string, rec *preflight.Record, lock []byte, data map[string]any) {
	// reason is a reason code the core words (not_named, or
	// ui_template_check's); parts, when given, the parts that changed.
	refuse := func(parts []string, reason string) {
		e := &preflight.ItemRefusedError{List: "ui_templates", Key: uri, Parts: parts, Reason: reason, Record: *rec}
		g.toClient(errorFrame(env.id, RefusedCode, e.Error()+"; "+g.approveItemsAdvice(), data))
	}
	tools := make([]json.RawMessage, len(rec.Handoff.Tools))
	for i, t := range rec.Handoff.Tools {
		tools[i] = json.RawMessage(t.Tool)
	}
	var named struct {
		URIs []string `json:"uris"`
	}
	if err := corecall.Into("ui_templates", map[string]any{"tools": tools}, &named); err != nil || !slices.Contains(named.URIs, uri) {
		refuse(nil, "not_named")
		return
	}
	g.mu.Lock()
	meta := g.hs.meta
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Timeout)
	defer cancel()
	answer, fault := g.askWith(ctx, preflight.MethodRead, map[string]any{"uri": uri}, meta)
	if fault != "" {
		g.toClient(errorFrame(env.id, RefusedCode, "crawlcheck run: the UI template "+textsafe.Escape(uri)+" could not be read to be checked: "+fault, data))
		return
	}
	var check struct {
		Same     bool     `json:"same"`
		Parts    []string `json:"parts"`
		Reason   *string  `json:"reason"`
		Template *string  `json:"template"`
	}
	req := map[string]any{"record": corecall.Text(rec.Raw), "lock": corecall.Text(lock), "uri": uri, "result": corecall.Page(answer)}
	if err := corecall.Into("ui_template_check", req, &check); err != nil {
		g.toClient(errorFrame(env.id, RefusedCode, "crawlcheck run: the UI template "+textsafe.Escape(uri)+" could not be checked: "+textsafe.Escape(err.Error()), data))
		return
	}
	if !check.Same || check.Template == nil {
		reason := ""
		if check.Reason != nil {
			reason = *check.Reason
		}
		refuse(check.Parts, reason)
		return
	}
	// The result the core wrote from what it compared, under the client's
	// id: never the server's answer, whose members beside contents (a
	// result-level _meta, unknown members) are in no part's hash.
	g.toClient(slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), env.id, []byte(`,"result":`), []byte(*check.Template), []byte(`}`)))
}

// itemOf reads what a prompts/get, resources/read or completion/complete
// reaches: the handoff's list it is judged by, the member naming it (name
// or uri, the session engine's event's too) and its key. A completion's
// ref reaches a prompt (ref/prompt, its name) or a resource
// (ref/resource, its uri: a template's uriTemplate or a resource's uri;
// judged under resource_templates, whose member the engine's event shares
// with a fixed resource's). ok is false when the params do
// not name one string so (param then says where: a completion's "ref").
func itemOf(method string, params json.RawMessage) (list, param, key string, ok bool) {
	switch method {
	case "prompts/get":
		key, ok = stringParam(params, "name")
		return "prompts", "name", key, ok
	case "resources/read":
		key, ok = stringParam(params, "uri")
		return "resources", "uri", key, ok
	}
	// Strictly, as stringParam reads: params naming "ref" twice is not
	// judged by its first, which a server's decoder may not read.
	var arr [4]member
	ms, strict := topMembers(params, arr[:0])
	if !strict {
		return "", "ref", "", false
	}
	for _, m := range ms {
		if string(m.key) != "ref" {
			continue
		}
		switch typ, _ := stringParam(m.val, "type"); typ {
		case "ref/prompt":
			if key, ok = stringParam(m.val, "name"); ok {
				return "prompts", "name", key, true
			}
		case "ref/resource":
			if key, ok = stringParam(m.val, "uri"); ok {
				return "resource_templates", "uri", key, true
			}
		}
	}
	return "", "ref", "", false
}

// stringParam reads params[name] strictly: params an object with no member
// named twice, the member a string.
func stringParam(params json.RawMessage, name string) (string, bool) {
	var arr [4]member
	ms, ok := topMembers(params, arr[:0])
	if !ok {
		return "", false
	}
	for _, m := range ms {
		if string(m.key) == name {
			return jsonString(m.val)
		}
	}
	return "", false
}

// itemDiffered names the parts of key the record's observations say
// changed ("changed: description, arguments"), escaped; "" when none is
// named (an added item, or one refused for another reason).
func itemDiffered(rec preflight.Record, key string) string {
	var parts []string
	for _, f := range rec.Observations {
		if f.Item == key && f.Part != "" && !slices.Contains(parts, f.Part) {
			parts = append(parts, textsafe.Escape(f.Part))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "changed since it was approved: " + strings.Join(parts, ", ")
}

// itemsWithheld is the verdict's words for the prompts, resources and
// templates the record withholds (items: Record.WithheldItems).
func (g *Gateway) itemsWithheld(rec preflight.Record, items []string) string {
	var b strings.Builder
	for i, it := range items {
		list, key, _ := strings.Cut(it, " ")
		e := &preflight.ItemRefusedError{List: list, Key: key, Effect: rec.Features[list][key], Record: rec}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	b.WriteString("; " + g.approveItemsAdvice())
	return b.String()
}

// approveItemsAdvice tells a person how to approve a withheld prompt,
// resource or template: crawlcheck approve shows each changed item with
// its scan and asks whether to pin the lists as offered now (the core's
// approve_features).
func (g *Gateway) approveItemsAdvice() string {
	return "to re-approve after reading what changed: " + g.approveCommand() + " (it asks about prompts, resources and templates too)"
}

// lockCommand is the command that pins the server's prompts and resources
// when the lockfile pins none of a list (approve shows and approves only
// what changed against a pin).
func (g *Gateway) lockCommand() string {
	src := "--server " + shellWord(strings.Join(shellWords(g.cfg.Command), " "))
	switch {
	case g.cfg.Remote.URL != "" && g.cfg.Remote.SSE:
		src = "--sse " + shellWord(g.cfg.Remote.URL)
	case g.cfg.Remote.URL != "":
		src = "--url " + shellWord(g.cfg.Remote.URL)
	}
	return "crawlcheck lock " + src + " -o " + shellWord(g.cfg.LockPath)
}

// shellWords are argv's words each quoted for a POSIX shell when it needs
// it (crawlcheck lock --server splits its value as a shell does).
func shellWords(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = shellWord(a)
	}
	return out
}

// featuresVisibleLocked notes what the client may see of each list now,
// and returns the notifications that tell it a list it may see changed
// (none after the first check: the client has not listed yet). Callers
// hold mu.
func (g *Gateway) featuresVisibleLocked(first bool) []string {
	if g.featVisible == nil {
		g.featVisible = map[string]string{}
	}
	var out []string
	for _, fl := range featureLists {
		var b strings.Builder
		if g.recErr == nil && g.rec != nil && g.rec.Handoff != nil && g.rec.Handoff.Session == preflight.SessionProceed {
			for _, it := range g.rec.Handoff.Features[fl.name].Items {
				b.WriteString(it.Item)
				b.WriteByte(0)
			}
		}
		vis := b.String()
		if !first && vis != g.featVisible[fl.name] && !slices.Contains(out, fl.notify) {
			out = append(out, fl.notify)
		}
		g.featVisible[fl.name] = vis
	}
	return out
}

// cacheHints ends a list result of a 2026-07-28 session with the cache
// hints the revision asks of every list result: fresh while the listing
// it was judged from is (0, immediately stale, when the server gave no
// ttlMs), and private: it is this session's record's.
func (g *Gateway) cacheHints(b *bytes.Buffer) {
	g.mu.Lock()
	version, fresh := g.hs.version, g.fresh
	g.mu.Unlock()
	if version < ttlVersion {
		return
	}
	ttl := int64(0)
	if !fresh.IsZero() {
		ttl = max(0, time.Until(fresh).Milliseconds())
	}
	fmt.Fprintf(b, `,"ttlMs":%d,"cacheScope":"private"`, ttl)
}

// launched is the check's observed.launched: the package the server's
// command line launches, resolved now (Config.Launched), when the server
// is a child.
func (g *Gateway) launched(ctx context.Context) json.RawMessage {
	if g.cfg.Launched == nil || g.cfg.Remote.URL != "" {
		return nil
	}
	return g.cfg.Launched(ctx)
}
