package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/config"
)

func TestRenderINI(t *testing.T) {
	cases := map[string]struct {
		in   config.Sections
		want string
	}{
		"empty": {in: nil, want: ""},
		"DEFAULT first, then sections and keys sorted": {
			in: config.Sections{
				"oslo_policy": {"policy_file": {"/etc/identity/policy.yaml"}},
				"DEFAULT":     {"use_stderr": {"true"}, "debug": {"false"}},
				"cache":       {"enabled": {"true"}, "backend": {"dogpile.cache.memcached"}},
				"Zeta":        {"a": {"1"}},
			},
			want: "[DEFAULT]\ndebug = false\nuse_stderr = true\n\n" +
				"[Zeta]\na = 1\n\n" +
				"[cache]\nbackend = dogpile.cache.memcached\nenabled = true\n\n" +
				"[oslo_policy]\npolicy_file = /etc/identity/policy.yaml\n",
		},
		"multi-valued key repeats, in order": {
			in: config.Sections{"federation": {"trusted_dashboard": {"https://b.example/auth", "https://a.example/auth"}}},
			want: "[federation]\ntrusted_dashboard = https://b.example/auth\n" +
				"trusted_dashboard = https://a.example/auth\n",
		},
		"options without values and sections without options are left out": {
			in:   config.Sections{"DEFAULT": {"gone": nil, "kept": {"1"}}, "empty": {}, "hollow": {"x": {}}},
			want: "[DEFAULT]\nkept = 1\n",
		},
		"empty value": {
			in:   config.Sections{"s": {"a": {""}}},
			want: "[s]\na =\n",
		},
		"multi-line value gets indented continuation lines": {
			in:   config.Sections{"s": {"a": {"first\nsecond\n[injected]\n# not a comment"}, "b": {"\nx"}}},
			want: "[s]\na = first\n    second\n    [injected]\n    # not a comment\nb =\n    x\n",
		},
		"first line that oslo would strip or unquote is quoted": {
			in: config.Sections{"s": {
				"lead": {" x"}, "trail": {"x\t"}, "dq": {`"x"`}, "sq": {`'x'`}, "one": {`"`},
				"mixed": {`"x'`}, "inner": {`a "b" c`},
			}},
			want: "[s]\ndq = \"\"x\"\"\ninner = a \"b\" c\nlead = \" x\"\nmixed = \"x'\none = \"\"\"\n" +
				"sq = \"'x'\"\ntrail = \"x\t\"\n",
		},
		"separators and brackets inside values are literal": {
			in:   config.Sections{"s": {"connection": {"mysql+pymysql://u:p@db/identity?charset=utf8"}, "list": {"[a, b]"}}},
			want: "[s]\nconnection = mysql+pymysql://u:p@db/identity?charset=utf8\nlist = [a, b]\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := config.RenderINI(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rendered (-want +got):\n%s", diff)
			}
			back, err := parseOslo(got)
			if err != nil {
				t.Fatalf("oslo.config would not parse the output: %v", err)
			}
			if diff := cmp.Diff(normalize(tc.in), back); diff != "" {
				t.Errorf("parsed back (-want +got):\n%s", diff)
			}
		})
	}
}

// normalize drops what RenderINI leaves out: options without values and sections
// without rendered options.
func normalize(s config.Sections) config.Sections {
	out := config.Sections{}
	for section, options := range s {
		for key, values := range options {
			if len(values) == 0 {
				continue
			}
			if out[section] == nil {
				out[section] = map[string][]string{}
			}
			out[section][key] = values
		}
	}
	return out
}

func TestRenderINIIsDeterministic(t *testing.T) {
	build := func() config.Sections {
		s := config.Sections{}
		for _, section := range []string{"DEFAULT", "a", "b", "c", "d", "e"} {
			s[section] = map[string][]string{}
			for _, key := range []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"} {
				s[section][key] = []string{section + key}
			}
		}
		return s
	}
	first, err := config.RenderINI(build())
	if err != nil {
		t.Fatal(err)
	}
	// Map iteration order is randomised per range loop: many renders of freshly built
	// maps would expose any dependence on it.
	for range 50 {
		got, err := config.RenderINI(build())
		if err != nil {
			t.Fatal(err)
		}
		if got != first {
			t.Fatalf("render differs between runs:\n%s\nvs\n%s", first, got)
		}
	}
}

func TestRenderINIRejectsWhatOsloCannotReadBack(t *testing.T) {
	cases := map[string]struct {
		in      config.Sections
		want    error
		wantMsg []string
	}{
		"section injecting another section": {
			in: config.Sections{"a]\n[DEFAULT": {"k": {"v"}}}, want: config.ErrInvalidName,
			wantMsg: []string{`section "a]\n[DEFAULT"`},
		},
		"section with newline": {
			in: config.Sections{"a\nb": {"k": {"v"}}}, want: config.ErrInvalidName,
			wantMsg: []string{`section "a\nb"`, `contains "\n"`},
		},
		"section with opening bracket": {
			in: config.Sections{"a[b": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`section "a[b"`, `"["`},
		},
		"section with closing bracket": {
			in: config.Sections{"a]b": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`section "a]b"`, `"]"`},
		},
		"section with equals": {
			in: config.Sections{"a=b": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`section "a=b"`, `"="`},
		},
		"section with carriage return": {
			in: config.Sections{"a\rb": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`section "a\rb"`},
		},
		"empty section name": {
			in: config.Sections{"": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`section ""`, "empty"},
		},
		"section padded with space": {
			in: config.Sections{" s": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`section " s"`, "white space"},
		},
		"key with newline injecting a section": {
			in: config.Sections{"s": {"k = v\n[DEFAULT]\nadmin": {"v"}}}, want: config.ErrInvalidName,
			wantMsg: []string{`section "s" option "k = v\n[DEFAULT]\nadmin"`},
		},
		"key with equals": {
			in: config.Sections{"s": {"a=b": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option "a=b"`, `"="`},
		},
		"key with colon": {
			in: config.Sections{"s": {"a:b": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option "a:b"`, `":"`},
		},
		"key with brackets": {
			in: config.Sections{"s": {"a[0]": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option "a[0]"`},
		},
		"key starting a comment": {
			in: config.Sections{"s": {"#k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option "#k"`, "comment"},
		},
		"key starting with semicolon": {
			in: config.Sections{"s": {";k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option ";k"`},
		},
		"key with leading space (a continuation line)": {
			in: config.Sections{"s": {" k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option " k"`, "white space"},
		},
		"empty key": {
			in: config.Sections{"s": {"": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{`option ""`, "empty"},
		},
		"key without values is still checked": {
			in: config.Sections{"s": {"a\nb": nil}}, want: config.ErrInvalidName, wantMsg: []string{`option "a\nb"`},
		},
		"invalid UTF-8 section": {
			in: config.Sections{"\xfe": {"k": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{"UTF-8"},
		},
		"invalid UTF-8 key": {
			in: config.Sections{"s": {"\xff": {"v"}}}, want: config.ErrInvalidName, wantMsg: []string{"UTF-8"},
		},
		"value with carriage return": {
			in: config.Sections{"s": {"k": {"ok", "a\rb"}}}, want: config.ErrUnrepresentableValue,
			wantMsg: []string{`section "s" option "k" value 1`, "carriage return"},
		},
		"value with blank line": {
			in: config.Sections{"s": {"k": {"a\n\nb"}}}, want: config.ErrUnrepresentableValue,
			wantMsg: []string{`option "k" value 0`, "line 2 is empty"},
		},
		"value ending in newline": {
			in: config.Sections{"s": {"k": {"a\n"}}}, want: config.ErrUnrepresentableValue, wantMsg: []string{"line 2 is empty"},
		},
		"continuation line with leading space": {
			in: config.Sections{"s": {"k": {"a\n  b"}}}, want: config.ErrUnrepresentableValue, wantMsg: []string{"line 2", "white space"},
		},
		"continuation line with trailing space": {
			in: config.Sections{"s": {"k": {"a\nb\nc "}}}, want: config.ErrUnrepresentableValue, wantMsg: []string{"line 3", "white space"},
		},
		"invalid UTF-8 value": {
			in: config.Sections{"s": {"k": {"\xc3"}}}, want: config.ErrUnrepresentableValue, wantMsg: []string{"UTF-8"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := config.RenderINI(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("RenderINI = %q, %v; want errors.Is %v", got, err, tc.want)
			}
			if got != "" {
				t.Errorf("output %q returned together with an error", got)
			}
			for _, m := range tc.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not contain %q", err, m)
				}
			}
		})
	}
}

func TestRenderINIErrorsNeverQuoteValues(t *testing.T) {
	const secret = "hunter2-s3cr3t"
	for _, value := range []string{secret + "\r", secret + "\n\n" + secret, secret + "\n " + secret, secret + "\xff"} {
		_, err := config.RenderINI(config.Sections{"database": {"connection": {value}}})
		if err == nil {
			t.Fatalf("value %q accepted", value)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the value: %v", err)
		}
	}
}

func TestRenderINIDoesNotModifyInput(t *testing.T) {
	in := config.Sections{"DEFAULT": {"a": {"1", "2"}, "empty": nil}, "s": {}}
	want := config.Sections{"DEFAULT": {"a": {"1", "2"}, "empty": nil}, "s": {}}
	if _, err := config.RenderINI(in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("input modified (-want +got):\n%s", diff)
	}
}
