package login

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Options are a login's.
type Options struct {
	// Endpoint is the server's URL; Key is its endpoint in the core's
	// normal form, the store's key.
	Endpoint, Key string
	Store         Store
	// Open is handed the authorization URL the person must visit: it opens
	// a browser, or prints it (--no-browser). The URL is built from the
	// authorization server's metadata: whoever shows it shows it escaped.
	Open func(authURL string) error
	// Client makes every request of the flow: discovery, registration, the
	// token exchange. nil means http.DefaultClient.
	Client *http.Client
	// ClientIDMetadataURL, when set, is the HTTPS URL of a client ID
	// metadata document naming crawlcheck, used where the authorization
	// server supports them; dynamic registration (RFC 7591) otherwise.
	ClientIDMetadataURL string
}

// ErrNoLogin: the server answered without asking for credentials.
var ErrNoLogin = errors.New("the server answered without asking for a login")

// initialize is the request the probe sends: what a client's first request
// is, so that the server answers it as it answers the check's.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crawlcheck","version":"1"}}}`

// Login runs the authorization code flow for o.Endpoint and keeps the
// token in o.Store. It probes the server first (with the kept token, if
// any): a 401 asks for a login, a 403 insufficient_scope for a step-up
// to the scopes it names together with those granted before; a server
// that answers the probe needs none (ErrNoLogin).
func Login(ctx context.Context, o Options) (*Entry, error) {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	kept, err := o.Store.Get(o.Key)
	if err != nil {
		return nil, err
	}
	req, resp, err := probe(ctx, o, kept)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
	case resp.StatusCode == http.StatusForbidden && insufficientScope(resp.Header):
	case resp.StatusCode/100 == 2:
		resp.Body.Close()
		return kept, ErrNoLogin
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("the server answered HTTP %d to a request without credentials, not 401: it does not ask for an OAuth login (send its credentials with --header)", resp.StatusCode)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("a loopback port for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	results := make(chan *auth.AuthorizationResult, 1)
	failures := make(chan error, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			io.WriteString(w, "crawlcheck: the authorization server refused the login. You can close this page.\n")
			select {
			case failures <- fmt.Errorf("the authorization server refused the login: %s", textsafe.Escape(e)):
			default:
			}
			return
		}
		io.WriteString(w, "crawlcheck: logged in. You can close this page.\n")
		select {
		case results <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
		default:
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	var (
		got      *oauth2.Token
		gotCfg   *oauth2.Config
		previous []string
	)
	if kept != nil {
		previous = kept.Scopes
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              "crawlcheck",
			RedirectURIs:            []string{redirect},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := o.Open(args.URL); err != nil {
				return nil, err
			}
			select {
			case r := <-results:
				return r, nil
			case err := <-failures:
				return nil, err
			case <-ctx.Done():
				return nil, fmt.Errorf("no login before the deadline: %w", ctx.Err())
			}
		},
		// A step-up asks for the scopes granted before and the new ones:
		// a token for fewer would break what worked.
		ScopeFilter: func(discovered []string) []string {
			out := slices.Clone(previous)
			for _, s := range discovered {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			return out
		},
		RequestRefreshToken: true,
		Client:              o.Client,
		// The token as issued: refreshing is the store's (with RFC 8707's
		// resource, under its lock), never the handler's, which would
		// refresh a short-lived token at once and without its resource.
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got, gotCfg = t, c
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if o.ClientIDMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientIDMetadataURL}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return nil, fmt.Errorf("login: %s", textsafe.Escape(err.Error()))
	}
	if got == nil || got.AccessToken == "" {
		return nil, errors.New("login: the authorization server issued no access token")
	}
	e := &Entry{
		Resource:     o.Endpoint,
		ClientID:     gotCfg.ClientID,
		ClientSecret: gotCfg.ClientSecret,
		TokenURL:     gotCfg.Endpoint.TokenURL,
		AuthStyle:    gotCfg.Endpoint.AuthStyle,
		Scopes:       gotCfg.Scopes,
		Token:        got,
		Obtained:     time.Now(),
	}
	if err := o.Store.Put(o.Key, e); err != nil {
		return nil, err
	}
	return e, nil
}

// probe sends the server a first request, with the kept token if any, and
// returns it and the server's answer.
func probe(ctx context.Context, o Options, kept *Entry) (*http.Request, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.Endpoint, bytes.NewReader([]byte(initialize)))
	if err != nil {
		return nil, nil, fmt.Errorf("--url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if kept != nil && kept.Token != nil && kept.Token.AccessToken != "" {
		req.Header.Set("Authorization", "Bearer "+kept.Token.AccessToken)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("the server could not be reached: %w", err)
	}
	return req, resp, nil
}

// insufficientScope reports whether a 403's challenges say
// error="insufficient_scope" (a step-up, RFC 6750 section 3.1).
func insufficientScope(h http.Header) bool {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("Www-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}
