package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// The slash commands that find, switch and change sessions.

func cmdSessions(ctx context.Context, c *chat, _ string) error {
	list, err := c.recentSessions(20)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(c.out, "no sessions yet")
		return nil
	}
	c.lastSessions = list
	now := time.Now()
	tw := newTable(c.out)
	for i, m := range list {
		mark := " "
		if m.ID == c.sessionID {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %2d\t%s\t%s\t%s\t%s\n", mark, i+1, m.ID[:8], ago(m.UpdatedAt, now), deref(m.Model), oneLine(deref(m.Title), 60))
	}
	tw.Flush()
	if c.pick == nil {
		return nil
	}
	answer, err := c.pick("resume which? (number or id, Enter to stay) ")
	if err != nil || strings.TrimSpace(answer) == "" {
		return nil
	}
	return cmdResume(ctx, c, answer)
}

func cmdResume(_ context.Context, c *chat, arg string) error {
	if arg == "" {
		return slashErrorf("/resume needs a session: an id, an id prefix or a title (/sessions lists them)")
	}
	ref := arg
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= len(c.lastSessions) {
		ref = c.lastSessions[n-1].ID
	}
	m, err := session.Find(c.sess.Files, ref)
	if err != nil {
		return slashErrorf("/resume %s: %v", arg, err)
	}
	c.provider, c.model, c.skills = "", "", nil // the session's own choices
	if err := c.resume(m.ID); err != nil {
		return err
	}
	return c.recap()
}

// recap shows the session just resumed: its title and the last exchange.
func (c *chat) recap() error {
	conv, err := c.sess.Store.Load(c.sessionID)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "resumed %s %q · %d messages · %s\n", conv.Meta.ID[:8], deref(conv.Meta.Title), len(conv.Messages), c.currentModel())
	var lastUser, lastAnswer string
	for _, m := range conv.Messages {
		t := strings.TrimSpace(m.JoinText())
		switch {
		case t == "":
		case m.Role == message.RoleUser:
			lastUser, lastAnswer = t, ""
		case m.Role == message.RoleAssistant:
			lastAnswer = t
		}
	}
	if lastUser != "" {
		fmt.Fprintln(c.out, c.style.Dim("› "+oneLine(lastUser, 100)))
	}
	if lastAnswer != "" {
		fmt.Fprintln(c.out, c.style.Dim(headLines(lastAnswer, 12)))
	}
	return nil
}

func cmdFork(ctx context.Context, c *chat, _ string) error {
	old, forked, err := c.fork(ctx)
	if err != nil {
		return slashErrorf("/fork: %v", err)
	}
	fmt.Fprintf(c.out, "forked %s into %s; continuing in the copy\n", old[:8], forked)
	return nil
}

func cmdRename(_ context.Context, c *chat, arg string) error {
	if arg == "" {
		return slashErrorf("/rename needs a title")
	}
	m, ok, err := c.meta()
	if err != nil {
		return err
	}
	if !ok {
		return slashErrorf("/rename: the session starts with the first prompt; rename it after that")
	}
	m.Title = session.Str(session.Title(arg))
	m.UpdatedAt = time.Now().UTC()
	if err := c.sess.Store.SaveMeta(*m); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "renamed to %q\n", *m.Title)
	return nil
}

func cmdExport(_ context.Context, c *chat, arg string) error {
	if arg == "" {
		return slashErrorf("/export needs a file name (.md for a transcript, .json for the conversation)")
	}
	if c.sessionID == "" {
		return slashErrorf("/export: nothing to export yet")
	}
	conv, err := c.sess.Store.Load(c.sessionID)
	if err != nil {
		return err
	}
	path := arg
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	var data strings.Builder
	if strings.EqualFold(filepath.Ext(path), ".json") {
		enc := json.NewEncoder(&data)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(conv); err != nil {
			return err
		}
	} else {
		writeTranscript(&data, conv, true)
	}
	if err := os.WriteFile(path, []byte(data.String()), 0o644); err != nil {
		return fmt.Errorf("/export: %w", err)
	}
	fmt.Fprintf(c.out, "wrote %s (%d messages)\n", path, len(conv.Messages))
	return nil
}

func sessionIDs(c *chat) []string {
	list, err := c.recentSessions(50)
	if err != nil {
		return nil
	}
	ids := make([]string, len(list))
	for i, m := range list {
		ids[i] = m.ID
	}
	return ids
}
