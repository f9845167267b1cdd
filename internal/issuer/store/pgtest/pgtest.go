// Package pgtest starts a real, throwaway PostgreSQL 15 for tests and for
// make load: initdb into a temporary directory, postgres on a random
// 127.0.0.1 port with trust authentication for one role, stopped and
// deleted afterwards. PostgreSQL refuses to run as root, so as root the
// server runs as the unprivileged "postgres" account (Debian's package
// creates it) or else "nobody".
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// BinDir is where Debian's postgresql-15 package installs the server; the
// Makefile installs it with apt when it is missing.
var BinDir = "/usr/lib/postgresql/15/bin"

// Server is a running PostgreSQL.
type Server struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan error
	once sync.Once
}

// DSN is the URL of a database on the server (created on first use by
// CreateDB; "postgres" always exists).
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://crawlcheck@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Pid is the server's process id, the parent of its backends: what a
// caller measures its CPU by.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Start runs initdb and postgres and waits until the server accepts
// connections.
func Start() (*Server, error) {
	initdb := filepath.Join(BinDir, "initdb")
	if _, err := os.Stat(initdb); err != nil {
		return nil, fmt.Errorf("pgtest: PostgreSQL 15 is not installed (%w): make test installs it (apt-get install postgresql-15)", err)
	}
	dir, err := os.MkdirTemp("", "crawlcheck-pg-")
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	ini := exec.Command(initdb, "-D", data, "-U", "crawlcheck", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	ini.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := ini.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, port: port, done: make(chan error, 1)}
	s.cmd = exec.Command(filepath.Join(BinDir, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-k", dir, "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: postgres: %w", err)
	}
	go func() { s.done <- s.cmd.Wait(); logf.Close() }()
	if err := s.wait(30 * time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		s.Stop()
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return s, nil
}

// Run starts a server for a test and stops it when the test ends.
func Run(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// CreateDB creates a database and answers its DSN.
func (s *Server) CreateDB(name string) (string, error) {
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE "` + strings.ReplaceAll(name, `"`, ``) + `"`); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

func (s *Server) wait(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("pgtest: postgres exited: %v", err)
		default:
		}
		db, err := sql.Open("pgx", s.DSN("postgres"))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("pgtest: postgres did not accept connections in time")
}

// Stop shuts the server down (a fast shutdown: SIGINT) and removes its
// directory.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			s.cmd.Process.Signal(os.Interrupt)
			select {
			case <-s.done:
			case <-time.After(20 * time.Second):
				syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.done
			}
		}
		os.RemoveAll(s.dir)
	})
}

// unprivileged is the account postgres runs as, nil when not root; the
// directory is handed to it.
func unprivileged(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root and no unprivileged account to run postgres as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
