// Command api writes the exported API of the module it runs in as text: every exported
// identifier of every package that an importer of the module can use (not _test files,
// not package main, not under an internal/ directory; the examples included, since
// operator authors copy them), with its signature, one line per identifier where
// possible. `make api` runs it as `go run ./hack/api -o docs/api.txt`; without -o it
// writes to standard output. The root package's api_test.go regenerates the text and
// fails when docs/api.txt differs, so a change of the API is always a visible change of
// that file in review.
//
// The output is deterministic and host-independent: packages sorted by import path,
// files selected by their build constraints for linux/amd64, identifiers sorted within
// their section (constants, variables, functions, types; each type followed by its
// exported fields or interface methods, then its methods), no file positions. It is
// built from the syntax trees alone (go/build, go/parser, go/ast), without type
// checking, so a constant or variable declared without a type shows its value
// expression instead of its type, and a method of an unexported type, promoted through
// an embedded field or reachable through an exported function's result, is not listed.
//
// Identifiers whose documentation holds a "Deprecated:" paragraph (in their own doc
// comment, their line comment or the doc comment of their declaration group) end in
// "// Deprecated". The root package's changelog_test.go checks that CHANGELOG.md names
// each of them.
//
// Flags:
//
//	-o file   write to file instead of standard output
//	-root dir the module's root directory, holding go.mod (default ".")
package main
