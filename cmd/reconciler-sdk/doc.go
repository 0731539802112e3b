// Command reconciler-sdk scaffolds, builds and deploys operators built on
// github.com/c5c3/reconciler-sdk. Run it from the module proxy at the SDK version an
// operator requires:
//
//	go run github.com/c5c3/reconciler-sdk/cmd/reconciler-sdk@latest <command> [flags]
//
// `reconciler-sdk help` lists the commands; `reconciler-sdk <command> -h` shows a
// command's flags.
package main
