package host

import (
	"context"
	"fmt"

	"github.com/openheim/openheim/protocol/acp"
)

// Dispatch serves the settings of the sessions bound to an agent to
// openheim's own ACP agent side (/ws, /acp: agent.ExternalAgents), so a
// client drives the agent's modes and options through openheim.

// bound is the Runner of the agent session id is bound to.
func (d *Dispatch) bound(id string) (*Runner, error) {
	name := d.Agent(id)
	if name == "" {
		return nil, fmt.Errorf("session %s is not run by an external ACP agent", id)
	}
	return d.Runner(name)
}

// Describe opens session id on its agent and returns its modes and options.
func (d *Dispatch) Describe(ctx context.Context, id string) (*acp.SessionModeState, []acp.SessionConfigOption, error) {
	r, err := d.bound(id)
	if err != nil {
		return nil, nil, err
	}
	md, _, err := r.Metadata(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return wireModes(md), wireOptions(md), nil
}

// SetMode switches session id's mode on its agent.
func (d *Dispatch) SetMode(ctx context.Context, id, mode string) error {
	r, err := d.bound(id)
	if err != nil {
		return err
	}
	return r.SetMode(ctx, id, mode)
}

// SetConfigOption sets an option of session id on its agent and returns
// every option after.
func (d *Dispatch) SetConfigOption(ctx context.Context, id, configID string, value any) ([]acp.SessionConfigOption, error) {
	r, err := d.bound(id)
	if err != nil {
		return nil, err
	}
	md, _, err := r.Metadata(ctx, id)
	if err != nil {
		return nil, err
	}
	set := func() error { return r.SetConfigOption(ctx, id, configID, value) }
	if _, ok := optionByID(md, configID); !ok && configID == "model" {
		set = func() error { return r.SetModel(ctx, id, fmt.Sprint(value)) } // the one wireOptions made
	}
	if err := set(); err != nil {
		return nil, err
	}
	md, _, err = r.Metadata(ctx, id)
	return wireOptions(md), err
}

// wireModes is the metadata's modes in ACP's shape (nil without modes).
func wireModes(md SessionMetadata) *acp.SessionModeState {
	if len(md.Modes) == 0 {
		return nil
	}
	st := &acp.SessionModeState{CurrentModeID: md.CurrentModeID}
	for _, m := range md.Modes {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	return st
}

// wireOptions is the metadata's config options in ACP's shape; an agent
// with only the older models list gets a model option made of it.
func wireOptions(md SessionMetadata) []acp.SessionConfigOption {
	var out []acp.SessionConfigOption
	hasModel := false
	for _, o := range md.ConfigOptions {
		w := acp.SessionConfigOption{Type: o.Type, ID: o.ID, Name: o.Name, Description: o.Description, Category: o.Category,
			CurrentValue: fmt.Sprint(o.Value)}
		for _, c := range o.Choices {
			w.Options = append(w.Options, acp.SessionConfigSelectOption{Value: c.Value, Name: c.Name, Description: c.Description})
		}
		hasModel = hasModel || o.Category == "model"
		out = append(out, w)
	}
	if !hasModel && len(md.Models) > 0 {
		w := acp.SessionConfigOption{Type: "select", ID: "model", Name: "Model", Category: "model", CurrentValue: md.CurrentModelID}
		for _, m := range md.Models {
			w.Options = append(w.Options, acp.SessionConfigSelectOption{Value: m.ID, Name: m.Name, Description: m.Description})
		}
		out = append(out, w)
	}
	return out
}

func optionByID(md SessionMetadata, id string) (ConfigOption, bool) {
	for _, o := range md.ConfigOptions {
		if o.ID == id {
			return o, true
		}
	}
	return ConfigOption{}, false
}
