package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/cliflag"
)

func init() {
	rootCmd.AddCommand(newAccountCmd())
}

// mechanismFlags are the flags account and calibrate share: the request
// (account.Request's, with the Fig. 2a setting as defaults), its Rényi
// orders and --json.
type mechanismFlags struct {
	account.Request
	OrdersSpec string `flag:"orders" usage:"Rényi orders: \"lo:hi\" (every integer), a comma list, or empty for the mechanism's default grid"`
	JSON       bool   `flag:"json" usage:"print one JSON object"`
}

// request returns the request of cmd's command line: a parameter is given
// when its flag was, the orders are parsed.
func (m *mechanismFlags) request(cmd *cobra.Command) (account.Request, error) {
	req := m.Request
	req.Given = cmd.Flags().Changed
	orders, err := accounting.ParseOrders(m.OrdersSpec)
	if err != nil {
		return req, fmt.Errorf("--orders: %w", err)
	}
	req.Orders = orders
	return req, nil
}

func newAccountCmd() *cobra.Command {
	var m mechanismFlags
	cmd := &cobra.Command{
		Use:   "account",
		Short: "Bound the (epsilon, delta) spent by rounds of the (subsampled) shuffle model",
		Long:  longHelp("account") + account.BoundHelp() + longHelp("account_routes"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("bound") && !m.JSON {
				m.Bound = account.BoundAll
			}
			req, err := m.request(cmd)
			if err != nil {
				return err
			}
			a, err := account.Evaluate(req)
			if err != nil {
				return err
			}
			if m.JSON {
				return a.WriteJSON(cmd.OutOrStdout())
			}
			if err := a.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			a.WriteNotes(cmd.ErrOrStderr())
			return nil
		},
	}
	cliflag.MustBind(cmd.Flags(), &m)
	return cmd
}
