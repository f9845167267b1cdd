package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"sync"

	"github.com/crawlcheck/verifier/core/textsafe"
)

// The HTML report is one self-contained file: the charts are SVG drawn
// here, the style is inline, there is no script and no font or image to
// fetch (its Content-Security-Policy forbids them), so it reads the same
// from the issuer, from file:// and in a mail client. Every string that came
// from a server, a lockfile, a policy or a record is shown through the
// core's escape_text (the one rule, docs/cli.md "What a person reads") and
// then put in the page by html/template as text: markup in a description
// stays text, and a bidi override or an invisible character shows as \u{…}.

//go:embed report.html.tmpl
var pageTemplate string

// page is the parsed template, parsed on first use: every crawlcheck
// command links this package, and parsing it at start-up was 1.4% of an
// offline check's CPU (issue 23).
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"pct": func(n, of int) string {
			if of == 0 {
				return "0"
			}
			return fmt.Sprintf("%.0f", 100*float64(n)/float64(of))
		},
	}).Parse(pageTemplate))
})

// effectColor is each effect's color in the charts and tables, weakest to
// strongest; an effect the table does not know is grey.
var effectColor = map[string]string{
	"proceed":          "#2e7d32",
	"proceed_recorded": "#81c784",
	"refresh":          "#78909c",
	"pause_tool":       "#f9a825",
	"pause":            "#ef6c00",
	"deny":             "#c62828",
}

func colorOf(effect string) string {
	if c, ok := effectColor[effect]; ok {
		return c
	}
	return "#9e9e9e"
}

// view is what the template draws: every string already shown safely.
type view struct {
	R          *Report
	Week       string
	From, To   string
	Pilot      string
	ChainNote  string
	ChainOK    bool
	CutNote    string // the log read was cut (Report.RecordsCut)
	DayChart   chart
	ObsChart   chart
	Legend     []legend
	Obs        []obsRow
	Servers    []serverRow
	Changes    []changeRow
	Unchecked  []sweepRow
	Swept      bool
	SweepTotal int
	Exceptions []exceptionRow
}

type legend struct{ Effect, Color string }

type chart struct {
	Width, Height int
	Bars          []bar
	Labels        []label
	Lines         []gridLine
}

type bar struct {
	X, Y, W, H int
	Color      string
	Title      string
}

type label struct {
	X, Y   int
	Anchor string
	Text   string
}

type gridLine struct{ X1, Y1, X2, Y2 int }

type obsRow struct {
	Observation, Class string
	Count              int
}

type serverRow struct {
	URL                string
	Checks, Actionable int
}

type changeRow struct {
	Server, Tool, Observation, Part string
	Effect, Color                   string
	FirstMet, LastMet               string
	Records                         int
	Record                          string
	Sweep                           string
	Scanned                         string
	Diff                            []diffSeg
	Severity                        string
	Findings                        []findingRow
}

type diffSeg struct{ Op, Text string }

type findingRow struct {
	Severity, Rule, Part, Span string
	Offset                     int
}

type sweepRow struct {
	Server, Tool, Observation, SeenAt string
	Diff                              []diffSeg
	Findings                          []findingRow
}

type exceptionRow struct {
	Observation, Tool, SHA256, Until, ApprovedBy, Reason string
	Applied, Expired                                     int
	Status                                               string
	Gone                                                 bool
}

// shown is a string from a server, a file or a record as a person may read
// it: the core's escape_text rule, the same Go function the op runs.
func shown(s string) string { return textsafe.Escape(s) }

// HTML draws the report.
func (r *Report) HTML() []byte {
	v := view{R: r, Week: r.Week, From: r.From[:10], To: r.To[:10], Swept: r.Sweep != nil}
	if r.Pilot != nil {
		v.Pilot = shown(*r.Pilot)
	}
	switch {
	case r.Chain.Valid && r.Chain.TornTail:
		v.ChainOK, v.ChainNote = true, fmt.Sprintf("%d records, chained; a torn last line (an interrupted write) is not a record", r.Chain.Count)
	case r.Chain.Valid:
		v.ChainOK, v.ChainNote = true, fmt.Sprintf("%d records, every record_sha256 and link verified", r.Chain.Count)
	default:
		at := 0
		if r.Chain.BrokenAt != nil {
			at = *r.Chain.BrokenAt + 1
		}
		v.ChainNote = fmt.Sprintf("BROKEN at record %d: %s — the counts below are of a log that no longer verifies", at, shown(r.Chain.Reason))
	}
	if r.RecordsCut {
		v.CutNote = fmt.Sprintf("CUT: only the first %d records received were read, and more were stored; the week's later records are not in any count below", r.Chain.Count)
	}
	for _, e := range r.Effects {
		v.Legend = append(v.Legend, legend{e, colorOf(e)})
	}
	v.DayChart = dayChart(r)
	v.ObsChart = obsChart(r)
	for _, o := range r.Observations {
		v.Obs = append(v.Obs, obsRow{shown(o.Observation), shown(o.Class), o.Count})
	}
	for _, s := range r.Servers {
		v.Servers = append(v.Servers, serverRow{shown(s.URL), s.Checks, s.Actionable})
	}
	for _, c := range r.Changes {
		row := changeRow{Server: shown(c.Server), Tool: shown(c.Tool), Observation: shown(c.Observation), Part: shown(c.Part),
			Effect: shown(c.Effect), Color: colorOf(c.Effect), FirstMet: shown(c.FirstMet), LastMet: shown(c.LastMet), Records: c.Records, Record: shown(c.Record)}
		switch {
		case c.SeenBySweep == nil:
			row.Sweep = "no sweep (offline)"
		case *c.SeenBySweep:
			row.Sweep = "seen by the sweep too"
		default:
			row.Sweep = "not seen by the sweep"
		}
		if c.Scanned != "" {
			row.Scanned = "the new " + shown(c.Scanned)
		}
		row.Diff, row.Findings = diffOf(c.Diff), findingsOf(c.Scan)
		var sc struct{ Severity string }
		if len(c.Scan) > 0 && json.Unmarshal(c.Scan, &sc) == nil {
			row.Severity = shown(sc.Severity)
		}
		v.Changes = append(v.Changes, row)
	}
	if r.Sweep != nil {
		v.SweepTotal = r.Sweep.Changes
		for _, c := range r.Sweep.Unchecked {
			row := sweepRow{Server: shown(c.Server), Tool: shown(c.Tool), Observation: shown(c.Observation), SeenAt: shown(c.SeenAt)}
			row.Diff, row.Findings = diffOf(c.Diff), findingsOf(c.Scan)
			v.Unchecked = append(v.Unchecked, row)
		}
	}
	for _, x := range r.Exceptions {
		row := exceptionRow{Observation: shown(x.Observation), Tool: shown(x.Tool), SHA256: shown(x.SHA256), Until: shown(x.Until),
			ApprovedBy: shown(x.ApprovedBy), Reason: shown(x.Reason), Applied: x.Applied, Expired: x.Expired}
		switch {
		case x.ExpiresInDays < 0 || x.Expired > 0 && x.Applied == 0:
			row.Status, row.Gone = "expired", true
		case x.ExpiresInDays == 0:
			row.Status = "expires within a day of the week's end"
		default:
			row.Status = fmt.Sprintf("expires %d days after the week's end", x.ExpiresInDays)
		}
		v.Exceptions = append(v.Exceptions, row)
	}
	var b bytes.Buffer
	if err := page().Execute(&b, v); err != nil {
		panic("report: the page template: " + err.Error()) // the template is ours and its data plain
	}
	return b.Bytes()
}

// diffOf is a word diff's segments, shown.
func diffOf(raw json.RawMessage) []diffSeg {
	var segs []struct{ Op, Text string }
	if len(raw) == 0 || json.Unmarshal(raw, &segs) != nil {
		return nil
	}
	out := make([]diffSeg, 0, len(segs))
	for _, s := range segs {
		out = append(out, diffSeg{s.Op, shown(s.Text)})
	}
	return out
}

// findingsOf is a scan's findings, shown.
func findingsOf(raw json.RawMessage) []findingRow {
	var sc struct {
		Findings []struct {
			Severity, Rule, Part, Span string
			Offset                     int
		}
	}
	if len(raw) == 0 || json.Unmarshal(raw, &sc) != nil {
		return nil
	}
	var out []findingRow
	for _, f := range sc.Findings {
		out = append(out, findingRow{shown(f.Severity), shown(f.Rule), shown(f.Part), shown(f.Span), f.Offset})
	}
	return out
}

// dayChart is a stacked bar per day, one segment per effect, weakest at the
// bottom.
func dayChart(r *Report) chart {
	const w, h, left, bottom, top = 640, 220, 40, 30, 10
	c := chart{Width: w, Height: h}
	most := 1
	for _, d := range r.Days {
		most = max(most, d.Checks)
	}
	scale := niceCeil(most)
	plotH := h - bottom - top
	slot := (w - left) / len(r.Days)
	for i := 0; i <= 4; i++ {
		y := top + plotH - plotH*i/4
		c.Lines = append(c.Lines, gridLine{left, y, w, y})
		c.Labels = append(c.Labels, label{left - 6, y + 4, "end", fmt.Sprint(scale * i / 4)})
	}
	for i, d := range r.Days {
		x := left + i*slot + slot/6
		bw := slot * 2 / 3
		y := top + plotH
		for _, e := range r.Effects {
			n := d.Effects[e]
			if n == 0 {
				continue
			}
			bh := plotH * n / scale
			if bh == 0 {
				bh = 1
			}
			y -= bh
			c.Bars = append(c.Bars, bar{x, y, bw, bh, colorOf(e), fmt.Sprintf("%s: %d %s", d.Date, n, e)})
		}
		c.Labels = append(c.Labels, label{x + bw/2, h - bottom + 16, "middle", weekday(i) + " " + d.Date[8:]})
	}
	return c
}

// obsChart is a horizontal bar per observation, longest first.
func obsChart(r *Report) chart {
	const w, left, row = 640, 230, 22
	c := chart{Width: w, Height: max(1, len(r.Observations))*row + 10}
	most := 1
	for _, o := range r.Observations {
		most = max(most, o.Count)
	}
	for i, o := range r.Observations {
		y := 5 + i*row
		bw := (w - left - 50) * o.Count / most
		color := "#5c6bc0"
		if o.Class == "integrity" {
			color = "#c62828"
		}
		c.Bars = append(c.Bars, bar{left, y, max(bw, 1), row - 6, color, fmt.Sprintf("%s (%s): %d", shown(o.Observation), shown(o.Class), o.Count)})
		c.Labels = append(c.Labels, label{left - 6, y + row/2 + 1, "end", shown(o.Observation)})
		c.Labels = append(c.Labels, label{left + max(bw, 1) + 6, y + row/2 + 1, "start", fmt.Sprint(o.Count)})
	}
	return c
}

// niceCeil is the smallest of 4, 8, 12, 20, 40, 100, … at least n, so the
// grid's four steps are whole numbers.
func niceCeil(n int) int {
	for _, base := range []int{4, 8, 12, 20, 40} {
		if n <= base {
			return base
		}
	}
	s := 100
	for s < n {
		s *= 2
	}
	return s
}

func weekday(i int) string {
	return strings.Fields("Mon Tue Wed Thu Fri Sat Sun")[i]
}
