package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/proofs"
)

// restoreRPC serves abci_query as a node does for proofs.PathRestore: value as the
// answer's, or code 1 (the path unknown) when value is nil.
func restoreRPC(t *testing.T, value []byte) *rpchttp.HTTP {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Path string `json:"path"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "abci_query" || req.Params.Path != proofs.PathRestore {
			http.Error(w, "not the restore query", http.StatusBadRequest)
			return
		}
		response := map[string]any{"code": 0, "value": value}
		if value == nil {
			response = map[string]any{"code": proofs.QueryCodeBadRequest, "log": "unknown path"}
		}
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"response": response}})
	}))
	t.Cleanup(s.Close)
	rpc, err := rpchttp.New(s.URL, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	return rpc
}

// status shows a restore in progress from the node's /restore answer: the snapshot's
// height, chunks applied of all, bytes; nothing for a node that never state-synced or
// does not answer the path.
func TestStatusShowsRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := abci.RestoreStatus{Height: 1200, Chunks: 10, ChunksApplied: 3, BytesApplied: 3 << 20, Offered: 2, Refused: 1, ChunksRefused: 3}
	value, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := nodeRestore(ctx, restoreRPC(t, value))
	if err != nil || got == nil || *got != want {
		t.Fatalf("restore: %+v %v", got, err)
	}
	var text bytes.Buffer
	statusOutput{Restore: got}.text(&text)
	for _, line := range []string{
		"restoring:    the snapshot at height 1200: 3 of 10 chunks applied, 3.0 MiB\n",
		"state sync:   2 snapshots offered, 1 refused, 3 chunks refused\n",
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("status lacks %q:\n%s", line, text.String())
		}
	}
	none, err := json.Marshal(abci.RestoreStatus{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]byte{none, nil} {
		if got, err := nodeRestore(ctx, restoreRPC(t, v)); err != nil || got != nil {
			t.Fatalf("answer %q: %+v %v", v, got, err)
		}
	}
	text.Reset()
	statusOutput{}.text(&text)
	if strings.Contains(text.String(), "restor") || strings.Contains(text.String(), "state sync") {
		t.Errorf("status of a node that never state-synced:\n%s", text.String())
	}
}
