package sim

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one reason an input is invalid: the JSON path of the offending field and a
// reason a player can act on.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Problems collects every problem of an input, so a player sees them all at once.
// As an error it is returned only when non-empty.
type Problems []Problem

func (ps *Problems) add(path, reason string) { *ps = append(*ps, Problem{Path: path, Reason: reason}) }

func (ps *Problems) addf(path, format string, args ...any) {
	ps.add(path, fmt.Sprintf(format, args...))
}

func (ps Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s): ", len(ps))
	for i, p := range ps {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Path)
		b.WriteString(" ")
		b.WriteString(p.Reason)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
