package thirdparty

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/web"
)

// provenPaths are the paths of docs/openapi.json whose answers carry a proof box.
func provenPaths(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Responses map[string]struct {
					Content map[string]struct {
						Schema struct {
							Properties map[string]json.RawMessage `json:"properties"`
						} `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			} `json:"get"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for p, item := range doc.Paths {
		if _, ok := item.Get.Responses["200"].Content["application/json"].Schema.Properties["proof"]; ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestThirdPartyAPI reads every proven path of the web view's JSON API, as
// docs/openapi.json lists them, and checks each proof bundle its answer carries with
// this package's verifier alone (docs/PROOFS.md): the proof against the signed
// header's app hash, the header against the genesis set. A bundle with its answer's
// value or height changed is refused.
func TestThirdPartyAPI(t *testing.T) {
	t.Parallel()
	env := e2e.StartNodeShortTTL(t, 60)
	n := env.SeedNote(t, "read through the API")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := env.Client.WaitForHeight(ctx, n.Height+2); err != nil {
		t.Fatal(err)
	}
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	view, err := web.New(rpc, web.Options{Trusted: env.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(view.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = view.Close() })

	contract, doc := n.Contract.String(), n.Document.String()
	urls := map[string]string{
		"/api/":                                "/api/",
		"/api/identity/{id}":                   "/api/identity/" + n.Identity.String(),
		"/api/address/{address}":               "/api/address/" + env.Dev.Address().String(),
		"/api/contract/{id}":                   "/api/contract/" + contract,
		"/api/documents/{contract}/{type}":     "/api/documents/" + contract + "/note",
		"/api/document/{contract}/{type}/{id}": "/api/document/" + contract + "/note/" + doc,
		"/api/validators":                      "/api/validators",
		"/api/validator/{address}":             "/api/validator/" + env.Trusted.Validators[0].Address.String(),
		"/api/epochs":                          "/api/epochs",
	}
	proven := provenPaths(t)
	if len(proven) != len(urls) {
		t.Fatalf("docs/openapi.json lists proven paths %v; this test reads %d", proven, len(urls))
	}
	for _, p := range proven {
		url, ok := urls[p]
		if !ok {
			t.Fatalf("docs/openapi.json lists %s, which this test does not read", p)
		}
		box, err := GetProof(srv.URL + url)
		if err != nil {
			t.Fatal(err)
		}
		for i, raw := range box.Bundles {
			got, err := CheckBundle(raw, e2e.ChainID, env.Trusted, 1, time.Now())
			if err != nil {
				t.Errorf("%s: bundle %d does not check: %v", url, i, err)
				continue
			}
			if h := strconv.FormatInt(got.Height, 10); box.Figures["height"] != h {
				t.Errorf("%s: bundle %d proves height %d, the figures say %s", url, i, got.Height, box.Figures["height"])
			}
			if _, err := CheckBundle(tamper(t, raw), e2e.ChainID, env.Trusted, 1, time.Now()); err == nil {
				t.Errorf("%s: bundle %d, tampered, checks", url, i)
			}
		}
	}
}

// tamper is bundle raw with its answer's value changed: one byte flipped, or one
// added to an empty value.
func tamper(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	res := b["response"].(map[string]any)
	v, _ := res["value"].(string)
	value, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(value) == 0 {
		value = []byte{0}
	} else {
		value[len(value)/2] ^= 1
	}
	res["value"] = base64.StdEncoding.EncodeToString(value)
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
