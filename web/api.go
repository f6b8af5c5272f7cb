package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/ttld-dev/ttld/proofs"
)

// The JSON API (docs/API.md, docs/openapi.json): every page kind at /api and the
// page's path, with the page's query parameters, answering the data the page shows as
// JSON; a page's proof box answers its figures and, inline, the proof bundles the
// browser checks (docs/PROOFS.md, "Proof bundles (the web view)"), so that a program
// in any language reads proven data over plain HTTP and checks it offline. Lists are
// cut by cursors (?cursor=, ?limit= up to MaxLimit). A request the API cannot answer
// gets an apiError: 4xx with a stable code for what the request asked, 5xx (never
// 500) for what the node did not answer.

// APIPrefix begins every path of the JSON API.
const APIPrefix = "/api"

// apiError is the body of every API answer that is not 200.
type apiError struct {
	// Status repeats the HTTP status; Code is the query code (docs/ERRORS.md, "Query
	// codes") of what the request asked that cannot be answered.
	Status int    `json:"status"`
	Code   uint32 `json:"code"`
	Error  string `json:"error"`
}

type apiKey struct{}

// isAPI reports whether ctx is an API request's: its proof boxes carry their bundles
// inline.
func isAPI(ctx context.Context) bool { return ctx.Value(apiKey{}) != nil }

// api serves the JSON form of the page load reads.
func (s *Server) api(load func(r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), apiKey{}, true))
		data, err := load(r)
		if err != nil {
			e := s.apiFailure(r, err)
			writeJSON(w, e.Status, e)
			return
		}
		writeJSON(w, http.StatusOK, data)
	}
}

// apiTimeout is the body of an API answer that took longer than RequestTimeout.
const apiTimeout = `{"status":503,"code":3,"error":"the answer took longer than the view allows"}`

// apiNotFound answers a path under /api that names no page kind.
func apiNotFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, apiError{http.StatusNotFound, proofs.QueryCodeBadRequest, "no API path " + r.URL.Path + " (docs/API.md lists them)"})
}

// apiFailure is the error answer of err.
func (s *Server) apiFailure(r *http.Request, err error) apiError {
	status, _, _ := s.failure(r, err)
	e := apiError{Status: status, Code: proofs.QueryCodeInternal, Error: err.Error()}
	var refused errQueryRefused
	var limit errLimit
	switch {
	case errors.As(err, &refused):
		e.Code = refused.Code
	case errors.As(err, &limit):
		e.Code = proofs.QueryCodeLimitTooLarge
	case status == http.StatusBadRequest:
		e.Code = proofs.QueryCodeBadRequest
	case status == http.StatusNotFound:
		e.Code = proofs.QueryCodeNotFound
	}
	return e
}

// writeJSON writes v as the answer's JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusBadGateway, []byte(`{"status":502,"code":3,"error":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// errQueryRefused: the node refused a document query the request carries, with its
// query code.
type errQueryRefused struct {
	Code uint32
	Log  string
}

func (e errQueryRefused) Error() string { return "the query is refused: " + e.Log }

// cors lets the pages of the origins allowed (app.toml's [web] cors_allowed_origins)
// read the API's answers: the answers
// carry Access-Control-Allow-Origin for a request from one of them ("*": any), and
// a preflight request gets the methods and headers allowed. With none allowed (the
// default) nothing is added, and browsers keep other origins' pages from reading.
func cors(allowed []string, next http.Handler) http.Handler {
	if len(allowed) == 0 {
		return next
	}
	any := slices.Contains(allowed, "*")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && strings.HasPrefix(r.URL.Path, APIPrefix+"/") && (any || slices.Contains(allowed, origin)) {
			h := w.Header()
			if any {
				h.Set("Access-Control-Allow-Origin", "*")
			} else {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Add("Vary", "Origin")
			}
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, HEAD")
				h.Set("Access-Control-Allow-Headers", "Accept")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
