package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/crawlcheck/verifier/hosttest/artifact"
)

// pythonResult is what bench/python/bench.py prints: medians in ms.
type pythonResult struct {
	Plain   float64 `json:"plain"`
	SORaw   float64 `json:"so_raw"`
	SOABI1  float64 `json:"so_abi1"`
	Samples int     `json:"samples"`
}

func pythonRun(lib, page, lock string) (pythonResult, error) {
	var r pythonResult
	root, err := artifact.ModuleRoot()
	if err != nil {
		return r, err
	}
	out, err := exec.Command("python3", filepath.Join(root, "hosttest", "bench", "python", "bench.py"), lib, page, lock).Output()
	if err != nil {
		return r, fmt.Errorf("python3 bench.py: %w", err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("python3 bench.py said %q: %w", out, err)
	}
	return r, nil
}
