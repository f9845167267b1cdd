// Package login is crawlcheck's OAuth client for MCP servers behind a
// login (docs/remote.md): the authorization code flow of the MCP
// authorization spec (go-sdk's auth.AuthorizationCodeHandler, on
// golang.org/x/oauth2: protected resource metadata, authorization server
// metadata, client registration, PKCE S256, RFC 8707 resource), and the
// token store the commands that reach a server read.
//
// The store is one JSON file in the user's config directory, mode 0600 in
// a 0700 directory, keyed by the server's endpoint (the core's normal form
// of its URL). A token is only ever read for the endpoint it was issued
// for, and sent only to that endpoint's origin (preflight.HeaderTransport).
// A refresh happens under an exclusive lock on the store, and re-reads it
// first: two processes refreshing at once do not both spend a rotating
// refresh token, and neither loses the token the other wrote.
package login

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/boundedread"
	"golang.org/x/oauth2"
)

// refreshAhead is how long before its expiry a token is refreshed, at
// most: a check that starts with a token about to expire would fail
// midway. A token that lives less than twice as long is refreshed in the
// second half of its life, so that a token just refreshed is used, not
// refreshed again (an authorization server that revokes the old access
// token on refresh would fail a check still using it).
const refreshAhead = time.Minute

// maxStore bounds a read of the store.
const maxStore = 4 << 20

// Entry is what the store keeps of one login: the client the authorization
// server registered, where to refresh, the scopes granted and the token.
// Nothing of it is ever written anywhere but the store.
type Entry struct {
	Resource     string           `json:"resource"` // the canonical URI the token was issued for (RFC 8707)
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	// Obtained is when Token was issued (as the client saw it): with its
	// expiry, the token's lifetime, which bounds how early it is refreshed.
	Obtained time.Time `json:"obtained"`
}

// file is the store's format.
type file struct {
	V       int               `json:"v"`
	Servers map[string]*Entry `json:"servers"` // by endpoint
}

// Store is the token store at Path.
type Store struct{ Path string }

// DefaultStore is the store in the user's config directory:
// $XDG_CONFIG_HOME/crawlcheck/tokens.json on Linux.
func DefaultStore() (Store, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return Store{}, fmt.Errorf("no config directory for the token store: %w", err)
	}
	return Store{Path: filepath.Join(dir, "crawlcheck", "tokens.json")}, nil
}

// locked runs fn holding an exclusive lock on the store (a lock file
// beside it), with the store as read; fn's changes are written back
// (atomically, 0600) when it reports them.
func (s Store) locked(fn func(f *file) (changed bool, err error)) error {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("the token store's directory: %w", err)
	}
	lf, err := os.OpenFile(s.Path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("locking the token store: %w", err)
	}
	defer lf.Close()
	if err := lockFile(lf); err != nil {
		return fmt.Errorf("locking the token store: %w", err)
	}
	defer unlockFile(lf)
	f := &file{V: 1, Servers: map[string]*Entry{}}
	data, err := boundedread.ReadFile(s.Path, maxStore, 5*time.Second)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading the token store: %w", err)
	default:
		if info, err := os.Stat(s.Path); err == nil && info.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("the token store %s is readable by others (mode %v): chmod 600 it", s.Path, info.Mode().Perm())
		}
		if err := json.Unmarshal(data, f); err != nil || f.V != 1 {
			return fmt.Errorf("the token store %s is not one crawlcheck wrote (remove it and log in again)", s.Path)
		}
		if f.Servers == nil {
			f.Servers = map[string]*Entry{}
		}
	}
	changed, err := fn(f)
	if err != nil || !changed {
		return err
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".tokens-*")
	if err != nil {
		return fmt.Errorf("writing the token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(append(out, '\n'))
		if err == nil {
			err = tmp.Sync()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.Path)
	}
	if err != nil {
		return fmt.Errorf("writing the token store: %w", err)
	}
	return nil
}

// Put keeps e as the login for endpoint, replacing any.
func (s Store) Put(endpoint string, e *Entry) error {
	return s.locked(func(f *file) (bool, error) {
		f.Servers[endpoint] = e
		return true, nil
	})
}

// Get returns the login kept for endpoint, nil if none.
func (s Store) Get(endpoint string) (*Entry, error) {
	var e *Entry
	err := s.locked(func(f *file) (bool, error) {
		e = f.Servers[endpoint]
		return false, nil
	})
	return e, err
}

// Delete forgets the login for endpoint; ok is whether there was one.
func (s Store) Delete(endpoint string) (ok bool, err error) {
	err = s.locked(func(f *file) (bool, error) {
		_, ok = f.Servers[endpoint]
		delete(f.Servers, endpoint)
		return ok, nil
	})
	return ok, err
}

// ErrRefresh is the error of a stored login that could not be refreshed:
// the person must log in again.
var ErrRefresh = errors.New("the stored login could not be refreshed")

// AccessToken returns a current access token for endpoint from the store,
// refreshing it (under the lock, with RFC 8707's resource) when it
// expires within a minute; "" when no login is kept. client makes the
// refresh request (nil: http.DefaultClient); now is the clock.
func (s Store) AccessToken(ctx context.Context, endpoint string, client *http.Client, now func() time.Time) (string, error) {
	var access string
	err := s.locked(func(f *file) (bool, error) {
		e := f.Servers[endpoint]
		if e == nil || e.Token == nil {
			return false, nil
		}
		ahead := refreshAhead
		if life := e.Token.Expiry.Sub(e.Obtained); !e.Obtained.IsZero() && life/2 < ahead {
			ahead = life / 2
		}
		if e.Token.Expiry.IsZero() || e.Token.Expiry.After(now().Add(ahead)) {
			access = e.Token.AccessToken
			return false, nil
		}
		if e.Token.RefreshToken == "" {
			return false, fmt.Errorf("%w: the token for %s expired and came with no refresh token", ErrRefresh, endpoint)
		}
		tok, err := e.refresh(ctx, client)
		if err != nil {
			return false, err
		}
		if tok.RefreshToken == "" {
			tok.RefreshToken = e.Token.RefreshToken // a server that does not rotate it
		}
		e.Token, e.Obtained, access = tok, now(), tok.AccessToken
		return true, nil
	})
	return access, err
}

// refresh asks the token endpoint for a new token (golang.org/x/oauth2's
// refresh grant), with the resource the token is for.
func (e *Entry) refresh(ctx context.Context, client *http.Client) (*oauth2.Token, error) {
	if client == nil {
		client = http.DefaultClient
	}
	withResource := *client
	withResource.Transport = resourceParam{next: client.Transport, tokenURL: e.TokenURL, resource: e.Resource}
	cfg := oauth2.Config{ClientID: e.ClientID, ClientSecret: e.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: e.TokenURL, AuthStyle: e.AuthStyle}, Scopes: e.Scopes}
	expired := &oauth2.Token{RefreshToken: e.Token.RefreshToken} // no access token: refreshed at once
	tok, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, &withResource), expired).Token()
	if err != nil {
		// The authorization server's answer is its text: not shown.
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return nil, fmt.Errorf("%w (the authorization server answered HTTP %d)", ErrRefresh, re.Response.StatusCode)
		}
		return nil, fmt.Errorf("%w: the token endpoint could not be reached", ErrRefresh)
	}
	return tok, nil
}

// resourceParam adds RFC 8707's resource to a refresh request's form:
// x/oauth2 sends the refresh grant without it, and an authorization server
// that issues tokens per resource needs it to say which.
type resourceParam struct {
	next     http.RoundTripper
	tokenURL string
	resource string
}

func (r resourceParam) RoundTrip(req *http.Request) (*http.Response, error) {
	next := r.next
	if next == nil {
		next = http.DefaultTransport
	}
	if req.Method != http.MethodPost || req.URL.String() != r.tokenURL || req.Body == nil {
		return next.RoundTrip(req)
	}
	body, err := boundedread.Read(req.Body, 64<<10)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	if form.Get("resource") == "" {
		form.Set("resource", r.resource)
	}
	enc := form.Encode()
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(strings.NewReader(enc))
	req.ContentLength = int64(len(enc))
	return next.RoundTrip(req)
}
