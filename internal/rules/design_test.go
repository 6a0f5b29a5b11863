package rules

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// A problem's path is placed under the request field it came from: a field
// below it, an index of it, or the field itself.
func TestProblemsErrorPlacesPaths(t *testing.T) {
	ps := challenges.Problems{{Path: "components[2].params.replicas", Reason: "a"}, {Path: "[0]", Reason: "b"}, {Path: "", Reason: "c"}}
	for _, tt := range []struct {
		prefix string
		want   []string
	}{
		{"design", []string{"design.components[2].params.replicas", "design[0]", "design"}},
		{"", []string{"components[2].params.replicas", "[0]", ""}},
	} {
		err := ProblemsError("invalid", tt.prefix, ps)
		if game.ErrorCode(err) != game.EINVALID {
			t.Errorf("prefix %q: code %q, want %q", tt.prefix, game.ErrorCode(err), game.EINVALID)
		}
		var got []string
		for _, f := range game.ErrorFields(err) {
			got = append(got, f.Field)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("prefix %q: fields (-want +got):\n%s", tt.prefix, diff)
		}
	}
}
