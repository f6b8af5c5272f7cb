package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ttld-dev/ttld/keyring"
)

// testKeyringWarning is printed with every new key.
const testKeyringWarning = "the keyring is an unencrypted test keyring: anyone who can read its files can use the key"

// keyOutput is a key as keys commands print it (-o json: this object).
type keyOutput struct {
	Name    string `json:"name"`
	Address string `json:"address"` // hex
	PubKey  string `json:"pubkey"`  // hex
}

func newKeyOutput(k keyring.Key) keyOutput {
	return keyOutput{Name: k.Name, Address: k.Address().String(), PubKey: hex.EncodeToString(k.Pub)}
}

func (o keyOutput) text(w io.Writer) {
	fmt.Fprintf(w, "name:     %s\naddress:  %s\npubkey:   %s\n", o.Name, o.Address, o.PubKey)
}

// addedKeyOutput is what keys add prints.
type addedKeyOutput struct {
	keyOutput
	// Created: the key is new; false with --if-missing when the name was taken.
	Created    bool   `json:"created"`
	KeyringDir string `json:"keyring_dir"`
	Warning    string `json:"warning"`
}

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage the keys in --home's keyring (unencrypted test keyring)",
	}
	add := &cobra.Command{
		Use:   "add NAME [--if-missing]",
		Short: "Create a random ed25519 key (--if-missing: keep and show the key NAME if it exists)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kr := keyring.Open(globalFlags(cmd).Home)
			k, err := kr.Add(args[0])
			created := err == nil
			var exists keyring.ErrExists
			if errors.As(err, &exists) && flagBool(cmd, "if-missing") {
				k, err = kr.Get(args[0])
			}
			if err != nil {
				return err
			}
			out := addedKeyOutput{keyOutput: newKeyOutput(k), Created: created, KeyringDir: kr.Dir(), Warning: testKeyringWarning}
			return printResult(cmd, func(w io.Writer) {
				out.text(w)
				if !out.Created {
					fmt.Fprintln(w, "existing: the key was already in the keyring and is kept (--if-missing)")
				}
				fmt.Fprintf(w, "keyring:  %s\nWARNING: %s\n", out.KeyringDir, out.Warning)
			}, out)
		},
	}
	add.Flags().Bool("if-missing", false, "if a key NAME exists, keep it and print it instead of failing")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the keys, sorted by name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := keyring.Open(globalFlags(cmd).Home).List()
			if err != nil {
				return err
			}
			out := make([]keyOutput, len(keys))
			for i, k := range keys {
				out[i] = newKeyOutput(k)
			}
			return printResult(cmd, func(w io.Writer) {
				if len(out) == 0 {
					fmt.Fprintln(w, "no keys")
					return
				}
				for _, k := range out {
					fmt.Fprintf(w, "%-16s %s %s\n", k.Name, k.Address, k.PubKey)
				}
			}, out)
		},
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a key's address and public key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := keyring.Open(globalFlags(cmd).Home).Get(args[0])
			if err != nil {
				return err
			}
			out := newKeyOutput(k)
			return printResult(cmd, out.text, out)
		},
	}
	cmd.AddCommand(add, list, show)
	return cmd
}
