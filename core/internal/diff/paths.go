package diff

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// PathChange is one place where two JSON values differ.
type PathChange struct {
	Path   string // an RFC 6901 JSON Pointer
	Change string // "added", "removed" or "changed"
}

// MaxPaths bounds the paths listed for one schema.
const MaxPaths = 100

// Paths lists where new differs from old, as JSON Pointers, in canonical
// order: object members by name (UTF-16), array elements by index. A value
// whose type changed, a changed scalar, and an added or removed member or
// array element is reported whole at its own path; objects, and arrays
// element by element, are descended into. At most MaxPaths are listed; cut
// says whether more differed.
func Paths(old, new canon.Value) (paths []PathChange, cut bool) {
	paths = []PathChange{}
	var walk func(path string, a, b canon.Value)
	walk = func(path string, a, b canon.Value) {
		if cut {
			return
		}
		add := func(p, change string) {
			if len(paths) == MaxPaths {
				cut = true
				return
			}
			paths = append(paths, PathChange{p, change})
		}
		if a.Kind() == canon.Object && b.Kind() == canon.Object {
			am, bm := sortedMembers(a), sortedMembers(b)
			i, j := 0, 0
			for i < len(am) || j < len(bm) {
				var c int
				switch {
				case i == len(am):
					c = 1
				case j == len(bm):
					c = -1
				default:
					c = canon.CompareKeys(am[i].Key, bm[j].Key)
				}
				switch {
				case c < 0:
					add(path+"/"+escape(am[i].Key), "removed")
					i++
				case c > 0:
					add(path+"/"+escape(bm[j].Key), "added")
					j++
				default:
					walk(path+"/"+escape(am[i].Key), am[i].Value, bm[j].Value)
					i, j = i+1, j+1
				}
			}
			return
		}
		if a.Kind() == canon.Array && b.Kind() == canon.Array {
			ae, be := a.Elems(), b.Elems()
			for k := 0; k < max(len(ae), len(be)); k++ {
				p := path + "/" + strconv.Itoa(k)
				switch {
				case k >= len(ae):
					add(p, "added")
				case k >= len(be):
					add(p, "removed")
				default:
					walk(p, ae[k], be[k])
				}
			}
			return
		}
		if !canon.Equal(a, b) {
			add(path, "changed")
		}
	}
	walk("", old, new)
	return paths, cut
}

func sortedMembers(v canon.Value) []canon.Member {
	ms := slices.Clone(v.Members())
	slices.SortFunc(ms, func(a, b canon.Member) int { return canon.CompareKeys(a.Key, b.Key) })
	return ms
}

func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// PathsValue renders path changes as [{"path":…,"change":…}].
func PathsValue(ps []PathChange) canon.Value {
	vs := make([]canon.Value, len(ps))
	for i, p := range ps {
		vs[i] = canon.Obj(canon.M("path", canon.Str(p.Path)), canon.M("change", canon.Str(p.Change)))
	}
	return canon.Arr(vs...)
}
