package preflight

import (
	"context"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server offers beside its tools and a model may be handed (issue
// 35, docs/continuity.md "Prompts, resources and UI templates"): its
// prompts, resources and resource templates, each list read like the tool
// list (the raw answers, nextCursor followed by the core's next_page), and
// the MCP Apps UI templates its tools name, read with resources/read. The
// core pins them in a lockfile (make_lock) and compares them in a check;
// this file only reads them.

// The methods of the lists read beside tools/list.
const (
	MethodPrompts   = "prompts/list"
	MethodResources = "resources/list"
	MethodTemplates = "resources/templates/list"
	MethodRead      = "resources/read"
	// MethodGet is the prompts/get the session engine judges beside
	// resources/read (Engine.Item).
	MethodGet = "prompts/get"
)

// FeatureList is one list as read: the pages as received, or the fact that
// the server's capabilities do not declare it (then no request was sent:
// MCP forbids it), or the fault that ended the walk.
type FeatureList struct {
	Undeclared     bool
	Pages          [][]byte
	PageCapReached bool
	// Failure is a host fault (Fault* or FailureTooLarge) that ended the
	// walk; the pages before it are kept but not compared.
	Failure string
}

// UITemplate is one ui:// template read with resources/read: its answer as
// received (the result member's bytes, or the whole frame), or the fault
// that kept it from being read.
type UITemplate struct {
	URI     string
	Result  []byte
	Failure string
}

// ObservedFeatures are the lists and UI templates read. A nil list was not
// read (the session failed before it).
type ObservedFeatures struct {
	Prompts, Resources, Templates *FeatureList
	UI                            []UITemplate
}

// observeFeatures reads, after a whole tool list, the lists the server's
// capabilities declare and the ui:// templates the core names from the
// tool pages. A fault ends the reading: the list it hit says so, and what
// was not read is left nil (not compared, and said so on the record).
func (t *Transport) observeFeatures(ctx context.Context, cs *mcp.ClientSession, toolPages [][]byte, pageCap int) *ObservedFeatures {
	f := &ObservedFeatures{}
	var caps *mcp.ServerCapabilities
	if r := cs.InitializeResult(); r != nil {
		caps = r.Capabilities
	}
	prompts := caps != nil && caps.Prompts != nil
	resources := caps != nil && caps.Resources != nil
	walks := []struct {
		dst      **FeatureList
		declared bool
		method   string
		send     func(context.Context, string) error
	}{
		{&f.Prompts, prompts, MethodPrompts, func(c context.Context, cursor string) error {
			_, err := cs.ListPrompts(c, &mcp.ListPromptsParams{Cursor: cursor})
			return err
		}},
		{&f.Resources, resources, MethodResources, func(c context.Context, cursor string) error {
			_, err := cs.ListResources(c, &mcp.ListResourcesParams{Cursor: cursor})
			return err
		}},
		{&f.Templates, resources, MethodTemplates, func(c context.Context, cursor string) error {
			_, err := cs.ListResourceTemplates(c, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			return err
		}},
	}
	for _, w := range walks {
		if !w.declared {
			*w.dst = &FeatureList{Undeclared: true}
			continue
		}
		l := t.walkList(ctx, w.method, w.send, pageCap)
		*w.dst = l
		if l.Failure != "" {
			return f
		}
	}
	uris, err := uiTemplateURIs(toolPages)
	if err != nil {
		// The core refuses the tool list, which the check records: no
		// template is read.
		return f
	}
	f.UI = []UITemplate{}
	for _, u := range uris {
		answer, failure := t.fetchAnswer(ctx, MethodRead, func(c context.Context) error {
			_, err := cs.ReadResource(c, &mcp.ReadResourceParams{URI: u})
			return err
		})
		f.UI = append(f.UI, UITemplate{URI: u, Result: answer, Failure: failure})
		if failure != "" {
			// The session is gone (or the deadline passed): the rest is
			// not read, and the check withholds the tools naming them.
			return f
		}
	}
	return f
}

// walkList reads every page of one list, following nextCursor by the
// core's next_page as Observe does for tools, within MaxListBytes.
func (t *Transport) walkList(ctx context.Context, method string, send func(context.Context, string) error, pageCap int) *FeatureList {
	l := &FeatureList{}
	followed := []string{}
	cursor, total := "", 0
	for {
		page, failure := t.fetchAnswer(ctx, method, func(c context.Context) error { return send(c, cursor) })
		if failure != "" {
			l.Failure = failure
			return l
		}
		if total += len(page); total > MaxListBytes {
			l.Failure, l.Pages = FaultPagesOverCap, nil
			return l
		}
		l.Pages = append(l.Pages, page)
		req := map[string]any{"list": method, "page": corecall.Page(page), "followed": followed}
		if pageCap > 0 {
			req["page_cap"] = pageCap
		}
		var step walkStep
		if err := corecall.Into("next_page", req, &step); err != nil || step.Cursor == nil {
			// The walk ends; the check reads why from the pages themselves.
			l.PageCapReached = err == nil && step.PageCapReached
			return l
		}
		followed, cursor = step.Followed, *step.Cursor
	}
}

// uiTemplateURIs asks the core which ui:// templates the tool pages name.
func uiTemplateURIs(pages [][]byte) ([]string, error) {
	ps := make([]any, len(pages))
	for i, p := range pages {
		ps[i] = corecall.Page(p)
	}
	var out struct {
		URIs []string `json:"uris"`
	}
	err := corecall.Into("ui_templates", map[string]any{"pages": ps}, &out)
	return out.URIs, err
}

// fetchAnswer sends one request of method through the SDK and returns the
// answer captured on the wire (its result member's bytes, or the whole
// frame), or the fault that kept it from arriving. As for tools/list, an
// answer the SDK cannot route is abandoned at once, and an answer the SDK
// took that the capture did not see is FaultNotCaptured (or
// FaultListCached: served from the SDK's list cache).
func (t *Transport) fetchAnswer(ctx context.Context, method string, send func(context.Context) error) (answer []byte, failure string) {
	mark := t.rec.count(method)
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- send(callCtx) }()
	var (
		sdkErr  error
		sdkDone bool
	)
	for {
		wake := t.rec.changed()
		c, frame, matched, valid := t.rec.nth(method, mark)
		if frame != nil {
			if !matched {
				cancel()
			}
			if !sdkDone {
				<-done // bounded by ctx
			}
			return pageOf(frame, valid), ""
		}
		if sdkDone {
			switch {
			case t.rec.cutOff() != "" || ctx.Err() != nil || sdkErr != nil:
				f, _ := t.classify(ctx, sdkErr)
				return nil, f
			case c == nil:
				return nil, FaultListCached
			default:
				return nil, FaultNotCaptured
			}
		}
		select {
		case sdkErr = <-done:
			sdkDone = true
		case <-wake:
		}
	}
}

// featuresJSON is observed.features of a core request (ops_features.go's
// fields): each list read, and the UI templates when they were read.
func featuresJSON(f *ObservedFeatures) map[string]any {
	out := map[string]any{}
	for name, l := range map[string]*FeatureList{"prompts": f.Prompts, "resources": f.Resources, "resource_templates": f.Templates} {
		switch {
		case l == nil:
		case l.Undeclared:
			out[name] = map[string]any{"declared": false}
		default:
			pages := make([]any, len(l.Pages))
			for i, p := range l.Pages {
				pages[i] = corecall.Page(p)
			}
			m := map[string]any{"pages": pages}
			if l.PageCapReached {
				m["page_cap_reached"] = true
			}
			if l.Failure != "" {
				m["failure"] = l.Failure
			}
			out[name] = m
		}
	}
	if f.UI != nil {
		ui := make([]any, len(f.UI))
		for i, u := range f.UI {
			m := map[string]any{"uri": u.URI}
			if u.Failure != "" {
				m["failure"] = u.Failure
			} else {
				m["result"] = corecall.Page(u.Result)
			}
			ui[i] = m
		}
		out["ui_templates"] = ui
	}
	return out
}
