package preflight

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// oneByte reads one byte at a time: every split of a line, a CRLF and a BOM.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }

// TestSSEParser: the event stream parser of both HTTP transports follows
// the SSE standard, read whole or a byte at a time.
func TestSSEParser(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         []string // "type|data" of each event dispatched
	}{
		{"plain", "data: {}\n\n", []string{"|{}"}},
		{"typed", "event: message\ndata: {\"a\":1}\n\n", []string{"message|{\"a\":1}"}},
		{"multi-line data", "data: a\ndata:  b\ndata\n\n", []string{"|a\n b\n"}},
		{"comments and retry", ": ping\n\nretry: 10\n\ndata: x\n\n", []string{"|", "|x"}},
		{"priming event", "id: 1\ndata:\n\nid: 2\ndata: {}\n\n", []string{"|", "|{}"}},
		{"id alone", "id: 7\n\n", []string{"|"}},
		{"CRLF and lone CR", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []string{"|a", "|b", "|c"}},
		{"BOM", "\xef\xbb\xbfdata: a\n\n", []string{"|a"}},
		// Only the stream's first bytes may be a BOM: later, one makes the
		// field unknown (an event without data).
		{"no BOM later", "data: a\n\n\xef\xbb\xbfdata: b\n\n", []string{"|a", "|"}},
		{"no space after the colon", "data:a\n\n", []string{"|a"}},
		{"unterminated last event", "data: a\n\ndata: b\n", []string{"|a"}},
	} {
		for _, split := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bytewise=%v", c.name, split), func(t *testing.T) {
				var r io.Reader = strings.NewReader(c.stream)
				if split {
					r = oneByte{r}
				}
				var got []string
				tap := &sseTap{rc: io.NopCloser(r), max: 1 << 20, tooLarge: func() error { return errors.New("too large") },
					dispatch: func(name string, data []byte) error {
						got = append(got, name+"|"+string(data))
						return nil
					}}
				if _, err := io.ReadAll(tap); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
					t.Errorf("events %q, want %q", got, c.want)
				}
			})
		}
	}
}

// An event past max bytes ends the stream, however it arrives; so does an
// error from dispatch, and nothing is read after either.
func TestSSEParserStops(t *testing.T) {
	tooLarge := errors.New("too large")
	refused := errors.New("refused")
	for _, split := range []bool{false, true} {
		var r io.Reader = strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n")
		if split {
			r = oneByte{r}
		}
		tap := &sseTap{rc: io.NopCloser(r), max: 64, tooLarge: func() error { return tooLarge }, dispatch: func(string, []byte) error {
			t.Error("an event past max was dispatched")
			return nil
		}}
		if _, err := io.ReadAll(tap); !errors.Is(err, tooLarge) {
			t.Errorf("bytewise=%v: %v, want the limit's error", split, err)
		}
	}
	n := 0
	tap := &sseTap{rc: io.NopCloser(strings.NewReader("event: endpoint\ndata: x\n\ndata: y\n\n")), max: 64, tooLarge: func() error { return tooLarge },
		dispatch: func(string, []byte) error { n++; return refused }}
	if b, err := io.ReadAll(tap); !errors.Is(err, refused) || n != 1 || len(b) != 0 {
		t.Errorf("read %q, %v after %d events; want nothing, refused after 1", b, err, n)
	}
}
