package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	cmtdb "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/config"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/cometbft/cometbft/light"
	"github.com/cometbft/cometbft/light/provider"
	lighthttp "github.com/cometbft/cometbft/light/provider/http"
	lightdb "github.com/cometbft/cometbft/light/store/db"

	"github.com/ttld-dev/ttld/abci"
	"github.com/ttld-dev/ttld/drive"
)

// ServerFault is what is wrong with a server of [statesync] rpc_servers.
type ServerFault int

const (
	// ServerSilent: it does not answer, or has no header at the height asked.
	ServerSilent ServerFault = iota + 1
	// ServerOtherChain: its header at the trust height is not the one trust_hash names.
	ServerOtherChain
	// ServerInvalid: it answers a header that is malformed or not signed by its
	// validators.
	ServerInvalid
	// ServerUnverified: its latest header does not follow from the trusted one (CometBFT's
	// light client, with this server alone, refuses it).
	ServerUnverified
)

// ErrStateSyncServer: a server of [statesync] rpc_servers (in Config, config.toml) that
// CometBFT's light client cannot rely on: Fault says how, at Height (0: its latest).
// With such a server the light client refuses every snapshot, or fails with "no
// witnesses connected", and state sync never ends.
type ErrStateSyncServer struct {
	Config string
	Server string
	Fault  ServerFault
	Height int64
	// Got and Want are the header hash the server answered and trust_hash
	// (ServerOtherChain).
	Got, Want []byte
	Err       error
}

func (e ErrStateSyncServer) Error() string {
	var what string
	switch e.Fault {
	case ServerSilent:
		what = fmt.Sprintf("does not answer header %d (%v)", e.Height, e.Err)
	case ServerOtherChain:
		what = fmt.Sprintf("answers header %d with hash %X, not trust_hash %X: it follows another chain than the one trusted, or lies", e.Height, e.Got, e.Want)
	case ServerInvalid:
		what = fmt.Sprintf("answers a header %d that is not valid (%v)", e.Height, e.Err)
	default:
		what = fmt.Sprintf("answers a latest header that does not follow from the trusted one (%v)", e.Err)
	}
	return fmt.Sprintf("%s: [statesync] rpc_servers: %s %s; replace it in rpc_servers with a node of the network you trust (or name that node twice), or, if trust_height and trust_hash are what is wrong, set them again with ttld statesync-config --node URL", e.Config, e.Server, what)
}

func (e ErrStateSyncServer) Unwrap() error { return e.Err }

// stateSyncCheckTimeout bounds the check of each server, as CometBFT bounds the setup of
// its light client (node/setup.go).
const stateSyncCheckTimeout = 10 * time.Second

// checkStateSyncServers asks each server of cfg's [statesync] rpc_servers for the header
// at trust_height and checks that it is the one trust_hash names, signed by its
// validators: what CometBFT's light client does with the first server, and then with
// the others as witnesses, except that the error names the server. Each that fails is
// an ErrStateSyncServer, joined.
func checkStateSyncServers(ctx context.Context, cfg *config.Config, chainID string) error {
	var errs []error
	for _, server := range cfg.StateSync.RPCServers {
		if fault := checkServer(ctx, cfg, chainID, server); fault != nil {
			errs = append(errs, *fault)
		}
	}
	return errors.Join(errs...)
}

// checkServer checks server's header at trust_height (checkStateSyncServers); nil: it
// is the trusted one.
func checkServer(ctx context.Context, cfg *config.Config, chainID, server string) *ErrStateSyncServer {
	s := cfg.StateSync
	fault := &ErrStateSyncServer{Config: ConfigFile(cfg.RootDir), Server: server, Height: s.TrustHeight}
	p, err := lighthttp.New(chainID, server)
	if err != nil {
		fault.Fault, fault.Err = ServerSilent, err
		return fault
	}
	ctx, cancel := context.WithTimeout(ctx, stateSyncCheckTimeout)
	defer cancel()
	lb, err := p.LightBlock(ctx, s.TrustHeight)
	var bad provider.ErrBadLightBlock
	switch {
	case errors.As(err, &bad):
		fault.Fault, fault.Err = ServerInvalid, err
	case err != nil:
		fault.Fault, fault.Err = ServerSilent, err
	case !bytes.Equal(lb.Hash(), s.TrustHashBytes()):
		fault.Fault, fault.Got, fault.Want = ServerOtherChain, lb.Hash(), s.TrustHashBytes()
	default:
		if err := lb.ValidatorSet.VerifyCommitLight(chainID, lb.Commit.BlockID, lb.Height, lb.Commit); err != nil {
			fault.Fault, fault.Err = ServerInvalid, err
			return fault
		}
		return nil
	}
	return fault
}

// diagnoseStateSyncServers checks each server of cfg's [statesync] rpc_servers as
// checkStateSyncServers does, and then its latest header from the trusted one with a
// light client of its own (CometBFT's, the server as its only provider): a server that
// answered the state sync's light client what it could not verify fails here too,
// alone, so that the error names it. It returns the servers that fail.
func diagnoseStateSyncServers(ctx context.Context, cfg *config.Config, chainID string) []ErrStateSyncServer {
	var out []ErrStateSyncServer
	for _, server := range cfg.StateSync.RPCServers {
		if fault := checkServer(ctx, cfg, chainID, server); fault != nil {
			out = append(out, *fault)
			continue
		}
		if err := verifyLatest(ctx, server, chainID, cfg.StateSync); err != nil {
			out = append(out, ErrStateSyncServer{Config: ConfigFile(cfg.RootDir), Server: server, Fault: ServerUnverified, Err: err})
		}
	}
	return out
}

// verifyLatest verifies server's latest header from the trusted one, with server as the
// light client's only provider (its own witness).
func verifyLatest(ctx context.Context, server, chainID string, s *config.StateSyncConfig) error {
	p, err := lighthttp.New(chainID, server)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, stateSyncCheckTimeout)
	defer cancel()
	lc, err := light.NewClient(ctx, chainID, light.TrustOptions{Period: s.TrustPeriod, Height: s.TrustHeight, Hash: s.TrustHashBytes()},
		p, []provider.Provider{p}, lightdb.New(cmtdb.NewMemDB(), ""), light.Logger(cmtlog.NewNopLogger()))
	if err != nil {
		return err
	}
	_, err = lc.Update(ctx, time.Now())
	return err
}

// prepareStateSync readies a node that is about to state-sync (config.toml's
// [statesync] is on and store holds no state): each of its RPC servers must answer the
// trusted header (checkStateSyncServers), and the logger it returns, cometLog watching
// CometBFT's state sync (stateSyncWatch), halts app when the sync cannot end. Any other
// node gets cometLog as it is.
func prepareStateSync(cfg *config.Config, chainID string, store *drive.Store, app *abci.Application, cometLog cmtlog.Logger) (cmtlog.Logger, error) {
	if v, _ := store.LastCommit(); !cfg.StateSync.Enable || v != 0 {
		return cometLog, nil
	}
	if err := checkStateSyncServers(context.Background(), cfg, chainID); err != nil {
		return nil, err
	}
	return watchStateSync(cometLog, newStateSyncWatch(cfg, chainID, app)), nil
}
