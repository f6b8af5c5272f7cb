package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ttld-dev/ttld/protocol"
)

// contractAndType reads the {contract} and {type} path values.
func contractAndType(r *http.Request) (protocol.ContractID, string, error) {
	c, err := protocol.ParseContractID(r.PathValue("contract"))
	if err != nil {
		return c, "", errBadInput{"contract", r.PathValue("contract"), "64 hex digits"}
	}
	t := r.PathValue("type")
	if why := protocol.ValidName(t); why != "" {
		return c, "", errBadInput{"document type", t, "a type name: " + why}
	}
	return c, t, nil
}

// expiryText says when a document expires relative to the block time atMs.
func expiryText(expiresMs, atMs uint64) string {
	at := time.UnixMilli(int64(expiresMs)).UTC().Format(time.RFC3339)
	if atMs >= expiresMs {
		return "expired at " + at + ", waiting for cleanup"
	}
	return fmt.Sprintf("expires at %s, in %s", at, (time.Duration(expiresMs-atMs) * time.Millisecond).Round(time.Second))
}
