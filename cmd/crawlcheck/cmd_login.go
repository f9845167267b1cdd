package main

import (
	"context"
	"errors"

	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"time"

	"github.com/crawlcheck/verifier/internal/login"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// loginWait bounds a login: the person has this long to approve it.
const loginWait = 5 * time.Minute

// cmdLogin logs in to a server behind an OAuth login (internal/login) and
// keeps its token for the commands that reach that server.
func cmdLogin(c *cli, args []string) error {
	fs := c.flagSet("login")
	rawURL := fs.String("url", "", "the streamable HTTP server `URL` to log in to")
	noBrowser := fs.Bool("no-browser", false, "print the authorization URL instead of opening a browser (on a machine without one, open it elsewhere: the redirect comes back to this machine's loopback)")
	cimd := fs.String("client-id-url", "", "the HTTPS `URL` of a client ID metadata document naming crawlcheck, for an authorization server that takes them (dynamic registration otherwise)")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *rawURL == "" {
		return usagef("--url is required")
	}
	key, store, err := loginKey(*rawURL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), loginWait)
	defer cancel()
	open := func(authURL string) error {
		// The URL is the authorization server's: only a web page is opened
		// (a browser hands other schemes to whatever program claims them).
		if u, err := url.Parse(authURL); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("the authorization server's authorization endpoint is not an http(s) URL: %s", show(authURL))
		}
		if *noBrowser {
			say(c.stderr, "Open this URL in a browser to log in to %s:\n", *rawURL)
			say(c.stdout, "%s\n", authURL)
			return nil
		}
		say(c.stderr, "Opening a browser to log in to %s. If none opens, visit:\n  %s\n", *rawURL, authURL)
		if err := openBrowser(authURL); err != nil {
			say(c.stderr, "(no browser could be opened: %s)\n", err.Error())
		}
		return nil
	}
	e, err := login.Login(ctx, login.Options{Endpoint: *rawURL, Key: key, Store: store, Open: open, Client: &http.Client{Timeout: c.timeout}, ClientIDMetadataURL: *cimd})
	if errors.Is(err, login.ErrNoLogin) {
		if e != nil {
			say(c.stderr, "Already logged in to %s: the server takes the kept token.\n", *rawURL)
		} else {
			say(c.stderr, "%s answered without asking for a login: nothing to keep.\n", *rawURL)
		}
		return nil
	}
	if err != nil {
		return err
	}
	say(c.stderr, "Logged in to %s; the token is kept in %s (mode 0600)", *rawURL, store.Path)
	if !e.Token.Expiry.IsZero() {
		say(c.stderr, ", valid until %s", e.Token.Expiry.UTC().Format(time.RFC3339))
	}
	if e.Token.RefreshToken != "" {
		say(c.stderr, ", refreshed when needed")
	}
	say(c.stderr, ".\n")
	return nil
}

// cmdLogout forgets the token kept for a server.
func cmdLogout(c *cli, args []string) error {
	fs := c.flagSet("logout")
	rawURL := fs.String("url", "", "the server `URL` whose kept token to forget")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *rawURL == "" {
		return usagef("--url is required")
	}
	key, store, err := loginKey(*rawURL)
	if err != nil {
		return err
	}
	ok, err := store.Delete(key)
	if err != nil {
		return err
	}
	if !ok {
		say(c.stderr, "No login is kept for %s.\n", *rawURL)
		return nil
	}
	say(c.stderr, "Forgot the token kept for %s (the authorization server may still hold the grant: revoke it there to end it).\n", *rawURL)
	return nil
}

// loginKey is the store a login of url is kept in and its key there: the
// endpoint as the core writes it, so that a login is found by every
// spelling of the URL the core calls the same server, and by no other.
func loginKey(url string) (string, login.Store, error) {
	key, err := preflight.URLEndpoint(url)
	if err != nil {
		return "", login.Store{}, usagef("--url: %v", err)
	}
	store, err := login.DefaultStore()
	return key, store, err
}

// storedToken is the Authorization header of the login kept for the HTTP
// endpoint url ("Authorization=Bearer …", target.headers' form), "" when
// none is kept, refreshed first when it is about to expire. A login that
// cannot be refreshed is said on stderr and not sent: the server's 401
// then says, in the record, to log in again.
func storedToken(c *cli, url string) string {
	key, store, err := loginKey(url)
	if err != nil {
		return ""
	}
	tok, err := store.AccessToken(context.Background(), key, &http.Client{Timeout: c.timeout}, time.Now)
	if err != nil {
		say(c.stderr, "crawlcheck: the login kept for %s was not used: %s\n", url, err.Error())
		return ""
	}
	if tok == "" {
		return ""
	}
	return "Authorization=Bearer " + tok
}

// openBrowser opens url in the person's browser: the URL is one argument
// of a command, never a shell's word.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
