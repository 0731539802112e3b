// Package keys manages the fernet and credential key repositories of Keystone, the
// OpenStack identity service, for the example Keystone operator. It is pure Go: it
// generates, rotates, validates and converts repositories, and talks to no API server.
//
// # Key repositories
//
// Keystone signs and encrypts its tokens with fernet keys and encrypts the credentials it
// stores with credential keys. Both are kept as a key repository: files named 0, 1, 2, ...,
// each holding one key, 32 random bytes in padded URL-safe base64 (44 characters, as
// Python's cryptography.fernet.Fernet.generate_key writes them). A [Repository] maps each
// index to that encoded key. The indices have fixed roles:
//
//   - 0 is the staged key: the next primary, already accepted for decryption, so a
//     Keystone that still reads the previous repository can decrypt what a Keystone that
//     reads the rotated one encrypts with its new primary;
//   - the highest index is the primary key: it signs and encrypts, and decrypts;
//   - every other index is a secondary key: it only decrypts, so tokens and credentials
//     encrypted by a former primary stay readable.
//
// [Setup] creates a fresh repository with keys 0 (staged) and 1 (primary), as
// keystone-manage fernet_setup and credential_setup do. [Repository.Rotate] rotates it as
// keystone-manage fernet_rotate and credential_rotate do: the staged key 0 becomes the new
// primary with index primary+1, a new random staged key 0 is created, and then the
// secondaries with the lowest indices are removed until at most maxActiveKeys keys remain
// (staged, primary and secondaries together). Rotate returns a new repository and never
// changes the one it is called on.
//
// In the operator the repository lives in a Secret whose data keys are the decimal indices
// ([FromSecretData], [Repository.SecretData]). It is generated once and never generated
// again while a backup may restore it, and it is rotated by a CronJob.
//
// # How long a key survives
//
// Let M be maxActiveKeys (at least 3). After any rotation the repository holds the staged
// key and the M-1 highest non-staged indices: the primary P and the secondaries P-1, ...,
// P-(M-2) (fewer while the repository is young; removal goes by count, so the young
// repository keeps every key it has). A key that becomes primary with index P therefore
// stays in the repository while the primary is at most P+(M-2), that is for the M-2
// rotations after it became primary, the first of which is the rotation that retires it.
// The (M-1)-th rotation after it became primary removes it.
//
// A token (or credential) encrypted at time s with the primary K is therefore decryptable
// for exactly the next M-2 rotations after s: the first rotation after s retires K, and the
// (M-1)-th removes it. With rotations every R, K became primary at some t and is retired at
// t+R, so s < t+R, and K is removed at t+(M-1)R. The token needs its key until
// s+E+W, where E is the token expiration and W the window in which Keystone still accepts
// expired tokens (allow_expired_window). The worst token is signed just before K is
// retired (s close to t+R), so no token ever loses its key if and only if
//
//	E + W <= (M-2) * R,   that is   M >= 2 + ceil((E+W) / R).
//
// [CheckRotationSafety] refuses every configuration that breaks this bound with
// [ErrUnsafeRotation], naming the numbers and the smallest safe maxActiveKeys. Rotations
// that come late only make keys live longer; rotations that come early, or twice for one
// schedule slot, shorten the lifetime of every key, so the caller must rotate at most once
// per interval. A Keystone that still reads the previous repository (a mounted Secret is
// updated with a delay) keeps signing with the retired primary until the new repository
// reaches it; add that delay to W.
//
// Credentials do not expire: a credential stays encrypted with the key that was primary when
// it was written until keystone-manage credential_migrate re-encrypts it with the current
// primary. For a credential repository E is therefore the longest time between a rotation and
// the end of the credential_migrate that follows it, and W is zero; Rotate cannot see the
// database and does not check this.
//
// # Key material
//
// No error, String, GoString or MarshalLog output of this package contains key material:
// errors name the index or the Secret data key, never the key.
package keys
