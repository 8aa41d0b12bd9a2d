package ledger

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgresOptions configure OpenPostgres.
type PostgresOptions struct {
	// ReadOnly opens an existing ledger for reading only: every
	// transaction is READ ONLY (default_transaction_read_only), the schema
	// is neither created nor migrated, and Register, Append and
	// ClaimReportIDs fail.
	ReadOnly bool
	// ConnectTimeout bounds each connection attempt; 0 means the URL's
	// connect_timeout, or 10 s if it has none.
	ConnectTimeout time.Duration
}

// IsPostgresURL reports whether target is a PostgreSQL connection URL (its
// scheme is postgres or postgresql, in any case).
func IsPostgresURL(target string) bool {
	scheme, _, ok := strings.Cut(target, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// RedactURL returns a PostgreSQL URL for messages and records, without
// its password.
func RedactURL(raw string) string { return redactURL(raw) }

// redactURL returns a URL for messages, without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// OpenPostgres connects to the PostgreSQL database at connURL (a
// postgres:// or postgresql:// URL, in the form libpq and pgx accept:
// postgres://user:password@host:port/database?sslmode=...; parameters such
// as search_path and pool_max_conns pass through), through pgx's
// database/sql driver, creating or migrating the ledger's schema unless
// opts.ReadOnly. Several processes (shufflers on several machines) may
// share one database; the store's String is the URL without its password.
// Transactions are READ COMMITTED (the server's default).
func OpenPostgres(ctx context.Context, connURL string, opts PostgresOptions) (*SQLStore, error) {
	name := redactURL(connURL)
	if !IsPostgresURL(connURL) {
		return nil, fmt.Errorf("ledger %s: not a postgres:// or postgresql:// URL", name)
	}
	// pgx reads only a lower-case scheme as a URL.
	scheme, rest, _ := strings.Cut(connURL, "://")
	cfg, err := pgxpool.ParseConfig(strings.ToLower(scheme) + "://" + rest)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %v", name, redactErr(err, connURL))
	}
	if opts.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	} else if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if opts.ReadOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	// database/sql's pool, sized as pgxpool would size it (pool_max_conns,
	// pool_max_conn_lifetime and pool_max_conn_idle_time are read from the
	// URL by pgxpool.ParseConfig and not sent to the server).
	db := stdlib.OpenDB(*cfg.ConnConfig)
	db.SetMaxOpenConns(int(cfg.MaxConns))
	db.SetMaxIdleConns(int(cfg.MaxConns))
	db.SetConnMaxLifetime(cfg.MaxConnLifetime)
	db.SetConnMaxIdleTime(cfg.MaxConnIdleTime)
	s, err := openSQL(ctx, db, postgresDialect, name, opts.ReadOnly)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %v", name, redactErr(err, connURL))
	}
	return s, nil
}

// redactErr removes a password that pgx may quote from the URL.
func redactErr(err error, connURL string) error {
	u, perr := url.Parse(connURL)
	if perr != nil || u.User == nil {
		return err
	}
	if p, ok := u.User.Password(); ok && p != "" && strings.Contains(err.Error(), p) {
		return errors.New(strings.ReplaceAll(err.Error(), p, "xxxxx"))
	}
	return err
}
