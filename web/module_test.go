package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestModuleCached: the module is served under the hash of its bytes, with a
// Cache-Control that keeps it for good and its hash as ETag (a browser that asks
// again with it gets a 304 and no body); the plain names are not served.
func TestModuleCached(t *testing.T) {
	gz := []byte("the module's gzipped bytes")
	sum := sha256.Sum256(gz)
	s := &Server{module: newModule(gz)}
	if want := "/static/verify." + hex.EncodeToString(sum[:8]) + ".wasm"; s.module.path != want {
		t.Fatalf("module path %s, want %s", s.module.path, want)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	get := func(path, ifNoneMatch string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", "gzip") // so the transport leaves the body as sent
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	res, body := get(s.module.path, "")
	h := res.Header
	if res.StatusCode != http.StatusOK || string(body) != string(gz) {
		t.Fatalf("GET %s: %d %q", s.module.path, res.StatusCode, body)
	}
	if h.Get("Cache-Control") != ModuleCacheControl || h.Get("Content-Type") != "application/wasm" || h.Get("Content-Encoding") != "gzip" ||
		h.Get("Content-Security-Policy") != ContentSecurityPolicy {
		t.Errorf("GET %s: headers %v", s.module.path, h)
	}
	if !regexp.MustCompile(`^"[0-9a-f]{64}"$`).MatchString(h.Get("ETag")) {
		t.Errorf("ETag %q, want the SHA-256 of the bytes, quoted", h.Get("ETag"))
	}
	res, body = get(s.module.path, h.Get("ETag"))
	if res.StatusCode != http.StatusNotModified || len(body) != 0 || res.Header.Get("Cache-Control") != ModuleCacheControl {
		t.Errorf("GET %s with its ETag: %d, %d bytes, %v", s.module.path, res.StatusCode, len(body), res.Header)
	}
	for _, plain := range []string{"/static/verify.wasm", "/" + wasmFile} {
		if res, _ := get(plain, ""); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", plain, res.StatusCode)
		}
	}
}
