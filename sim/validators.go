package sim

import (
	"crypto/ed25519"
	"fmt"
	"slices"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// CometSet is the validator set as CometBFT holds it, changed by the updates each
// block returns the way CometBFT changes it (types.ValidatorSet.UpdateWithChangeSet):
// from protocol version 16 on it must be, after every block, the set in state
// (docs/STATE.md, "Validators").
type CometSet map[string]int64 // ed25519 key -> power

// NewCometSet is CometBFT's set at genesis.
func NewCometSet(genesisValidators []abcitypes.ValidatorUpdate) CometSet {
	s := CometSet{}
	for _, v := range genesisValidators {
		s[string(v.PubKey.GetEd25519())] = v.Power
	}
	return s
}

// Follow applies a block's updates, refusing what CometBFT refuses and halts on (a key
// twice in one block, the removal of a key it does not hold, a negative power, an
// empty set), and compares the result with the set in state kv once there is one.
func (s CometSet) Follow(kv drive.KV, updates []abcitypes.ValidatorUpdate) error {
	seen := map[string]bool{}
	for _, u := range updates {
		k := string(u.PubKey.GetEd25519())
		if len(k) != ed25519.PublicKeySize || u.Power < 0 {
			return fmt.Errorf("validator update %v: not an ed25519 key with a power", u)
		}
		if seen[k] {
			return fmt.Errorf("validator update of %x twice in a block", k)
		}
		seen[k] = true
		if _, ok := s[k]; !ok && u.Power == 0 {
			return fmt.Errorf("removal of %x, which CometBFT does not hold", k)
		}
		if u.Power == 0 {
			delete(s, k)
		} else {
			s[k] = u.Power
		}
	}
	if len(s) == 0 {
		return fmt.Errorf("the validator updates emptied CometBFT's set")
	}
	set, err := drive.Validators(kv)
	if err != nil || len(set) == 0 {
		return err // NB: before version 16 the set is not state
	}
	if len(set) != len(s) {
		return fmt.Errorf("CometBFT's set has %d validators, the state's %d", len(s), len(set))
	}
	for _, v := range set {
		if s[string(v.PubKey)] != int64(v.Power) {
			return fmt.Errorf("validator %s: power %d in state, %d at CometBFT", v.Address, v.Power, s[string(v.PubKey)])
		}
	}
	return nil
}

// validatorKeyCount is how many consensus keys the generator's set changes name: the
// genesis validators' and as many more, each with an identity to operate it.
const validatorKeyCount = 2 * validatorCount

// validatorKey is the generator's consensus key i: the genesis validators are the
// first validatorCount.
func validatorKey(i int) ed25519.PublicKey {
	var seed [32]byte
	copy(seed[:], "validator")
	seed[31] = byte(i)
	return ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
}

// validatorTx is a change of the set read from kv, mostly one the set accepts: an
// approval of a pending proposal by an operator who has not approved it, or a
// proposal by an operator of the set to add a key not in it, change a power by less
// than a third of the total, rotate to a key not in it, or remove a validator. Every
// operator signs with the generator's first key. ok is false when kv holds no set
// (before protocol version 16).
func (g *Generator) validatorTx(kv drive.KV, used map[string]uint64) (protocol.Transition, bool, error) {
	set, err := drive.ReadValidatorSet(kv)
	if err != nil || len(set.List) == 0 {
		return nil, false, err
	}
	op := set.List[g.rng.Intn(len(set.List))]
	proposals, err := drive.ValidatorProposals(kv)
	if err != nil {
		return nil, false, err
	}
	if len(proposals) > 0 && g.rng.Intn(2) == 0 {
		p := proposals[g.rng.Intn(len(proposals))]
		for _, v := range set.List {
			if !slices.Contains(p.Approvals, v.Address) {
				op = v
				break
			}
		}
		nonce, _, err := g.identityNonce(kv, op.Operator, used)
		if err != nil {
			return nil, false, err
		}
		return &protocol.ValidatorSetApproval{Identity: op.Operator, Nonce: nonce, Proposal: p.ID}, true, nil
	}
	nonce, _, err := g.identityNonce(kv, op.Operator, used)
	if err != nil {
		return nil, false, err
	}
	key := validatorKey(g.rng.Intn(validatorKeyCount))
	target := set.List[g.rng.Intn(len(set.List))]
	step := max(1, (set.Total-1)/3)
	c := protocol.ValidatorChange{Validator: target.Address}
	switch g.rng.Intn(4) {
	case 0:
		a := protocol.ConsensusAddressOf(key)
		c = protocol.ValidatorChange{Kind: protocol.ValidatorAdd, PubKey: key, Power: 1 + uint64(g.rng.Int63n(int64(step))), Operator: protocol.PayoutIdentityID(a[:])}
	case 1:
		c.Kind, c.Power = protocol.ValidatorPower, uint64(max(1, int64(target.Power)+g.rng.Int63n(int64(2*step)+1)-int64(step)))
	case 2:
		c.Kind, c.PubKey = protocol.ValidatorRotate, key
	default:
		c.Kind = protocol.ValidatorRemove
	}
	return &protocol.ValidatorSetProposal{Identity: op.Operator, Nonce: nonce, Change: c}, true, nil
}
