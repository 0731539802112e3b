package settings_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ini is a parsed oslo.config file: section → option → values in file order.
type ini map[string]map[string][]string

// parseOslo reads text as oslo.config's iniparser does: lines starting with "#" or ";"
// are comments, "[name]" starts a section, "key = value" or "key: value" assigns
// (key and value stripped of white space, one pair of matching enclosing quotes
// removed from the value), an indented line continues the value before it (joined
// with "\n"), a blank line ends a value, and a repeated key accumulates values. It is
// the oracle the tests read rendered files back with.
func parseOslo(text string) (ini, error) {
	out := ini{}
	section, key := "", ""
	var value []string
	flush := func() {
		if key != "" {
			out[section][key] = append(out[section][key], strings.Join(value, "\n"))
			key, value = "", nil
		}
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		line = strings.TrimRight(line, " \t")
		switch {
		case line == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if key == "" {
				return nil, fmt.Errorf("line %d: continuation without an option: %q", i+1, line)
			}
			value = append(value, strings.TrimLeft(line, " \t"))
		case line[0] == '#' || line[0] == ';':
			flush()
		case line[0] == '[':
			flush()
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				return nil, fmt.Errorf("line %d: bad section %q", i+1, line)
			}
			section = line[1 : len(line)-1]
			if out[section] == nil {
				out[section] = map[string][]string{}
			}
		default:
			flush()
			if section == "" {
				return nil, fmt.Errorf("line %d: option before any section: %q", i+1, line)
			}
			sep := strings.IndexAny(line, ":=")
			if sep < 0 {
				return nil, fmt.Errorf("line %d: no ':' or '=': %q", i+1, line)
			}
			key = strings.TrimSpace(line[:sep])
			v := strings.TrimSpace(line[sep+1:])
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			value = []string{v}
		}
	}
	flush()
	return out, nil
}

// single converts a parse to section → option → the one value, failing on an option
// with several values.
func single(t testing.TB, in ini) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for section, options := range in {
		out[section] = map[string]string{}
		for key, values := range options {
			if len(values) != 1 {
				t.Fatalf("[%s] %s has %d values", section, key, len(values))
			}
			out[section][key] = values[0]
		}
	}
	return out
}

// TestParseOslo pins the oracle to oslo.config's parsing rules.
func TestParseOslo(t *testing.T) {
	got, err := parseOslo("# c\n[DEFAULT]\na = 1\nb: \"q\"\n; c\n[s]\nc = x\n    y\n\nc = z\n[s]\nd =\n")
	if err != nil {
		t.Fatal(err)
	}
	want := ini{"DEFAULT": {"a": {"1"}, "b": {"q"}}, "s": {"c": {"x\ny", "z"}, "d": {""}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"a = 1\n", "[s]\n  x\n", "[s\n", "[s]\nab\n"} {
		if _, err := parseOslo(bad); err == nil {
			t.Errorf("parseOslo(%q) accepted", bad)
		}
	}
}
