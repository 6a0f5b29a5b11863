package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A finished event's final run is re-run with POST /v1/simulations
// {"event": id} and gives the stored evaluation, byte for byte; before the
// finish, or on another level, the dry run is refused and names why.
func TestSimulationRerunsAnEventsFinalRun(t *testing.T) {
	f := newEventFixture(t)
	start := f.clock.Now().Add(time.Minute)
	end := start.Add(time.Hour)
	status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
		"level": "first-request", "title": "Re-run night", "starts_at": start, "ends_at": end,
		"hidden_chaos": json.RawMessage(hiddenSpike), "resilience": map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
	})
	if status != 201 {
		t.Fatalf("create event: %d %v", status, ev)
	}
	id := ev["id"].(string)
	pid := f.player("ada")
	f.clock.set(start)
	if status, out := f.do("POST", "/v1/events/"+id+"/submissions", f.tokens["ada"], map[string]any{"design": testDesign(3)}); status != 201 {
		t.Fatalf("submit: %d %v", status, out)
	}
	rerun := map[string]any{"level": "first-request", "design": testDesign(3), "event": id}

	refused := []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"not finished", rerun, 409, "conflict"},
		{"not an id", with(rerun, "event", "nope"), 422, "invalid"},
		{"no such event", with(rerun, "event", uuid.NewString()), 422, "invalid"},
	}
	for _, r := range refused {
		if status, p := f.do("POST", "/v1/simulations", "", r.body); status != r.status || p["code"] != r.code {
			t.Errorf("%s: %d %v, want %d %s", r.name, status, p, r.status, r.code)
		}
	}

	f.clock.set(end)
	if err := f.deps.rulesService().EventFinisher().FinishDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if status, p := f.do("POST", "/v1/simulations", "", with(rerun, "level", "cache-me-if-you-can")); status != 422 || p["code"] != "invalid" {
		t.Errorf("another level: %d %v, want 422 naming level", status, p)
	}

	var final struct {
		Evaluation json.RawMessage `json:"evaluation"`
	}
	getJSON(t, f.http.URL+"/v1/events/"+id+"/results/"+pid, &final)
	var again struct {
		Evaluation json.RawMessage `json:"evaluation"`
	}
	raw, _ := json.Marshal(rerun)
	resp, err := http.Post(f.http.URL+"/v1/simulations", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("re-run: %d %s", resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compact(t, final.Evaluation), compact(t, again.Evaluation)) {
		t.Errorf("the re-run's evaluation differs from the final run's:\n%s\n%s", final.Evaluation, again.Evaluation)
	}
	// Without the event, the same design meets the level as published: no hidden spike.
	raw, _ = json.Marshal(with(rerun, "event", nil))
	resp, err = http.Post(f.http.URL+"/v1/simulations", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(body, []byte(`"surprise"`)) || !bytes.Contains(final.Evaluation, []byte(`"surprise"`)) {
		t.Errorf("the hidden spike should be in the final run's evaluation only")
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range m {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
