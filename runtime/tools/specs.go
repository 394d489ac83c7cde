package tools

// The built-in tool specs are copied byte for byte from the openheim API
// specification so every provider sees the same contract; edit them there
// first. TestSpecsMatchSeed guards against drift.

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/openheim/openheim/runtime/llm"
)

func spec(name, description, params string) llm.ToolSpec { return Spec(name, description, params) }

// Spec builds a tool's spec once per name (params compacted) and shares it:
// specs are read for every model request of every turn, and must not be
// modified. params must be a JSON schema constant.
func Spec(name, description, params string) llm.ToolSpec {
	if s, ok := specs.Load(name); ok {
		return s.(llm.ToolSpec)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(params)); err != nil {
		panic("tools: the schema of " + name + " is not JSON: " + err.Error())
	}
	s, _ := specs.LoadOrStore(name, llm.ToolSpec{Name: name, Description: description, Parameters: buf.Bytes()})
	return s.(llm.ToolSpec)
}

var specs sync.Map // tool name -> llm.ToolSpec

const (
	executeCommandName        = "execute_command"
	executeCommandDescription = "Execute a shell command (e.g., ls, pwd, echo). Use this for listing directories and running system commands. Commands are killed after 120 seconds and output is truncated at 64 KiB per stream."
	executeCommandParams      = `{
        "type": "object",
        "properties": {
          "command": {
            "type": "string",
            "description": "The shell command to execute"
          }
        },
        "required": ["command"]
      }`
)

const (
	readFileName        = "read_file"
	readFileDescription = "Read a text file. Returns up to 100 KB; a longer file ends with a note giving the offset to call again with. Use offset and limit to read a specific range of lines."
	readFileParams      = `{
        "type": "object",
        "properties": {
          "path": {
            "type": "string",
            "description": "The path to the file to read"
          },
          "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "Line number to start reading from (1-based). Defaults to 1."
          },
          "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of lines to read. Defaults to as many as fit in 100 KB."
          }
        },
        "required": ["path"]
      }`
)

const (
	writeFileName        = "write_file"
	writeFileDescription = "Write content to a file at the specified path. Creates the file if it doesn't exist."
	writeFileParams      = `{
        "type": "object",
        "properties": {
          "path": {
            "type": "string",
            "description": "The path to the file to write"
          },
          "content": {
            "type": "string",
            "description": "The content to write to the file"
          }
        },
        "required": ["path", "content"]
      }`
)

const (
	editFileName        = "edit_file"
	editFileDescription = "Edit a file by replacing an exact occurrence of old_string with new_string, without rewriting the whole file. old_string must match the file's existing content exactly (including whitespace/indentation) and must be unique in the file unless replace_all is set. Use write_file instead to create a new file or replace a file's entire contents."
	editFileParams      = `{
        "type": "object",
        "properties": {
          "path": {
            "type": "string",
            "description": "The path to the file to edit"
          },
          "old_string": {
            "type": "string",
            "description": "The exact text to replace. Must be unique in the file unless replace_all is set."
          },
          "new_string": {
            "type": "string",
            "description": "The text to replace old_string with"
          },
          "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence of old_string instead of requiring exactly one. Defaults to false."
          }
        },
        "required": ["path", "old_string", "new_string"]
      }`
)

const (
	listDirName        = "list_dir"
	listDirDescription = "List the immediate contents of a directory (not recursive). Directories are suffixed with '/' and symlinks are shown as 'name -> target'. Defaults to the current directory if no path is given."
	listDirParams      = `{
        "type": "object",
        "properties": {
          "path": {
            "type": "string",
            "description": "The directory to list. Defaults to the current directory if omitted."
          }
        }
      }`
)

const (
	searchName        = "search"
	searchDescription = "Search files under a path for lines matching a regex pattern (ripgrep-style). Respects .gitignore and skips hidden and binary files. Returns matches as 'path:line: content', capped at 200 results."
	searchParams      = `{
        "type": "object",
        "properties": {
          "pattern": {
            "type": "string",
            "description": "The regex pattern to search for"
          },
          "path": {
            "type": "string",
            "description": "The file or directory to search. Defaults to the current directory if omitted."
          },
          "case_insensitive": {
            "type": "boolean",
            "description": "Match case-insensitively. Defaults to false."
          }
        },
        "required": ["pattern"]
      }`
)

const (
	webFetchName        = "web_fetch"
	webFetchDescription = "Fetch a web page or other text-like resource (HTML, plain text, JSON, XML) from a public http(s) URL and return its content as plain text. HTML is stripped of markup. Requests time out after 20 seconds, redirects are not followed automatically (the redirect target is reported instead), and content is truncated at 256 KiB. Only publicly-routable addresses can be fetched."
	webFetchParams      = `{
        "type": "object",
        "properties": {
          "url": {
            "type": "string",
            "description": "The http:// or https:// URL to fetch"
          }
        },
        "required": ["url"]
      }`
)
