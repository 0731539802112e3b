package main

import (
	"strings"
	"testing"
)

// The dispatcher: no arguments is a usage error, help lists every registered command,
// an unknown command names itself and exits 2, and two-word commands win over one-word
// ones ("create api" is not "create").
func TestDispatch(t *testing.T) {
	cases := map[string]struct {
		reason   string
		args     []string
		wantCode int
		want     []string // substrings of stderr
	}{
		"no arguments": {reason: "nothing to run is a usage error that shows the commands",
			wantCode: 2, want: []string{"Usage: reconciler-sdk <command>", "init", "create api", "image", "deploy", "undeploy"}},
		"help": {reason: "help lists the commands and succeeds",
			args: []string{"help"}, wantCode: 0, want: []string{"create api", "deploy"}},
		"unknown": {reason: "an unknown command is named, with the usage",
			args: []string{"frobnicate", "now"}, wantCode: 2, want: []string{`unknown command "frobnicate now"`, "Usage:"}},
		"half of a two-word command": {reason: "create without api is no command",
			args: []string{"create"}, wantCode: 2, want: []string{`unknown command "create"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("%s: exit %d, want %d; stderr:\n%s", tc.reason, code, tc.wantCode, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", tc.reason, w, stderr)
				}
			}
		})
	}
}

// register refuses a name twice: two files registering one subcommand is a bug.
func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering init a second time did not panic")
		}
	}()
	register(command{name: "init"})
}
