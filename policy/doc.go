// Package policy loads, renders, merges and validates OpenStack oslo.policy rules.
//
// A rule set is a map[string]string from action (identity:get_user) to rule
// expression (role:admin or project_id:%(target.user.project_id)s), the content of a
// service's policy.yaml. The package holds:
//
//   - [LoadPolicyFromConfigMap] reads the policy.yaml key of a ConfigMap, for operators
//     that take policy overrides from a ConfigMap the user manages;
//   - [Merge] lays overrides over defaults, override winning per rule, without touching
//     either input;
//   - [Render] writes a rule set as a deterministic policy.yaml (sorted, double-quoted,
//     "" for no rules), ready to go into a content-addressed ConfigMap;
//   - [Parse] turns one expression into a syntax tree ([Expr]) that renders back to
//     canonical text;
//   - [Validate] checks a whole rule set and returns a field.ErrorList whose entries
//     name the rule (rules[identity:get_user]) and the byte offset of the problem.
//
// Everything but LoadPolicyFromConfigMap is a pure function.
//
// # Fidelity to oslo.policy
//
// [Parse] follows oslo.policy's _parser: tokens split at whitespace, leading '(' and
// trailing ')' peeled off each token, case-insensitive and/or/not, precedence not >
// and > or, "@" and "!", the empty expression allowing, KIND:MATCH split at the first
// ':' with rule and role as special kinds and Python literals (True, 'member') as
// constant kinds. oslo.policy does not reject a malformed rule: it logs "Failed to
// understand rule" and replaces it with a check that denies everyone. This package
// reports those rules instead, so a typo in an override is an error in the custom
// resource's status rather than an outage. It also reports what oslo.policy accepts
// but fails on at enforcement time: a malformed %-substitution, a quoted literal that
// is never closed, a reference cycle between rules. See [Parse] and [Validate].
//
// A rule:NAME reference to an undefined rule denies in oslo.policy; [Validate]
// reports it ([ErrUnknownRule]), so validate the merged rule set, which holds the
// service's defaults as well as the overrides.
//
// # The expression language
//
// [Parse] reads an expression as oslo.policy's _parser does:
//
//   - The text splits into tokens at whitespace (Unicode whitespace, as Python's \s).
//     Leading '(' and trailing ')' of a token are parentheses; what is left is a
//     keyword or a check. A check therefore never contains whitespace, and may contain
//     parentheses inside it, as in project_id:%(project_id)s.
//   - The keywords and, or and not are case-insensitive (AND, Or). Precedence is not,
//     then and, then or; and and or associate to the left and collect their operands
//     into one [*AndCheck] or [*OrCheck]. oslo.policy folds "a or (b and c) and d"
//     into a single and of b, c and d; Parse keeps the parenthesised and as an operand
//     of its own. Both evaluate alike.
//   - "@" allows and "!" denies. The empty expression allows.
//   - A check is KIND:MATCH, split at the first ':'. KIND rule and role (case-sensitive)
//     give [*RuleCheck] and [*RoleCheck]; a KIND that is a literal (True, False, None,
//     a decimal integer, a quoted string) gives [*LiteralCheck]; any other KIND gives
//     [*GenericCheck].
//
// Parse rejects, with a [*SyntaxError] naming the byte offset, every text oslo.policy
// would fail closed on or that would raise at enforcement time: unbalanced parentheses,
// an operator without operand, two operands without an operator, "()", a blank
// expression of only whitespace (oslo.policy denies it, unlike ""), a word without ':'
// such as a bare True, a whole-token quoted string such as 'True', a check with an
// empty KIND or MATCH, a malformed quoted literal, a malformed %-substitution in a role,
// generic or literal check, and nesting deeper than [MaxDepth].
//
// # Validation
//
// [Validate] returns one field.Invalid per problem on fldPath.Key(<rule name>), sorted
// by rule name and then by position, whose value is the rule's expression and whose
// detail reads "at byte <offset>: <problem>: <what>". The problems are: an empty rule
// name; the first [SyntaxError] of [Parse] in each rule; a rule:NAME whose NAME the set
// does not define ([ErrUnknownRule]); and rules that reference each other in a cycle
// ([ErrRuleCycle]). A cycle is reported once per group of rules that reference each
// other (a strongly connected component of the rule:NAME graph), at the reference that
// closes the first cycle found, walking the rules in name order and each rule's
// references in order: "a -> b -> c -> a". A group holding more rules than that cycle
// says so ("(5 rules reference each other in cycles)"); a cycle of more than 8 rules
// names its first four and last three. Beyond [MaxErrors] problems, one
// field.ErrorTypeTooMany error on fldPath counts them.
//
// # Loading
//
// [LoadPolicyFromConfigMap] returns the API server's error wrapped (apierrors.IsNotFound
// and the others still answer); `ConfigMap <key> does not contain key "policy.yaml"`
// matching [ErrPolicyKeyMissing]; or `parsing policy.yaml from ConfigMap <key>: <parse
// error>` matching [ErrInvalidPolicyYAML] when policy.yaml is not a YAML mapping of
// strings: a rule name given twice (one of the two would be lost) and a value that is
// not a string, such as 1, true or a list (oslo.policy raises on those; quote them),
// are such errors. The parser's full error stays reachable through errors.As. An
// empty policy.yaml, or one of only comments, yields an empty, non-nil map; a null
// value yields "", which allows, as oslo.policy reads it.
//
// # Hostile input
//
// An override ConfigMap is user input of up to 1 MiB, and its errors end up in a
// custom resource's status, so the package bounds what any input can cost:
//
//   - [Validate] takes time and memory linear in the size of the rule set. It lists at
//     most [MaxErrors] (50) problems, the first in rule-name order, followed by one
//     field.ErrorTypeTooMany summary that counts every problem found. It reports a
//     reference cycle once per group of rules that reference each other, not once per
//     reference that closes a cycle, and names at most 8 rules of a cycle.
//   - No error quotes more than [MaxExcerpt] (100) bytes of one user text: an
//     expression is quoted as a window around the problem, and rule names and tokens
//     are cut, each cut marked with "…" at a UTF-8 boundary. One Validate error is
//     therefore at most about 2 KiB of text, and a whole ErrorList about 100 KiB.
//   - [Parse] reads tokens as it needs them, so a word of a million parentheses costs
//     [MaxDepth] tokens, not a million.
//   - [LoadPolicyFromConfigMap] quotes at most [MaxParserMessage] (512) bytes of the
//     YAML parser's message, which would otherwise list every duplicate key.
//
// On a 1 MiB policy built to exhaust a validator (a web of 4000 rules with thousands
// of long cycles, parenthesis bombs, 32 KiB tokens and names, and some 44,000
// references to undefined rules) Validate returns 51 errors holding about 10 KB of
// text and allocates about 5 MiB; the package's tests hold it under 64 KiB of text
// and 64 MiB of allocation.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/policy/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [LoadPolicyFromConfigMap]: gets the ConfigMap (informer: ConfigMaps; under
//     apply.CacheOptions a user's ConfigMap misses the cache, and an apply.Applier with
//     an APIReader reads it from the API server). Writes nothing. RBAC: configmaps get,
//     list, watch.
//   - [Merge], [Render], [Parse], [Validate] and the syntax tree: no API call, no RBAC.
package policy
