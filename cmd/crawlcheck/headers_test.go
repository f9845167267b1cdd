package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestConfigHeadersAreSent: a config's headers reach the server with each
// request, a value holding "=" whole, and no headers leave the default
// transport in place.
func TestConfigHeadersAreSent(t *testing.T) {
	var auth, key string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, key = r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")
	}))
	defer srv.Close()
	client := &http.Client{Transport: withHeaders(srv.URL, []string{"Authorization=Bearer a=b", "X-Api-Key=k"})}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if auth != "Bearer a=b" || key != "k" {
		t.Errorf("the server got Authorization %q, X-Api-Key %q", auth, key)
	}
	if withHeaders(srv.URL, nil) != nil {
		t.Error("no headers: the default transport is not kept")
	}
}
