package jsonframe

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestRecent: Recent frames every body as Members does, whatever it kept
// from the bodies before (the same values again, values that only begin
// like a kept one, a body reused for other bytes), and keeps at most
// recentKept values, each once.
func TestRecent(t *testing.T) {
	var r Recent
	big := func(n int) string { return `"` + strings.Repeat(fmt.Sprintf(`%d\"`, n), recentMin/2) + `"` }
	tools := `[{"name":"a","d":` + big(7) + `}]`
	var bodies []string
	for n := 0; n < recentKept+3; n++ {
		bodies = append(bodies,
			`{"lock":`+big(n)+`,"tools":`+tools+`}`,
			`{"lock":`+big(n)+`,"tools":`+tools+`}`,
			`{"lock":`+big(n)[:len(big(n))-1]+`x","tools":`+tools+`}`, // longer than the kept string
			`{"lock":`+big(n)+` 1}`,                                   // refused: bytes after the value
			`{"a":`+tools+`,"b":`+tools+`}`,
		)
	}
	buf := make([]byte, 0, 1<<20)
	for round := 0; round < 2; round++ {
		for _, body := range bodies {
			// One buffer for every body, as the issuer reuses its buffers.
			buf = append(buf[:0], body...)
			got, gotOK := r.Members(buf)
			want, wantOK := Members([]byte(body))
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("Recent.Members(%.40s…) = %d members, %v; Members %d, %v", body, len(got), gotOK, len(want), wantOK)
			}
			// The large values answered are copies, kept: the buffer
			// changed, they still hold the body's bytes.
			clear(buf)
			for name, v := range got {
				if len(v) >= recentMin && (string(v) != string(want[name]) || !r.Owns(v)) {
					t.Fatalf("Recent.Members(%.40s…)[%q]: not a copy kept", body, name)
				}
			}
		}
	}
	if len(r.values) != recentKept {
		t.Errorf("%d values kept, want %d", len(r.values), recentKept)
	}
	for i, v := range r.values {
		if keeps(r.values[:i], v) {
			t.Errorf("value %d kept twice", i)
		}
	}
}
