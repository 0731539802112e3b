package keystone

import (
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
)

// The two database accounts of a Keystone. MariaDB holds one password per account, so
// a password rotation gives the new password to the idle account and switches the
// pods to it: the pods not yet replaced keep connecting with the other account and its
// unchanged password until the rollout has finished.
const (
	// AccountA is the account spec.database.username (default "keystone"), with the
	// mariadb-operator User and Grant named after the Keystone and its password under
	// names.DatabasePasswordDataKey. A new Keystone uses it.
	AccountA = "a"
	// AccountB is the account spec.database.username followed by "-b", with the User and
	// Grant <name>-b and its password under [DatabasePasswordBDataKey]. It is made at the
	// first rotation.
	AccountB = "b"
)

// Data keys of the Secret names.DatabasePasswordSecretName that describe the accounts.
const (
	// DatabasePasswordBDataKey holds the password of [AccountB].
	DatabasePasswordBDataKey = "password-b"
	// DatabaseActiveAccountKey names the account the pods connect with, [AccountA] or
	// [AccountB]; absent means AccountA. It is data, so the backup carries it.
	DatabaseActiveAccountKey = "account"
)

// DatabaseUserObjectName is the name of the mariadb-operator User and Grant of account:
// k's name for [AccountA], k's name followed by "-b" for [AccountB].
func DatabaseUserObjectName(k *v1alpha1.Keystone, account string) string {
	if account == AccountB {
		return k.Name + "-b"
	}
	return k.Name
}

// DatabaseAccountName is the MariaDB account of account: spec.database.username
// (default "keystone") for [AccountA], followed by "-b" for [AccountB].
func DatabaseAccountName(k *v1alpha1.Keystone, account string) string {
	if account == AccountB {
		return databaseUser(k) + "-b"
	}
	return databaseUser(k)
}

// accountPasswordKey is the data key of account's password.
func accountPasswordKey(account string) string {
	if account == AccountB {
		return DatabasePasswordBDataKey
	}
	return names.DatabasePasswordDataKey
}

// otherAccount is the account that is not account.
func otherAccount(account string) string {
	if account == AccountB {
		return AccountA
	}
	return AccountB
}

// passwordState is what the data keys of the password Secret say about the accounts.
type passwordState struct {
	// active is the account the pods connect with.
	active string
	// target is, while DatabasePasswordCurrentKey exists, the account the new password
	// goes to, whose User reads it from there; "" otherwise.
	target string
	// switched says that the pods' connection is already the target's: the target is
	// active and its password key holds the new password.
	switched bool
}

// readPasswordState parses the Secret's data. A Secret whose keys describe no state of
// the accounts is refused with an error that names the data key, never a value: an
// active account other than "a" and "b", no password for AccountA or for the active
// account, an empty DatabasePasswordCurrentKey.
func readPasswordState(data map[string][]byte) (passwordState, error) {
	st := passwordState{active: string(data[DatabaseActiveAccountKey])}
	switch st.active {
	case "":
		st.active = AccountA
	case AccountA, AccountB:
	default:
		return st, fmt.Errorf("names in data key %s an account other than %q and %q", DatabaseActiveAccountKey, AccountA, AccountB)
	}
	if len(data[names.DatabasePasswordDataKey]) == 0 {
		return st, fmt.Errorf("has no password in data key %s", names.DatabasePasswordDataKey)
	}
	if len(data[accountPasswordKey(st.active)]) == 0 {
		return st, fmt.Errorf("has no password in data key %s for the active account %s", accountPasswordKey(st.active), st.active)
	}
	current, ok := data[DatabasePasswordCurrentKey]
	switch {
	case !ok:
	case len(current) == 0:
		return st, fmt.Errorf("has an empty data key %s", DatabasePasswordCurrentKey)
	case string(data[accountPasswordKey(st.active)]) == string(current):
		st.target, st.switched = st.active, true
	default:
		st.target = otherAccount(st.active)
	}
	return st, nil
}

// userPasswordKey is the data key the User of account reads: DatabasePasswordCurrentKey
// while a rotation gives account the new password, else the account's own key.
// Switching the key changes the User's generation, so readiness for that generation
// tells that mariadb-operator set the password.
func (st passwordState) userPasswordKey(account string) string {
	if st.target == account {
		return DatabasePasswordCurrentKey
	}
	return accountPasswordKey(account)
}

// needsUser reports whether account has a User: AccountA always, AccountB once it has a
// password or is the target of a rotation.
func (st passwordState) needsUser(account string, data map[string][]byte) bool {
	return account == AccountA || st.target == account || len(data[accountPasswordKey(account)]) > 0
}
