// Package rotation is what the Keystone operator's rotation pods run, and how those
// pods are built.
//
// The operator's binary has two subcommands besides the operator itself, each run by a
// CronJob the Keystone controller (package keystone) applies from the operator's image:
//
//   - [RotateKeysCommand] ([RunRotateKeys], [RotateKeys]) rotates a fernet or
//     credential key repository Secret once, at most once per rotation interval after
//     [RotatedAtAnnotation];
//   - [RotatePasswordCommand] ([RunRotatePassword], [RotatePassword]) stages a new
//     database password under [DatabasePasswordStagedKey]; the Keystone's
//     PasswordRotation step takes it from there.
//
// Both read a Secret once and write it with one Update guarded by the resourceVersion
// they read: a Conflict is returned, never retried, so a run never writes twice, and
// a run repeated after a lost answer finds its own work done. Neither logs, returns or
// writes into an annotation a key or a password.
//
// The pods are built here too: [NewCronJob] is the hardened CronJob of both commands
// (non-root, no privilege escalation, no capabilities, a read-only root filesystem),
// and [Access] the ServiceAccount, Role and RoleBinding that grant them [PolicyRules]:
// get and update on the Keystone's key repository and database password Secrets, by
// name, and nothing else.
package rotation
