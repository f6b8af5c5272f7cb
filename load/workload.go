package load

import (
	"fmt"
	"strings"

	"github.com/ttld-dev/ttld/protocol"
)

// Workload names what a run sends.
type Workload string

const (
	// Transfers are identity credit transfers (type 3): each signer's identity sends
	// one credit to the next signer's identity.
	Transfers Workload = "transfers"
	// AddressTransfers are address funds transfers (type 5): each signer's address
	// sends one credit to the next signer's address.
	AddressTransfers Workload = "address-transfers"
	// Documents are documents batches (type 8) of one create each: a document of
	// DocumentDataBytes in a type with two indexes and no ttl (DocumentsContract).
	Documents Workload = "documents"
	// DocumentsTTL are Documents in a type whose documents live DocumentTTLSeconds.
	DocumentsTTL Workload = "documents-ttl"
	// KVStore are CometBFT kvstore transactions, key=value, for CometBFT's built-in
	// kvstore application: the baseline a ttld workload is compared with, at the same
	// transaction size.
	KVStore Workload = "kvstore"
)

// Workloads are the ttld workloads, in the order a comparison runs them.
var Workloads = []Workload{Transfers, AddressTransfers, Documents, DocumentsTTL}

// ParseWorkload reads a workload's name.
func ParseWorkload(s string) (Workload, error) {
	for _, w := range append(Workloads, KVStore) {
		if string(w) == s {
			return w, nil
		}
	}
	return "", fmt.Errorf("load: unknown workload %q: want one of %s, %s", s, workloadNames(), KVStore)
}

func workloadNames() string {
	names := make([]string, len(Workloads))
	for i, w := range Workloads {
		names[i] = string(w)
	}
	return strings.Join(names, ", ")
}

// Describe says what the workload sends.
func (w Workload) Describe() string {
	switch w {
	case Transfers:
		return "identity credit transfers (type 3)"
	case AddressTransfers:
		return "address funds transfers (type 5)"
	case Documents:
		return fmt.Sprintf("document creates (type 8) of %d-byte documents, two indexes, no ttl", DocumentDataBytes)
	case DocumentsTTL:
		return fmt.Sprintf("document creates (type 8) of %d-byte documents, two indexes, ttl %d s", DocumentDataBytes, DocumentTTLSeconds)
	case KVStore:
		return "CometBFT kvstore key=value transactions"
	}
	return string(w)
}

// System is the application a workload is for: "ttld", or "kvstore" for KVStore.
func (w Workload) System() string {
	if w == KVStore {
		return "kvstore"
	}
	return "ttld"
}

// documents reports whether the workload creates documents (and needs a contract).
func (w Workload) documents() bool { return w == Documents || w == DocumentsTTL }

// signerKind is the kind of account that signs the workload's transitions.
func (w Workload) signerKind() protocol.SignerKind {
	if w == AddressTransfers {
		return protocol.SignerAddress
	}
	return protocol.SignerIdentity
}
