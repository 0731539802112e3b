package keys

import (
	"fmt"
	"slices"
	"strconv"
)

// FromSecretData reads a repository from the data of a Secret: each data key is the
// decimal index of a key ("0", "1", ...) and each value the key file's content. A data key
// that is not a decimal index written without sign, spaces or leading zeros is refused
// naming the data key, so no two data keys can claim the same index. The result is checked
// by [Repository.Validate] and shares no bytes with data.
//
// Every error wraps [ErrInvalidRepository] and names data keys or indices, never a value;
// the caller adds the Secret's namespace and name.
func FromSecretData(data map[string][]byte) (Repository, error) {
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	slices.Sort(names)
	repo := make(Repository, len(data))
	for _, name := range names {
		i, err := parseIndex(name)
		if err != nil {
			return nil, fmt.Errorf("%w: data key %q: %w", ErrInvalidRepository, name, err)
		}
		repo[i] = slices.Clone(data[name])
	}
	if err := repo.Validate(); err != nil {
		return nil, err
	}
	return repo, nil
}

// parseIndex parses a data key written the way strconv.Itoa writes a non-negative int.
func parseIndex(name string) (int, error) {
	i, err := strconv.Atoi(name)
	if err != nil || i < 0 || strconv.Itoa(i) != name {
		return 0, fmt.Errorf("not a key index (a non-negative decimal number without sign or leading zeros)")
	}
	return i, nil
}

// SecretData returns the repository as the data of a Secret: each index as a decimal data
// key, each key as its value. The result shares no bytes with r. It does not validate r;
// call [Repository.Validate] first when r was built by hand.
func (r Repository) SecretData() map[string][]byte {
	data := make(map[string][]byte, len(r))
	for i, key := range r {
		data[strconv.Itoa(i)] = slices.Clone(key)
	}
	return data
}
