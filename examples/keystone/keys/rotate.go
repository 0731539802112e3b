package keys

import (
	"fmt"
	"io"
	"math"
)

// Rotate returns the repository after one keystone-manage fernet_rotate (or
// credential_rotate): the staged key 0 becomes the primary with index Primary()+1, a new
// staged key 0 is read from rand (crypto/rand when nil), and the secondaries with the
// lowest indices are removed until at most maxActiveKeys keys remain, the staged key and
// the primary included. Keys are never renumbered.
//
// Rotate never changes r, and the result shares no bytes with it. It refuses an invalid r
// (wrapping [ErrInvalidRepository], see [Repository.Validate]), a maxActiveKeys below
// [MinActiveKeys] (wrapping [ErrInvalidRotationSettings]), and a failing or repeating rand.
// A repository with more keys than maxActiveKeys (after maxActiveKeys was lowered) loses
// its oldest secondaries in one rotation. See the package documentation and
// [CheckRotationSafety] for how long a key survives.
func (r Repository) Rotate(rand io.Reader, maxActiveKeys int) (Repository, error) {
	if maxActiveKeys < MinActiveKeys {
		return nil, fmt.Errorf("%w: maxActiveKeys %d is below %d (staged, primary and one secondary)",
			ErrInvalidRotationSettings, maxActiveKeys, MinActiveKeys)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("rotating: %w", err)
	}
	primary := r.Primary()
	if primary == math.MaxInt {
		return nil, fmt.Errorf("rotating: %w: primary key %d has the highest possible index", ErrInvalidRepository, primary)
	}
	staged, err := newKey(rand, r)
	if err != nil {
		return nil, fmt.Errorf("creating the new staged key 0: %w", err)
	}
	out := r.clone()
	out[primary+1] = out[StagedIndex]
	out[StagedIndex] = staged
	// Keep the staged key and the maxActiveKeys-1 highest other indices.
	others := out.indices()[1:]
	for _, i := range others[:max(0, len(others)-(maxActiveKeys-1))] {
		delete(out, i)
	}
	return out, nil
}
