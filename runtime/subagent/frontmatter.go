package subagent

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

var (
	validKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_]+$`) })
	// keyLine is a key and its one-line value, spaced or not.
	keyLine  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z_]+):[ \t]*(.*?)[ \t]*$`) })
	yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })
)

// parseYAML reads the front matter lines (lines[0] is the file's line 2)
// with yaml.v3. Front matter written for other tools holds plain values
// that YAML refuses but openheim always read as text ("description: Use it
// when: ...", "model:gpt-4o", "- item" lines out of line): when YAML
// refuses the lines as written, they are read once more with such values
// quoted, and YAML's first complaint is the error.
func parseYAML(p *Profile, lines []string) error {
	var doc yaml.Node
	err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &doc)
	if err != nil || !isMapping(&doc) {
		var again yaml.Node
		if yaml.Unmarshal([]byte(lenient(lines)), &again) != nil || !isMapping(&again) {
			return frontError(err, &doc, lines)
		}
		doc = again
	}
	if len(doc.Content) == 0 {
		return nil // empty, or comments only
	}
	m, seen := doc.Content[0], map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + 1
		if k.Column != 1 || k.Style != 0 || !validKey().MatchString(k.Value) {
			return errAt(line, "expected `key: value`, got %q", strings.TrimSpace(lines[k.Line-1]))
		}
		if seen[k.Value] {
			return errAt(line, "%s is set twice", k.Value)
		}
		seen[k.Value] = true
		if k.Value == "tools" {
			if p.Tools, err = toolsOf(v, lines); err != nil {
				return err
			}
		} else if err := setField(p, k.Value, v); err != nil {
			return errAt(line, "%s: %v", k.Value, err)
		}
	}
	return nil
}

func isMapping(doc *yaml.Node) bool {
	return len(doc.Content) == 0 || doc.Content[0].Kind == yaml.MappingNode
}

// lenient rewrites lines as openheim read them before YAML: a plain
// one-line value is text (quoted, its " # comment" dropped) and "- " items
// belong to the key above them, whatever their indentation.
func lenient(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		s := strings.TrimSpace(l)
		m := keyLine().FindStringSubmatch(l)
		switch {
		case s == "-" || strings.HasPrefix(s, "- "):
			l = "  " + s
		case m != nil && m[2] != "" && !strings.ContainsAny(m[2][:1], `"'[]{}|>&*!%@#`+"`"):
			v, _, _ := strings.Cut(m[2], " #")
			l = m[1] + ": '" + strings.ReplaceAll(strings.TrimSpace(v), "'", "''") + "'"
		}
		out[i] = l
	}
	return strings.Join(out, "\n")
}

// frontError says at which line of the file, and for which key, YAML
// refused the front matter (yaml.v3 leaves the line out for its first).
func frontError(err error, doc *yaml.Node, lines []string) error {
	if err == nil { // YAML, but not a mapping
		n := doc.Content[0]
		return errAt(n.Line+1, "expected `key: value`, got %q", strings.TrimSpace(lines[n.Line-1]))
	}
	n, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
		n, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	at := strings.TrimSpace(lines[min(n, len(lines))-1])
	if m := keyLine().FindStringSubmatch(at); m != nil && !strings.Contains(msg, "could not find expected ':'") {
		return errAt(n+1, "%s: %s", m[1], msg)
	}
	return errAt(n+1, "expected `key: value`, got %q (%s)", at, msg)
}

func setField(p *Profile, key string, val *yaml.Node) error {
	s, err := text(val)
	if err != nil {
		return err
	}
	switch key {
	case "name":
		// Tolerated for files written for other tools; the file name rules.
		if s != p.Name {
			return fmt.Errorf("%q differs from the file name %q", s, p.Name)
		}
	case "description":
		p.Description = s
	case "model":
		p.Model = s
	case "provider":
		p.Provider = s
	case "acp_agent":
		p.ACPAgent = s
	case "max_iterations":
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("want a positive integer, got %q", s)
		}
		p.MaxIterations = n
	default:
		return errors.New("unknown key (known: description, model, provider, tools, max_iterations, acp_agent)")
	}
	return nil
}

// text is a one-line value as written: `null`, `~`, `yes` and `0x10` are
// text as they were before YAML; an empty value is "".
func text(n *yaml.Node) (string, error) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return "", errors.New("block scalars (| and >) are not supported: write the value on one line")
	case n.Kind == yaml.ScalarNode:
		return n.Value, nil
	}
	return "", errors.New("want one value, not a list or a mapping (quote it to mean text)")
}

// toolsOf reads tools: a list ([a, b] or "- a" lines), a comma-separated
// value ("a, b"), or nothing (nil: the parent's tools).
func toolsOf(v *yaml.Node, lines []string) ([]string, error) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" {
		return nil, nil
	}
	line := v.Line + 1
	if v.Kind != yaml.SequenceNode {
		s, err := text(v)
		if err != nil {
			return nil, errAt(line, "tools: %v", err)
		}
		return commaList(s, line)
	}
	out := []string{}
	for _, it := range v.Content {
		s, err := text(it)
		switch {
		case (err != nil || s == "") && v.Style&yaml.FlowStyle != 0:
			return nil, errAt(line, "tools: empty tool name in %q", strings.TrimSpace(lines[v.Line-1]))
		case err != nil || s == "":
			return nil, errAt(it.Line+1, "expected a tool name after '-', got %q", strings.TrimSpace(lines[it.Line-1]))
		}
		out = append(out, s)
	}
	return out, nil
}

// commaList splits "a, b" (an item may be quoted).
func commaList(s string, line int) ([]string, error) {
	out := []string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		var name string
		if yaml.Unmarshal([]byte(item), &name) != nil || strings.TrimSpace(name) == "" {
			return nil, errAt(line, "tools: empty or bad tool name in %q", s)
		}
		out = append(out, name)
	}
	return out, nil
}
