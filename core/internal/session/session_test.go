package session

import (
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// TestPaceCapsAndResets: a storm doubles the wait up to RecheckMaxMS and no
// further; a quiet spell (more than twice the wait) resets it.
func TestPaceCapsAndResets(t *testing.T) {
	s := New()
	at := int64(0)
	for i := 0; i < 12; i++ {
		now, due := s.ListChanged(at)
		if !now {
			if !s.Timer(due) {
				t.Fatalf("step %d: the wake started nothing", i)
			}
			at = due
		}
		s.Seen = s.Changes // a check covered them
		at++
	}
	if s.WaitMS != RecheckMaxMS {
		t.Errorf("after a long storm the wait is %d ms, want %d", s.WaitMS, RecheckMaxMS)
	}
	now, _ := s.ListChanged(at + 3*RecheckMaxMS)
	if !now || s.WaitMS != RecheckMinMS {
		t.Errorf("after a quiet spell: at once %v, wait %d ms", now, s.WaitMS)
	}
}

// TestTimerWithNothingToCover: a wake after a check covered every
// notification starts nothing, and leaves no wake behind.
func TestTimerWithNothingToCover(t *testing.T) {
	s := New()
	s.ListChanged(0)
	s.Seen = s.Changes
	_, due := s.ListChanged(10)
	s.Seen = s.Changes
	if s.Timer(due) || s.DueMS != -1 {
		t.Errorf("a covered wake started a re-check, or stayed: due %d", s.DueMS)
	}
}

// TestParseRefusesWhatTheCoreDidNotWrite: a state of another version, a
// missing member or a wrong type is a bad_request, never a default.
func TestParseRefusesWhatTheCoreDidNotWrite(t *testing.T) {
	good := New()
	if _, err := Parse(good.Value(), "request.state"); err != nil {
		t.Fatalf("the core's own state: %v", err)
	}
	for name, v := range map[string]canon.Value{
		"not an object":  canon.Str("x"),
		"other version":  With(good.Value(), nil, canon.M("v", canon.Int(2))),
		"no pace":        With(good.Value(), []string{"pace"}),
		"seen negative":  With(good.Value(), nil, canon.M("seen", canon.Str("-1"))),
		"refresh a text": With(good.Value(), nil, canon.M("refresh", canon.Str("yes"))),
	} {
		if _, err := Parse(v, "request.state"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestNoteSize: the second line's digits, no leading zero, at most 2^53.
func TestNoteSize(t *testing.T) {
	for note, want := range map[string]int64{"o\n0\nr": 0, "o\n7\nr": 7, "o\n9007199254740992\nr": 1 << 53} {
		if n, ok := NoteSize(note); !ok || n != want {
			t.Errorf("%q: %d %v, want %d", note, n, ok, want)
		}
	}
	for _, note := range []string{"o\n07\nr", "o\n+7\nr", "o\n9007199254740993\nr", "o\n\nr", "o\n7", "o\n7 \nr"} {
		if n, ok := NoteSize(note); ok {
			t.Errorf("%q: read as %d", note, n)
		}
	}
}

// TestItemsRoundTrip: the handed keys a state keeps read back as written,
// sorted and without a repeat, and a state naming a list no call reads, or
// a key that is not a string, is not one the core wrote.
func TestItemsRoundTrip(t *testing.T) {
	s := New()
	s.Session = "proceed"
	s.setItems("prompts", []string{"weekly", "triage", "weekly"})
	back, err := Parse(s.Value(), "state")
	if err != nil {
		t.Fatal(err)
	}
	if !back.ItemAllowed("prompts", "triage") || back.ItemAllowed("resources", "triage") || len(back.Items["prompts"]) != 2 {
		t.Errorf("items read back: %v", back.Items)
	}
	for _, bad := range []string{`{"tools":["x"]}`, `{"prompts":[1]}`, `["x"]`} {
		v, err := canon.Parse([]byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		doc := With(s.Value(), nil, canon.M("items", v))
		if _, err := Parse(doc, "state"); err == nil {
			t.Errorf("items %s read as a state the core wrote", bad)
		}
	}
}
