package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

func isPostgresURL(dsn string) bool {
	lower := strings.ToLower(dsn)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

func openPostgres(ctx context.Context, dsn string, cfg *gorm.Config, pool Pool) (*gorm.DB, error) {
	connCfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("invalid postgres URL: %s", redactPassword(parseErrorReason(err), dsn))
	}
	addr := postgresAddr(connCfg)

	sqlDB := stdlib.OpenDB(*connCfg, stdlib.OptionAfterConnect(scanTimesInUTC))
	// Sized by the process's settings (WithPool): the processes of a
	// cluster share the server's max_connections.
	sqlDB.SetMaxOpenConns(pool.MaxConns)
	sqlDB.SetMaxIdleConns(pool.MaxIdleConns)
	sqlDB.SetConnMaxLifetime(pool.ConnMaxLifetime)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)

	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		_ = sqlDB.Close()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// The server answered but refused us: wrong role, password or
			// database.
			return nil, fmt.Errorf("postgres at %s refused the connection: %s", addr, redactPassword(pgErr.Error(), dsn))
		}
		return nil, fmt.Errorf("cannot reach postgres at %s: %s", addr, oneLine(redactPassword(lastAttempt(err), dsn)))
	}

	db, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), cfg)
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open postgres at %s: %s", addr, redactPassword(err.Error(), dsn))
	}
	return db, nil
}

// scanTimesInUTC makes timestamptz values come back in UTC instead of the
// process's local zone, so rows read the same on every machine and dialect.
func scanTimesInUTC(_ context.Context, conn *pgx.Conn) error {
	conn.TypeMap().RegisterType(&pgtype.Type{
		Name:  "timestamptz",
		OID:   pgtype.TimestamptzOID,
		Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
	})
	return nil
}

func postgresAddr(c *pgx.ConnConfig) string {
	if strings.HasPrefix(c.Host, "/") { // unix socket directory
		return c.Host
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
}

// parseErrorReason extracts why pgx could not parse the URL. pgx redacts
// the password in its own message, but a *url.Error inside it quotes the
// whole URL, so only that error's reason is used.
func parseErrorReason(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

var userInfoPassword = regexp.MustCompile(`^[a-zA-Z]+://[^:/@]*:([^@/]*)@`)

// redactPassword removes the DSN's password from msg, in its raw and
// URL-decoded forms, as a last guard for driver messages that quote the DSN.
func redactPassword(msg, dsn string) string {
	var secrets []string
	if u, err := url.Parse(dsn); err == nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
		}
		if p := u.Query().Get("password"); p != "" {
			secrets = append(secrets, p, url.QueryEscape(p))
		}
	} else if m := userInfoPassword.FindStringSubmatch(dsn); m != nil {
		secrets = append(secrets, m[1])
		if p, err := url.PathUnescape(m[1]); err == nil {
			secrets = append(secrets, p)
		}
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

// lastAttempt keeps the reason of pgx's last connection attempt: pgx lists
// one line per address it tried ("failed to connect to …:\n\taddr: dial
// error: …"), and the startup error must be one line.
func lastAttempt(err error) string {
	msg := strings.TrimSpace(err.Error())
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	return msg
}

// oneLine folds any remaining line breaks into spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
