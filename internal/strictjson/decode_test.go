package strictjson

import "testing"

func TestPathAt(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`nope`, ""},
		{`{"a": NaN}`, "a"},
		{`{"a": 1, "b": {"c": [1, 2, NaN]}}`, "b.c[2]"},
		{`{"a": [{"x": 1}, {"y": Infinity}]}`, "a[1].y"},
		{`{"a": {"b": 1}, "c": `, "c"},
		{`{"a": "x" "b"}`, "a"},
	} {
		if got := pathAt([]byte(tt.body)); got != tt.want {
			t.Errorf("pathAt(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
