package config_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/config"
)

// parseOslo parses text the way oslo.config reads a configuration file: Python's
// universal-newline line iteration (open() in text mode) fed to
// oslo_config.iniparser.BaseParser.parse, with oslo_config.cfg.ConfigParser's
// assignment (values of a repeated key accumulate; the lines of a multi-line value
// are joined with "\n"). It is the round-trip oracle for RenderINI, written from the
// Python source independently of the renderer.
func parseOslo(text string) (config.Sections, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}

	out := config.Sections{}
	section := ""
	var key string
	var value []string
	assign := func(lineno int) error {
		if section == "" {
			return fmt.Errorf("line %d: section must be started before assignment", lineno)
		}
		out[section][key] = append(out[section][key], strings.Join(value, "\n"))
		key, value = "", nil
		return nil
	}
	for i, raw := range lines {
		lineno := i + 1
		line := strings.TrimRightFunc(raw, pyIsSpace)
		switch {
		case line == "":
			if key != "" {
				if err := assign(lineno); err != nil {
					return nil, err
				}
			}
			continue
		case line[0] == ' ' || line[0] == '\t':
			if key == "" {
				return nil, fmt.Errorf("line %d: unexpected continuation line %q", lineno, line)
			}
			value = append(value, strings.TrimLeftFunc(line, pyIsSpace))
			continue
		}
		if key != "" {
			if err := assign(lineno); err != nil {
				return nil, err
			}
		}
		switch line[0] {
		case '[':
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: invalid section (must end with ]): %q", lineno, line)
			}
			if len(line) <= 2 {
				return nil, fmt.Errorf("line %d: empty section name", lineno)
			}
			section = line[1 : len(line)-1]
			if out[section] == nil {
				out[section] = map[string][]string{}
			}
		case '#', ';':
			// comment
		default:
			k, v, err := splitKeyValue(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineno, err)
			}
			if k == "" {
				return nil, fmt.Errorf("line %d: key cannot be empty: %q", lineno, line)
			}
			key, value = k, []string{v}
		}
	}
	if key != "" {
		if err := assign(len(lines)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// splitKeyValue is BaseParser._split_key_value.
func splitKeyValue(line string) (key, value string, err error) {
	colon, equal := strings.IndexByte(line, ':'), strings.IndexByte(line, '=')
	switch {
	case colon < 0 && equal < 0:
		return "", "", errors.New("no ':' or '=' found in assignment")
	case colon < 0 || (equal >= 0 && equal < colon):
		key, value = line[:equal], line[equal+1:]
	default:
		key, value = line[:colon], line[colon+1:]
	}
	value = strings.TrimFunc(value, pyIsSpace)
	if value != "" && (value[0] == '"' || value[0] == '\'') && value[0] == value[len(value)-1] {
		if len(value) == 1 {
			value = ""
		} else {
			value = value[1 : len(value)-1]
		}
	}
	return strings.TrimFunc(key, pyIsSpace), value, nil
}

// pyIsSpace is Python 3's str.isspace for one code point, listed from the Unicode
// tables (bidirectional class WS, B or S, or general category Zs).
func pyIsSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1c && r <= ' ', r == 0x85, r == 0xa0, r == 0x1680,
		r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// TestParseOsloFollowsOsloConfig pins the oracle to oslo.config's documented parsing,
// so that a round trip through it means something.
func TestParseOsloFollowsOsloConfig(t *testing.T) {
	cases := map[string]struct {
		text    string
		want    config.Sections
		wantErr string
	}{
		"equals and colon separate, white space stripped": {
			text: "[s]\na = 1\nb: 2\n  \nc=x=y\nd:e=f\n",
			want: config.Sections{"s": {"a": {"1"}, "b": {"2"}, "c": {"x=y"}, "d": {"e=f"}}},
		},
		"matching quotes removed once": {
			text: "[s]\na = \"q\"\nb = 'q'\nc = \"q'\nd = \"\"\"\ne = \"\n",
			want: config.Sections{"s": {"a": {"q"}, "b": {"q"}, "c": {"\"q'"}, "d": {"\""}, "e": {""}}},
		},
		"continuation lines join with newline, blank line ends value": {
			text: "[s]\na = one\n    two\n\tthree  \n\nb =\n  x\n",
			want: config.Sections{"s": {"a": {"one\ntwo\nthree"}, "b": {"\nx"}}},
		},
		"repeated key accumulates, sections merge": {
			text: "[s]\na = 1\n[t]\nb = 2\n[s]\na = 3\n",
			want: config.Sections{"s": {"a": {"1", "3"}}, "t": {"b": {"2"}}},
		},
		"comments ignored, carriage returns end lines": {
			text: "# c\r\n[s]\r; c\ra = 1\r\n",
			want: config.Sections{"s": {"a": {"1"}}},
		},
		"empty section kept": {
			text: "[s]\n",
			want: config.Sections{"s": {}},
		},
		"continuation without key":    {text: "[s]\n  x\n", wantErr: "unexpected continuation"},
		"assignment before a section": {text: "a = 1\n", wantErr: "section must be started"},
		"unterminated section":        {text: "[s\n", wantErr: "must end with ]"},
		"empty section name":          {text: "[]\n", wantErr: "empty section name"},
		"no separator":                {text: "[s]\nab\n", wantErr: "no ':' or '='"},
		"empty key":                   {text: "[s]\n= 1\n", wantErr: "key cannot be empty"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseOslo(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parse (-want +got):\n%s", diff)
			}
		})
	}
}
