package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/config"
)

func TestMerge(t *testing.T) {
	cases := map[string]struct {
		defaults, overrides, want config.Sections
	}{
		"both nil": {want: config.Sections{}},
		"override wins per key, other keys and sections kept": {
			defaults: config.Sections{
				"DEFAULT": {"debug": {"false"}, "log_dir": {"/var/log"}},
				"cache":   {"enabled": {"true"}},
			},
			overrides: config.Sections{
				"DEFAULT": {"debug": {"true"}},
				"ldap":    {"url": {"ldap://ldap"}},
			},
			want: config.Sections{
				"DEFAULT": {"debug": {"true"}, "log_dir": {"/var/log"}},
				"cache":   {"enabled": {"true"}},
				"ldap":    {"url": {"ldap://ldap"}},
			},
		},
		"override replaces all values of a multi-valued key": {
			defaults:  config.Sections{"federation": {"trusted_dashboard": {"a", "b"}}},
			overrides: config.Sections{"federation": {"trusted_dashboard": {"c"}}},
			want:      config.Sections{"federation": {"trusted_dashboard": {"c"}}},
		},
		"override without values removes the default": {
			defaults:  config.Sections{"DEFAULT": {"debug": {"false"}}},
			overrides: config.Sections{"DEFAULT": {"debug": {}}},
			want:      config.Sections{"DEFAULT": {"debug": {}}},
		},
		"only defaults": {
			defaults: config.Sections{"s": {"a": {"1"}}},
			want:     config.Sections{"s": {"a": {"1"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			defaultsBefore, overridesBefore := clone(tc.defaults), clone(tc.overrides)
			got := config.Merge(tc.defaults, tc.overrides)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
			// Writing through the result must not reach the inputs.
			for _, options := range got {
				for key, values := range options {
					if len(values) > 0 {
						values[0] = "mutated"
					}
					options[key] = append(values, "appended")
				}
				options["added"] = []string{"x"}
			}
			if diff := cmp.Diff(defaultsBefore, tc.defaults); diff != "" {
				t.Errorf("defaults modified (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(overridesBefore, tc.overrides); diff != "" {
				t.Errorf("overrides modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMergeRendersOverride(t *testing.T) {
	defaults := config.Sections{"DEFAULT": {"debug": {"false"}, "use_stderr": {"true"}}}
	extraConfig := config.LiftSections(map[string]map[string]string{"DEFAULT": {"debug": "true"}})
	got, err := config.RenderINI(config.Merge(defaults, extraConfig))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[DEFAULT]\ndebug = true\nuse_stderr = true\n"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	got, err = config.RenderINI(config.Merge(defaults, config.Sections{"DEFAULT": {"debug": {}}}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[DEFAULT]\nuse_stderr = true\n"; got != want {
		t.Errorf("override without values rendered %q, want %q", got, want)
	}
}

func TestLiftSections(t *testing.T) {
	if got := config.LiftSections(nil); got != nil {
		t.Errorf("LiftSections(nil) = %v, want nil", got)
	}
	in := map[string]map[string]string{"DEFAULT": {"a": "1", "b": ""}, "s": {}}
	got := config.LiftSections(in)
	want := config.Sections{"DEFAULT": {"a": {"1"}, "b": {""}}, "s": {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lifted (-want +got):\n%s", diff)
	}
	got["DEFAULT"]["a"][0] = "changed"
	if in["DEFAULT"]["a"] != "1" {
		t.Error("LiftSections result aliases its input")
	}
}

// clone deep-copies s, keeping nil and empty apart.
func clone(s config.Sections) config.Sections {
	if s == nil {
		return nil
	}
	out := config.Sections{}
	for section, options := range s {
		out[section] = map[string][]string{}
		for key, values := range options {
			if values == nil {
				out[section][key] = nil
				continue
			}
			out[section][key] = append([]string{}, values...)
		}
	}
	return out
}
