package challenges

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The package may import the engine and the campaign's data, nothing else of the project
// (STYLE.md: internal/sim is a leaf; challenges sits on it; only the API sits on top).
func TestImportDirection(t *testing.T) {
	allowed := map[string]bool{"backpressure/internal/sim": true, "backpressure/challenges": true}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "backpressure/") && !allowed[path] {
				t.Errorf("%s imports %s", f, path)
			}
			if strings.Contains(path, "net/http") || strings.Contains(path, "database/sql") || strings.Contains(path, "pgx") {
				t.Errorf("%s imports %s: this package does no I/O", f, path)
			}
		}
	}
}
