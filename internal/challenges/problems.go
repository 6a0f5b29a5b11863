package challenges

import (
	"errors"
	"fmt"
	"strings"

	"backpressure/internal/sim"
)

// Problem is one reason a level or a design is invalid: the JSON path of the offending
// field ("" for the document itself) and a reason its author can act on.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Problems lists every problem of one input, in document order where there is one, so that
// an author sees them all at once. As an error it is returned only when non-empty.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s): ", len(ps))
	for i, p := range ps {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(" ")
		}
		b.WriteString(p.Reason)
	}
	return b.String()
}

func (ps *Problems) add(path, reason string) { *ps = append(*ps, Problem{Path: path, Reason: reason}) }

func (ps *Problems) addf(path, format string, args ...any) {
	ps.add(path, fmt.Sprintf(format, args...))
}

// err returns the problems as an error, or nil when there are none.
func (ps Problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// AsProblems returns the problems carried by err (challenges or engine), if any.
func AsProblems(err error) (Problems, bool) {
	var ps Problems
	if errors.As(err, &ps) {
		return ps, true
	}
	var sp sim.Problems
	if errors.As(err, &sp) {
		return fromSim(sp, func(p string) string { return p }), true
	}
	return nil, false
}

// fromSim converts engine problems, rewriting each path with rewrite (engine paths are
// relative to the engine's own Config and Design; a level nests them).
func fromSim(sp sim.Problems, rewrite func(string) string) Problems {
	out := make(Problems, 0, len(sp))
	for _, p := range sp {
		out = append(out, Problem{Path: rewrite(p.Path), Reason: p.Reason})
	}
	return out
}

// join appends a path element: a field name (".name") or an index ("[3]").
func join(path, elem string) string {
	if path == "" {
		return elem
	}
	return path + "." + elem
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// covered reports whether path is at or below one of the given paths.
func covered(path string, roots map[string]bool) bool {
	for p := path; ; {
		if roots[p] {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return roots[""]
		}
		p = p[:i]
	}
}
