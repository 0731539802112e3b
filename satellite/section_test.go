package satellite_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/reconciler-sdk/satellite"
)

// TestSecretNameForVolume checks which Secret a pod volume mounts, including the
// first-match rule for a name that appears twice.
func TestSecretNameForVolume(t *testing.T) {
	projected := corev1.Volume{Name: "backends", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: "glance-backends-abc"}}}}}}}
	type args struct {
		spec   *corev1.PodSpec
		volume string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"NilSpec": {
			reason: "A nil PodSpec mounts nothing.",
			args:   args{volume: "backends"},
		},
		"NoVolumes": {
			reason: "A PodSpec without volumes mounts nothing.",
			args:   args{spec: &corev1.PodSpec{}, volume: "backends"},
		},
		"AbsentVolume": {
			reason: "Other volumes do not count.",
			args:   args{spec: &corev1.PodSpec{Volumes: []corev1.Volume{secretVolume("config", "glance-config")}}, volume: "backends"},
		},
		"SecretVolume": {
			reason: "The Secret the named volume mounts.",
			args: args{spec: &corev1.PodSpec{Volumes: []corev1.Volume{
				configMapVolume("policy", "glance-policy"), secretVolume("config", "glance-config"),
				secretVolume("backends", "glance-backends-abc")}}, volume: "backends"},
			want: "glance-backends-abc",
		},
		"ConfigMapFirstStopsScan": {
			reason: "A ConfigMap volume of the name yields \"\", even with a later same-named Secret volume.",
			args: args{spec: &corev1.PodSpec{Volumes: []corev1.Volume{
				configMapVolume("backends", "glance-backends"), secretVolume("backends", "glance-backends-abc")}}, volume: "backends"},
		},
		"EmptyDirFirstStopsScan": {
			reason: "An emptyDir volume of the name yields \"\", even with a later same-named Secret volume.",
			args: args{spec: &corev1.PodSpec{Volumes: []corev1.Volume{
				emptyDirVolume("backends"), secretVolume("backends", "glance-backends-abc")}}, volume: "backends"},
		},
		"ProjectedVolume": {
			reason: "A projected volume is not a Secret volume, even with a Secret among its sources.",
			args:   args{spec: &corev1.PodSpec{Volumes: []corev1.Volume{projected}}, volume: "backends"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, satellite.SecretNameForVolume(tc.args.spec, tc.args.volume)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// sectionCases are the rows of TestSectionPresent and the seed corpus of
// FuzzSectionPresent.
var sectionCases = map[string]struct {
	reason   string
	rendered string
	header   string
	want     bool
}{
	"FirstLine":             {reason: "Bounded by the start of the data.", rendered: "[fast]\nx = 1\n", header: "[fast]", want: true},
	"LastLineWithoutBreak":  {reason: "Bounded by the end of the data.", rendered: "x = 1\n[fast]", header: "[fast]", want: true},
	"WholeData":             {reason: "The data is the header.", rendered: "[fast]", header: "[fast]", want: true},
	"MiddleLine":            {reason: "Between two LF.", rendered: "[DEFAULT]\n[fast]\nx = 1\n", header: "[fast]", want: true},
	"CRLF":                  {reason: "CRLF line ends count.", rendered: "[DEFAULT]\r\n[fast]\r\nx = 1\r\n", header: "[fast]", want: true},
	"CROnly":                {reason: "A lone CR is a line break on both sides.", rendered: "a\r[fast]\rb", header: "[fast]", want: true},
	"LongerName":            {reason: "[fast2] does not satisfy [fast].", rendered: "[fast2]\n", header: "[fast]"},
	"LongerNameNoBracket":   {reason: "A header without its closing bracket is a prefix, not a line.", rendered: "[fast]\n", header: "[fast"},
	"PrefixedLine":          {reason: "Something before the header on its line.", rendered: "x[fast]\n", header: "[fast]"},
	"InOptionValue":         {reason: "A header inside an option value is not a section.", rendered: "enabled = [fast]\n", header: "[fast]"},
	"Indented":              {reason: "No whitespace is trimmed.", rendered: "  [fast]\n", header: "[fast]"},
	"TrailingSpace":         {reason: "No whitespace is trimmed.", rendered: "[fast] \n", header: "[fast]"},
	"RejectedThenWholeLine": {reason: "The scan goes on past rejected hits.", rendered: "enabled = [fast]\n[fast2]\n[fast]\n", header: "[fast]", want: true},
	"OverlappingHits":       {reason: "A rejected hit overlapping the next candidate does not hide it.", rendered: "aaa\naa", header: "aa", want: true},
	"OverlappingOnlyHits":   {reason: "Overlapping hits inside one longer line are all rejected.", rendered: "aaaa\n", header: "aa"},
	"EmptyData":             {reason: "Nothing rendered, nothing present.", header: "[fast]"},
	"EmptyHeader":           {reason: "An empty header is never present, not even on an empty line.", rendered: "a\n\nb", header: ""},
	"HeaderWithLineBreak":   {reason: "A header spanning lines is not a line.", rendered: "[a]\n[b]", header: "[a]\n[b]"},
	"HeaderLongerThanData":  {reason: "A header longer than the data.", rendered: "[a]", header: "[a]]"},
}

// TestSectionPresent checks the whole-line rule.
func TestSectionPresent(t *testing.T) {
	for name, tc := range sectionCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, satellite.SectionPresent([]byte(tc.rendered), tc.header)); diff != "" {
				t.Errorf("%s\nSectionPresent(%q, %q): -want, +got:\n%s", tc.reason, tc.rendered, tc.header, diff)
			}
		})
	}
	if satellite.SectionPresent(nil, "[fast]") {
		t.Error("SectionPresent(nil, \"[fast]\") = true, want false")
	}
}

// sectionPresentByLines is the reference SectionPresent is checked against: split the
// data into lines at LF and CR, and compare each line with the header.
func sectionPresentByLines(rendered []byte, header string) bool {
	for _, line := range strings.FieldsFunc(string(rendered), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line == header {
			return true
		}
	}
	return false
}

// FuzzSectionPresent checks SectionPresent against the line-splitting reference.
func FuzzSectionPresent(f *testing.F) {
	for _, tc := range sectionCases {
		f.Add([]byte(tc.rendered), tc.header)
	}
	f.Fuzz(func(t *testing.T, rendered []byte, header string) {
		want := sectionPresentByLines(rendered, header)
		if got := satellite.SectionPresent(rendered, header); got != want {
			t.Errorf("SectionPresent(%q, %q) = %v, the line-by-line reference says %v", rendered, header, got, want)
		}
	})
}
