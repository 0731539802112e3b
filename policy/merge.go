package policy

// Merge returns a new rule set holding every rule of base and of override, where a
// rule defined in both takes override's expression, even an empty one ("" allows). It
// never modifies base or override; the result is never nil.
//
// Validate the merged set, not the override alone: an override usually references
// rules (rule:admin_required) that only base defines.
func Merge(base, override map[string]string) map[string]string {
	merged := make(map[string]string, len(base)+len(override))
	for name, expr := range base {
		merged[name] = expr
	}
	for name, expr := range override {
		merged[name] = expr
	}
	return merged
}
