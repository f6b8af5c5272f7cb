//go:build js

package check

import (
	"context"

	cmttypes "github.com/cometbft/cometbft/types"
)

func (c bundleClient) SignedHeader(_ context.Context, height int64) (*cmttypes.SignedHeader, error) {
	return c.header(height)
}
