package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web"
)

// FuzzAPI asks the JSON API any path and query: every answer is JSON, a 200 or an
// error with a query code, and none is a 500.
func FuzzAPI(f *testing.F) {
	e := startExplorer(f, startChain(f))
	id, c := e.identity.String(), e.plain.String()
	for _, seed := range []string{
		"/", "/txs?kind=documents&code=0&limit=3", "/txs?cursor=12.0", "/identity/" + id + "/history?cursor=9.1.0.0.0",
		"/address/" + e.env.Dev.Address().String() + "/history", "/documents/" + c + "/memo?q=%7B%22limit%22%3A1%7D",
		"/document/" + c + "/memo/" + e.memos[0].String() + "/history", "/blocks?nonempty=1&limit=100", "/block/3?page=2",
		"/tx/" + e.hash, "/contracts?owner=" + id, "/stats", "/validator/00", "/epochs",
	} {
		f.Add(seed)
	}
	handler := e.view.Handler()
	codes := map[uint32]bool{proofs.QueryCodeBadRequest: true, proofs.QueryCodeInternal: true, proofs.QueryCodeNotJSON: true,
		proofs.QueryCodeUnknownField: true, proofs.QueryCodeFieldNotIndexed: true, proofs.QueryCodeUnsupportedOperator: true,
		proofs.QueryCodeWrongValueType: true, proofs.QueryCodeLimitTooLarge: true, proofs.QueryCodeBothStarts: true,
		proofs.QueryCodeNotFound: true, proofs.QueryCodeWindowExpired: true}
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(web.APIPrefix + target)
		if err != nil || !strings.HasPrefix(u.Path, web.APIPrefix+"/") || strings.ContainsAny(target, " \t\r\n#") {
			return
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
		body := rec.Body.Bytes()
		if rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect {
			return // the mux's cleaning of a path
		}
		if rec.Code == http.StatusInternalServerError || !json.Valid(body) {
			t.Fatalf("GET %s: %d %.300s", u.RequestURI(), rec.Code, body)
		}
		if rec.Code != http.StatusOK {
			var e struct {
				Status int    `json:"status"`
				Code   uint32 `json:"code"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Status != rec.Code || !codes[e.Code] {
				t.Fatalf("GET %s: %d %.300s", u.RequestURI(), rec.Code, body)
			}
			if e.Code == proofs.QueryCodeInternal && rec.Code < 500 {
				t.Fatalf("GET %s: a bad request answered as the node's failure: %.300s", u.RequestURI(), body)
			}
		}
	})
}
