package preflight

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

// chunkings cuts s every way into two pieces, and into single bytes.
func chunkings(s string) [][]string {
	out := [][]string{{s}}
	for i := 1; i < len(s); i++ {
		out = append(out, []string{s[:i], s[i:]})
	}
	var bytewise []string
	for i := range s {
		bytewise = append(bytewise, s[i:i+1])
	}
	return append(out, bytewise)
}

// TestLineTapSwap: with a swap that answers for no frame, what the SDK
// reads is the stream byte for byte, however it arrives, and the frames
// are those the tap emits without one; with a swap that answers, the SDK
// reads the same JSON values but each swapped frame's answer.
func TestLineTapSwap(t *testing.T) {
	stream := "{\"a\":1}\n\n  {\"id\":2,\"result\":{\"tools\":[1]}}  \r\n{\"b\"\n:2}xyz\nnot json\n[{\"c\":3}]\n{\"id\":4,\"result\":{}}"
	for _, chunks := range chunkings(stream) {
		var emitted, swapped [][]byte
		plain := &lineTap{emit: func(f []byte) { emitted = append(emitted, bytes.Clone(f)) }}
		tap := &lineTap{swap: func(f []byte) []byte { swapped = append(swapped, bytes.Clone(f)); return nil }}
		for _, c := range chunks {
			plain.feed([]byte(c))
			tap.feed([]byte(c))
		}
		plain.flush()
		tap.flush()
		if string(tap.out) != stream || !reflect.DeepEqual(swapped, emitted) {
			t.Fatalf("chunks %q:\n out %q\n frames %q, want %q", chunks, tap.out, swapped, emitted)
		}
	}
	valid := "{\"a\":1}\n\n  {\"id\":2,\"result\":{\"tools\":[1]}}  \r\n{\"b\"\n:2}\n[{\"c\":3}]\n{\"id\":4,\"result\":{}}"
	var want []any
	for _, v := range []string{`{"a":1}`, `{"swapped":2}`, `{"b":2}`, `[{"c":3}]`, `{"swapped":4}`} {
		var x any
		json.Unmarshal([]byte(v), &x)
		want = append(want, x)
	}
	for _, chunks := range chunkings(valid) {
		tap := &lineTap{swap: func(f []byte) []byte {
			var m struct{ ID json.RawMessage }
			if json.Unmarshal(f, &m) == nil && m.ID != nil {
				return []byte(`{"swapped":` + string(m.ID) + `}`)
			}
			return nil
		}}
		for _, c := range chunks {
			tap.feed([]byte(c))
		}
		tap.flush()
		var got []any
		dec := json.NewDecoder(bytes.NewReader(tap.out))
		for {
			var x any
			if err := dec.Decode(&x); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("chunks %q: out %q: %v", chunks, tap.out, err)
			}
			got = append(got, x)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chunks %q: the SDK reads %v, want %v", chunks, got, want)
		}
	}
}

// FuzzLineTapSwap: whatever the stream and however it is cut, a swap that
// answers for no frame hands the SDK the stream byte for byte, and sees the
// frames the tap emits without one.
func FuzzLineTapSwap(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n  [1]  \r\n{\"b\"\n:2}xyz\n"), uint8(3), uint8(7))
	f.Fuzz(func(t *testing.T, stream []byte, cut1, cut2 uint8) {
		cuts := []int{int(cut1) % (len(stream) + 1), int(cut2) % (len(stream) + 1)}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		chunks := [][]byte{stream[:cuts[0]], stream[cuts[0]:cuts[1]], stream[cuts[1]:]}
		var emitted, swapped [][]byte
		plain := &lineTap{emit: func(f []byte) { emitted = append(emitted, bytes.Clone(f)) }}
		tap := &lineTap{swap: func(f []byte) []byte { swapped = append(swapped, bytes.Clone(f)); return nil }}
		for _, c := range chunks {
			plain.feed(c)
			tap.feed(c)
		}
		plain.flush()
		tap.flush()
		if !bytes.Equal(tap.out, stream) || !reflect.DeepEqual(swapped, emitted) {
			t.Fatalf("chunks %q: out %q, frames %q, want %q", chunks, tap.out, swapped, emitted)
		}
	})
}
