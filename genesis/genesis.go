package genesis

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// AppState is the "app_state" object of the genesis file.
type AppState struct {
	// ProtocolVersion the chain starts on; 0 means protocol.Newest().
	ProtocolVersion protocol.Version `json:"protocol_version"`
	// Upgrade, when set, switches the chain to a later protocol version at a height
	// after the initial one (13 to 14: document time to live).
	Upgrade *Upgrade `json:"protocol_upgrade,omitempty"`
	// LocalLimits lowers limits on a local chain only (a chain id protocol.LocalChainID
	// accepts; InitChain refuses them on any other): min_document_ttl_seconds, so that
	// documents can be watched expiring in minutes.
	LocalLimits *LocalLimits `json:"local_limits,omitempty"`
	// EpochTimeLengthS is the epoch length in seconds, protocol.MinEpochLengthS to
	// protocol.MaxEpochLengthS (mainnet 788,400; a local chain DefaultEpochLengthS).
	EpochTimeLengthS uint64     `json:"epoch_time_length_s"`
	Addresses        []Address  `json:"addresses"`
	Identities       []Identity `json:"identities"`
	// Validators names the payout identity of every genesis validator.
	Validators []Validator `json:"validators"`
}

// LocalLimits are the limits a local chain lowers (protocol.LocalLimits).
type LocalLimits struct {
	// MinDocumentTTLSeconds: 1 up to the protocol's minimum (3,600 at 14).
	MinDocumentTTLSeconds uint64 `json:"min_document_ttl_seconds"`
}

// Upgrade schedules a protocol version for the block at Height.
type Upgrade struct {
	Version protocol.Version `json:"version"`
	Height  uint64           `json:"height"`
}

// DefaultEpochLengthS is the epoch length `ttld init` and `ttld testnet` write unless
// told otherwise: an hour, short enough to watch epochs change on a local chain.
const DefaultEpochLengthS = 3600

// Validator names the identity a genesis validator's share of its epochs' pools is
// paid to.
type Validator struct {
	// Address is the validator's 20-byte consensus address, 40 hex digits.
	Address string `json:"address"`
	// PayoutIdentity is an identity of this genesis, 64 hex digits.
	PayoutIdentity string `json:"payout_identity"`
}

// Address funds a platform address at genesis.
type Address struct {
	Address string `json:"address"` // 40 hex digits
	Balance uint64 `json:"balance"` // credits
}

// Identity creates an identity at genesis.
type Identity struct {
	ID      string   `json:"id"`      // 64 hex digits
	Balance uint64   `json:"balance"` // credits
	Keys    []string `json:"keys"`    // ed25519 public keys, 64 hex digits each
}

// ErrInvalid: the app state breaks a genesis rule.
type ErrInvalid struct{ Reason string }

func (e ErrInvalid) Error() string { return "genesis: " + e.Reason }

func invalid(format string, args ...any) error { return ErrInvalid{fmt.Sprintf(format, args...)} }

// Decode parses and validates an app state.
func Decode(raw []byte) (AppState, error) {
	var s AppState
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return s, invalid("app state: %v", err)
	}
	if s.ProtocolVersion == 0 {
		s.ProtocolVersion = protocol.Newest()
	}
	_, err := s.supply()
	return s, err
}

// Encode renders the app state as indented JSON.
func (s AppState) Encode() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return b
}

// supply validates the state and returns its total credits.
func (s AppState) supply() (uint64, error) {
	if !protocol.Known(s.ProtocolVersion) {
		return 0, invalid("unknown protocol version %d", s.ProtocolVersion)
	}
	if u := s.Upgrade; u != nil && (!protocol.Known(u.Version) || u.Version <= s.ProtocolVersion) {
		return 0, invalid("protocol_upgrade to version %d: a version this build knows, after the starting %d", u.Version, s.ProtocolVersion)
	}
	if s.EpochTimeLengthS < protocol.MinEpochLengthS || s.EpochTimeLengthS > protocol.MaxEpochLengthS {
		return 0, invalid("epoch_time_length_s %d is outside %d..%d", s.EpochTimeLengthS, protocol.MinEpochLengthS, protocol.MaxEpochLengthS)
	}
	var total uint64
	add := func(n uint64, what string) error {
		if total+n < total {
			return invalid("total supply overflows at %s", what)
		}
		total += n
		return nil
	}
	seenA := map[protocol.Address]bool{}
	for _, a := range s.Addresses {
		addr, err := protocol.ParseAddress(a.Address)
		if err != nil {
			return 0, invalid("address %q: %v", a.Address, err)
		}
		if seenA[addr] {
			return 0, invalid("address %s repeats", a.Address)
		}
		seenA[addr] = true
		if err := add(a.Balance, a.Address); err != nil {
			return 0, err
		}
	}
	seenI := map[protocol.IdentityID]bool{}
	for _, i := range s.Identities {
		id, err := protocol.ParseIdentityID(i.ID)
		if err != nil {
			return 0, invalid("identity %q: %v", i.ID, err)
		}
		if seenI[id] {
			return 0, invalid("identity %s repeats", i.ID)
		}
		seenI[id] = true
		if _, err := i.keys(); err != nil {
			return 0, err
		}
		if err := add(i.Balance, i.ID); err != nil {
			return 0, err
		}
	}
	if _, err := s.payouts(seenI); err != nil {
		return 0, err
	}
	return total, nil
}

// payouts validates the validators' entries against the genesis identities and
// returns the payout identity of each validator, by address.
func (s AppState) payouts(identities map[protocol.IdentityID]bool) (map[string]protocol.IdentityID, error) {
	out := map[string]protocol.IdentityID{}
	used := map[protocol.IdentityID]string{}
	for _, v := range s.Validators {
		addr, err := hex.DecodeString(v.Address)
		if err != nil || len(addr) != 20 {
			return nil, invalid("validator %q: want a 20-byte consensus address in hex", v.Address)
		}
		key := string(addr)
		if _, dup := out[key]; dup {
			return nil, invalid("validator %s repeats", v.Address)
		}
		id, err := protocol.ParseIdentityID(v.PayoutIdentity)
		if err != nil {
			return nil, invalid("validator %s payout identity %q: %v", v.Address, v.PayoutIdentity, err)
		}
		if !identities[id] {
			return nil, invalid("validator %s payout identity %s is not an identity of this genesis", v.Address, v.PayoutIdentity)
		}
		if other, dup := used[id]; dup {
			return nil, invalid("validators %s and %s share the payout identity %s", other, v.Address, v.PayoutIdentity)
		}
		used[id] = v.Address
		out[key] = id
	}
	return out, nil
}

func (i Identity) keys() ([]ed25519.PublicKey, error) {
	if len(i.Keys) == 0 {
		return nil, invalid("identity %s has no keys", i.ID)
	}
	out := make([]ed25519.PublicKey, len(i.Keys))
	for n, k := range i.Keys {
		b, err := hex.DecodeString(k)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, invalid("identity %s key %d: want %d hex digits", i.ID, n, 2*ed25519.PublicKeySize)
		}
		out[n] = b
	}
	return out, nil
}

// Params are what InitChain knows of the chain besides the app state.
type Params struct {
	ChainID       string
	GenesisTimeMs uint64
	InitialHeight uint64
	// Validators are the genesis validators (CometBFT's RequestInitChain.Validators):
	// each must have a payout identity in the app state. From version 16 on they are
	// the chain's validator set in state (docs/STATE.md, "Validators").
	Validators []drive.GenesisValidator
}

// InitChain writes the genesis state into kv: the chain parameters (so the tree is
// never empty), the protocol version, the supply, then addresses and identities sorted
// by key.
func InitChain(kv drive.KV, p Params, raw []byte) error {
	s, err := Decode(raw)
	if err != nil {
		return err
	}
	if len(p.ChainID) == 0 || len(p.ChainID) > 255 {
		return invalid("chain id must be 1 to 255 bytes")
	}
	if p.GenesisTimeMs > protocol.MaxBlockTimeMs {
		return invalid("genesis time %d ms is past %d ms, the last millisecond of 9999", p.GenesisTimeMs, uint64(protocol.MaxBlockTimeMs))
	}
	supply, err := s.supply()
	if err != nil {
		return err
	}
	payouts, err := s.payouts(identitySet(s.Identities))
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, g := range p.Validators {
		a := protocol.ConsensusAddressOf(g.PubKey)
		v := a[:]
		if _, ok := payouts[string(v)]; !ok {
			return invalid("validator %X has no payout identity in the app state's validators", v)
		}
		seen[string(v)] = true
	}
	for _, v := range s.Validators {
		if addr, _ := hex.DecodeString(v.Address); !seen[string(addr)] {
			return invalid("app state names validator %s, which is not a genesis validator", v.Address)
		}
	}
	lim, err := protocol.LimitsFor(s.ProtocolVersion)
	if err != nil {
		return invalid("%v", err)
	}
	if lim.ValidatorVotes {
		if len(p.Validators) > lim.MaxValidators {
			return invalid("%d validators: protocol version %d allows at most %d", len(p.Validators), s.ProtocolVersion, lim.MaxValidators)
		}
		for _, g := range p.Validators {
			if len(g.PubKey) != ed25519.PublicKeySize || g.Power == 0 || g.Power > lim.MaxValidatorPower {
				return invalid("validator %X: want an ed25519 key and a power of 1 to %d", g.PubKey, lim.MaxValidatorPower)
			}
		}
	}
	if err := drive.SetChainParams(kv, drive.ChainParams{ChainID: p.ChainID, GenesisTimeMs: p.GenesisTimeMs, InitialHeight: p.InitialHeight, EpochLengthS: s.EpochTimeLengthS}); err != nil {
		return err
	}
	if err := drive.SetProtocolVersion(kv, s.ProtocolVersion); err != nil {
		return err
	}
	if s.ProtocolVersion >= protocol.V14 {
		if err := drive.InsertDocumentTTLTrees(kv, p.InitialHeight); err != nil {
			return err
		}
	}
	if o := s.LocalLimits; o != nil {
		if !protocol.LocalChainID(p.ChainID) {
			return invalid("local_limits on chain %q: limits are lowered on local chains only (a chain id ending in -local, -devnet, -test or -e2e)", p.ChainID)
		}
		if o.MinDocumentTTLSeconds < 1 || o.MinDocumentTTLSeconds > protocol.MinDocumentTTLSeconds {
			return invalid("local_limits.min_document_ttl_seconds %d is outside 1..%d: it may only lower the minimum", o.MinDocumentTTLSeconds, protocol.MinDocumentTTLSeconds)
		}
		if err := drive.SetLocalLimits(kv, protocol.LocalLimits{MinDocumentTTLSeconds: o.MinDocumentTTLSeconds}); err != nil {
			return err
		}
	}
	if u := s.Upgrade; u != nil {
		if u.Height <= p.InitialHeight {
			return invalid("protocol_upgrade height %d is not after the initial height %d", u.Height, p.InitialHeight)
		}
		if err := drive.SetProtocolUpgrade(kv, drive.ProtocolUpgrade{Version: u.Version, Height: u.Height}); err != nil {
			return err
		}
	}
	if err := drive.SetSupply(kv, supply); err != nil {
		return err
	}
	// Every credit of the supply is in a balance below: the running total starts there.
	if err := drive.SetU64(kv, drive.TotalCreditsKey(), supply); err != nil {
		return err
	}
	if err := drive.SetNextUnpaidEpoch(kv, 0); err != nil {
		return err
	}
	vals := append([]Validator(nil), s.Validators...)
	sort.Slice(vals, func(i, j int) bool { return vals[i].Address < vals[j].Address })
	for _, v := range vals {
		addr, _ := hex.DecodeString(v.Address)
		if err := drive.SetPayoutIdentity(kv, addr, payouts[string(addr)]); err != nil {
			return err
		}
	}
	if lim.ValidatorVotes && len(p.Validators) > 0 {
		if err := drive.RecordGenesisSet(kv, p.Validators); err != nil {
			return err
		}
	}
	addrs := append([]Address(nil), s.Addresses...)
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Address < addrs[j].Address })
	for _, a := range addrs {
		addr, _ := protocol.ParseAddress(a.Address)
		if err := drive.SetAddress(kv, addr, drive.AddressState{Balance: a.Balance}); err != nil {
			return err
		}
	}
	ids := append([]Identity(nil), s.Identities...)
	sort.Slice(ids, func(i, j int) bool { return ids[i].ID < ids[j].ID })
	for _, i := range ids {
		id, _ := protocol.ParseIdentityID(i.ID)
		keys, _ := i.keys()
		if err := drive.InsertIdentity(kv, drive.Identity{ID: id, Balance: i.Balance, Keys: keys}); err != nil {
			return err
		}
	}
	return nil
}

func identitySet(ids []Identity) map[protocol.IdentityID]bool {
	out := map[protocol.IdentityID]bool{}
	for _, i := range ids {
		if id, err := protocol.ParseIdentityID(i.ID); err == nil {
			out[id] = true
		}
	}
	return out
}

// CheckTime refuses a genesis time whose blocks' times the application cannot count:
// before 1970 or past protocol.MaxBlockTimeMs (docs/STATE.md, "Block time").
func CheckTime(t time.Time) error {
	if t.Before(time.Unix(0, 0)) || t.After(time.UnixMilli(protocol.MaxBlockTimeMs)) {
		return invalid("genesis time %s is outside 1970-01-01T00:00:00Z..9999-12-31T23:59:59.999Z: block times are counted in milliseconds since 1970", t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}
