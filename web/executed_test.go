package web_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	rpcclient "github.com/cometbft/cometbft/rpc/client"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web"
)

// storedNotExecuted is a node caught between storing block tip and executing it:
// CometBFT reports tip as its latest block and serves its header, while the
// application has committed tip-1 only and the results of tip are not saved yet.
type storedNotExecuted struct {
	rpcclient.Client
	tip int64
}

func (n storedNotExecuted) Status(ctx context.Context) (*coretypes.ResultStatus, error) {
	st, err := n.Client.Status(ctx)
	if err == nil {
		st.SyncInfo.LatestBlockHeight = n.tip
	}
	return st, err
}

func (n storedNotExecuted) ABCIInfo(ctx context.Context) (*coretypes.ResultABCIInfo, error) {
	info, err := n.Client.ABCIInfo(ctx)
	if err == nil {
		info.Response.LastBlockHeight = n.tip - 1
	}
	return info, err
}

func (n storedNotExecuted) BlockResults(ctx context.Context, height *int64) (*coretypes.ResultBlockResults, error) {
	if height != nil && *height >= n.tip {
		return nil, errors.New("could not find results for height")
	}
	return n.Client.BlockResults(ctx, height)
}

// A view between CometBFT storing a block and the application executing it reads no
// results of that block: the backlog chart stops at the executed height, and the
// overview lists the transactions of the executed blocks only; both answer 200 while
// the latest block, one with a transaction, has no results yet.
func TestViewOfABlockStoredNotExecuted(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	tr := &protocol.AddressFundsTransfer{PubKey: env.Dev.Pub, Recipient: protocol.AddressOf(ed25519.PublicKey(make([]byte, 32))), Amount: 1}
	tip := env.Commit(t, tr)
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	s, err := web.New(storedNotExecuted{Client: rpc, tip: tip}, web.Options{Trusted: env.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	for _, path := range []string{"/chart/backlog.svg", "/"} {
		if status, _, body := getFrom(t, srv, path); status != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", path, status, body)
		}
	}
}
