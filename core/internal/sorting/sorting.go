// Package sorting sorts slices through one copy of the sort code.
//
// slices.SortFunc compiles its whole pattern-defeating quicksort (about
// 25 KB of wasm) once per element shape, and the core sorts a dozen
// shapes: most of 180 KB of crawlcheck.wasm was copies of one algorithm
// (issue 9). Func and Stable run sort.Sort and sort.Stable, the same
// algorithms generated from the same template as slices.SortFunc and
// slices.SortStableFunc, through an interface; only this small adapter is
// instantiated per shape. The order of elements that compare equal is
// therefore the one slices would give (sorting_test.go checks it), so no
// answer's bytes change. The hot sort of an object's members in core/canon
// stays on slices: it is one shape and runs for every object parsed.
package sorting

import "sort"

// Func sorts x by cmp, as slices.SortFunc does.
func Func[T any](x []T, cmp func(a, b T) int) { sort.Sort(adapter[T]{x, cmp}) }

// Stable sorts x by cmp keeping equal elements in their order, as
// slices.SortStableFunc does.
func Stable[T any](x []T, cmp func(a, b T) int) { sort.Stable(adapter[T]{x, cmp}) }

// Strings sorts x in byte order, as slices.Sort does.
func Strings(x []string) { sort.Sort(byteOrder(x)) }

type adapter[T any] struct {
	x   []T
	cmp func(a, b T) int
}

func (a adapter[T]) Len() int           { return len(a.x) }
func (a adapter[T]) Less(i, j int) bool { return a.cmp(a.x[i], a.x[j]) < 0 }
func (a adapter[T]) Swap(i, j int)      { a.x[i], a.x[j] = a.x[j], a.x[i] }

type byteOrder []string

func (s byteOrder) Len() int           { return len(s) }
func (s byteOrder) Less(i, j int) bool { return s[i] < s[j] }
func (s byteOrder) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
