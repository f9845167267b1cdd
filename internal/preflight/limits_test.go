package preflight

import (
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// coreLimits is the version op's limits member: the defaults every host
// reads from the core.
type coreLimits struct {
	AnswerBytes       int `json:"answer_bytes"`
	CheckTimeoutMS    int `json:"check_timeout_ms"`
	IssuerAnswerBytes int `json:"issuer_answer_bytes"`
	IssuerTimeoutMS   int `json:"issuer_timeout_ms"`
	Pages             int `json:"pages"`
	PagesBytes        int `json:"pages_bytes"`
	RecordLogBytes    int `json:"record_log_bytes"`
	RequestBytes      int `json:"request_bytes"`
}

// TestLimitsAreTheCores: the package's effective defaults are the core's
// answer, not constants of its own (issue 18): a server frame, the pages
// together, a check's deadline, the issuer's deadline and answer, a record
// log.
func TestLimitsAreTheCores(t *testing.T) {
	var v struct {
		Limits coreLimits `json:"limits"`
	}
	if err := corecall.Into("version", struct{}{}, &v); err != nil {
		t.Fatal(err)
	}
	l := v.Limits
	ms := func(d time.Duration) int { return int(d / time.Millisecond) }
	for _, c := range []struct {
		name      string
		host, cor int
	}{
		{"DefaultMaxAnswerBytes", DefaultMaxAnswerBytes, l.AnswerBytes},
		{"MaxListBytes", MaxListBytes, l.PagesBytes},
		{"MaxPages", MaxPages, l.Pages},
		{"DefaultTimeout", ms(DefaultTimeout), l.CheckTimeoutMS},
		{"DefaultIssuerTimeout", ms(DefaultIssuerTimeout), l.IssuerTimeoutMS},
		{"maxIssuerAnswer", maxIssuerAnswer, l.IssuerAnswerBytes},
		{"maxLogBytes", maxLogBytes, l.RecordLogBytes},
	} {
		if c.host != c.cor || c.cor == 0 {
			t.Errorf("%s = %d, the core's limit is %d", c.name, c.host, c.cor)
		}
	}
	// A transport whose caller set no bound takes frames up to the core's.
	if got := (&recorder{}).limit(); got != int64(l.AnswerBytes) {
		t.Errorf("a transport's frame limit is %d by default, the core's is %d", got, l.AnswerBytes)
	}
}
