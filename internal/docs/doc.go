// Package docs holds no code: its tests read BENCHMARKS.md and RELIABILITY.md as a
// newcomer would and fail when a document points at something that is not there.
//
// Every command a document quotes (in a code span or a code block) must name what exists:
// a scripts/*.sh or .ci/ file, a package of this module, and for `go test -run X`,
// `-bench X` or `-fuzz X` a test, benchmark or fuzz target whose name X matches (every
// alternative of X's top level: `-run 'TestA|TestB'` needs both). The table at the top of
// BENCHMARKS.md is the page's front page: every row must carry a date and a command. A
// section another file cites by name ("Attacks and their bounds" in RELIABILITY.md) must
// be a heading of that document.
//
// Sub-test and sub-benchmark names (what follows the first '/' of a pattern) are made at
// run time and are not checked. Test binaries run directly (`./x.test -test.run …`) are
// refused: a document writes the same command as `go test`, which names its package.
package docs
