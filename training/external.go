package training

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/server"
)

// Evaluator evaluates the parameters params (read-only; not to be kept)
// elsewhere: the Python API's evaluation function. A NaN field means "not
// measured" and is left out of the metrics record.
type Evaluator func(params []float64) (Evaluation, error)

// WithExternal makes the run's model arithmetic the caller's
// (model.External, docs/python-federated.md): every round the server steps
// with update on the released mean (server.Config.Update, in place of the
// optimizer and the schedule), and every evaluation is evaluate's on the
// current parameters (nil: none, the record's accuracy is null). Only a
// networked run (WithRemote) takes it: the simulation's clients compute
// with the model's workers.
func WithExternal(update server.Update, evaluate Evaluator) Option {
	return func(o *options) { o.update, o.evaluate = update, evaluate }
}

// checkExternal checks that an external model runs over the network, with
// a step, and an internal model without one.
func checkExternal(o options, m model.Model) error {
	_, external := m.(*model.External)
	switch {
	case external && o.update == nil:
		return errors.New("model external: the server's update function is required (WithExternal)")
	case !external && (o.update != nil || o.evaluate != nil):
		return fmt.Errorf("WithExternal is for the external model, not %s", m.Name())
	case external && o.remote == nil:
		return errors.New("model external: only a networked run (its clients compute the updates) can train an external model")
	}
	return nil
}

// evaluateNow is the evaluation of Run's records: WithExternal's
// evaluator on the current parameters, or Evaluate on the test set.
func (t *Trainer) evaluateNow() (Evaluation, error) {
	if t.evaluate == nil {
		if _, external := t.model.(*model.External); external {
			return Evaluation{Accuracy: math.NaN(), Loss: math.NaN()}, nil
		}
		return t.Evaluate(nil), nil
	}
	e, err := t.evaluate(t.model.Params())
	if err != nil {
		return Evaluation{}, fmt.Errorf("the evaluation function: %w", err)
	}
	if !(e.Accuracy >= 0 && e.Accuracy <= 1) && !math.IsNaN(e.Accuracy) {
		return Evaluation{}, fmt.Errorf("the evaluation function returned test accuracy %g (must be in [0, 1])", e.Accuracy)
	}
	return e, nil
}
