package keys_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

func TestRoles(t *testing.T) {
	type roles struct {
		Staged, Primary int
		Secondaries     []int
		String          string
	}
	tests := map[string]struct {
		repo keys.Repository
		want roles
	}{
		"fresh repository": {
			repo: keys.Repository{0: testKey(0), 1: testKey(1)},
			want: roles{Staged: 0, Primary: 1, Secondaries: []int{}, String: "key repository: staged 0, primary 1"},
		},
		"secondaries oldest first": {
			repo: keys.Repository{0: testKey(0), 12: testKey(12), 3: testKey(3), 10: testKey(10), 11: testKey(11)},
			want: roles{Staged: 0, Primary: 12, Secondaries: []int{3, 10, 11}, String: "key repository: staged 0, primary 12, secondaries [3 10 11]"},
		},
		"empty": {
			repo: keys.Repository{},
			want: roles{Staged: -1, Primary: -1, Secondaries: []int{}, String: "key repository: empty"},
		},
		"only the staged key": {
			repo: keys.Repository{0: testKey(0)},
			want: roles{Staged: 0, Primary: 0, Secondaries: []int{}, String: "key repository: staged 0"},
		},
		"no staged key": {
			repo: keys.Repository{1: testKey(1), 2: testKey(2)},
			want: roles{Staged: -1, Primary: 2, Secondaries: []int{1}, String: "key repository: primary 2, secondaries [1]"},
		},
		"negative index": {
			repo: keys.Repository{-2: testKey(2), 0: testKey(0), 1: testKey(1)},
			want: roles{Staged: 0, Primary: 1, Secondaries: []int{}, String: "key repository: staged 0, primary 1, negative indices [-2]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := roles{Staged: tc.repo.Staged(), Primary: tc.repo.Primary(), Secondaries: tc.repo.Secondaries(), String: tc.repo.String()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrintingHidesKeys checks every way a Repository is commonly printed or logged: each
// shows the indices and roles, never a key.
func TestPrintingHidesKeys(t *testing.T) {
	repo := mustRotate(t, mustSetup(t, deterministicRand(3)), deterministicRand(4), 3, 2)
	want := "key repository: staged 0, primary 3, secondaries [2]"
	printed := map[string]string{
		"String":     repo.String(),
		"GoString":   repo.GoString(),
		"MarshalLog": fmt.Sprint(repo.MarshalLog()),
		"%v":         fmt.Sprintf("%v", repo),
		"%+v":        fmt.Sprintf("%+v", repo),
		"%#v":        fmt.Sprintf("%#v", repo),
		"Errorf %v":  fmt.Errorf("%v", repo).Error(),
		"Println":    fmt.Sprintln(repo)[:len(want)],
		"pointer %v": fmt.Sprintf("%v", &repo),
	}
	for how, got := range printed {
		if got != want {
			t.Errorf("%s = %q, want %q", how, got, want)
		}
		assertNoKeyMaterial(t, got, repoValues(repo)...)
	}
}
