package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "", "write the API to this file instead of standard output")
	root := flag.String("root", ".", "the module's root directory, holding go.mod")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

// run writes the API of the module at root to the file out, or to standard output when
// out is empty.
func run(root, out string) error {
	text, err := generate(root)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(text)
		return err
	}
	if err := os.WriteFile(out, text, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
