package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/protocol"
)

// errMissingFlag: a command needs a flag the command line does not give.
type errMissingFlag struct{ Flag string }

func (e errMissingFlag) Error() string { return fmt.Sprintf("--%s is required", e.Flag) }

// errUnknownCommand: a parent command was given a subcommand it does not have.
type errUnknownCommand struct {
	Parent, Name string
	Suggest      []string
}

func (e errUnknownCommand) Error() string {
	msg := fmt.Sprintf("unknown command %q for %q", e.Name, e.Parent)
	if len(e.Suggest) > 0 {
		msg += "; did you mean " + strings.Join(e.Suggest, " or ") + "?"
	}
	return msg + " (see --help)"
}

// errNoSubcommand: a parent command was run without a subcommand.
type errNoSubcommand struct{ Parent string }

func (e errNoSubcommand) Error() string {
	return fmt.Sprintf("%q needs a subcommand (see the list above)", e.Parent)
}

// refuseBareParents makes every parent command under root (root itself excepted, which
// cobra already checks) fail on an unknown subcommand or none. NB: cobra runs a parent
// without Run by printing its help and exiting 0, so a mistyped `ttld tx adress ...`
// in a script would look like success.
func refuseBareParents(root *cobra.Command) {
	for _, c := range root.Commands() {
		if !c.HasSubCommands() {
			continue
		}
		if c.Run == nil && c.RunE == nil {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					cmd.SetOut(cmd.ErrOrStderr())
					_ = cmd.Help()
					return errNoSubcommand{Parent: cmd.CommandPath()}
				}
				if cmd.SuggestionsMinimumDistance <= 0 {
					cmd.SuggestionsMinimumDistance = 2 // cobra's default, set only on its own path
				}
				return errUnknownCommand{Parent: cmd.CommandPath(), Name: args[0], Suggest: cmd.SuggestionsFor(args[0])}
			}
		}
		refuseBareParents(c)
	}
}

// The parsers of required transition flags: each refuses, before anything is signed,
// a flag that is missing or malformed, naming the flag.

// amountArg reads --amount, which must be given and positive.
func amountArg(cmd *cobra.Command) (uint64, error) {
	if !cmd.Flags().Changed("amount") {
		return 0, errMissingFlag{"amount"}
	}
	n := flagUint64(cmd, "amount")
	if n == 0 {
		return 0, errUsage{Flag: "amount", Value: "0", Want: "a positive number of credits"}
	}
	return n, nil
}

// addressArg reads the address flag name, which must be given.
func addressArg(cmd *cobra.Command, name string) (protocol.Address, error) {
	s := flagString(cmd, name)
	if s == "" {
		return protocol.Address{}, errMissingFlag{name}
	}
	a, err := protocol.ParseAddress(s)
	if err != nil {
		return a, errUsage{Flag: name, Value: s, Want: fmt.Sprintf("an address of %d hex digits", 2*protocol.AddressLen)}
	}
	return a, nil
}

// identityArg reads the identity id flag name, which must be given.
func identityArg(cmd *cobra.Command, name string) (protocol.IdentityID, error) {
	s := flagString(cmd, name)
	if s == "" {
		return protocol.IdentityID{}, errMissingFlag{name}
	}
	id, err := protocol.ParseIdentityID(s)
	if err != nil {
		return id, errUsage{Flag: name, Value: s, Want: fmt.Sprintf("an identity id of %d hex digits", 2*protocol.IdentityIDLen)}
	}
	return id, nil
}

// errBadArg: a positional argument does not parse.
type errBadArg struct{ Name, Value, Want string }

func (e errBadArg) Error() string { return fmt.Sprintf("%s %q: want %s", e.Name, e.Value, e.Want) }

// identityPos reads a positional identity id.
func identityPos(s string) (protocol.IdentityID, error) {
	id, err := protocol.ParseIdentityID(s)
	if err != nil {
		return id, errBadArg{Name: "ID", Value: s, Want: fmt.Sprintf("an identity id of %d hex digits", 2*protocol.IdentityIDLen)}
	}
	return id, nil
}

// contractPos reads a positional contract id.
func contractPos(s string) (protocol.ContractID, error) {
	id, err := protocol.ParseContractID(s)
	if err != nil {
		return id, errBadArg{Name: "ID", Value: s, Want: fmt.Sprintf("a contract id of %d hex digits", 2*protocol.ContractIDLen)}
	}
	return id, nil
}

// addressPos reads a positional address.
func addressPos(s string) (protocol.Address, error) {
	a, err := protocol.ParseAddress(s)
	if err != nil {
		return a, errBadArg{Name: "ADDR", Value: s, Want: fmt.Sprintf("an address of %d hex digits", 2*protocol.AddressLen)}
	}
	return a, nil
}
