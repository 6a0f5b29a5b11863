package challenges

import (
	"bytes"
	"encoding/json"
	"testing"

	campaignfiles "backpressure/challenges"
)

// FuzzParse: Parse never panics, and either accepts a level or says why with at least one
// problem; an accepted level survives a round trip through its own JSON. The committed
// corpus is in testdata/fuzz/FuzzParse; the campaign files seed it too.
func FuzzParse(f *testing.F) {
	entries, _ := campaignfiles.Levels.ReadDir(".")
	for _, e := range entries {
		data, _ := campaignfiles.Levels.ReadFile(e.Name())
		f.Add(data)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"slug": 1, "slug": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			ps, ok := AsProblems(err)
			if !ok || len(ps) == 0 {
				t.Fatalf("Parse error %v carries no problems", err)
			}
			return
		}
		again, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		l2, err := Parse(again)
		if err != nil {
			t.Fatalf("re-parsing an accepted level: %v", err)
		}
		if !bytes.Equal(mustJSON(l2), again) {
			t.Fatalf("round trip changed the level")
		}
	})
}

// FuzzParseDesign: ParseDesign never panics and reports problems for what it rejects.
func FuzzParseDesign(f *testing.F) {
	f.Add([]byte(`{"components":[{"id":"app","type":"app_service","params":{"replicas":2}}],"edges":[]}`))
	f.Add([]byte(`{"components":[{"id":"a"}],"edges":[{"from":"a","to":"b","x":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseDesign(data); err != nil {
			if ps, ok := AsProblems(err); !ok || len(ps) == 0 {
				t.Fatalf("ParseDesign error %v carries no problems", err)
			}
		}
	})
}
