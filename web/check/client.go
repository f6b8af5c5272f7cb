package check

import (
	"fmt"

	cmttypes "github.com/cometbft/cometbft/types"
)

// bundleClient serves the one signed header a bundle carries, as proofs.Client: the
// RPC's methods natively (client_rpc.go), SignedHeader in the browser (client_js.go).
type bundleClient struct{ sh *cmttypes.SignedHeader }

// header is the bundle's signed header when it is of height.
func (c bundleClient) header(height int64) (*cmttypes.SignedHeader, error) {
	if c.sh == nil || c.sh.Header == nil || c.sh.Commit == nil || c.sh.Height != height {
		return nil, fmt.Errorf("the bundle holds no signed header of height %d", height)
	}
	return c.sh, nil
}
