package keys

import (
	"fmt"
	"math"
	"time"
)

// CheckRotationSafety returns nil when rotating a repository every rotateEvery with
// maxActiveKeys never removes a key that a token may still need, and an error wrapping
// [ErrUnsafeRotation] otherwise. A token needs the key that encrypted it for
// tokenExpiration plus allowExpiredWindow (Keystone's [token] expiration and
// allow_expired_window) after it was issued.
//
// The bound, derived in the package documentation: a key that encrypts a token is removed
// by the (maxActiveKeys-1)-th rotation after the one that made it primary, and the worst
// token is issued just before the rotation that retires its key, so the key outlives that
// token by (maxActiveKeys-2)*rotateEvery - (tokenExpiration+allowExpiredWindow). Safe means
//
//	tokenExpiration + allowExpiredWindow <= (maxActiveKeys-2) * rotateEvery,
//
// so the smallest safe maxActiveKeys is 2 + ceil((tokenExpiration+allowExpiredWindow) /
// rotateEvery), and never below [MinActiveKeys]; the error names it.
//
// For a credential repository pass as tokenExpiration the longest time from a rotation
// until credential_migrate has re-encrypted every credential, and zero as
// allowExpiredWindow. Add to either the delay with which a rotated Secret reaches every
// Keystone pod.
//
// Settings that make no sense on their own (maxActiveKeys below [MinActiveKeys], a
// rotateEvery that is not positive, a negative tokenExpiration or allowExpiredWindow) are
// refused with an error wrapping [ErrInvalidRotationSettings].
func CheckRotationSafety(maxActiveKeys int, rotateEvery, tokenExpiration, allowExpiredWindow time.Duration) error {
	switch {
	case maxActiveKeys < MinActiveKeys:
		return fmt.Errorf("%w: maxActiveKeys %d is below %d (staged, primary and one secondary)",
			ErrInvalidRotationSettings, maxActiveKeys, MinActiveKeys)
	case rotateEvery <= 0:
		return fmt.Errorf("%w: rotation interval %s is not positive", ErrInvalidRotationSettings, rotateEvery)
	case tokenExpiration < 0:
		return fmt.Errorf("%w: token expiration %s is negative", ErrInvalidRotationSettings, tokenExpiration)
	case allowExpiredWindow < 0:
		return fmt.Errorf("%w: allow-expired window %s is negative", ErrInvalidRotationSettings, allowExpiredWindow)
	}
	minimum := MinSafeActiveKeys(rotateEvery, tokenExpiration, allowExpiredWindow)
	if maxActiveKeys >= minimum {
		return nil
	}
	// maxActiveKeys < minimum <= math.MaxInt, so the product below cannot overflow int64
	// unless the lifetime itself is beyond time.Duration; saturate it then.
	lifetime := time.Duration(math.MaxInt64)
	if r := int64(maxActiveKeys - 2); r <= math.MaxInt64/int64(rotateEvery) {
		lifetime = time.Duration(r) * rotateEvery
	}
	return fmt.Errorf("%w: with maxActiveKeys %d and a rotation every %s a key is removed %s after the rotation that retires it, "+
		"but a token needs it for token expiration %s + allow-expired window %s; maxActiveKeys must be at least %d",
		ErrUnsafeRotation, maxActiveKeys, rotateEvery, lifetime, tokenExpiration, allowExpiredWindow, minimum)
}

// MinSafeActiveKeys returns the smallest maxActiveKeys that [CheckRotationSafety] accepts
// for the given rotation interval, token expiration and allow-expired window:
// 2 + ceil((tokenExpiration+allowExpiredWindow) / rotateEvery), and at least
// [MinActiveKeys]. It returns math.MaxInt when no int is enough, and when rotateEvery is
// not positive.
func MinSafeActiveKeys(rotateEvery, tokenExpiration, allowExpiredWindow time.Duration) int {
	if rotateEvery <= 0 {
		return math.MaxInt
	}
	// Both parts are at most math.MaxInt64, so their sum fits in a uint64.
	need := uint64(max(tokenExpiration, 0)) + uint64(max(allowExpiredWindow, 0))
	interval := uint64(rotateEvery)
	rotations := need / interval
	if need%interval != 0 {
		rotations++
	}
	if rotations > math.MaxInt-2 {
		return math.MaxInt
	}
	return max(MinActiveKeys, int(rotations)+2)
}
