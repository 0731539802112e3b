// Package golden compares what a test renders with golden files, the expected output
// kept next to the test (testdata/...), and rewrites them from the rendered output when
// the test binary runs with -update:
//
//	go test ./settings/ -run Golden -update
//
// [Compare] is the comparison a test calls, [Check] its error form, and [Files] keeps
// the golden files and the cases in step, so a renamed case cannot leave a stale file
// behind. Importing the package registers the -update flag; a test package must not
// define one of its own.
package golden
