package challenges

import (
	"encoding/json"
	"testing"

	campaignfiles "backpressure/challenges"
)

// Lessons that cannot be skipped: every level declares what it teaches, its reference
// solution uses every mechanic of the lesson, and the best design the search finds that
// leaves one out (the reference with it taken out, improved one single change at a time
// within the level's catalog and limits) fails.
func TestLessonsCannotBeSkipped(t *testing.T) {
	if raceEnabled {
		t.Skip("hundreds of sequential runs per level; the same code runs in the suite without -race")
	}
	for _, l := range campaign(t) {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			if l.Lesson == nil {
				t.Fatal("a built-in level declares its lesson")
			}
			ref := solution(t, l.Slug)
			for _, name := range l.Lesson.Mechanics {
				if !mechanics[name].uses(l, l.StartingDesign, ref) {
					t.Errorf("%s: the reference solution does not use it", name)
					continue
				}
				skip, err := l.SkipLesson(t.Context(), name, ref)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if skip.Passed {
					d, _ := json.Marshal(skip.Design)
					t.Errorf("%s can be skipped: %s passes without it (score %d)", name, d, *skip.Verdict.Score)
				}
				t.Logf("%s: the best design without it fails on %v (%d designs tried)", name, skip.Verdict.Failing(), skip.Tried)
			}
		})
	}
}

// The search finds a skip where there is one: with a larger database on offer, read
// replicas are no lesson, since a single faster node with more app replicas passes; the
// search reaches it from the reference solution in single changes.
func TestSkipLessonFindsASkip(t *testing.T) {
	data, err := campaignfiles.Levels.ReadFile("05-read-replicas.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	db := doc["catalog"].(map[string]any)["components"].(map[string]any)["database"].(map[string]any)
	delete(db, "instance_types") // every database type of the price list: db.large too
	data, _ = json.Marshal(doc)
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	skip, err := l.SkipLesson(t.Context(), "read_replicas", solution(t, l.Slug))
	if err != nil {
		t.Fatal(err)
	}
	if !skip.Passed {
		t.Errorf("with db.large on offer the search found no design without read replicas that passes: %v", skip.Verdict.Failing())
	}
}
