package settings

import (
	"fmt"

	"github.com/c5c3/reconciler-sdk/database"
)

// DefaultDatabasePort is the MySQL port [ConnectionURL] uses when Database.Port is 0.
//
// Deprecated: use database.DefaultPort.
const DefaultDatabasePort = database.DefaultPort

// Database is where Keystone keeps its data, without a credential.
//
// Deprecated: use database.Connection.
type Database = database.Connection

// ConnectionURL is database.ConnectionURL: the SQLAlchemy URL of db for [database]
// connection. Its errors wrap [ErrInvalidSettings] and database.ErrInvalidParams.
//
// Deprecated: use database.ConnectionURL.
func ConnectionURL(db Database, password string) (string, error) {
	u, err := database.ConnectionURL(db, password)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	return u, nil
}
