// Package config renders oslo.config INI files and stores rendered configuration in
// content-addressed, immutable ConfigMaps and Secrets.
//
// # Rendering
//
// [Sections] holds an INI file as section name → option name → values. [RenderINI]
// writes it byte for byte deterministically: the [DEFAULT] section first, then the
// other sections in sorted order, options sorted within each section, and an option
// with several values repeated once per value, in order, which is how oslo.config's
// MultiStrOpt reads a list. [Merge] overlays user overrides (a CR's extraConfig) on the
// operator's defaults, per option, without touching either input; [LiftSections]
// turns the single-valued map a CRD usually carries into [Sections].
//
// Whatever [RenderINI] accepts, oslo.config parses back to the same data: a value
// spanning several lines is written with indented continuation lines, and a first line
// that oslo.config would strip or unquote is wrapped in quotes. Input that cannot
// survive the round trip is refused with an error naming the section and option, so
// user input can never inject a section or an option. Names that are empty, not valid
// UTF-8, start or end with white space, or contain a line break (LF or CR), "[", "]" or
// "=" wrap [ErrInvalidName], and so do option names containing ":" (oslo.config
// splits on it too) or starting with "#" or ";" (a comment). Values with a carriage
// return, an empty or white-space-padded continuation line (a trailing newline
// included), or invalid UTF-8 wrap [ErrUnrepresentableValue]. Errors never quote a
// value, since rendered configuration often carries credentials.
//
// # Immutable, content-addressed objects
//
// [CreateImmutableConfigMap] and [CreateImmutableSecret] name the object
// baseName-<hash>, where hash is the first 8 hex characters of a SHA-256 over the
// sorted, length-prefixed keys and values ([ContentHash]). A change of configuration
// is therefore a new name, a new pod template and a rollout; the same configuration
// always maps to the same, already existing object. Each object is Immutable, carries
// the label [ConfigBaseLabel] = baseName and a controller reference to its owner.
//
// # Pruning
//
// [PruneImmutableConfigMaps] and [PruneImmutableSecrets] delete the history of a base
// name that the owner controls, keeping the current object and the newest retain
// others (newest by CreationTimestamp, ties broken by name). The *WithOptions
// variants take [PruneOptions]; with SpareInUse set (as in [DefaultPruneOptions])
// they also keep every candidate that a ReplicaSet or a Pod in the namespace still
// references, so a rollback or a slow rollout never loses its configuration.
package config
