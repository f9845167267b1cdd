package store

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql, "pgx"
)

// migrationLock is the advisory lock key instances take while migrating, so
// two starting at once apply each step once.
const migrationLock = `SELECT pg_advisory_xact_lock(7263520541)`

// OpenPostgres opens a PostgreSQL database by URL, shared by any number of
// instances: nonces are unique by the primary key, so two instances never
// issue one nonce, and documents are content-addressed.
func OpenPostgres(ctx context.Context, dsn string) (Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	s := &sqlStore{db: db, dialect: "postgres", lock: migrationLock}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	return s, nil
}
