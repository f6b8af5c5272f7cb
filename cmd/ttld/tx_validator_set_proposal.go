package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

func init() {
	registerTx(txCommand{
		Kind:  protocol.TypeValidatorSetProposal,
		Group: "validator",
		Use:   "propose add|power|rotate|remove --from KEY [--identity ID] [--validator ADDR] [--pubkey KEY] [--power N] [--operator ID]",
		Short: "Propose a change of the validator set, approved by the proposing validator",
		Long: `Propose a change of the validator set (docs/STATE.md, "Validators"), signed by the
operator identity of a validator of the set with its key (--from, in the client home's
keyring; --identity, or, without it, the operator of the set whose identity holds that
key); the proposal counts as that validator's approval.

  add     --pubkey KEY --power N --operator ID   a new validator: its consensus key (hex,
          or base64 as in priv_validator_key.json's pub_key), power and the identity that
          operates it (signs its proposals, receives its payouts)
  power   --validator ADDR --power N             a validator's new power
  rotate  --validator ADDR --pubkey KEY          a validator's new consensus key
  remove  --validator ADDR                       remove a validator

A power is 1 to 1,000,000. One change moves less than a third of the set's power (an
add its power, a power change the difference, a rotation or removal the validator's
power), never empties the set, and expires unless it passes within 72 hours of block
time. With --commit the output gives the proposal's number, which the other
validators' operators approve with ` + "`ttld tx validator approve`" + `.`,
		Args: cobra.ExactArgs(1),
		Flags: func(cmd *cobra.Command) {
			operatorFlags(cmd)
			cmd.Flags().String("validator", "", "consensus address of the validator changed (power, rotate, remove), 40 hex digits")
			cmd.Flags().String("pubkey", "", "ed25519 consensus public key added or rotated to, hex or base64")
			cmd.Flags().Uint64("power", 0, "voting power of the validator added, or its new power")
			cmd.Flags().String("operator", "", "identity id that operates the validator added")
		},
		Build: func(in *txInput) (protocol.Transition, error) {
			c, err := validatorChangeArgs(in.cmd, in.args[0])
			if err != nil {
				return nil, err
			}
			id, index, err := operatorArg(in)
			if err != nil {
				return nil, err
			}
			return &protocol.ValidatorSetProposal{Identity: id, KeyIndex: index, Change: c}, nil
		},
		Describe: func(t protocol.Transition, _ *txInput, o *txOutput) {
			o.Validator = t.(*protocol.ValidatorSetProposal).Change.Target().String()
		},
	})
}

// validatorChangeArgs reads the change a proposal of kind makes from its flags.
func validatorChangeArgs(cmd *cobra.Command, kind string) (protocol.ValidatorChange, error) {
	k, ok := protocol.ParseValidatorChangeKind(kind)
	if !ok {
		return protocol.ValidatorChange{}, errUsage{Flag: "kind", Value: kind, Want: "add, power, rotate or remove"}
	}
	c := protocol.ValidatorChange{Kind: k}
	if k != protocol.ValidatorAdd {
		s := flagString(cmd, "validator")
		if s == "" {
			return c, errMissingFlag{"validator"}
		}
		a, err := protocol.ParseConsensusAddress(s)
		if err != nil {
			return c, errUsage{Flag: "validator", Value: s, Want: fmt.Sprintf("a consensus address of %d hex digits", 2*protocol.ConsensusAddressLen)}
		}
		c.Validator = a
	}
	if k == protocol.ValidatorAdd || k == protocol.ValidatorRotate {
		pub, err := consensusKeyArg(cmd)
		if err != nil {
			return c, err
		}
		c.PubKey = pub
	}
	if k == protocol.ValidatorAdd || k == protocol.ValidatorPower {
		if !cmd.Flags().Changed("power") {
			return c, errMissingFlag{"power"}
		}
		c.Power = flagUint64(cmd, "power")
	}
	if k == protocol.ValidatorAdd {
		op, err := identityArg(cmd, "operator")
		if err != nil {
			return c, err
		}
		c.Operator = op
	}
	return c, nil
}

// consensusKeyArg reads --pubkey: an ed25519 key in hex, or in base64 as CometBFT's
// priv_validator_key.json and `ttld status` write it.
func consensusKeyArg(cmd *cobra.Command) (ed25519.PublicKey, error) {
	s := strings.TrimSpace(flagString(cmd, "pubkey"))
	if s == "" {
		return nil, errMissingFlag{"pubkey"}
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == ed25519.PublicKeySize {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == ed25519.PublicKeySize {
		return b, nil
	}
	return nil, errUsage{Flag: "pubkey", Value: s, Want: fmt.Sprintf("an ed25519 public key: %d hex digits or its base64", 2*ed25519.PublicKeySize)}
}

// operatorFlags are the flags naming the operator that signs.
func operatorFlags(cmd *cobra.Command) {
	cmd.Flags().String("identity", "", "the signing validator's operator identity id (empty: the operator of the set whose identity holds the --from key)")
	cmd.Flags().Uint8("key-index", 0, "with --identity: index of the identity key --from holds")
}

// operatorArg is the operator identity that signs and the index of its key: --identity
// and --key-index, or the operator of a validator of the set (as the node reports it)
// one of whose keys is the --from key.
func operatorArg(in *txInput) (protocol.IdentityID, uint8, error) {
	if flagString(in.cmd, "identity") != "" {
		id, err := identityArg(in.cmd, "identity")
		return id, flagUint8(in.cmd, "key-index"), err
	}
	key, err := in.Key()
	if err != nil {
		return protocol.IdentityID{}, 0, err
	}
	c, err := dialNode(in.cmd, client.Options{})
	if err != nil {
		return protocol.IdentityID{}, 0, err
	}
	ctx := in.cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := c.Validators(ctx, 0, false)
	if err != nil {
		return protocol.IdentityID{}, 0, err
	}
	for _, v := range set.List {
		st, err := c.Identity(ctx, v.Operator, 0, false)
		if err != nil {
			return protocol.IdentityID{}, 0, err
		}
		for i, k := range st.Keys {
			if k.Equal(key.Pub) {
				return v.Operator, uint8(i), nil
			}
		}
	}
	return protocol.IdentityID{}, 0, fmt.Errorf("key %q is a key of no operator of the set's %d validators: give --identity", flagString(in.cmd, "from"), len(set.List))
}
