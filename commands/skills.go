package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/skills"
	"github.com/urfave/cli/v3"
)

// skillsFlag reads --skills a,b (repeatable); nil when not given, so the
// session's skills (or default_skills) apply; `--skills ""` means none.
func skillsFlag(cmd *cli.Command) []string {
	if !cmd.IsSet("skills") {
		return nil
	}
	out := []string{}
	for _, v := range cmd.StringSlice("skills") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// SkillsOptions is everything `openheim skills` needs.
type SkillsOptions struct {
	IO     *IOStreams
	Config func() (*config.Config, error)
	Name   string // "" lists them all
	Output jsonOutput
}

func newCmdSkills(f *Factory, runF func(context.Context, *SkillsOptions) error) *cli.Command {
	opts := &SkillsOptions{IO: f.IOStreams, Config: f.Config}
	return &cli.Command{
		Name:      "skills",
		Usage:     "list the skills a session can activate, or show one",
		ArgsUsage: "[NAME]",
		Description: `A skill is a markdown file skills/<name>.md next to system.md (the data
directory, or the config file's folder). Active skills are added to the system
message after the identity; a session keeps its skills. Activate them with
default_skills in the config, 'openheim prompt --skills a,b', or ACP's
session/new _meta.skills. See docs/skills.md.

Examples:
  openheim skills
  openheim skills rust
  openheim skills --json`,
		Flags: jsonFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usageErr(errors.New("skills: at most one NAME"), "")
			}
			opts.Name, opts.Output = cmd.Args().First(), jsonOutputOf(cmd)
			return run(ctx, opts, runF, skillsRun)
		},
	}
}

func skillsRun(_ context.Context, opts *SkillsOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	ios, out, dir := opts.IO, opts.Output, cfg.SkillsDir()
	if opts.Name != "" {
		s, err := skills.Load(dir, []string{opts.Name})
		if err != nil {
			return usageErr(fmt.Errorf("skills: %w", err), "")
		}
		if out.machine() {
			return out.print(ios, map[string]string{"name": s[0].Name, "content": s[0].Content})
		}
		fmt.Fprintln(ios.Out, s[0].Content)
		return nil
	}
	names, err := skills.List(dir)
	if err != nil {
		return failure(err)
	}
	defaults := map[string]bool{}
	for _, d := range cfg.DefaultSkills {
		defaults[d] = true
	}
	for _, n := range names {
		switch {
		case out.machine():
			if err := out.print(ios, map[string]any{"name": n, "default": defaults[n]}); err != nil {
				return err
			}
		case defaults[n]:
			fmt.Fprintf(ios.Out, "%s (default)\n", n)
		default:
			fmt.Fprintln(ios.Out, n)
		}
	}
	if len(names) == 0 && !out.machine() {
		fmt.Fprintf(ios.ErrOut, "no skills yet: add one as %s/<name>.md\n", dir)
	}
	return nil
}
