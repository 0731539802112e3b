package config

import "slices"

// Merge overlays overrides on defaults and returns the result as a new value.
//
// An option set in overrides replaces the option of the same section and name in
// defaults, all of its values at once; an override with no values therefore removes
// the default from the rendered file. Sections and options only one side has are
// kept. Neither input is modified, and the result shares no map or slice with them.
func Merge(defaults, overrides Sections) Sections {
	out := make(Sections, max(len(defaults), len(overrides)))
	for _, in := range []Sections{defaults, overrides} {
		for section, options := range in {
			merged, ok := out[section]
			if !ok {
				merged = make(map[string][]string, len(options))
				out[section] = merged
			}
			for key, values := range options {
				merged[key] = slices.Clone(values)
			}
		}
	}
	return out
}

// LiftSections converts the single-valued section → option → value map a CRD
// usually carries (for example spec.extraConfig) into [Sections], each value becoming
// a one-element list. The input is not modified; a nil input yields nil.
func LiftSections(single map[string]map[string]string) Sections {
	if single == nil {
		return nil
	}
	out := make(Sections, len(single))
	for section, options := range single {
		lifted := make(map[string][]string, len(options))
		for key, value := range options {
			lifted[key] = []string{value}
		}
		out[section] = lifted
	}
	return out
}
