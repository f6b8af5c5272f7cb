package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

// newQueryValidatorsCmds reads the validator set and its pending proposals
// (docs/STATE.md, "Validators").
func newQueryValidatorsCmds() []*cobra.Command {
	set := &cobra.Command{
		Use:   "validators",
		Short: "The validator set in state: each validator's key, power and operator, and the misbehaviour recorded",
		Long: `The validator set the chain holds in state from protocol version 16 on (docs/STATE.md,
"Validators"): each validator's consensus address and key, its power and share of the
total, the identity that operates it, and every piece of evidence handled (duplicate
votes, light client attacks) with what it did. The set is the one the chain has sent
CometBFT: a change applied at height H signs blocks from H+2. With --prove both ranges
are checked complete against a signed header.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				st, err := c.Validators(ctx, height, prove)
				if err != nil {
					return nil, err
				}
				return validatorsOutput(st), nil
			})
		},
	}
	proposals := &cobra.Command{
		Use:   "validator-proposals",
		Short: "The pending validator set proposals, their approvals and the power those hold",
		Long: `The pending proposals to change the validator set (docs/STATE.md, "Validators"): each
one's number, change, proposer, expiry, the validators that approved it and the power they
hold of the set's (a proposal passes above two thirds), and the number the next proposal
gets. With --prove every range is checked complete against a signed header.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runQuery(cmd, func(ctx context.Context, c *client.Client, height int64, prove bool) (queryOutput, error) {
				st, err := c.ValidatorProposals(ctx, height, prove)
				if err != nil {
					return nil, err
				}
				return proposalsOutput(st), nil
			})
		},
	}
	return []*cobra.Command{set, proposals}
}

type validatorJSON struct {
	Address  string `json:"address"`
	PubKey   string `json:"pub_key"`
	Power    uint64 `json:"power"`
	Operator string `json:"operator"`
}

type misbehaviorJSON struct {
	Validator  string `json:"validator"`
	Kind       string `json:"kind"`
	Height     uint64 `json:"height"`
	RecordedAt uint64 `json:"recorded_at"`
	Power      uint64 `json:"power"`
	Removed    bool   `json:"removed"`
}

type validatorsJSON struct {
	Validators  []validatorJSON   `json:"validators"`
	TotalPower  uint64            `json:"total_power"`
	Misbehavior []misbehaviorJSON `json:"misbehavior"`
	Height      int64             `json:"height"`
}

func validatorsOutput(st client.ValidatorSetState) validatorsJSON {
	out := validatorsJSON{Validators: []validatorJSON{}, TotalPower: st.Total, Misbehavior: []misbehaviorJSON{}, Height: st.Height}
	for _, v := range st.List {
		out.Validators = append(out.Validators, validatorJSON{Address: v.Address.String(), PubKey: hex.EncodeToString(v.PubKey), Power: v.Power, Operator: v.Operator.String()})
	}
	for _, m := range st.Misbehavior {
		out.Misbehavior = append(out.Misbehavior, misbehaviorJSON{Validator: m.Validator.String(), Kind: m.Kind.String(), Height: m.Height, RecordedAt: m.RecordedAt, Power: m.Power, Removed: m.Removed})
	}
	return out
}

// verdict: present once the set is state (protocol version 16 on).
func (o validatorsJSON) verdict() (bool, int64) { return len(o.Validators) > 0, o.Height }

func (o validatorsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if len(o.Validators) == 0 {
		fmt.Fprintln(w, "no validator set in state: the chain runs a protocol version before 16, whose set is its genesis's")
		return
	}
	fmt.Fprintf(w, "validators: %d, total power %d\n", len(o.Validators), o.TotalPower)
	for _, v := range o.Validators {
		fmt.Fprintf(w, "  %s power %d (%s) operator %s key %s\n", v.Address, v.Power, check.Percent(v.Power, o.TotalPower), v.Operator, v.PubKey)
	}
	if len(o.Misbehavior) == 0 {
		fmt.Fprintln(w, "misbehaviour: none recorded")
		return
	}
	fmt.Fprintln(w, "misbehaviour:")
	for _, m := range o.Misbehavior {
		did := "removed it"
		if !m.Removed {
			did = "removed nothing (not in the set, or its last validator)"
		}
		fmt.Fprintf(w, "  %s %s at height %d, handled at %d (power %d): %s\n", m.Validator, m.Kind, m.Height, m.RecordedAt, m.Power, did)
	}
}

type proposalJSON struct {
	ID        uint64   `json:"id"`
	Kind      string   `json:"kind"`
	Validator string   `json:"validator"`
	PubKey    string   `json:"pub_key,omitempty"`
	Power     uint64   `json:"power,omitempty"`
	Operator  string   `json:"operator,omitempty"`
	Proposer  string   `json:"proposer"`
	CreatedMs uint64   `json:"created_ms"`
	ExpiresMs uint64   `json:"expires_ms"`
	Passed    bool     `json:"passed"`
	Approvals []string `json:"approvals"`
	Approved  uint64   `json:"approved_power"`
	Total     uint64   `json:"total_power"`
}

type proposalsJSON struct {
	Proposals []proposalJSON `json:"proposals"`
	NextID    uint64         `json:"next_id"`
	Height    int64          `json:"height"`
}

func proposalsOutput(st client.ValidatorProposalsState) proposalsJSON {
	out := proposalsJSON{Proposals: []proposalJSON{}, NextID: st.NextID, Height: st.Height}
	for _, p := range st.Proposals {
		c := p.Change
		j := proposalJSON{ID: p.ID, Kind: c.Kind.String(), Validator: c.Target().String(), Power: c.Power, Proposer: p.Proposer.String(),
			CreatedMs: p.CreatedMs, ExpiresMs: p.ExpiresMs, Passed: p.PassedMs != 0, Approvals: []string{}, Approved: p.Approved, Total: p.Total}
		if c.Kind == protocol.ValidatorAdd || c.Kind == protocol.ValidatorRotate {
			j.PubKey = hex.EncodeToString(c.PubKey)
		}
		if c.Kind == protocol.ValidatorAdd {
			j.Operator = c.Operator.String()
		}
		for _, a := range p.Approvals {
			j.Approvals = append(j.Approvals, a.String())
		}
		out.Proposals = append(out.Proposals, j)
	}
	return out
}

// verdict: present when a proposal is pending.
func (o proposalsJSON) verdict() (bool, int64) { return len(o.Proposals) > 0, o.Height }

func (o proposalsJSON) text(w io.Writer) {
	fmt.Fprintf(w, "height: %d\n", o.Height)
	if len(o.Proposals) == 0 {
		fmt.Fprintf(w, "no proposal pending; the next gets number %d\n", o.NextID)
		return
	}
	for _, p := range o.Proposals {
		fmt.Fprintf(w, "proposal %d: %s %s", p.ID, p.Kind, p.Validator)
		switch p.Kind {
		case protocol.ValidatorAdd.String():
			fmt.Fprintf(w, " power %d operator %s key %s", p.Power, p.Operator, p.PubKey)
		case protocol.ValidatorPower.String():
			fmt.Fprintf(w, " to power %d", p.Power)
		case protocol.ValidatorRotate.String():
			fmt.Fprintf(w, " to key %s", p.PubKey)
		}
		fmt.Fprintf(w, "\n  proposed by %s, expires %s unless passed\n", p.Proposer, time.UnixMilli(int64(p.ExpiresMs)).UTC().Format(time.RFC3339))
		state := "pending"
		if p.Passed {
			state = "passed, applied by the end of a block"
		}
		fmt.Fprintf(w, "  approved by %d validators holding %d of %d power (%s): %s\n", len(p.Approvals), p.Approved, p.Total, check.Percent(p.Approved, p.Total), state)
	}
	fmt.Fprintf(w, "the next proposal gets number %d\n", o.NextID)
}
