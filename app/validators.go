package app

import (
	"crypto/ed25519"
	"slices"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// The validator set (docs/STATE.md, "Validators"), protocol version 16 on. The set is
// state; its operators change it by proposals that pass with approvals of more than two
// thirds of its power (validator_set_proposal.go, validator_set_approval.go), and a
// block applies what passed after its transactions (validatorStep), moving less than a
// third of the power it started with; evidence removes a validator before them
// (misbehaviorStep). Every change reaches CometBFT in the block's validator updates,
// which it applies two blocks later.

// Misbehavior is evidence against a validator that a block carries
// (RequestFinalizeBlock.Misbehavior).
type Misbehavior struct {
	Kind      protocol.MisbehaviorKind
	Validator protocol.ConsensusAddress
	// Height is the height of the misbehaviour.
	Height uint64
}

// ValidatorUpdate is a change of the set for CometBFT: the validator's key and its new
// power (0: removed).
type ValidatorUpdate struct {
	PubKey ed25519.PublicKey
	Power  uint64
}

// setChanges follows the validators a block changes, to tell CometBFT what changed:
// the set before the block's first change of each validator, and the set after.
type setChanges struct {
	before  map[protocol.ConsensusAddress]*drive.Validator // nil: absent before
	touched []protocol.ConsensusAddress
}

// touch records validator a's state before the block changed it, once.
func (s *setChanges) touch(kv drive.KV, a protocol.ConsensusAddress) error {
	if s.before == nil {
		s.before = map[protocol.ConsensusAddress]*drive.Validator{}
	}
	if _, ok := s.before[a]; ok {
		return nil
	}
	v, ok, err := drive.GetValidator(kv, a)
	if err != nil {
		return err
	}
	s.before[a] = nil
	if ok {
		s.before[a] = &v
	}
	s.touched = append(s.touched, a)
	return nil
}

// updates compares each validator touched with what it is now, by address: a
// validator added or whose power changed is sent with its power, one removed with 0,
// one the block added and removed again not at all.
func (s *setChanges) updates(kv drive.KV) ([]ValidatorUpdate, error) {
	addrs := slices.Clone(s.touched)
	slices.SortFunc(addrs, func(a, b protocol.ConsensusAddress) int { return slices.Compare(a[:], b[:]) })
	var out []ValidatorUpdate
	for _, a := range addrs {
		was := s.before[a]
		now, ok, err := drive.GetValidator(kv, a)
		if err != nil {
			return nil, err
		}
		switch {
		case ok && (was == nil || was.Power != now.Power):
			out = append(out, ValidatorUpdate{PubKey: now.PubKey, Power: now.Power})
		case !ok && was != nil:
			out = append(out, ValidatorUpdate{PubKey: was.PubKey, Power: 0})
		}
	}
	return out, nil
}

// checkChange judges change c against set as it is: the rules a proposal must meet when
// it is made, and a passed one when it is applied. It returns the power c moves.
func checkChange(kv drive.KV, set drive.ValidatorSet, c protocol.ValidatorChange, l protocol.Limits) (uint64, error) {
	var moved uint64
	target := c.Target()
	v, present := set.Get(target)
	switch c.Kind {
	case protocol.ValidatorAdd:
		if present {
			return 0, protocol.ErrValidatorAlreadyPresent{Validator: target}
		}
		if len(set.List) >= l.MaxValidators {
			return 0, protocol.ErrTooManyValidators{Max: l.MaxValidators}
		}
		exists, err := drive.IdentityExists(kv, c.Operator)
		if err != nil {
			return 0, err
		}
		if _, operates := set.Operated(c.Operator); !exists || operates {
			return 0, protocol.ErrInvalidValidatorOperator{Operator: c.Operator, Exists: exists}
		}
		moved = c.Power
	case protocol.ValidatorPower, protocol.ValidatorRotate, protocol.ValidatorRemove:
		if !present {
			return 0, protocol.ErrValidatorNotFound{Validator: target}
		}
		moved = v.Power
		switch c.Kind {
		case protocol.ValidatorPower:
			moved = max(c.Power, v.Power) - min(c.Power, v.Power)
		case protocol.ValidatorRotate:
			if to := protocol.ConsensusAddressOf(c.PubKey); set.Has(to) {
				return 0, protocol.ErrValidatorAlreadyPresent{Validator: to}
			}
		case protocol.ValidatorRemove:
			if len(set.List) == 1 {
				return 0, protocol.ErrValidatorSetWouldBeEmpty{Validator: target}
			}
		}
	default:
		return 0, faultf("validator change kind %d", c.Kind)
	}
	if protocol.MovesTooMuch(moved, set.Total) {
		return 0, protocol.ErrValidatorPowerMoveTooLarge{Moved: moved, Total: set.Total}
	}
	return moved, nil
}

// applyChange writes change c of proposal id into the set, which checkChange accepted
// as it is (set), and returns its validator_update events.
func applyChange(kv drive.KV, s *setChanges, set drive.ValidatorSet, c protocol.ValidatorChange, id uint64) ([]protocol.Event, error) {
	target := c.Target()
	if err := s.touch(kv, target); err != nil {
		return nil, err
	}
	update := func(a protocol.ConsensusAddress, pub ed25519.PublicKey, power uint64) protocol.Event {
		return protocol.NewValidatorUpdateEvent(a, pub, power, "proposal", id)
	}
	v, _ := set.Get(target)
	switch c.Kind {
	case protocol.ValidatorAdd:
		if err := drive.SetPayoutIdentity(kv, target[:], c.Operator); err != nil {
			return nil, err
		}
		err := drive.SetValidator(kv, drive.Validator{Address: target, PubKey: c.PubKey, Power: c.Power, Operator: c.Operator})
		return []protocol.Event{update(target, c.PubKey, c.Power)}, err
	case protocol.ValidatorPower:
		v.Power = c.Power
		return []protocol.Event{update(target, v.PubKey, c.Power)}, drive.SetValidator(kv, v)
	case protocol.ValidatorRotate:
		to := protocol.ConsensusAddressOf(c.PubKey)
		if err := s.touch(kv, to); err != nil {
			return nil, err
		}
		if err := drive.DeleteValidator(kv, target); err != nil {
			return nil, err
		}
		// The old address keeps its payout identity: the epochs it proposed in are
		// paid to it after the rotation.
		if err := drive.SetPayoutIdentity(kv, to[:], v.Operator); err != nil {
			return nil, err
		}
		err := drive.SetValidator(kv, drive.Validator{Address: to, PubKey: c.PubKey, Power: v.Power, Operator: v.Operator})
		return []protocol.Event{update(target, v.PubKey, 0), update(to, c.PubKey, v.Power)}, err
	case protocol.ValidatorRemove:
		return []protocol.Event{update(target, v.PubKey, 0)}, drive.DeleteValidator(kv, target)
	}
	return nil, faultf("validator change kind %d", c.Kind)
}

// misbehaviorStep handles the block's evidence, before its transactions: each
// validator it names that is in the set is removed from it at once (unless it is the
// last one), and its blocks of the current epoch are forgotten, so that the epoch's
// payout goes to the others. Every piece of evidence is recorded, removed or not.
func misbehaviorStep(kv drive.KV, s *setChanges, b Block, epoch uint32) ([]protocol.Event, error) {
	var events []protocol.Event
	for _, m := range b.Misbehavior {
		set, err := drive.ReadValidatorSet(kv)
		if err != nil {
			return nil, err
		}
		v, present := set.Get(m.Validator)
		rec := drive.Misbehavior{Validator: m.Validator, Height: m.Height, RecordedAt: b.Height, Kind: m.Kind}
		if present {
			rec.Power = v.Power
			rec.Removed = len(set.List) > 1
		}
		if rec.Removed {
			if err := s.touch(kv, m.Validator); err != nil {
				return nil, err
			}
			if err := drive.DeleteValidator(kv, m.Validator); err != nil {
				return nil, err
			}
			if err := forfeitEpoch(kv, epoch, m.Validator); err != nil {
				return nil, err
			}
		}
		if err := drive.RecordMisbehavior(kv, rec); err != nil {
			return nil, err
		}
		events = append(events, protocol.NewValidatorMisbehaviorEvent(m.Validator, m.Kind, m.Height, rec.Removed))
		if rec.Removed {
			events = append(events, protocol.NewValidatorUpdateEvent(m.Validator, v.PubKey, 0, "misbehavior", m.Height))
		}
	}
	return events, nil
}

// forfeitEpoch forgets validator a's blocks of epoch: the epoch's pool is shared among
// the others (or rolls over when nobody else proposed). Its later blocks of the epoch
// are not counted (forfeitedEpoch): CometBFT keeps it in its set for two more blocks.
func forfeitEpoch(kv drive.KV, epoch uint32, a protocol.ConsensusAddress) error {
	return kv.Delete(drive.EpochProposerKey(epoch, a[:]))
}

// forfeitedEpoch reports whether evidence against validator a was handled in the
// current epoch, which then does not count its blocks.
func forfeitedEpoch(kv drive.KV, a protocol.ConsensusAddress) (bool, error) {
	cur, ok, err := drive.GetCurrentEpoch(kv)
	if err != nil || !ok {
		return false, err
	}
	found := false
	prefix := drive.MisbehaviorValidatorPrefix(a)
	err = kv.Iterate(prefix, drive.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		at, h, _ := drive.ParseMisbehaviorKey(k)
		m, err := drive.DecodeMisbehavior(at, h, v)
		if err != nil {
			return true, drive.ErrCorrupt{Key: k, Reason: err.Error()}
		}
		found = m.RecordedAt >= cur.FirstHeight
		return found, nil
	})
	return found, err
}

// validatorStep runs after the block's transactions: pending proposals past their
// expiry are removed, then passed ones are applied in number order while the power
// they move stays below a third of the power the set had when the block started (once
// its evidence was handled: transactions do not change the set, they pass proposals);
// one that would pass that waits for a later block, and one the set as it has become
// refuses is dropped. A block without a proposal reads one empty range.
func validatorStep(kv drive.KV, s *setChanges, l protocol.Limits, b Block) ([]protocol.Event, error) {
	proposals, err := drive.ValidatorProposals(kv)
	if err != nil || len(proposals) == 0 {
		return nil, err
	}
	var events []protocol.Event
	var moved, start uint64
	read := false // start holds the set's power before the first change applied
	waiting := false
	for _, p := range proposals {
		if p.PassedMs == 0 {
			if p.ExpiresMs <= b.TimeMs {
				if err := drive.DeleteValidatorProposal(kv, p); err != nil {
					return nil, err
				}
				events = append(events, protocol.NewValidatorProposalExpiredEvent(p.ID))
			}
			continue
		}
		if waiting {
			continue
		}
		set, err := drive.ReadValidatorSet(kv)
		if err != nil {
			return nil, err
		}
		if !read {
			start, read = set.Total, true
		}
		m, err := checkChange(kv, set, p.Change, l)
		if code, refused := protocol.CodeOf(err); err != nil && refused {
			if err := drive.DeleteValidatorProposal(kv, p); err != nil {
				return nil, err
			}
			events = append(events, protocol.NewValidatorProposalDroppedEvent(p.ID, code))
			continue
		} else if err != nil {
			return nil, err
		}
		if protocol.MovesTooMuch(moved+m, start) {
			waiting = true // NB: in number order: the later ones wait behind it
			continue
		}
		moved += m
		ev, err := applyChange(kv, s, set, p.Change, p.ID)
		if err != nil {
			return nil, err
		}
		if err := drive.DeleteValidatorProposal(kv, p); err != nil {
			return nil, err
		}
		events = append(events, ev...)
	}
	return events, nil
}

// approvedPower sums the power, in set, of the validators that approved p; approvals
// of validators that left the set count nothing.
func approvedPower(set drive.ValidatorSet, approvals []protocol.ConsensusAddress) uint64 {
	var n uint64
	for _, a := range approvals {
		if v, ok := set.Get(a); ok {
			n += v.Power
		}
	}
	return n
}
