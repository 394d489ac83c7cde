package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// InitialConfig is what a session is set to once the agent has opened it
// (seed 002): a mode, a model (the agent's model selector), an effort
// (its thought-level option) and further config options by id (Raw).
type InitialConfig struct {
	Mode, Model, Effort string
	Raw                 map[string]any
}

// Empty reports whether there is nothing to set.
func (c InitialConfig) Empty() bool {
	return c.Mode == "" && c.Model == "" && c.Effort == "" && len(c.Raw) == 0
}

// InitialConfigReport says what the agent accepted (seed 002).
type InitialConfigReport struct {
	Applied []InitialConfigItem
	Skipped []InitialConfigItem
}

// InitialConfigItem is one setting: Key is mode, model, effort or the
// option's id; ID the option it went to; Reason why it was skipped (or
// "already set").
type InitialConfigItem struct {
	Key, ID string
	Value   any
	Reason  string
}

// Err is the report's skipped settings as one error (nil when none was).
func (r InitialConfigReport) Err() error {
	if len(r.Skipped) == 0 {
		return nil
	}
	var errs []error
	for _, s := range r.Skipped {
		errs = append(errs, fmt.Errorf("%s %v: %s", s.Key, s.Value, s.Reason))
	}
	return errors.Join(errs...)
}

// ApplyInitialConfig sets session id up as c says; what the agent has no
// place for, or refuses, is skipped with the reason.
func (h *Host) ApplyInitialConfig(ctx context.Context, id string, c InitialConfig) InitialConfigReport {
	var r InitialConfigReport
	md, ok := h.Metadata(id)
	if !ok {
		r.Skipped = append(r.Skipped, InitialConfigItem{Key: "session", Value: id, Reason: "not open"})
		return r
	}
	add := func(key, optID string, value any, err error) {
		item := InitialConfigItem{Key: key, ID: optID, Value: value}
		if err != nil {
			item.Reason = err.Error()
			r.Skipped = append(r.Skipped, item)
		} else {
			r.Applied = append(r.Applied, item)
		}
	}
	if c.Mode != "" {
		if md.CurrentModeID == c.Mode {
			add("mode", "", c.Mode, nil)
		} else {
			add("mode", "", c.Mode, h.SetMode(ctx, id, c.Mode))
		}
	}
	if c.Model != "" {
		o, isOpt := optionOf(md, "model")
		switch {
		case isOpt && fmt.Sprint(o.Value) == c.Model, !isOpt && md.CurrentModelID == c.Model:
			add("model", o.ID, c.Model, nil)
		default:
			add("model", o.ID, c.Model, h.SetModel(ctx, id, c.Model))
		}
	}
	if c.Effort != "" {
		o, ok := optionOf(md, "thought_level")
		switch {
		case !ok:
			add("effort", "", c.Effort, fmt.Errorf("acp agent %s offers no thought-level option", h.spec.Name))
		case fmt.Sprint(o.Value) == c.Effort:
			add("effort", o.ID, c.Effort, nil)
		default:
			add("effort", o.ID, c.Effort, h.SetConfigOption(ctx, id, o.ID, c.Effort))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Raw)) {
		add(k, k, c.Raw[k], h.SetConfigOption(ctx, id, k, c.Raw[k]))
	}
	return r
}
