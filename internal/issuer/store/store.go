// Package store is the issuer's state behind one small interface, with two
// backends that pass one conformance suite (storetest): SQLite
// (modernc.org/sqlite, cgo-free, WAL) as the embedded default, a file beside
// the keys, and PostgreSQL (pgx) for several instances behind a load
// balancer.
//
// What it holds is what an operator of a signing service must never lose or
// repeat: every nonce issued (unique, with its expiry, pruned after it), every
// lockfile and receipt issued, by the SHA-256 of its bytes (for replay and
// audit), the rule tables served, by their digest, the transparency log,
// and the registry sweep's endpoints, surfaces and change events. The schema is
// versioned: each backend applies the migrations it has not yet applied, in
// order, at Open, inside one transaction per migration; an instance never
// runs against a schema newer than it knows (ErrSchemaTooNew), so two
// versions of the service behind one database fail closed, not half-written.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// Errors a store answers with; wrap-aware (errors.Is).
var (
	// ErrNonceReused: the nonce was issued before. The caller draws another;
	// a receipt with a repeated nonce is never signed.
	ErrNonceReused = errors.New("store: nonce already issued")
	// ErrNotFound: no document with that digest.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: another writer changed the row first (a pilot's head
	// moved, a correction version was taken): read again and retry.
	ErrConflict = errors.New("store: changed by another writer")
	// ErrOwnerFull: the owner has as many endpoints swept as it may
	// (SweepRegisterWithin); nothing was registered.
	ErrOwnerFull = errors.New("store: the owner has as many endpoints swept as it may")
	// ErrSchemaTooNew: the database was migrated by a newer service.
	ErrSchemaTooNew = errors.New("store: the database schema is newer than this service")
)

// Document is a signed document the issuer issued: a lockfile or a receipt,
// its exact bytes, addressed by its digest.
type Document struct {
	SHA256   string    // its digest as the core gave it (a receipt's sha256 member, a lockfile's)
	Kind     string    // crawlcheck-mcp-lock, crawlcheck-mcp-lock-check, crawlcheck-preflight-decision, ...
	KeyID    string    // the key that signed it
	Subject  string    // the endpoint it is about ("" when none)
	IssuedAt time.Time // when the service issued it
	// Principal is who caused it ("operator", "tenant:<id>", "anonymous";
	// "" for documents issued before migration 11): with the operator, the
	// one principal that may read it back (docs/issuer.md, Trust model).
	Principal string
	Body      []byte
	// Shared marks where Body carries bytes that other documents repeat: a
	// receipt's inputs, the tool list a host checks again and again. Each
	// such span is stored once by the SHA-256 of its bytes and the
	// document's row keeps the rest, so a check of a list seen before
	// writes about a kilobyte, not the list again (docs/decisions.md).
	// In order, not overlapping, within Body; none is fine. GetDocument
	// answers Body whole either way, each part checked against its digest.
	Shared []Span
}

// Span is the bytes Body[Start:End].
type Span struct{ Start, End int }

// Issuance is what one signing answer records before it leaves: the nonce
// its receipt carries (none for a lockfile), the document, and the
// document's transparency-log entry (none when the store keeps no log).
type Issuance struct {
	Nonce        string // "" for a document that carries none
	NonceExpires time.Time
	Document     Document
	LogEntry     []byte
}

// Pilot is a pilot (docs/issuer.md, "The pilot"): its token kept only as
// its SHA-256, the head of the record chain it uploaded, and the head the
// log last committed to for it.
type Pilot struct {
	ID          string
	TokenSHA256 string // lowercase hex SHA-256 of the token
	CreatedAt   time.Time
	Head        string // "" before its first accepted record
	LoggedHead  string // "" before its first log entry
	Records     int64  // records accepted
	Bytes       int64  // their bytes together (migration 10): the pilot's quota counts them
	// RecordKey is the base64 public key of the pilot's record key, when
	// it was made with one (issue 37, F7): then only uploads signed with
	// it are taken. "" for a pilot without (every one before migration 12).
	RecordKey string
}

// PilotRecord is one accepted record, its bytes as uploaded.
type PilotRecord struct {
	SHA256     string // its record_sha256
	ReceivedAt time.Time
	Body       []byte
}

// Correction is a signed correction of a record or receipt; the original is
// never changed. Version counts the corrections of one target from 1.
type Correction struct {
	SHA256   string
	Target   string
	Version  int
	IssuedAt time.Time
	Body     []byte
}

// Resigning is a correction signed again with the key that signs now, so
// that it still applies once the key that first signed it is retired (the
// core's resign_correction): the same correction, naming its first signing
// (Original, a corrections row's sha256).
type Resigning struct {
	SHA256   string
	Original string
	KeyID    string
	SignedAt time.Time
	Body     []byte
}

// Store is the issuer's state. Every method is safe for concurrent use and
// across instances sharing one database.
type Store interface {
	// Issue records issuances in one transaction, all or nothing: each
	// nonce (a reused one is ErrNonceReused, and nothing is written), each
	// document, and the log entries in order under one checkpoint that
	// sign makes (as LogAppend does). It answers the log index of the
	// first entry and that checkpoint (0 and "" when no issuance has an
	// entry). One transaction for many answers is how the service commits
	// under load: one durable write (fsync) for the batch, not three per
	// answer.
	Issue(ctx context.Context, items []Issuance, sign func(size uint64, root tlog.Hash) (string, error)) (first uint64, checkpoint string, err error)
	// IssueNonce records a nonce as issued, valid until expires. A nonce
	// issued before, whether or not it has expired and been pruned since
	// the last PruneNonces, is ErrNonceReused while its row exists.
	IssueNonce(ctx context.Context, nonce string, expires time.Time) error
	// NonceIssued says whether the nonce is recorded.
	NonceIssued(ctx context.Context, nonce string) (bool, error)
	// PruneNonces deletes nonces that expired before the cutoff and says
	// how many. A pruned nonce can no longer be told from a fresh one, so
	// the cutoff must lie past the longest receipt lifetime plus the
	// clock skew guard accepts.
	PruneNonces(ctx context.Context, before time.Time) (int64, error)
	// CountNonces is how many nonces are recorded (audit, tests).
	CountNonces(ctx context.Context) (int64, error)
	// PutDocument records a document (its Shared spans once each, as
	// Issue does). The same digest twice is one row (the bytes are the
	// same by construction).
	PutDocument(ctx context.Context, d Document) error
	// GetDocument answers the document with that digest, or ErrNotFound;
	// one stored in parts is joined again, an error if a part is missing
	// or does not hash to the digest it is stored by.
	GetDocument(ctx context.Context, sha256 string) (Document, error)
	// PutRules records a rule table served, by its digest.
	PutRules(ctx context.Context, sha256 string, body []byte) error
	// GetRules answers a rule table by its digest, or ErrNotFound.
	GetRules(ctx context.Context, sha256 string) ([]byte, error)
	// CreatePilot records a new pilot; an id taken is ErrConflict.
	CreatePilot(ctx context.Context, p Pilot) error
	// GetPilot answers a pilot by id, or ErrNotFound.
	GetPilot(ctx context.Context, id string) (Pilot, error)
	// PilotHolds answers which of digests the pilot's records include.
	PilotHolds(ctx context.Context, id string, digests []string) (map[string]bool, error)
	// AcceptPilotRecords appends records to the pilot's chain and moves its
	// head from head to newHead, in one transaction; a head that is no
	// longer head (a concurrent upload) is ErrConflict and nothing is kept.
	AcceptPilotRecords(ctx context.Context, id, head, newHead string, records []PilotRecord) error
	// SetPilotLogged records that the log holds the commitment to the
	// pilot's head loggedHead (only while it is the head).
	SetPilotLogged(ctx context.Context, id, loggedHead string) error
	// HoldsRecord says whether any pilot uploaded the record.
	HoldsRecord(ctx context.Context, sha256 string) (bool, error)
	// AddCorrection records a correction and appends its log entry (none
	// when entry is nil) in one transaction, as Issue does; a (target,
	// version) taken is ErrConflict and nothing is kept.
	AddCorrection(ctx context.Context, c Correction, entry []byte, sign func(size uint64, root tlog.Hash) (string, error)) (first uint64, checkpoint string, err error)
	// Corrections answers the corrections of a target, by version.
	Corrections(ctx context.Context, target string) ([]Correction, error)
	// AllCorrections answers every correction, by target and version: what
	// a pass of re-signing walks (corrections are the operator's, and few).
	AllCorrections(ctx context.Context) ([]Correction, error)
	// AddResigning records a re-signing and appends its log entry (none
	// when entry is nil) in one transaction; a correction re-signed with
	// that key before is ErrConflict and nothing is kept, so instances
	// sharing the store re-sign each correction once per key.
	AddResigning(ctx context.Context, r Resigning, entry []byte, sign func(size uint64, root tlog.Hash) (string, error)) (first uint64, checkpoint string, err error)
	// Resignings answers the re-signings of the correction whose first
	// signing is original, oldest first.
	Resignings(ctx context.Context, original string) ([]Resigning, error)
	// Ping says whether the store answers (/readyz).
	Ping(ctx context.Context) error
	// SchemaVersion is the last migration applied.
	SchemaVersion(ctx context.Context) (int, error)
	// Close releases the store.
	Close() error
}

// Open opens the store a --store flag names: "sqlite:FILE" or a
// "postgres://" / "postgresql://" URL. Migrations are applied before it
// returns.
func Open(ctx context.Context, spec string) (Store, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		return OpenSQLite(ctx, strings.TrimPrefix(spec, "sqlite:"))
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return OpenPostgres(ctx, spec)
	}
	return nil, fmt.Errorf("store %q: want sqlite:FILE or a postgres:// URL", spec)
}

// migration is one schema step; the same step in each dialect.
type migration struct {
	version  int
	sqlite   []string
	postgres []string
}

// migrations are applied in order; a new step is appended, never edited.
var migrations = []migration{
	{version: 1,
		sqlite: []string{
			`CREATE TABLE nonces (nonce TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)`,
			`CREATE INDEX nonces_expires ON nonces (expires_at)`,
			`CREATE TABLE documents (sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, key_id TEXT NOT NULL,
				subject TEXT NOT NULL, issued_at INTEGER NOT NULL, body BLOB NOT NULL)`,
			`CREATE INDEX documents_issued ON documents (issued_at)`,
			`CREATE TABLE rules (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL)`,
		},
		postgres: []string{
			`CREATE TABLE nonces (nonce TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)`,
			`CREATE INDEX nonces_expires ON nonces (expires_at)`,
			`CREATE TABLE documents (sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, key_id TEXT NOT NULL,
				subject TEXT NOT NULL, issued_at BIGINT NOT NULL, body BYTEA NOT NULL)`,
			`CREATE INDEX documents_issued ON documents (issued_at)`,
			`CREATE TABLE rules (sha256 TEXT PRIMARY KEY, body BYTEA NOT NULL)`,
		}},
	// The transparency log (log.go, internal/issuer/tlog).
	{version: 2,
		sqlite: []string{
			`CREATE TABLE log_entries (idx INTEGER PRIMARY KEY, entry BLOB NOT NULL)`,
			`CREATE TABLE log_hashes (level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx))`,
			`CREATE TABLE log_checkpoints (size INTEGER PRIMARY KEY, note BLOB NOT NULL)`,
		},
		postgres: []string{
			`CREATE TABLE log_entries (idx BIGINT PRIMARY KEY, entry BYTEA NOT NULL)`,
			`CREATE TABLE log_hashes (level INTEGER NOT NULL, idx BIGINT NOT NULL, hash BYTEA NOT NULL, PRIMARY KEY (level, idx))`,
			`CREATE TABLE log_checkpoints (size BIGINT PRIMARY KEY, note BYTEA NOT NULL)`,
		}},
	// The pilot and corrections (pilot.go).
	{version: 3,
		sqlite: []string{
			`CREATE TABLE pilots (id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, created_at INTEGER NOT NULL,
				head TEXT NOT NULL, logged_head TEXT NOT NULL, records INTEGER NOT NULL)`,
			`CREATE TABLE pilot_records (pilot_id TEXT NOT NULL, record_sha256 TEXT NOT NULL, seq INTEGER NOT NULL,
				received_at INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (pilot_id, record_sha256))`,
			`CREATE UNIQUE INDEX pilot_records_seq ON pilot_records (pilot_id, seq)`,
			`CREATE TABLE corrections (sha256 TEXT PRIMARY KEY, target TEXT NOT NULL, version INTEGER NOT NULL,
				issued_at INTEGER NOT NULL, body BLOB NOT NULL, UNIQUE (target, version))`,
		},
		postgres: []string{
			`CREATE TABLE pilots (id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, created_at BIGINT NOT NULL,
				head TEXT NOT NULL, logged_head TEXT NOT NULL, records BIGINT NOT NULL)`,
			`CREATE TABLE pilot_records (pilot_id TEXT NOT NULL, record_sha256 TEXT NOT NULL, seq BIGINT NOT NULL,
				received_at BIGINT NOT NULL, body BYTEA NOT NULL, PRIMARY KEY (pilot_id, record_sha256))`,
			`CREATE UNIQUE INDEX pilot_records_seq ON pilot_records (pilot_id, seq)`,
			`CREATE TABLE corrections (sha256 TEXT PRIMARY KEY, target TEXT NOT NULL, version INTEGER NOT NULL,
				issued_at BIGINT NOT NULL, body BYTEA NOT NULL, UNIQUE (target, version))`,
		}},
	// The registry sweep (sweep.go, internal/issuer/sweep).
	{version: 4,
		sqlite: []string{
			`CREATE TABLE sweep_endpoints (url TEXT PRIMARY KEY, owner TEXT NOT NULL, interval_us INTEGER NOT NULL,
				added_at INTEGER NOT NULL, next_at INTEGER NOT NULL, last_at INTEGER NOT NULL, surface TEXT NOT NULL, error TEXT NOT NULL)`,
			`CREATE INDEX sweep_endpoints_next ON sweep_endpoints (next_at)`,
			`CREATE TABLE sweep_surfaces (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL, first_seen INTEGER NOT NULL)`,
			`CREATE TABLE sweep_changes (url TEXT NOT NULL, seen_at INTEGER NOT NULL, from_sha256 TEXT NOT NULL, to_sha256 TEXT NOT NULL,
				detail BLOB NOT NULL, PRIMARY KEY (url, seen_at, to_sha256))`,
			`CREATE INDEX sweep_changes_seen ON sweep_changes (seen_at)`,
		},
		postgres: []string{
			`CREATE TABLE sweep_endpoints (url TEXT PRIMARY KEY, owner TEXT NOT NULL, interval_us BIGINT NOT NULL,
				added_at BIGINT NOT NULL, next_at BIGINT NOT NULL, last_at BIGINT NOT NULL, surface TEXT NOT NULL, error TEXT NOT NULL)`,
			`CREATE INDEX sweep_endpoints_next ON sweep_endpoints (next_at)`,
			`CREATE TABLE sweep_surfaces (sha256 TEXT PRIMARY KEY, body BYTEA NOT NULL, first_seen BIGINT NOT NULL)`,
			`CREATE TABLE sweep_changes (url TEXT NOT NULL, seen_at BIGINT NOT NULL, from_sha256 TEXT NOT NULL, to_sha256 TEXT NOT NULL,
				detail BYTEA NOT NULL, PRIMARY KEY (url, seen_at, to_sha256))`,
			`CREATE INDEX sweep_changes_seen ON sweep_changes (seen_at)`,
		}},
	// A record is looked up by its digest alone when it is corrected.
	{version: 5,
		sqlite:   []string{`CREATE INDEX pilot_records_sha256 ON pilot_records (record_sha256)`},
		postgres: []string{`CREATE INDEX pilot_records_sha256 ON pilot_records (record_sha256)`},
	},
	// The sweep's per-host politeness, held in the store so that it holds
	// across the instances sharing it (SweepHostSlot).
	{version: 6,
		sqlite:   []string{`CREATE TABLE sweep_hosts (host TEXT PRIMARY KEY, next_at INTEGER NOT NULL)`},
		postgres: []string{`CREATE TABLE sweep_hosts (host TEXT PRIMARY KEY, next_at BIGINT NOT NULL)`},
	},
	// Corrections re-signed through a rotation (pilot.go, AddResigning):
	// a correction's first signing stays in corrections, unchanged.
	{version: 7,
		sqlite: []string{`CREATE TABLE correction_resignings (sha256 TEXT PRIMARY KEY, original TEXT NOT NULL, key_id TEXT NOT NULL,
				signed_at INTEGER NOT NULL, body BLOB NOT NULL, UNIQUE (original, key_id))`},
		postgres: []string{`CREATE TABLE correction_resignings (sha256 TEXT PRIMARY KEY, original TEXT NOT NULL, key_id TEXT NOT NULL,
				signed_at BIGINT NOT NULL, body BYTEA NOT NULL, UNIQUE (original, key_id))`},
	},
	// The sweep keeps each server's instructions from the handshake (sweep.go):
	// each distinct text once by its digest, the digest last read on the
	// endpoint ('' before the first reading that had a handshake), and
	// instructions changes among the change events (kind).
	{version: 8,
		sqlite: []string{
			`CREATE TABLE sweep_instructions (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL, first_seen INTEGER NOT NULL)`,
			`ALTER TABLE sweep_endpoints ADD COLUMN instructions TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE sweep_changes ADD COLUMN kind TEXT NOT NULL DEFAULT 'tools'`,
		},
		postgres: []string{
			`CREATE TABLE sweep_instructions (sha256 TEXT PRIMARY KEY, body BYTEA NOT NULL, first_seen BIGINT NOT NULL)`,
			`ALTER TABLE sweep_endpoints ADD COLUMN instructions TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE sweep_changes ADD COLUMN kind TEXT NOT NULL DEFAULT 'tools'`,
		}},
	// A document's shared spans (Document.Shared), each stored once by its
	// digest in document_parts; documents.parts says where they go back
	// (parts.go), '' for a document kept whole, as every earlier one is.
	{version: 9,
		sqlite: []string{
			`CREATE TABLE document_parts (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL)`,
			`ALTER TABLE documents ADD COLUMN parts TEXT NOT NULL DEFAULT ''`,
		},
		postgres: []string{
			`CREATE TABLE document_parts (sha256 TEXT PRIMARY KEY, body BYTEA NOT NULL)`,
			`ALTER TABLE documents ADD COLUMN parts TEXT NOT NULL DEFAULT ''`,
		}},
	// A pilot's records' bytes together, for its quota (issue 37, F4),
	// counted from the records each pilot already holds.
	{version: 10,
		sqlite: []string{
			`ALTER TABLE pilots ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0`,
			`UPDATE pilots SET bytes = (SELECT COALESCE(SUM(LENGTH(body)), 0) FROM pilot_records WHERE pilot_records.pilot_id = pilots.id)`,
		},
		postgres: []string{
			`ALTER TABLE pilots ADD COLUMN bytes BIGINT NOT NULL DEFAULT 0`,
			`UPDATE pilots SET bytes = (SELECT COALESCE(SUM(OCTET_LENGTH(body)), 0) FROM pilot_records WHERE pilot_records.pilot_id = pilots.id)`,
		}},
	// Who caused each document (Document.Principal): the principal that
	// may read it back besides the operator (issue 37, F8). Documents
	// issued before it have '' and are the operator's alone.
	{version: 11,
		sqlite:   []string{`ALTER TABLE documents ADD COLUMN principal TEXT NOT NULL DEFAULT ''`},
		postgres: []string{`ALTER TABLE documents ADD COLUMN principal TEXT NOT NULL DEFAULT ''`},
	},
	// A pilot's record key (Pilot.RecordKey): the public key its uploads
	// are signed with, '' for a pilot made without one (issue 37, F7).
	{version: 12,
		sqlite:   []string{`ALTER TABLE pilots ADD COLUMN record_key TEXT NOT NULL DEFAULT ''`},
		postgres: []string{`ALTER TABLE pilots ADD COLUMN record_key TEXT NOT NULL DEFAULT ''`},
	},
}

// latestVersion is the schema this service knows.
func latestVersion() int { return migrations[len(migrations)-1].version }

// micros is how times are stored: Unix microseconds, UTC by construction.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
