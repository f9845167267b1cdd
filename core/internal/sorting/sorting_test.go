package sorting

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

type item struct {
	key  int
	from int
}

// TestSameOrderAsSlices: on inputs full of equal keys (where an unstable
// sort may place them either way) Func and Stable leave every element
// where slices.SortFunc and slices.SortStableFunc do.
func TestSameOrderAsSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	byKey := func(a, b item) int { return a.key - b.key }
	for _, n := range []int{0, 1, 2, 5, 12, 13, 40, 50, 200, 1000, 5000} {
		for _, keys := range []int{1, 3, 50, 1 << 30} {
			for round := 0; round < 8; round++ {
				in := make([]item, n)
				for i := range in {
					in[i] = item{r.IntN(keys), i}
				}
				switch round {
				case 1:
					slices.SortFunc(in, byKey)
				case 2:
					slices.SortFunc(in, func(a, b item) int { return b.key - a.key })
				}
				for i := range in {
					in[i].from = i
				}
				want, got := slices.Clone(in), slices.Clone(in)
				slices.SortFunc(want, byKey)
				Func(got, byKey)
				if !slices.Equal(want, got) {
					t.Fatalf("Func: n=%d keys=%d round=%d: order differs from slices.SortFunc", n, keys, round)
				}
				want, got = slices.Clone(in), slices.Clone(in)
				slices.SortStableFunc(want, byKey)
				Stable(got, byKey)
				if !slices.Equal(want, got) {
					t.Fatalf("Stable: n=%d keys=%d round=%d: order differs from slices.SortStableFunc", n, keys, round)
				}
				ws := make([]string, n)
				for i := range ws {
					ws[i] = strconv.Itoa(in[i].key)
				}
				gs := slices.Clone(ws)
				slices.Sort(ws)
				Strings(gs)
				if !slices.Equal(ws, gs) {
					t.Fatalf("Strings: n=%d: order differs from slices.Sort", n)
				}
			}
		}
	}
}
