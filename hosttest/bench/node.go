package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/hosttest/artifact"
)

// nodeSettled is what bench.mjs settled prints: medians in ms.
type nodeSettled struct {
	Wasm, JS float64
	Samples  int
}

// nodeOneShot is what bench.mjs oneshot-* prints, in ms.
type nodeOneShot struct{ Load, First, Total float64 }

// oneShots is how many fresh processes each one-shot median is of.
const oneShots = 5

func script() (string, error) {
	root, err := artifact.ModuleRoot()
	return filepath.Join(root, "hosttest", "bench", "node", "bench.mjs"), err
}

func nodeRun(v any, args ...string) error {
	s, err := script()
	if err != nil {
		return err
	}
	out, err := exec.Command("node", append([]string{"--no-warnings", s}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return fmt.Errorf("node bench.mjs %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return fmt.Errorf("node bench.mjs %s: %w", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("node bench.mjs %s said %q: %w", strings.Join(args, " "), out, err)
	}
	return nil
}

func nodeSettledRun(wasm, page, lock string) (nodeSettled, error) {
	var r nodeSettled
	err := nodeRun(&r, "settled", wasm, page, lock)
	return r, err
}

// nodeOneShots runs the wasm and the peer one-shot, alternating, oneShots
// times each, and returns the medians.
func nodeOneShots(wasm, page, lock string) (w, js nodeOneShot, err error) {
	var ws, jss []nodeOneShot
	for range oneShots {
		var a, b nodeOneShot
		if err := nodeRun(&a, "oneshot-wasm", wasm, page, lock); err != nil {
			return w, js, err
		}
		if err := nodeRun(&b, "oneshot-js", page, lock); err != nil {
			return w, js, err
		}
		ws, jss = append(ws, a), append(jss, b)
	}
	return medianOf(ws), medianOf(jss), nil
}

// medianOf takes each field's median on its own.
func medianOf(xs []nodeOneShot) nodeOneShot {
	m := func(f func(nodeOneShot) float64) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return nodeOneShot{
		Load:  m(func(x nodeOneShot) float64 { return x.Load }),
		First: m(func(x nodeOneShot) float64 { return x.First }),
		Total: m(func(x nodeOneShot) float64 { return x.Total }),
	}
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "no Node"
	}
	return "Node " + strings.TrimSpace(string(out)) + " (" + runtime.GOARCH + ")"
}

// ms prints milliseconds with three significant digits.
func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
