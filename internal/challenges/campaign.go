package challenges

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	campaignfiles "backpressure/challenges"
)

// Campaign returns the built-in levels in campaign order (the order of their file names),
// parsed and checked once per process. The slice is shared: do not modify its levels.
func Campaign() ([]*Level, error) { return loadCampaign() }

var loadCampaign = sync.OnceValues(func() ([]*Level, error) {
	return LoadDir(context.Background(), campaignfiles.Levels)
})

// CampaignLevel returns the built-in level with the given slug.
func CampaignLevel(slug string) (*Level, error) {
	levels, err := Campaign()
	if err != nil {
		return nil, err
	}
	for _, l := range levels {
		if l.Slug == slug {
			return l, nil
		}
	}
	return nil, fmt.Errorf("no level %q in the campaign", slug)
}

// Schema returns the JSON Schema of level files, as published in challenges/level.schema.json.
func Schema() []byte { return append([]byte(nil), campaignfiles.Schema...) }

// LoadDir parses every *.json file at the root of fsys, in file-name order. Slugs must be
// unique. The error names the file and carries its Problems.
func LoadDir(ctx context.Context, fsys fs.FS) ([]*Level, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Level
	seen := map[string]string{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		l, err := parse(ctx, data, true)
		if err != nil {
			return nil, &FileError{File: name, Err: err}
		}
		if prev, dup := seen[l.Slug]; dup {
			return nil, &FileError{File: name, Err: Problems{{Path: "slug", Reason: fmt.Sprintf("%q is also the slug of %s", l.Slug, prev)}}}
		}
		seen[l.Slug] = name
		out = append(out, l)
	}
	return out, nil
}

// FileError is a problem with one file of a directory of levels.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }
