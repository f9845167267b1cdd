package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdTools writes a server's tools/list answer as a file that --tools, the
// offline page's "tools" input and `crawlcheck lock --tools` take: the
// result of tools/list, {"tools":[…]}, with every tool object's bytes as the
// server sent them, so its hashes are the live list's. A list of one page
// is that page as received; a list of several is their tools joined in
// order into one result (the page and --tools read one page). A list the
// core would not pin (not read whole, a page it cannot parse, a server that
// failed) is refused, as lock refuses it: exit 1.
func cmdTools(c *cli, args []string) error {
	fs := c.flagSet("tools")
	var src sourceFlags
	src.register(fs)
	out := fs.String("o", "", "write the tool list to `FILE` (atomically; - for stdout) instead of stdout")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if err := checkOut(*out); err != nil {
		return err
	}
	tg, ok, err := src.target()
	if err != nil {
		return err
	}
	if !ok || !tg.live() {
		return usagef("give --server, --url or --sse: the server whose tools/list to write")
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	obs, err := tg.observe(c)
	if err != nil {
		return err
	}
	// The core's rule of a list that may be pinned is the rule of a list
	// that may be written: make_lock refuses the rest.
	if _, err := preflight.MakeLock(obs, preflight.LockOptions{Now: now}); err != nil {
		return lockRefused(tg, err)
	}
	list, err := joinPages(obs.Pages)
	if err != nil {
		return blocked("cannot write this server's tools: %v", err)
	}
	return writeOut(c, *out, append(list, '\n'))
}

// joinPages is one tools/list result of pages the core has read whole: the
// only page as it came, or {"tools":[…]} holding each page's tool objects,
// each the bytes the server sent (json.RawMessage keeps them verbatim).
func joinPages(pages [][]byte) ([]byte, error) {
	if len(pages) == 1 {
		return bytes.TrimSpace(pages[0]), nil
	}
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	n := 0
	for i, p := range pages {
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(p, &page); err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		for _, t := range page.Tools {
			if n > 0 {
				b.WriteByte(',')
			}
			b.Write(t)
			n++
		}
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}
