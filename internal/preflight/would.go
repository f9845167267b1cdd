package preflight

import (
	"encoding/json"
	"sync"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// WouldText is the core's notice for an observe-mode record (refusal with
// would): what enforce would have withheld or paused, naming the tools,
// what differed and the record. ok is false when enforce would have
// refused nothing (a record of another mode, or one whose would effects
// all proceed), and for a record the core cannot read.
func WouldText(rec Record) (string, bool) {
	if rec.Would == nil || len(rec.Raw) == 0 {
		return "", false
	}
	var out struct {
		Text *string `json:"text"`
	}
	if corecall.Into("refusal", map[string]any{"record": corecall.Text(rec.Raw), "would": true}, &out) != nil || out.Text == nil {
		return "", false
	}
	return *out.Text, true
}

// WouldOnce tells what enforce would have refused once for each distinct
// would of a session's records, as the JS and Python SDKs do: observe mode
// withholds nothing, so a change it let through would go unseen by anyone
// not reading the log, and a storm of re-checks that find the same change
// must not repeat it. A new would (another tool, another effect) is told
// again. The zero value is ready; it is safe for concurrent use.
type WouldOnce struct {
	mu   sync.Mutex
	told string // the would last told, as JSON (map keys sorted)
}

// Next returns the notice for rec when its would differs from the one last
// told, and records it as told; ok is false when there is nothing new to
// say.
func (w *WouldOnce) Next(rec Record) (string, bool) {
	if rec.Would == nil {
		return "", false
	}
	key, err := json.Marshal(rec.Would)
	if err != nil {
		return "", false
	}
	w.mu.Lock()
	same := string(key) == w.told
	w.told = string(key)
	w.mu.Unlock()
	if same {
		return "", false
	}
	return WouldText(rec)
}
