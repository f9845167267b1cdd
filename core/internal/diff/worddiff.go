package diff

import (
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// Segment is a run of words that is kept, deleted or inserted.
type Segment struct {
	Op   string // "equal", "delete" or "insert"
	Text string // the words, joined by single spaces
}

// maxCells bounds the table of the longest-common-subsequence step for one
// description; checkCells bounds all of them in one comparison, so a server
// that rewrites a thousand long descriptions cannot make a check slow.
// Beyond the budget the middle of the two texts is reported as one deletion
// and one insertion, which is still exact, only coarser.
const (
	maxCells   = 1_000_000
	checkCells = 16_000_000
)

// Words is the word-level diff of two texts (docs/hashing.md):
//
//  1. Split both texts into words at Unicode white space.
//  2. Take the common leading and trailing words as equal.
//  3. Between them, compute a longest common subsequence of words by
//     dynamic programming; on ties prefer deleting from the old text first,
//     so the answer is the same in every build.
//  4. Merge adjacent words with the same operation into one segment, a
//     deletion always before an insertion at the same place.
//
// White space itself is not compared: a change that only re-wraps a
// description shows as no moved words (the hash still flags it).
func Words(old, new string) []Segment {
	budget := maxCells
	return words(old, new, &budget)
}

// words is Words drawing its table cells from a shared budget.
func words(old, new string, budget *int) []Segment {
	a, b := strings.Fields(old), strings.Fields(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []wordOp
	for _, w := range a[:pre] {
		ops = append(ops, wordOp{"equal", w})
	}
	ops = append(ops, middle(a[pre:len(a)-suf], b[pre:len(b)-suf], budget)...)
	for _, w := range a[len(a)-suf:] {
		ops = append(ops, wordOp{"equal", w})
	}
	return merge(ops)
}

type wordOp struct{ op, word string }

func middle(a, b []string, budget *int) []wordOp {
	var ops []wordOp
	cells := len(a) * len(b)
	if cells > min(*budget, maxCells) || len(a) == 0 || len(b) == 0 {
		for _, w := range a {
			ops = append(ops, wordOp{"delete", w})
		}
		for _, w := range b {
			ops = append(ops, wordOp{"insert", w})
		}
		return ops
	}
	*budget -= cells
	// lcs[i][j] = LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, wordOp{"equal", a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			ops = append(ops, wordOp{"delete", a[i]})
			i++
		default:
			ops = append(ops, wordOp{"insert", b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, wordOp{"delete", a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, wordOp{"insert", b[j]})
	}
	return ops
}

// merge joins runs of one operation; within a changed stretch all deletions
// come before all insertions.
func merge(ops []wordOp) []Segment {
	out := []Segment{}
	var eq, del, ins []string
	emit := func(op string, words *[]string) {
		if len(*words) > 0 {
			out = append(out, Segment{op, strings.Join(*words, " ")})
			*words = nil
		}
	}
	for _, o := range ops {
		switch o.op {
		case "equal":
			emit("delete", &del)
			emit("insert", &ins)
			eq = append(eq, o.word)
		case "delete":
			emit("equal", &eq)
			del = append(del, o.word)
		default:
			emit("equal", &eq)
			ins = append(ins, o.word)
		}
	}
	emit("equal", &eq)
	emit("delete", &del)
	emit("insert", &ins)
	return out
}

// SegmentsValue renders segments as [{"op":…,"text":…}].
func SegmentsValue(segs []Segment) canon.Value {
	vs := make([]canon.Value, len(segs))
	for i, s := range segs {
		vs[i] = canon.Obj(canon.M("op", canon.Str(s.Op)), canon.M("text", canon.Str(s.Text)))
	}
	return canon.Arr(vs...)
}
