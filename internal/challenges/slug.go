package challenges

// ValidSlug reports whether s could name a level: what the transport checks
// in a path or a request field before it looks anything up, so that bytes no
// level can have (NUL, invalid UTF-8, kilobytes of text) never reach a store.
func ValidSlug(s string) bool {
	return len(s) <= maxSlugLen && slugPattern.MatchString(s)
}
