// Package metrics is the issuer's Prometheus metrics in the text exposition
// format (version 0.0.4): counters and histograms with fixed label sets,
// enough for request counts and latency by endpoint and outcome, fetches by
// result and store latency, without a client library's registry and global
// state.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
)

// Buckets are the latency histogram's upper bounds, in seconds.
var Buckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Registry holds every series.
type Registry struct {
	mu         sync.Mutex
	counters   map[string]*family
	histograms map[string]*family
	help       map[string]string
}

type family struct {
	labels []string
	series map[string]*series // by joined label values
}

type series struct {
	values  []string
	count   uint64
	sum     float64
	buckets []uint64
}

// New makes an empty registry.
func New() *Registry {
	return &Registry{counters: map[string]*family{}, histograms: map[string]*family{}, help: map[string]string{}}
}

// Counter declares a counter.
func (r *Registry) Counter(name, help string, labels ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counters[name] = &family{labels: labels, series: map[string]*series{}}
	r.help[name] = help
}

// Histogram declares a latency histogram (seconds).
func (r *Registry) Histogram(name, help string, labels ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.histograms[name] = &family{labels: labels, series: map[string]*series{}}
	r.help[name] = help
}

func (f *family) get(values []string, hist bool) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %d label values for %d labels", len(values), len(f.labels)))
	}
	key := strings.Join(values, "\x00")
	s := f.series[key]
	if s == nil {
		s = &series{values: append([]string(nil), values...)}
		if hist {
			s.buckets = make([]uint64, len(Buckets))
		}
		f.series[key] = s
	}
	return s
}

// Inc adds one to a counter.
func (r *Registry) Inc(name string, values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counters[name].get(values, false).count++
}

// Observe records a duration in a histogram.
func (r *Registry) Observe(name string, d time.Duration, values ...string) {
	v := d.Seconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.histograms[name].get(values, true)
	s.count++
	s.sum += v
	for i, b := range Buckets {
		if v <= b {
			s.buckets[i]++
		}
	}
}

// Write writes every series in the text format, sorted, so two scrapes of
// the same state are the same bytes.
func (r *Registry) Write(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, name := range sortedKeys(r.counters) {
		f := r.counters[name]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", name, r.help[name], name)
		for _, k := range sortedKeys(f.series) {
			s := f.series[k]
			fmt.Fprintf(&b, "%s%s %d\n", name, labelText(f.labels, s.values, ""), s.count)
		}
	}
	for _, name := range sortedKeys(r.histograms) {
		f := r.histograms[name]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s histogram\n", name, r.help[name], name)
		for _, k := range sortedKeys(f.series) {
			s := f.series[k]
			for i, le := range Buckets {
				fmt.Fprintf(&b, "%s_bucket%s %d\n", name, labelText(f.labels, s.values, formatFloat(le)), s.buckets[i])
			}
			fmt.Fprintf(&b, "%s_bucket%s %d\n", name, labelText(f.labels, s.values, "+Inf"), s.count)
			fmt.Fprintf(&b, "%s_sum%s %s\n", name, labelText(f.labels, s.values, ""), formatFloat(s.sum))
			fmt.Fprintf(&b, "%s_count%s %d\n", name, labelText(f.labels, s.values, ""), s.count)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func labelText(names, values []string, le string) string {
	var parts []string
	for i, n := range names {
		parts = append(parts, n+`="`+escape(values[i])+`"`)
	}
	if le != "" {
		parts = append(parts, `le="`+le+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// escape writes a label value as the format requires: backslash, quote and
// newline escaped.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%g", f)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
