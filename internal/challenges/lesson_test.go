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
	l := skippableReadReplicas(t)
	skip, err := l.SkipLesson(t.Context(), "read_replicas", solution(t, l.Slug))
	if err != nil {
		t.Fatal(err)
	}
	if !skip.Passed {
		t.Errorf("with db.large on offer the search found no design without read replicas that passes: %v", skip.Verdict.Failing())
	}
}

// skippableReadReplicas is the read-replicas level with a larger database on offer, whose
// lesson can be skipped.
func skippableReadReplicas(t *testing.T) *Level {
	t.Helper()
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
	return l
}

// An author's lesson check is the campaign's search within a cost bound: it finds the
// skip the unbounded search finds, spends no more than its bound, says what it could not
// finish, and finds the same thing every time.
func TestCheckLessonWithinItsBound(t *testing.T) {
	l := skippableReadReplicas(t)
	ref := solution(t, l.Slug)
	check, err := l.CheckLesson(t.Context(), ref, LessonLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Skips) != 1 || !check.Skips[0].Passed || !check.Skips[0].Complete {
		t.Fatalf("the check found no skip of read_replicas: %+v", check.Skips)
	}
	if check.Cost <= 0 || check.Cost > check.MaxCost || check.MaxCost != MaxLessonCost || len(check.Unused) != 0 {
		t.Errorf("cost %d of bound %d (want %d), unused %v", check.Cost, check.MaxCost, MaxLessonCost, check.Unused)
	}
	again, err := l.CheckLesson(t.Context(), ref, LessonLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(check), mustJSON(again); string(a) != string(b) {
		t.Errorf("two checks differ:\n%s\n%s", a, b)
	}

	// A bound below the first run's cost runs nothing and says the search is unfinished.
	first, err := l.RunCost(mechanics["read_replicas"].strip(l, l.StartingDesign, ref))
	if err != nil {
		t.Fatal(err)
	}
	for _, bound := range []int64{first - 1, first + 1} {
		check, err := l.CheckLesson(t.Context(), ref, LessonLimits{MaxCost: bound})
		if err != nil {
			t.Fatal(err)
		}
		sk := check.Skips[0]
		if sk.Complete || sk.Passed || check.Cost > bound {
			t.Errorf("bound %d: complete %v passed %v after %d runs costing %d", bound, sk.Complete, sk.Passed, sk.Tried, check.Cost)
		}
	}

	// From the starting design, which does not use the mechanic, the check says so.
	check, err = l.CheckLesson(t.Context(), l.StartingDesign, LessonLimits{MaxCost: first})
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Unused) != 1 || check.Unused[0] != "read_replicas" {
		t.Errorf("unused %v, want [read_replicas]", check.Unused)
	}
}
